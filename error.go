package kafka

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
)

// Error is an error code of the Kafka protocol, as returned by brokers in
// responses. The codes and their meaning are listed in
// https://kafka.apache.org/protocol#protocol_error_codes.
//
// Error values wrapped with a message from the broker can still be matched
// with errors.Is, and extracted with errors.As.
type Error int

// The names follow the historical names of this package; the comment after
// each constant is the name Kafka itself uses for the code.
const (
	Unknown                            Error = -1  // UNKNOWN_SERVER_ERROR
	OffsetOutOfRange                   Error = 1   // OFFSET_OUT_OF_RANGE
	InvalidMessage                     Error = 2   // CORRUPT_MESSAGE
	UnknownTopicOrPartition            Error = 3   // UNKNOWN_TOPIC_OR_PARTITION
	InvalidMessageSize                 Error = 4   // INVALID_FETCH_SIZE
	LeaderNotAvailable                 Error = 5   // LEADER_NOT_AVAILABLE
	NotLeaderForPartition              Error = 6   // NOT_LEADER_OR_FOLLOWER
	RequestTimedOut                    Error = 7   // REQUEST_TIMED_OUT
	BrokerNotAvailable                 Error = 8   // BROKER_NOT_AVAILABLE
	ReplicaNotAvailable                Error = 9   // REPLICA_NOT_AVAILABLE
	MessageSizeTooLarge                Error = 10  // MESSAGE_TOO_LARGE
	StaleControllerEpoch               Error = 11  // STALE_CONTROLLER_EPOCH
	OffsetMetadataTooLarge             Error = 12  // OFFSET_METADATA_TOO_LARGE
	NetworkException                   Error = 13  // NETWORK_EXCEPTION
	GroupLoadInProgress                Error = 14  // COORDINATOR_LOAD_IN_PROGRESS
	GroupCoordinatorNotAvailable       Error = 15  // COORDINATOR_NOT_AVAILABLE
	NotCoordinatorForGroup             Error = 16  // NOT_COORDINATOR
	InvalidTopic                       Error = 17  // INVALID_TOPIC_EXCEPTION
	RecordListTooLarge                 Error = 18  // RECORD_LIST_TOO_LARGE
	NotEnoughReplicas                  Error = 19  // NOT_ENOUGH_REPLICAS
	NotEnoughReplicasAfterAppend       Error = 20  // NOT_ENOUGH_REPLICAS_AFTER_APPEND
	InvalidRequiredAcks                Error = 21  // INVALID_REQUIRED_ACKS
	IllegalGeneration                  Error = 22  // ILLEGAL_GENERATION
	InconsistentGroupProtocol          Error = 23  // INCONSISTENT_GROUP_PROTOCOL
	InvalidGroupId                     Error = 24  // INVALID_GROUP_ID
	UnknownMemberId                    Error = 25  // UNKNOWN_MEMBER_ID
	InvalidSessionTimeout              Error = 26  // INVALID_SESSION_TIMEOUT
	RebalanceInProgress                Error = 27  // REBALANCE_IN_PROGRESS
	InvalidCommitOffsetSize            Error = 28  // INVALID_COMMIT_OFFSET_SIZE
	TopicAuthorizationFailed           Error = 29  // TOPIC_AUTHORIZATION_FAILED
	GroupAuthorizationFailed           Error = 30  // GROUP_AUTHORIZATION_FAILED
	ClusterAuthorizationFailed         Error = 31  // CLUSTER_AUTHORIZATION_FAILED
	InvalidTimestamp                   Error = 32  // INVALID_TIMESTAMP
	UnsupportedSASLMechanism           Error = 33  // UNSUPPORTED_SASL_MECHANISM
	IllegalSASLState                   Error = 34  // ILLEGAL_SASL_STATE
	UnsupportedVersion                 Error = 35  // UNSUPPORTED_VERSION
	TopicAlreadyExists                 Error = 36  // TOPIC_ALREADY_EXISTS
	InvalidPartitionNumber             Error = 37  // INVALID_PARTITIONS
	InvalidReplicationFactor           Error = 38  // INVALID_REPLICATION_FACTOR
	InvalidReplicaAssignment           Error = 39  // INVALID_REPLICA_ASSIGNMENT
	InvalidConfiguration               Error = 40  // INVALID_CONFIG
	NotController                      Error = 41  // NOT_CONTROLLER
	InvalidRequest                     Error = 42  // INVALID_REQUEST
	UnsupportedForMessageFormat        Error = 43  // UNSUPPORTED_FOR_MESSAGE_FORMAT
	PolicyViolation                    Error = 44  // POLICY_VIOLATION
	OutOfOrderSequenceNumber           Error = 45  // OUT_OF_ORDER_SEQUENCE_NUMBER
	DuplicateSequenceNumber            Error = 46  // DUPLICATE_SEQUENCE_NUMBER
	InvalidProducerEpoch               Error = 47  // INVALID_PRODUCER_EPOCH
	InvalidTransactionState            Error = 48  // INVALID_TXN_STATE
	InvalidProducerIDMapping           Error = 49  // INVALID_PRODUCER_ID_MAPPING
	InvalidTransactionTimeout          Error = 50  // INVALID_TRANSACTION_TIMEOUT
	ConcurrentTransactions             Error = 51  // CONCURRENT_TRANSACTIONS
	TransactionCoordinatorFenced       Error = 52  // TRANSACTION_COORDINATOR_FENCED
	TransactionalIDAuthorizationFailed Error = 53  // TRANSACTIONAL_ID_AUTHORIZATION_FAILED
	SecurityDisabled                   Error = 54  // SECURITY_DISABLED
	BrokerAuthorizationFailed          Error = 55  // OPERATION_NOT_ATTEMPTED (historical name kept)
	KafkaStorageError                  Error = 56  // KAFKA_STORAGE_ERROR
	LogDirNotFound                     Error = 57  // LOG_DIR_NOT_FOUND
	SASLAuthenticationFailed           Error = 58  // SASL_AUTHENTICATION_FAILED
	UnknownProducerId                  Error = 59  // UNKNOWN_PRODUCER_ID
	ReassignmentInProgress             Error = 60  // REASSIGNMENT_IN_PROGRESS
	DelegationTokenAuthDisabled        Error = 61  // DELEGATION_TOKEN_AUTH_DISABLED
	DelegationTokenNotFound            Error = 62  // DELEGATION_TOKEN_NOT_FOUND
	DelegationTokenOwnerMismatch       Error = 63  // DELEGATION_TOKEN_OWNER_MISMATCH
	DelegationTokenRequestNotAllowed   Error = 64  // DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
	DelegationTokenAuthorizationFailed Error = 65  // DELEGATION_TOKEN_AUTHORIZATION_FAILED
	DelegationTokenExpired             Error = 66  // DELEGATION_TOKEN_EXPIRED
	InvalidPrincipalType               Error = 67  // INVALID_PRINCIPAL_TYPE
	NonEmptyGroup                      Error = 68  // NON_EMPTY_GROUP
	GroupIdNotFound                    Error = 69  // GROUP_ID_NOT_FOUND
	FetchSessionIDNotFound             Error = 70  // FETCH_SESSION_ID_NOT_FOUND
	InvalidFetchSessionEpoch           Error = 71  // INVALID_FETCH_SESSION_EPOCH
	ListenerNotFound                   Error = 72  // LISTENER_NOT_FOUND
	TopicDeletionDisabled              Error = 73  // TOPIC_DELETION_DISABLED
	FencedLeaderEpoch                  Error = 74  // FENCED_LEADER_EPOCH
	UnknownLeaderEpoch                 Error = 75  // UNKNOWN_LEADER_EPOCH
	UnsupportedCompressionType         Error = 76  // UNSUPPORTED_COMPRESSION_TYPE
	StaleBrokerEpoch                   Error = 77  // STALE_BROKER_EPOCH
	OffsetNotAvailable                 Error = 78  // OFFSET_NOT_AVAILABLE
	MemberIDRequired                   Error = 79  // MEMBER_ID_REQUIRED
	PreferredLeaderNotAvailable        Error = 80  // PREFERRED_LEADER_NOT_AVAILABLE
	GroupMaxSizeReached                Error = 81  // GROUP_MAX_SIZE_REACHED
	FencedInstanceID                   Error = 82  // FENCED_INSTANCE_ID
	EligibleLeadersNotAvailable        Error = 83  // ELIGIBLE_LEADERS_NOT_AVAILABLE
	ElectionNotNeeded                  Error = 84  // ELECTION_NOT_NEEDED
	NoReassignmentInProgress           Error = 85  // NO_REASSIGNMENT_IN_PROGRESS
	GroupSubscribedToTopic             Error = 86  // GROUP_SUBSCRIBED_TO_TOPIC
	InvalidRecord                      Error = 87  // INVALID_RECORD
	UnstableOffsetCommit               Error = 88  // UNSTABLE_OFFSET_COMMIT
	ThrottlingQuotaExceeded            Error = 89  // THROTTLING_QUOTA_EXCEEDED
	ProducerFenced                     Error = 90  // PRODUCER_FENCED
	ResourceNotFound                   Error = 91  // RESOURCE_NOT_FOUND
	DuplicateResource                  Error = 92  // DUPLICATE_RESOURCE
	UnacceptableCredential             Error = 93  // UNACCEPTABLE_CREDENTIAL
	InconsistentVoterSet               Error = 94  // INCONSISTENT_VOTER_SET
	InvalidUpdateVersion               Error = 95  // INVALID_UPDATE_VERSION
	FeatureUpdateFailed                Error = 96  // FEATURE_UPDATE_FAILED
	PrincipalDeserializationFailure    Error = 97  // PRINCIPAL_DESERIALIZATION_FAILURE
	SnapshotNotFound                   Error = 98  // SNAPSHOT_NOT_FOUND
	PositionOutOfRange                 Error = 99  // POSITION_OUT_OF_RANGE
	UnknownTopicID                     Error = 100 // UNKNOWN_TOPIC_ID
	DuplicateBrokerRegistration        Error = 101 // DUPLICATE_BROKER_REGISTRATION
	BrokerIDNotRegistered              Error = 102 // BROKER_ID_NOT_REGISTERED
	InconsistentTopicID                Error = 103 // INCONSISTENT_TOPIC_ID
	InconsistentClusterID              Error = 104 // INCONSISTENT_CLUSTER_ID
	TransactionalIDNotFound            Error = 105 // TRANSACTIONAL_ID_NOT_FOUND
	FetchSessionTopicIDError           Error = 106 // FETCH_SESSION_TOPIC_ID_ERROR

	// Codes added by Kafka after the ones above (Kafka 3.3 to 4.1).
	IneligibleReplica           Error = 107 // INELIGIBLE_REPLICA
	NewLeaderElected            Error = 108 // NEW_LEADER_ELECTED
	OffsetMovedToTieredStorage  Error = 109 // OFFSET_MOVED_TO_TIERED_STORAGE
	FencedMemberEpoch           Error = 110 // FENCED_MEMBER_EPOCH
	UnreleasedInstanceID        Error = 111 // UNRELEASED_INSTANCE_ID
	UnsupportedAssignor         Error = 112 // UNSUPPORTED_ASSIGNOR
	StaleMemberEpoch            Error = 113 // STALE_MEMBER_EPOCH
	MismatchedEndpointType      Error = 114 // MISMATCHED_ENDPOINT_TYPE
	UnsupportedEndpointType     Error = 115 // UNSUPPORTED_ENDPOINT_TYPE
	UnknownControllerID         Error = 116 // UNKNOWN_CONTROLLER_ID
	UnknownSubscriptionID       Error = 117 // UNKNOWN_SUBSCRIPTION_ID
	TelemetryTooLarge           Error = 118 // TELEMETRY_TOO_LARGE
	InvalidRegistration         Error = 119 // INVALID_REGISTRATION
	TransactionAbortable        Error = 120 // TRANSACTION_ABORTABLE
	InvalidRecordState          Error = 121 // INVALID_RECORD_STATE
	ShareSessionNotFound        Error = 122 // SHARE_SESSION_NOT_FOUND
	InvalidShareSessionEpoch    Error = 123 // INVALID_SHARE_SESSION_EPOCH
	FencedStateEpoch            Error = 124 // FENCED_STATE_EPOCH
	InvalidVoterKey             Error = 125 // INVALID_VOTER_KEY
	DuplicateVoter              Error = 126 // DUPLICATE_VOTER
	VoterNotFound               Error = 127 // VOTER_NOT_FOUND
	InvalidRegularExpression    Error = 128 // INVALID_REGULAR_EXPRESSION
	RebootstrapRequired         Error = 129 // REBOOTSTRAP_REQUIRED
	StreamsInvalidTopology      Error = 130 // STREAMS_INVALID_TOPOLOGY
	StreamsInvalidTopologyEpoch Error = 131 // STREAMS_INVALID_TOPOLOGY_EPOCH
	StreamsTopologyFenced       Error = 132 // STREAMS_TOPOLOGY_FENCED
	ShareSessionLimitReached    Error = 133 // SHARE_SESSION_LIMIT_REACHED

	// OperationNotAttempted is Kafka's current name for code 55, which this
	// package historically called BrokerAuthorizationFailed.
	OperationNotAttempted = BrokerAuthorizationFailed
)

// errorInfo describes one error code. temporary follows this package's
// historical classification (which callers rely on for their retry loops),
// not always the "retriable" column of Kafka's documentation.
type errorInfo struct {
	title       string
	description string
	temporary   bool
}

const retriable = true

var errorInfos = map[Error]errorInfo{
	Unknown:                            {"Unknown", "the broker hit an unexpected error while processing the request", false},
	OffsetOutOfRange:                   {"Offset Out Of Range", "the requested offset lies outside the range of offsets the broker holds for this topic partition", false},
	InvalidMessage:                     {"Invalid Message", "the message failed its CRC check, has an invalid size, has a null key on a compacted topic, or is otherwise corrupt", retriable},
	UnknownTopicOrPartition:            {"Unknown Topic Or Partition", "this broker does not host the requested topic or partition", retriable},
	InvalidMessageSize:                 {"Invalid Message Size", "the requested fetch size is invalid", false},
	LeaderNotAvailable:                 {"Leader Not Available", "the partition has no leader at the moment, a leader election is in progress", retriable},
	NotLeaderForPartition:              {"Not Leader For Partition", "the broker is not the leader (or not a replica) of the partition, the client's metadata is probably stale", retriable},
	RequestTimedOut:                    {"Request Timed Out", "the request did not complete within its time limit", retriable},
	BrokerNotAvailable:                 {"Broker Not Available", "the broker is not available", false},
	ReplicaNotAvailable:                {"Replica Not Available", "the replica is not available for the requested topic partition", false},
	MessageSizeTooLarge:                {"Message Size Too Large", "the request holds a message larger than the maximum message size the broker accepts", false},
	StaleControllerEpoch:               {"Stale Controller Epoch", "the controller moved to another broker (broker-to-broker error)", false},
	OffsetMetadataTooLarge:             {"Offset Metadata Too Large", "the metadata attached to the committed offset exceeds the configured maximum size", false},
	NetworkException:                   {"Network Exception", "the broker closed the connection before sending a response", retriable},
	GroupLoadInProgress:                {"Group Load In Progress", "the coordinator is still loading the group or its offsets and cannot serve the request yet", retriable},
	GroupCoordinatorNotAvailable:       {"Group Coordinator Not Available", "the coordinator is not available, the offsets topic may not exist yet or the coordinator is inactive", retriable},
	NotCoordinatorForGroup:             {"Not Coordinator For Group", "the broker is not the coordinator of this group", retriable},
	InvalidTopic:                       {"Invalid Topic", "the topic name is invalid, or the request tried to write to an internal topic", false},
	RecordListTooLarge:                 {"Record List Too Large", "a record batch of the produce request is larger than the broker's segment size", false},
	NotEnoughReplicas:                  {"Not Enough Replicas", "the partition has fewer in-sync replicas than required, the messages were rejected", retriable},
	NotEnoughReplicasAfterAppend:       {"Not Enough Replicas After Append", "the messages were appended to the log but to fewer in-sync replicas than required", retriable},
	InvalidRequiredAcks:                {"Invalid Required Acks", "the produce request asked for an invalid number of acknowledgements (only -1, 0 and 1 are valid)", false},
	IllegalGeneration:                  {"Illegal Generation", "the generation ID in the request is not the group's current generation", false},
	InconsistentGroupProtocol:          {"Inconsistent Group Protocol", "the member's protocol type or protocols are incompatible with the rest of the group", false},
	InvalidGroupId:                     {"Invalid Group ID", "the group ID is empty or otherwise invalid", false},
	UnknownMemberId:                    {"Unknown Member ID", "the coordinator does not know this member ID in the current generation", false},
	InvalidSessionTimeout:              {"Invalid Session Timeout", "the session timeout is outside the range the broker allows", false},
	RebalanceInProgress:                {"Rebalance In Progress", "the group is rebalancing, the member must join again", false},
	InvalidCommitOffsetSize:            {"Invalid Commit Offset Size", "the offset commit was rejected because its metadata is too large", false},
	TopicAuthorizationFailed:           {"Topic Authorization Failed", "the client is not authorized to access the topic", false},
	GroupAuthorizationFailed:           {"Group Authorization Failed", "the client is not authorized to access the group", false},
	ClusterAuthorizationFailed:         {"Cluster Authorization Failed", "the client is not authorized to use this administrative or inter-broker API", false},
	InvalidTimestamp:                   {"Invalid Timestamp", "the message timestamp is outside the accepted range", false},
	UnsupportedSASLMechanism:           {"Unsupported SASL Mechanism", "the broker does not support the requested SASL mechanism", false},
	IllegalSASLState:                   {"Illegal SASL State", "the request is not valid in the current state of the SASL exchange", false},
	UnsupportedVersion:                 {"Unsupported Version", "the broker does not support this version of the API", false},
	TopicAlreadyExists:                 {"Topic Already Exists", "a topic with this name already exists", false},
	InvalidPartitionNumber:             {"Invalid Partition Number", "the number of partitions is invalid", false},
	InvalidReplicationFactor:           {"Invalid Replication Factor", "the replication factor is invalid (below 1 or above the number of brokers)", false},
	InvalidReplicaAssignment:           {"Invalid Replica Assignment", "the replica assignment is invalid", false},
	InvalidConfiguration:               {"Invalid Configuration", "the configuration is invalid", false},
	NotController:                      {"Not Controller", "the broker is not the controller of the cluster", retriable},
	InvalidRequest:                     {"Invalid Request", "the broker could not process the request, it may be malformed or sent to an incompatible broker (the broker logs have details)", false},
	UnsupportedForMessageFormat:        {"Unsupported For Message Format", "the broker's message format version does not support the request", false},
	PolicyViolation:                    {"Policy Violation", "the request does not satisfy the policy configured on the broker", false},
	OutOfOrderSequenceNumber:           {"Out Of Order Sequence Number", "the broker received a sequence number out of order", false},
	DuplicateSequenceNumber:            {"Duplicate Sequence Number", "the broker received a sequence number it already saw", false},
	InvalidProducerEpoch:               {"Invalid Producer Epoch", "the producer used an old epoch, a newer producer shares its transactional ID or its transaction expired", false},
	InvalidTransactionState:            {"Invalid Transaction State", "the producer attempted a transactional operation that is invalid in the transaction's current state", false},
	InvalidProducerIDMapping:           {"Invalid Producer ID Mapping", "the producer ID is not the one currently assigned to the transactional ID", false},
	InvalidTransactionTimeout:          {"Invalid Transaction Timeout", "the transaction timeout exceeds the maximum the broker allows (transaction.max.timeout.ms)", false},
	ConcurrentTransactions:             {"Concurrent Transactions", "another operation on the same transaction is still in progress", false},
	TransactionCoordinatorFenced:       {"Transaction Coordinator Fenced", "the transaction coordinator that sent the marker is no longer the producer's coordinator", false},
	TransactionalIDAuthorizationFailed: {"Transactional ID Authorization Failed", "the client is not authorized to use the transactional ID", false},
	SecurityDisabled:                   {"Security Disabled", "security features are disabled on the broker", false},
	BrokerAuthorizationFailed:          {"Operation Not Attempted", "the broker did not attempt this operation, typically because another operation of the same batched request failed", false},
	KafkaStorageError:                  {"Kafka Storage Error", "the broker hit a disk error while accessing the log", retriable},
	LogDirNotFound:                     {"Log Dir Not Found", "the requested log directory is not in the broker's configuration", false},
	SASLAuthenticationFailed:           {"SASL Authentication Failed", "SASL authentication failed", false},
	UnknownProducerId:                  {"Unknown Producer ID", "the broker has no metadata for this producer ID, its records may have been removed by retention", false},
	ReassignmentInProgress:             {"Reassignment In Progress", "a partition reassignment is in progress", false},
	DelegationTokenAuthDisabled:        {"Delegation Token Auth Disabled", "delegation tokens are not enabled on the broker", false},
	DelegationTokenNotFound:            {"Delegation Token Not Found", "the broker has no such delegation token", false},
	DelegationTokenOwnerMismatch:       {"Delegation Token Owner Mismatch", "the principal is neither the owner nor a renewer of the delegation token", false},
	DelegationTokenRequestNotAllowed:   {"Delegation Token Request Not Allowed", "delegation token requests are refused on plaintext, one-way TLS and delegation-token-authenticated connections", false},
	DelegationTokenAuthorizationFailed: {"Delegation Token Authorization Failed", "the client is not authorized to use delegation tokens", false},
	DelegationTokenExpired:             {"Delegation Token Expired", "the delegation token has expired", false},
	InvalidPrincipalType:               {"Invalid Principal Type", "the principal type is not supported", false},
	NonEmptyGroup:                      {"Non Empty Group", "the group still has members", false},
	GroupIdNotFound:                    {"Group ID Not Found", "no group has this ID", false},
	FetchSessionIDNotFound:             {"Fetch Session ID Not Found", "the broker has no fetch session with this ID", retriable},
	InvalidFetchSessionEpoch:           {"Invalid Fetch Session Epoch", "the fetch session epoch is not the expected one", retriable},
	ListenerNotFound:                   {"Listener Not Found", "the partition leader has no listener matching the one the metadata request came through", retriable},
	TopicDeletionDisabled:              {"Topic Deletion Disabled", "topic deletion is disabled on the cluster", false},
	FencedLeaderEpoch:                  {"Fenced Leader Epoch", "the leader epoch in the request is older than the broker's", retriable},
	UnknownLeaderEpoch:                 {"Unknown Leader Epoch", "the leader epoch in the request is newer than the broker's", retriable},
	UnsupportedCompressionType:         {"Unsupported Compression Type", "the client does not support the compression codec used by the partition", false},
	StaleBrokerEpoch:                   {"Stale Broker Epoch", "the broker epoch has changed", false},
	OffsetNotAvailable:                 {"Offset Not Available", "the new leader's high watermark has not caught up since the election, offsets could go backwards", retriable},
	MemberIDRequired:                   {"Member ID Required", "the member must obtain a member ID from the coordinator before joining the group", false},
	PreferredLeaderNotAvailable:        {"Preferred Leader Not Available", "the preferred leader of the partition is not available", retriable},
	GroupMaxSizeReached:                {"Group Max Size Reached", "the group already has the maximum number of members", false},
	FencedInstanceID:                   {"Fenced Instance ID", "another member registered with the same group.instance.id and a different member ID, this static member is fenced", false},
	EligibleLeadersNotAvailable:        {"Eligible Leaders Not Available", "no eligible leader is available for the partition", retriable},
	ElectionNotNeeded:                  {"Election Not Needed", "the partition does not need a leader election", retriable},
	NoReassignmentInProgress:           {"No Reassignment In Progress", "no partition reassignment is in progress", retriable},
	GroupSubscribedToTopic:             {"Group Subscribed To Topic", "the offsets of a topic cannot be deleted while the group is subscribed to it", retriable},
	InvalidRecord:                      {"Invalid Record", "the broker rejected the record because it failed validation", false},
	UnstableOffsetCommit:               {"Unstable Offset Commit", "some offsets are pending in open transactions and must be settled first", retriable},
	ThrottlingQuotaExceeded:            {"Throttling Quota Exceeded", "the throttling quota was exceeded", retriable},
	ProducerFenced:                     {"Producer Fenced", "a newer producer with the same transactional ID fenced this one", false},
	ResourceNotFound:                   {"Resource Not Found", "the request refers to a resource that does not exist", false},
	DuplicateResource:                  {"Duplicate Resource", "the request refers to the same resource more than once", false},
	UnacceptableCredential:             {"Unacceptable Credential", "the requested credential does not meet the acceptability criteria", false},
	InconsistentVoterSet:               {"Inconsistent Voter Set", "the sender or the receiver of a voter-only request is not one of the expected voters", false},
	InvalidUpdateVersion:               {"Invalid Update Version", "the update version is invalid", false},
	FeatureUpdateFailed:                {"Feature Update Failed", "the finalized features could not be updated because of an unexpected broker error", false},
	PrincipalDeserializationFailure:    {"Principal Deserialization Failure", "the broker could not deserialize the forwarded principal, the cluster's security setup is inconsistent", false},
	SnapshotNotFound:                   {"Snapshot Not Found", "the requested snapshot does not exist", false},
	PositionOutOfRange:                 {"Position Out Of Range", "the requested position is negative or beyond the end of the snapshot", false},
	UnknownTopicID:                     {"Unknown Topic ID", "this broker does not host a topic with this ID", retriable},
	DuplicateBrokerRegistration:        {"Duplicate Broker Registration", "another broker already registered with this broker ID", false},
	BrokerIDNotRegistered:              {"Broker ID Not Registered", "no broker is registered with this ID", false},
	InconsistentTopicID:                {"Inconsistent Topic ID", "the topic ID of the log differs from the one in the request", retriable},
	InconsistentClusterID:              {"Inconsistent Cluster ID", "the cluster ID in the request differs from the broker's", false},
	TransactionalIDNotFound:            {"Transactional ID Not Found", "no transaction has this transactional ID", false},
	FetchSessionTopicIDError:           {"Fetch Session Topic ID Error", "the fetch session mixed requests with and without topic IDs inconsistently", retriable},
	IneligibleReplica:                  {"Ineligible Replica", "the proposed ISR contains a replica that is not eligible", false},
	NewLeaderElected:                   {"New Leader Elected", "the partition state was updated but its leader changed in the meantime", false},
	OffsetMovedToTieredStorage:         {"Offset Moved To Tiered Storage", "the requested offset has moved to tiered storage", false},
	FencedMemberEpoch:                  {"Fenced Member Epoch", "the coordinator fenced the member epoch, the member must give up its partitions and join again", false},
	UnreleasedInstanceID:               {"Unreleased Instance ID", "another member still uses this instance ID and must leave the group first", false},
	UnsupportedAssignor:                {"Unsupported Assignor", "the group does not support this assignor or version range", false},
	StaleMemberEpoch:                   {"Stale Member Epoch", "the member epoch is stale, the member must retry with the epoch from its next heartbeat", false},
	MismatchedEndpointType:             {"Mismatched Endpoint Type", "the request reached an endpoint of the wrong type", false},
	UnsupportedEndpointType:            {"Unsupported Endpoint Type", "the endpoint type is not supported", false},
	UnknownControllerID:                {"Unknown Controller ID", "no controller has this ID", false},
	UnknownSubscriptionID:              {"Unknown Subscription ID", "the telemetry push used an unknown or outdated subscription ID", false},
	TelemetryTooLarge:                  {"Telemetry Too Large", "the telemetry push exceeds the maximum size the broker accepts", false},
	InvalidRegistration:                {"Invalid Registration", "the controller considers the broker registration invalid", false},
	TransactionAbortable:               {"Transaction Abortable", "the transaction hit an error, aborting it lets the producer keep using its transactional ID", false},
	InvalidRecordState:                 {"Invalid Record State", "the record is in a state that does not allow this acknowledgement", false},
	ShareSessionNotFound:               {"Share Session Not Found", "the broker has no such share session", false},
	InvalidShareSessionEpoch:           {"Invalid Share Session Epoch", "the share session epoch is not the expected one", false},
	FencedStateEpoch:                   {"Fenced State Epoch", "the state epoch in the request does not match the coordinator's", false},
	InvalidVoterKey:                    {"Invalid Voter Key", "the voter key does not match the receiving replica's key", false},
	DuplicateVoter:                     {"Duplicate Voter", "the voter is already in the voter set", false},
	VoterNotFound:                      {"Voter Not Found", "the voter is not in the voter set", false},
	InvalidRegularExpression:           {"Invalid Regular Expression", "the regular expression is invalid", false},
	RebootstrapRequired:                {"Rebootstrap Required", "the client's metadata is stale, it must bootstrap again to refresh it", false},
	StreamsInvalidTopology:             {"Streams Invalid Topology", "the streams topology is invalid", false},
	StreamsInvalidTopologyEpoch:        {"Streams Invalid Topology Epoch", "the streams topology epoch is invalid", false},
	StreamsTopologyFenced:              {"Streams Topology Fenced", "the streams topology epoch is outdated", false},
	ShareSessionLimitReached:           {"Share Session Limit Reached", "the broker reached its limit of share sessions", retriable},
}

// Error satisfies the error interface, as "[code] Title: description".
func (e Error) Error() string {
	info, ok := errorInfos[e]
	if !ok {
		return fmt.Sprintf("[%d] Unknown Error Code: the error code is not known to this client", int(e))
	}
	return fmt.Sprintf("[%d] %s: %s", int(e), info.title, info.description)
}

// Timeout reports whether the error means the broker timed out the request.
func (e Error) Timeout() bool { return e == RequestTimedOut }

// Temporary reports whether retrying the operation later may succeed.
func (e Error) Temporary() bool { return errorInfos[e].temporary }

// Title returns a short human readable name of the error, or "" for a code
// this package does not know.
func (e Error) Title() string { return errorInfos[e].title }

// Description returns a human readable explanation of the error, or "" for a
// code this package does not know.
func (e Error) Description() string { return errorInfos[e].description }

// isTimeout reports whether err, or an error it wraps, says it is a timeout.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// isTemporary reports whether err, or an error it wraps, says retrying may
// succeed.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// isTransientNetworkError reports connection failures that a new connection
// is likely to cure.
func isTransientNetworkError(err error) bool {
	for _, target := range []error{io.ErrUnexpectedEOF, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// silentEOF turns an io.EOF (possibly wrapped) into a nil error, for reads
// where reaching the end is the normal outcome.
func silentEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// coalesceErrors returns the first non-nil error of errs.
func coalesceErrors(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// makeError converts an error code of a response (and the optional message
// the broker attached to it) into an error; code 0 means success.
func makeError(code int16, message string) error {
	switch {
	case code == 0:
		return nil
	case message == "":
		return Error(code)
	default:
		return fmt.Errorf("%w: %s", Error(code), message)
	}
}

// MessageTooLargeError reports a message that exceeds the maximum size it is
// allowed to have, so it cannot be sent. Remaining holds the other messages of the same call, in
// order, so that the program can retry them.
type MessageTooLargeError struct {
	Message   Message
	Remaining []Message
}

// messageTooLarge builds the error for msgs[i], the others being Remaining.
func messageTooLarge(msgs []Message, i int) MessageTooLargeError {
	others := make([]Message, 0, len(msgs)-1)
	for j := range msgs {
		if j != i {
			others = append(others, msgs[j])
		}
	}
	return MessageTooLargeError{Message: msgs[i], Remaining: others}
}

func (e MessageTooLargeError) Error() string { return MessageSizeTooLarge.Error() }

// Unwrap lets errors.Is(err, MessageSizeTooLarge) match.
func (e MessageTooLargeError) Unwrap() error { return MessageSizeTooLarge }

// WriteErrors is the error a synchronous Writer's WriteMessages returns when
// messages of the call could not be written. It holds one entry per
// message of the call, at the message's position: nil if that message was
// written, its error otherwise.
//
//	if errs, ok := err.(kafka.WriteErrors); ok {
//		for i, e := range errs {
//			if e != nil {
//				// msgs[i] was not written
//			}
//		}
//	}
type WriteErrors []error

// Count returns the number of messages that failed (non-nil entries).
func (err WriteErrors) Count() int {
	failed := 0
	for _, e := range err {
		if e != nil {
			failed++
		}
	}
	return failed
}

func (err WriteErrors) Error() string {
	msgs := make([]string, 0, len(err))
	for _, e := range err {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	return fmt.Sprintf("Kafka write errors (%d/%d), errors: [%s]", len(msgs), len(err), strings.Join(msgs, " "))
}
