package kafka

// Broker represents a kafka broker in a kafka cluster.
type Broker struct {
	Host string
	Port int
	ID   int
	Rack string
}

// Topic represents a topic in a kafka cluster.
type Topic struct {
	// Name of the topic.
	Name string

	// Internal is true for the topics kafka uses for itself, such as
	// __consumer_offsets.
	Internal bool

	// Partitions of the topic known to the cluster.
	Partitions []Partition

	// Error, if not nil, is the error the broker returned for this topic;
	// errors.Is matches it against the Error codes of this package.
	Error error
}

// Partition carries the metadata associated with a kafka partition.
type Partition struct {
	// Topic is the name of the partition's topic and ID its number in it.
	Topic string
	ID    int

	// Leader, Replicas and Isr are the brokers hosting the partition. A broker
	// that the cluster lists by ID but for which no address is known has a
	// zero Host and Port, and its ID set.
	Leader   Broker
	Replicas []Broker
	Isr      []Broker

	// OfflineReplicas is only filled by Metadata v5 and later.
	OfflineReplicas []Broker

	// Error, if not nil, is the error the broker returned for this partition;
	// errors.Is matches it against the Error codes of this package.
	Error error
}

// Version is the version number of a kafka API.
type Version int16
