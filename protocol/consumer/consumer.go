// Package consumer holds the payloads of the "consumer" group protocol: the
// subscription a member sends in JoinGroup's protocol metadata and the
// assignment the leader hands out through SyncGroup. They are not Kafka
// APIs; protocol.Marshal and protocol.Unmarshal encode them, the Version
// field first, as in Kafka's ConsumerProtocolSubscription and
// ConsumerProtocolAssignment (versions 0-3, never flexible).
package consumer

// MaxVersionSupported is the version this package writes. Versions 2 and 3
// add fields at the end of Subscription, which readers of version 1 ignore.
const MaxVersionSupported = 1

type Subscription struct {
	Version         int16            `kafka:"v0+"`
	Topics          []string         `kafka:"v0+"`
	UserData        []byte           `kafka:"v0+,nullable"`
	OwnedPartitions []TopicPartition `kafka:"v1+"`
	GenerationID    int32            `kafka:"v2+"`
	RackID          string           `kafka:"v3+,nullable"`
}

type Assignment struct {
	Version            int16            `kafka:"v0+"`
	AssignedPartitions []TopicPartition `kafka:"v0+"`
	UserData           []byte           `kafka:"v0+,nullable"`
}

type TopicPartition struct {
	Topic      string  `kafka:"v0+"`
	Partitions []int32 `kafka:"v0+"`
}
