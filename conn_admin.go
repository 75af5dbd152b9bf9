package kafka

import (
	"time"

	"github.com/segmentio/kafka-go/protocol/createtopics"
	"github.com/segmentio/kafka-go/protocol/deletetopics"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// metadata requests cluster metadata for topics; nil asks for every topic,
// an empty non-nil slice for none (brokers only).
func (c *Conn) metadata(topics []string) (*metadata.Response, error) {
	msg, err := c.request(&metadata.Request{TopicNames: topics, AllowAutoTopicCreation: true})
	if err != nil {
		return nil, err
	}
	return msg.(*metadata.Response), nil
}

func brokerOf(b *metadata.ResponseBroker) Broker {
	return Broker{Host: b.Host, Port: int(b.Port), ID: int(b.NodeID), Rack: b.Rack}
}

// Brokers returns the brokers of the cluster.
func (c *Conn) Brokers() ([]Broker, error) {
	res, err := c.metadata([]string{})
	if err != nil {
		return nil, err
	}
	brokers := make([]Broker, len(res.Brokers))
	for i := range res.Brokers {
		brokers[i] = brokerOf(&res.Brokers[i])
	}
	return brokers, nil
}

// Controller returns the controller broker of the cluster (a zero Broker
// when the metadata names none this broker knows).
func (c *Conn) Controller() (Broker, error) {
	res, err := c.metadata([]string{})
	if err != nil {
		return Broker{}, err
	}
	for i := range res.Brokers {
		if res.Brokers[i].NodeID == res.ControllerID {
			return brokerOf(&res.Brokers[i]), nil
		}
	}
	return Broker{}, nil
}

// ReadPartitions returns the partitions of topics; with no topics, those of
// the connection's topic, or of every topic when the connection has none.
//
// An error of a topic is returned only for the connection's topic (or any
// topic when the connection has none); other topics in error just have no
// partitions in the result.
func (c *Conn) ReadPartitions(topics ...string) ([]Partition, error) {
	if len(topics) == 0 && c.topic != "" {
		topics = []string{c.topic}
	}
	if len(topics) == 0 {
		topics = nil // all topics, not none
	}
	res, err := c.metadata(topics)
	if err != nil {
		return nil, err
	}
	brokers := make(map[int32]Broker, len(res.Brokers))
	for i := range res.Brokers {
		brokers[res.Brokers[i].NodeID] = brokerOf(&res.Brokers[i])
	}
	var partitions []Partition
	for _, t := range res.Topics {
		if t.ErrorCode != 0 && (c.topic == "" || c.topic == t.Name) {
			return nil, Error(t.ErrorCode)
		}
		for _, p := range t.Partitions {
			partitions = append(partitions, Partition{
				Topic:           t.Name,
				ID:              int(p.PartitionIndex),
				Leader:          lookupBroker(brokers, p.LeaderID),
				Replicas:        lookupBrokers(brokers, p.ReplicaNodes),
				Isr:             lookupBrokers(brokers, p.IsrNodes),
				OfflineReplicas: lookupBrokers(brokers, p.OfflineReplicas),
				Error:           makeError(p.ErrorCode, ""),
			})
		}
	}
	return partitions, nil
}

// lookupBroker returns the broker with the given ID, or a Broker with only
// its ID set when the metadata has no address for it.
func lookupBroker(brokers map[int32]Broker, id int32) Broker {
	if b, ok := brokers[id]; ok {
		return b
	}
	return Broker{ID: int(id)}
}

func lookupBrokers(brokers map[int32]Broker, ids []int32) []Broker {
	out := make([]Broker, len(ids))
	for i, id := range ids {
		out[i] = lookupBroker(brokers, id)
	}
	return out
}

// adminTimeout is the time a broker may take over an admin request: what is
// left of the write deadline minus a round trip, unbounded without one.
func (c *Conn) adminTimeout() int32 {
	now := time.Now()
	d := adjustDeadlineForRTT(c.wdeadline.deadline(), now, defaultRTT)
	return milliseconds(deadlineToTimeout(d, now))
}

// CreateTopics creates topics. Topics that already exist are not an error.
// The request must reach the controller (see Controller) on clusters that
// require it.
func (c *Conn) CreateTopics(topics ...TopicConfig) error {
	req := &createtopics.Request{
		Topics:    make([]createtopics.RequestTopic, len(topics)),
		TimeoutMs: c.adminTimeout(),
	}
	for i := range topics {
		t := &topics[i]
		req.Topics[i] = createtopics.RequestTopic{
			Name:              t.Topic,
			NumPartitions:     int32(t.NumPartitions),
			ReplicationFactor: int16(t.ReplicationFactor),
			Assignments:       t.assignments(),
			Configs:           t.configs(),
		}
		if req.Topics[i].Assignments == nil {
			req.Topics[i].Assignments = []createtopics.RequestAssignment{}
		}
		if req.Topics[i].Configs == nil {
			req.Topics[i].Configs = []createtopics.RequestConfig{}
		}
	}
	msg, err := c.requestWith(&c.wdeadline, req)
	if err != nil {
		return err
	}
	for _, t := range msg.(*createtopics.Response).Topics {
		if t.ErrorCode != 0 && Error(t.ErrorCode) != TopicAlreadyExists {
			return Error(t.ErrorCode)
		}
	}
	return nil
}

// DeleteTopics deletes topics.
func (c *Conn) DeleteTopics(topics ...string) error {
	msg, err := c.requestWith(&c.wdeadline, &deletetopics.Request{
		TopicNames: append([]string{}, topics...),
		TimeoutMs:  c.adminTimeout(),
	})
	if err != nil {
		return err
	}
	for _, t := range msg.(*deletetopics.Response).Responses {
		if t.ErrorCode != 0 {
			return Error(t.ErrorCode)
		}
	}
	return nil
}
