package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/createacls"
)

// CreateACLsRequest creates ACLs.
type CreateACLsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// ACLs are the ACLs to create.
	ACLs []ACLEntry
}

// CreateACLsResponse is the answer to a CreateACLsRequest.
type CreateACLsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Errors has the outcome of each ACL of the request, in order: nil when
	// it was created; errors.Is matches the others against the Error codes.
	Errors []error
}

// ACLPermissionType says whether an ACL allows or denies, with the
// numbering of Kafka's org.apache.kafka.common.acl.AclPermissionType.
type ACLPermissionType int8

const (
	// ACLPermissionTypeUnknown is any permission type this client does not
	// know.
	ACLPermissionTypeUnknown ACLPermissionType = iota
	// ACLPermissionTypeAny matches both permission types (in filters).
	ACLPermissionTypeAny
	// ACLPermissionTypeDeny denies the operation.
	ACLPermissionTypeDeny
	// ACLPermissionTypeAllow allows the operation.
	ACLPermissionTypeAllow
)

// aclPermissionTypeNames are indexed by ACLPermissionType.
var aclPermissionTypeNames = [...]string{"Unknown", "Any", "Deny", "Allow"}

// String returns the permission type's name, "Unknown" for values without
// one.
func (apt ACLPermissionType) String() string {
	return enumName(aclPermissionTypeNames[:], int(apt))
}

// MarshalText implements encoding.TextMarshaler with the String form.
func (apt ACLPermissionType) MarshalText() ([]byte, error) {
	return []byte(apt.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, matching names without
// regard to case. Unknown names set ACLPermissionTypeUnknown and return an
// error.
func (apt *ACLPermissionType) UnmarshalText(text []byte) error {
	i, name, ok := enumParse(aclPermissionTypeNames[:], text)
	*apt = ACLPermissionType(i)
	if !ok {
		return fmt.Errorf("cannot parse %s as an ACLPermissionType", name)
	}
	return nil
}

// ACLOperationType is the operation an ACL is about, with the numbering of
// Kafka's org.apache.kafka.common.acl.AclOperation.
type ACLOperationType int8

const (
	// ACLOperationTypeUnknown is any operation this client does not know.
	ACLOperationTypeUnknown ACLOperationType = iota
	// ACLOperationTypeAny matches any operation (in filters).
	ACLOperationTypeAny
	// ACLOperationTypeAll stands for all operations (in ACLs).
	ACLOperationTypeAll
	ACLOperationTypeRead
	ACLOperationTypeWrite
	ACLOperationTypeCreate
	ACLOperationTypeDelete
	ACLOperationTypeAlter
	ACLOperationTypeDescribe
	ACLOperationTypeClusterAction
	ACLOperationTypeDescribeConfigs
	ACLOperationTypeAlterConfigs
	ACLOperationTypeIdempotentWrite
)

// aclOperationTypeNames are indexed by ACLOperationType.
var aclOperationTypeNames = [...]string{
	"Unknown", "Any", "All", "Read", "Write", "Create", "Delete", "Alter",
	"Describe", "ClusterAction", "DescribeConfigs", "AlterConfigs", "IdempotentWrite",
}

// String returns the operation's name, "Unknown" for values without one.
func (aot ACLOperationType) String() string {
	return enumName(aclOperationTypeNames[:], int(aot))
}

// MarshalText implements encoding.TextMarshaler with the String form.
func (aot ACLOperationType) MarshalText() ([]byte, error) {
	return []byte(aot.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, matching names without
// regard to case. Unknown names set ACLOperationTypeUnknown and return an
// error.
func (aot *ACLOperationType) UnmarshalText(text []byte) error {
	i, name, ok := enumParse(aclOperationTypeNames[:], text)
	*aot = ACLOperationType(i)
	if !ok {
		return fmt.Errorf("cannot parse %s as an ACLOperationType", name)
	}
	return nil
}

// ACLEntry is an ACL: it allows or denies Principal, connecting from Host,
// the Operation on the resources its pattern matches.
type ACLEntry struct {
	// ResourceType is the type of the resources, such as ResourceTypeTopic.
	ResourceType ResourceType
	// ResourceName is the name or prefix of the resources ("*" for all).
	ResourceName string
	// ResourcePatternType says how ResourceName matches (CreateAcls v1+;
	// older brokers only know literal names).
	ResourcePatternType PatternType
	// Principal is who the ACL applies to, such as "User:alice".
	Principal string
	// Host is the client host, "*" for any.
	Host string
	// Operation is the operation allowed or denied.
	Operation ACLOperationType
	// PermissionType is ACLPermissionTypeAllow or ACLPermissionTypeDeny.
	PermissionType ACLPermissionType
}

// CreateACLs creates ACLs.
func (c *Client) CreateACLs(ctx context.Context, req *CreateACLsRequest) (*CreateACLsResponse, error) {
	msg := &createacls.Request{Creations: make([]createacls.RequestACLs, len(req.ACLs))}
	for i := range req.ACLs {
		a := &req.ACLs[i]
		msg.Creations[i] = createacls.RequestACLs{
			ResourceType:        int8(a.ResourceType),
			ResourceName:        a.ResourceName,
			ResourcePatternType: int8(a.ResourcePatternType),
			Principal:           a.Principal,
			Host:                a.Host,
			Operation:           int8(a.Operation),
			PermissionType:      int8(a.PermissionType),
		}
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).CreateACLs: %w", err)
	}
	res := m.(*createacls.Response)
	out := &CreateACLsResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Errors:   make([]error, len(res.Results)),
	}
	for i, r := range res.Results {
		out.Errors[i] = makeError(r.ErrorCode, r.ErrorMessage)
	}
	return out, nil
}
