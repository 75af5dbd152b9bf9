package kafka

// commit is the offset to store for one partition once a message has been
// processed: the offset of the next message to read.
type commit struct {
	topic     string
	partition int
	offset    int64
}

func makeCommit(msg Message) commit {
	return commit{topic: msg.Topic, partition: msg.Partition, offset: msg.Offset + 1}
}

func makeCommits(msgs ...Message) []commit {
	commits := make([]commit, len(msgs))
	for i, msg := range msgs {
		commits[i] = makeCommit(msg)
	}
	return commits
}

// commitRequest carries a CommitMessages call to the Reader's commit loop.
// errch is nil for asynchronous commits (CommitInterval > 0); otherwise it
// has room for one error so that the loop never blocks on a caller that
// gave up.
type commitRequest struct {
	commits []commit
	errch   chan<- error
}
