package kafka

import "github.com/segmentio/kafka-go/protocol"

// Broker is a server of a kafka cluster, as cluster metadata describes it.
type Broker struct {
	Host string
	Port int
	ID   int
	Rack string
}

// Topic is the metadata of a topic of a kafka cluster.
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

// Partition is the metadata of a partition of a topic.
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

// Marshal encodes v in the binary format of the Kafka protocol: integers
// big-endian, strings and byte slices length-prefixed, slices as arrays,
// structs as the sequence of their fields. The kafka struct tag may mark a
// string or []byte field "nullable" (an empty value becomes null) and a
// string "compact" (varint length prefix, as in flexible versions).
//
// Tags may also give the versions a field exists in ("min=v1,max=v3");
// Marshal and Unmarshal ignore such fields, Version.Marshal and
// Version.Unmarshal encode them in the versions they exist in.
func Marshal(v interface{}) ([]byte, error) {
	return allVersions.Marshal(v)
}

// Unmarshal decodes b, in the format Marshal produces, into the value v
// points to.
func Unmarshal(b []byte, v interface{}) error {
	return allVersions.Unmarshal(b, v)
}

// allVersions is the version the package-level Marshal and Unmarshal use;
// the doc comment of Marshal says how it treats version tags.
const allVersions Version = -1

// Marshal is like the Marshal function, but encodes the struct fields that
// exist in version n according to their tags.
func (n Version) Marshal(v interface{}) ([]byte, error) {
	return protocol.Marshal(int16(n), v)
}

// Unmarshal is like the Unmarshal function, but decodes the struct fields
// that exist in version n according to their tags.
func (n Version) Unmarshal(b []byte, v interface{}) error {
	return protocol.Unmarshal(b, int16(n), v)
}
