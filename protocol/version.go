package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// apiNames holds the names of the APIs, indexed by key.
var apiNames = strings.Fields(`
	Produce Fetch ListOffsets Metadata LeaderAndIsr StopReplica UpdateMetadata
	ControlledShutdown OffsetCommit OffsetFetch FindCoordinator JoinGroup
	Heartbeat LeaveGroup SyncGroup DescribeGroups ListGroups SaslHandshake
	ApiVersions CreateTopics DeleteTopics DeleteRecords InitProducerId
	OffsetForLeaderEpoch AddPartitionsToTxn AddOffsetsToTxn EndTxn
	WriteTxnMarkers TxnOffsetCommit DescribeAcls CreateAcls DeleteAcls
	DescribeConfigs AlterConfigs AlterReplicaLogDirs DescribeLogDirs
	SaslAuthenticate CreatePartitions CreateDelegationToken
	RenewDelegationToken ExpireDelegationToken DescribeDelegationToken
	DeleteGroups ElectLeaders IncrementalAlterConfigs
	AlterPartitionReassignments ListPartitionReassignments OffsetDelete
	DescribeClientQuotas AlterClientQuotas DescribeUserScramCredentials
	AlterUserScramCredentials`)

// laterAPINames names the APIs past the contiguous list above that this
// package implements.
var laterAPINames = map[ApiKey]string{ConsumerGroupHeartbeat: "ConsumerGroupHeartbeat"}

// String returns the API's name, or its number for keys without a name.
func (k ApiKey) String() string {
	if k >= 0 && int(k) < len(apiNames) && apiNames[k] != "" {
		return apiNames[k]
	}
	if name, ok := laterAPINames[k]; ok {
		return name
	}
	return strconv.Itoa(int(k))
}

func (k ApiKey) registered() (apiTypes, bool) {
	t, ok := currentRegistry().apis[k]
	return t, ok
}

// MinVersion is the lowest version of the API this package can encode, 0 if
// the API has no registered types.
func (k ApiKey) MinVersion() int16 {
	if t, ok := k.registered(); ok {
		return t.req.min
	}
	return 0
}

// MaxVersion is the highest version of the API this package can encode, 0 if
// the API has no registered types.
func (k ApiKey) MaxVersion() int16 {
	if t, ok := k.registered(); ok {
		return t.req.max
	}
	return 0
}

// SelectVersion returns maxVersion (the highest version the peer accepts)
// brought into the range of versions this package supports. minVersion is
// accepted for symmetry; like the original API, the result is not checked
// against it: see NegotiateVersion for a checked choice.
func (k ApiKey) SelectVersion(minVersion, maxVersion int16) int16 {
	lo, hi := k.MinVersion(), k.MaxVersion()
	v := maxVersion
	if v > hi {
		v = hi
	}
	if v < lo {
		v = lo
	}
	return v
}

// versionFloors are the lowest versions sent even when both sides support
// older ones: Kafka 4.0 removed these (KIP-896), and every broker since
// 0.11 / 2.0 supports the floor, so going lower only risks being refused.
var versionFloors = map[ApiKey]int16{
	Produce:   3,
	Fetch:     4,
	JoinGroup: 2,
}

// ErrNoVersionOverlap is wrapped by the error NegotiateVersion returns when
// the client and the broker have no version of an API in common.
const ErrNoVersionOverlap Error = "no API version is supported by both the client and the broker"

// NegotiateVersion picks the version of key to use with a broker that
// advertised (in its ApiVersions response) brokerMin..brokerMax: the highest
// version in both that range and this package's registered range, never
// below the KIP-896 floor (Produce v3, Fetch v4, JoinGroup v2). When there
// is none, the error wraps ErrNoVersionOverlap and names the API and both
// ranges.
func NegotiateVersion(key ApiKey, brokerMin, brokerMax int16) (int16, error) {
	t, ok := key.registered()
	if !ok {
		return 0, fmt.Errorf("%w: %s has no registered message types", ErrNoVersionOverlap, key)
	}
	lo, hi := t.req.min, t.req.max
	if floor, ok := versionFloors[key]; ok && lo < floor {
		lo = floor
	}
	from, to := lo, hi
	if brokerMin > from {
		from = brokerMin
	}
	if brokerMax < to {
		to = brokerMax
	}
	if from > to {
		return 0, fmt.Errorf("%w: %s: client supports v%d-v%d, broker supports v%d-v%d",
			ErrNoVersionOverlap, key, lo, hi, brokerMin, brokerMax)
	}
	return to, nil
}
