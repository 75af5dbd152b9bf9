package kafka

import (
	"fmt"
	"strconv"
)

// ApiVersion is the range of versions a broker supports for one API, as
// reported by the ApiVersions request.
//
// Format verbs: %s prints the API name, %d the API key (%-d the minimum and
// %+d the maximum version), %v prints "Name[vMin:vMax]" (%-v "vMin", %+v
// "vMax", %#v a Go-syntax representation).
type ApiVersion struct {
	ApiKey     int16
	MinVersion int16
	MaxVersion int16
}

// Format implements fmt.Formatter.
func (v ApiVersion) Format(w fmt.State, r rune) {
	switch r {
	case 's':
		fmt.Fprint(w, apiKey(v.ApiKey))
	case 'd':
		fmt.Fprint(w, v.pick(w, v.ApiKey))
	case 'v':
		switch {
		case w.Flag('-') || w.Flag('+'):
			fmt.Fprintf(w, "v%d", v.pick(w, 0))
		case w.Flag('#'):
			fmt.Fprintf(w, "kafka.ApiVersion{ApiKey:%d MinVersion:%d MaxVersion:%d}", v.ApiKey, v.MinVersion, v.MaxVersion)
		default:
			fmt.Fprintf(w, "%s[v%d:v%d]", apiKey(v.ApiKey), v.MinVersion, v.MaxVersion)
		}
	}
}

// pick selects the version the '-' (min) or '+' (max) flag asks for, or
// fallback when neither is set.
func (v ApiVersion) pick(w fmt.State, fallback int16) int16 {
	switch {
	case w.Flag('-'):
		return v.MinVersion
	case w.Flag('+'):
		return v.MaxVersion
	}
	return fallback
}

// apiKey identifies a Kafka API; it prints as the API's name. Code that
// needs the key of a given API uses the protocol package's ApiKey constants.
type apiKey int16

// apiNames are the names of the APIs of the Kafka protocol (up to Kafka 4.0),
// indexed by key.
var apiNames = map[apiKey]string{
	0:  "Produce",
	1:  "Fetch",
	2:  "ListOffsets",
	3:  "Metadata",
	4:  "LeaderAndIsr",
	5:  "StopReplica",
	6:  "UpdateMetadata",
	7:  "ControlledShutdown",
	8:  "OffsetCommit",
	9:  "OffsetFetch",
	10: "FindCoordinator",
	11: "JoinGroup",
	12: "Heartbeat",
	13: "LeaveGroup",
	14: "SyncGroup",
	15: "DescribeGroups",
	16: "ListGroups",
	17: "SaslHandshake",
	18: "ApiVersions",
	19: "CreateTopics",
	20: "DeleteTopics",
	21: "DeleteRecords",
	22: "InitProducerId",
	23: "OffsetForLeaderEpoch",
	24: "AddPartitionsToTxn",
	25: "AddOffsetsToTxn",
	26: "EndTxn",
	27: "WriteTxnMarkers",
	28: "TxnOffsetCommit",
	29: "DescribeAcls",
	30: "CreateAcls",
	31: "DeleteAcls",
	32: "DescribeConfigs",
	33: "AlterConfigs",
	34: "AlterReplicaLogDirs",
	35: "DescribeLogDirs",
	36: "SaslAuthenticate",
	37: "CreatePartitions",
	38: "CreateDelegationToken",
	39: "RenewDelegationToken",
	40: "ExpireDelegationToken",
	41: "DescribeDelegationToken",
	42: "DeleteGroups",
	43: "ElectLeaders",
	44: "IncrementalAlterConfigs",
	45: "AlterPartitionReassignments",
	46: "ListPartitionReassignments",
	47: "OffsetDelete",
	48: "DescribeClientQuotas",
	49: "AlterClientQuotas",
	50: "DescribeUserScramCredentials",
	51: "AlterUserScramCredentials",
	52: "Vote",
	53: "BeginQuorumEpoch",
	54: "EndQuorumEpoch",
	55: "DescribeQuorum",
	56: "AlterPartition",
	57: "UpdateFeatures",
	58: "Envelope",
	59: "FetchSnapshot",
	60: "DescribeCluster",
	61: "DescribeProducers",
	62: "BrokerRegistration",
	63: "BrokerHeartbeat",
	64: "UnregisterBroker",
	65: "DescribeTransactions",
	66: "ListTransactions",
	67: "AllocateProducerIds",
	68: "ConsumerGroupHeartbeat",
	69: "ConsumerGroupDescribe",
	70: "ControllerRegistration",
	71: "GetTelemetrySubscriptions",
	72: "PushTelemetry",
	73: "AssignReplicasToDirs",
	74: "ListClientMetricsResources",
	75: "DescribeTopicPartitions",
	76: "ShareGroupHeartbeat",
	77: "ShareGroupDescribe",
	78: "ShareFetch",
	79: "ShareAcknowledge",
	80: "AddRaftVoter",
	81: "RemoveRaftVoter",
	82: "UpdateRaftVoter",
	83: "InitializeShareGroupState",
	84: "ReadShareGroupState",
	85: "WriteShareGroupState",
	86: "DeleteShareGroupState",
	87: "ReadShareGroupStateSummary",
}

func (k apiKey) String() string {
	if name, ok := apiNames[k]; ok {
		return name
	}
	return strconv.Itoa(int(k))
}
