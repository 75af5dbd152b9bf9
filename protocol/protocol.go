package protocol

import (
	"fmt"
	"io"
)

// Message is implemented by every request and response type.
type Message interface {
	ApiKey() ApiKey
}

// ApiKey identifies a Kafka API.
type ApiKey int16

const (
	Produce                      ApiKey = 0
	Fetch                        ApiKey = 1
	ListOffsets                  ApiKey = 2
	Metadata                     ApiKey = 3
	LeaderAndIsr                 ApiKey = 4
	StopReplica                  ApiKey = 5
	UpdateMetadata               ApiKey = 6
	ControlledShutdown           ApiKey = 7
	OffsetCommit                 ApiKey = 8
	OffsetFetch                  ApiKey = 9
	FindCoordinator              ApiKey = 10
	JoinGroup                    ApiKey = 11
	Heartbeat                    ApiKey = 12
	LeaveGroup                   ApiKey = 13
	SyncGroup                    ApiKey = 14
	DescribeGroups               ApiKey = 15
	ListGroups                   ApiKey = 16
	SaslHandshake                ApiKey = 17
	ApiVersions                  ApiKey = 18
	CreateTopics                 ApiKey = 19
	DeleteTopics                 ApiKey = 20
	DeleteRecords                ApiKey = 21
	InitProducerId               ApiKey = 22
	OffsetForLeaderEpoch         ApiKey = 23
	AddPartitionsToTxn           ApiKey = 24
	AddOffsetsToTxn              ApiKey = 25
	EndTxn                       ApiKey = 26
	WriteTxnMarkers              ApiKey = 27
	TxnOffsetCommit              ApiKey = 28
	DescribeAcls                 ApiKey = 29
	CreateAcls                   ApiKey = 30
	DeleteAcls                   ApiKey = 31
	DescribeConfigs              ApiKey = 32
	AlterConfigs                 ApiKey = 33
	AlterReplicaLogDirs          ApiKey = 34
	DescribeLogDirs              ApiKey = 35
	SaslAuthenticate             ApiKey = 36
	CreatePartitions             ApiKey = 37
	CreateDelegationToken        ApiKey = 38
	RenewDelegationToken         ApiKey = 39
	ExpireDelegationToken        ApiKey = 40
	DescribeDelegationToken      ApiKey = 41
	DeleteGroups                 ApiKey = 42
	ElectLeaders                 ApiKey = 43
	IncrementalAlterConfigs      ApiKey = 44
	AlterPartitionReassignments  ApiKey = 45
	ListPartitionReassignments   ApiKey = 46
	OffsetDelete                 ApiKey = 47
	DescribeClientQuotas         ApiKey = 48
	AlterClientQuotas            ApiKey = 49
	DescribeUserScramCredentials ApiKey = 50
	AlterUserScramCredentials    ApiKey = 51
	ConsumerGroupHeartbeat       ApiKey = 68

	numApis = 52
)

// BrokerMessage is implemented by requests that pick the broker they are
// sent to from the cluster layout.
type BrokerMessage interface {
	Broker(Cluster) (Broker, error)
}

// GroupMessage is implemented by requests that go to a group coordinator.
type GroupMessage interface {
	Group() string
}

// TransactionalMessage is implemented by requests that go to a transaction
// coordinator.
type TransactionalMessage interface {
	Transaction() string
}

// PreparedMessage is implemented by requests that adjust themselves to the
// API version chosen for them, right before being encoded.
type PreparedMessage interface {
	Prepare(apiVersion int16)
}

// Splitter is implemented by requests that must be sent as several requests
// (to several brokers, say); the Merger combines the responses.
type Splitter interface {
	Split(Cluster) ([]Message, Merger, error)
}

// Merger combines the results of split requests. Each result is a Message
// or an error.
type Merger interface {
	Merge(messages []Message, results []interface{}) (Message, error)
}

// RawExchanger is implemented by messages that must do their own exchange
// on the connection (a SASL v0 token, which has no Kafka framing).
type RawExchanger interface {
	Required(versions map[ApiKey]int16) bool
	RawExchange(rw io.ReadWriter) (Message, error)
}

// OverrideTypeMessage is implemented by requests that are encoded with an
// alternative message type registered by RegisterOverride.
type OverrideTypeMessage interface {
	TypeKey() OverrideTypeKey
}

// OverrideTypeKey names an alternative encoding of an API.
type OverrideTypeKey int16

const (
	RawProduceOverride OverrideTypeKey = 0
)

// Result returns r as a Message or as an error; any other type is a bug in
// the caller and panics. The panic value is an error whose text is
// upstream's, word for word, since tests of Merge implementations match it.
func Result(r interface{}) (Message, error) {
	if m, ok := r.(Message); ok {
		return m, nil
	}
	if err, ok := r.(error); ok {
		return nil, err
	}
	panic(fmt.Errorf("BUG: result must be a message or an error but not %T", r))
}
