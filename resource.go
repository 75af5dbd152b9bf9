package kafka

import (
	"fmt"
	"strings"
)

// ResourceType is the type of a resource in ACLs and configurations, with
// the numbering of Kafka's org.apache.kafka.common.resource.ResourceType.
type ResourceType int8

const (
	ResourceTypeUnknown ResourceType = 0
	ResourceTypeAny     ResourceType = 1
	ResourceTypeTopic   ResourceType = 2
	ResourceTypeGroup   ResourceType = 3
	// ResourceTypeBroker and ResourceTypeCluster share a value: ACLs call
	// type 4 the cluster, configurations (ConfigResource) call it a broker.
	ResourceTypeBroker          ResourceType = 4
	ResourceTypeCluster         ResourceType = 4
	ResourceTypeTransactionalID ResourceType = 5
	ResourceTypeDelegationToken ResourceType = 6
	// ResourceTypeUser is the user principal resource of Kafka 2.8+ ACLs.
	ResourceTypeUser ResourceType = 7
)

// resourceTypeNames are the names ResourceType values print as; type 4
// prints as "Cluster".
var resourceTypeNames = [...]string{
	ResourceTypeUnknown:         "Unknown",
	ResourceTypeAny:             "Any",
	ResourceTypeTopic:           "Topic",
	ResourceTypeGroup:           "Group",
	ResourceTypeCluster:         "Cluster",
	ResourceTypeTransactionalID: "Transactionalid",
	ResourceTypeDelegationToken: "Delegationtoken",
	ResourceTypeUser:            "User",
}

// String returns the type's name, "Unknown" for values without one.
func (rt ResourceType) String() string {
	if rt >= 0 && int(rt) < len(resourceTypeNames) {
		return resourceTypeNames[rt]
	}
	return resourceTypeNames[ResourceTypeUnknown]
}

// MarshalText implements encoding.TextMarshaler with the String form.
func (rt ResourceType) MarshalText() ([]byte, error) {
	return []byte(rt.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler. Names are matched
// without regard to case, and "broker" is accepted for type 4. Unknown names
// set the type to ResourceTypeUnknown and return an error.
func (rt *ResourceType) UnmarshalText(text []byte) error {
	name := strings.ToLower(string(text))
	if name == "broker" {
		*rt = ResourceTypeBroker
		return nil
	}
	for i, n := range resourceTypeNames {
		if strings.ToLower(n) == name {
			*rt = ResourceType(i)
			return nil
		}
	}
	*rt = ResourceTypeUnknown
	return fmt.Errorf("cannot parse %s as a ResourceType", name)
}

// PatternType says how the name of an ACL's resource is matched, with the
// numbering of Kafka's org.apache.kafka.common.resource.PatternType.
type PatternType int8

const (
	// PatternTypeUnknown is any pattern type this client does not know.
	PatternTypeUnknown PatternType = 0
	// PatternTypeAny matches ACLs of any pattern type (in filters).
	PatternTypeAny PatternType = 1
	// PatternTypeMatch matches, in filters, the ACLs whose pattern applies
	// to the given name: literal, wildcard and prefix matches.
	PatternTypeMatch PatternType = 2
	// PatternTypeLiteral patterns are full resource names, such as topic
	// "orders" or group "billing" (or the wildcard "*").
	PatternTypeLiteral PatternType = 3
	// PatternTypePrefixed patterns apply to every resource whose name starts
	// with the pattern, such as all topics starting with "orders.".
	PatternTypePrefixed PatternType = 4
)

var patternTypeNames = [...]string{
	PatternTypeUnknown:  "Unknown",
	PatternTypeAny:      "Any",
	PatternTypeMatch:    "Match",
	PatternTypeLiteral:  "Literal",
	PatternTypePrefixed: "Prefixed",
}

// String returns the pattern type's name, "Unknown" for values without one.
func (pt PatternType) String() string {
	if pt >= 0 && int(pt) < len(patternTypeNames) {
		return patternTypeNames[pt]
	}
	return patternTypeNames[PatternTypeUnknown]
}

// MarshalText implements encoding.TextMarshaler with the String form.
func (pt PatternType) MarshalText() ([]byte, error) {
	return []byte(pt.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler, matching names without
// regard to case. Unknown names set PatternTypeUnknown and return an error.
func (pt *PatternType) UnmarshalText(text []byte) error {
	name := strings.ToLower(string(text))
	for i, n := range patternTypeNames {
		if strings.ToLower(n) == name {
			*pt = PatternType(i)
			return nil
		}
	}
	*pt = PatternTypeUnknown
	return fmt.Errorf("cannot parse %s as a PatternType", name)
}
