package kafka

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestACLEnumsText(t *testing.T) {
	ops := map[ACLOperationType]string{
		ACLOperationTypeUnknown: "Unknown", ACLOperationTypeAny: "Any", ACLOperationTypeAll: "All",
		ACLOperationTypeRead: "Read", ACLOperationTypeWrite: "Write", ACLOperationTypeCreate: "Create",
		ACLOperationTypeDelete: "Delete", ACLOperationTypeAlter: "Alter", ACLOperationTypeDescribe: "Describe",
		ACLOperationTypeClusterAction: "ClusterAction", ACLOperationTypeDescribeConfigs: "DescribeConfigs",
		ACLOperationTypeAlterConfigs: "AlterConfigs", ACLOperationTypeIdempotentWrite: "IdempotentWrite",
	}
	// The values are Kafka's AclOperation codes.
	if ACLOperationTypeRead != 3 || ACLOperationTypeIdempotentWrite != 12 || ACLPermissionTypeDeny != 2 || ACLPermissionTypeAllow != 3 {
		t.Fatal("ACL enumerations do not have Kafka's numbering")
	}
	for op, name := range ops {
		adminCheckText(t, op, name, new(ACLOperationType))
	}
	perms := map[ACLPermissionType]string{
		ACLPermissionTypeUnknown: "Unknown", ACLPermissionTypeAny: "Any", ACLPermissionTypeDeny: "Deny", ACLPermissionTypeAllow: "Allow",
	}
	for p, name := range perms {
		adminCheckText(t, p, name, new(ACLPermissionType))
	}

	if s := ACLOperationType(13).String(); s != "Unknown" {
		t.Errorf("out of range operation prints %q", s)
	}
	if s := ACLPermissionType(-1).String(); s != "Unknown" {
		t.Errorf("negative permission type prints %q", s)
	}
	op := ACLOperationTypeRead
	if err := op.UnmarshalText([]byte("readwrite")); err == nil || op != ACLOperationTypeUnknown {
		t.Errorf("parsing readwrite: %v, %v; want an error and Unknown", op, err)
	}
	if err := op.UnmarshalText([]byte("IDEMPOTENTWRITE")); err != nil || op != ACLOperationTypeIdempotentWrite {
		t.Errorf("parsing without case: %v, %v", op, err)
	}
	perm := ACLPermissionTypeAllow
	if err := perm.UnmarshalText([]byte("maybe")); err == nil || perm != ACLPermissionTypeUnknown {
		t.Errorf("parsing maybe: %v, %v; want an error and Unknown", perm, err)
	}
}

type textEnum interface {
	fmt.Stringer
	encoding.TextMarshaler
}

// adminCheckText checks that v prints as name and marshals to it, and that
// name, in any case, parses back into parsed with the same name.
func adminCheckText(t *testing.T, v textEnum, name string, parsed interface {
	fmt.Stringer
	encoding.TextUnmarshaler
}) {
	t.Helper()
	if s := v.String(); s != name {
		t.Errorf("%v prints as %q, want %q", v, s, name)
	}
	b, err := v.MarshalText()
	if err != nil || string(b) != name {
		t.Errorf("MarshalText: %q, %v", b, err)
	}
	for _, text := range []string{name, strings.ToLower(name), strings.ToUpper(name)} {
		if err := parsed.UnmarshalText([]byte(text)); err != nil {
			t.Errorf("UnmarshalText(%q): %v", text, err)
		}
		if got := parsed.String(); got != name {
			t.Errorf("UnmarshalText(%q) gave %s", text, got)
		}
	}
}

// ACLs created are listed by DescribeACLs, deleted by DeleteACLs (which
// lists what it deleted), and then gone.
func TestClientACLs(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	topic := fmt.Sprintf("acl-topic-%d", time.Now().UnixNano())
	principal := fmt.Sprintf("User:alice-%d", time.Now().UnixNano())

	acls := []ACLEntry{
		{
			ResourceType: ResourceTypeTopic, ResourceName: topic, ResourcePatternType: PatternTypeLiteral,
			Principal: principal, Host: "*", Operation: ACLOperationTypeRead, PermissionType: ACLPermissionTypeAllow,
		},
		{
			ResourceType: ResourceTypeTopic, ResourceName: topic, ResourcePatternType: PatternTypeLiteral,
			Principal: principal, Host: "10.0.0.1", Operation: ACLOperationTypeWrite, PermissionType: ACLPermissionTypeDeny,
		},
		{
			ResourceType: ResourceTypeGroup, ResourceName: "grp-", ResourcePatternType: PatternTypePrefixed,
			Principal: principal, Host: "*", Operation: ACLOperationTypeDescribe, PermissionType: ACLPermissionTypeAllow,
		},
	}
	created, err := client.CreateACLs(ctx, &CreateACLsRequest{ACLs: acls})
	if err != nil {
		t.Fatal(err)
	}
	if len(created.Errors) != len(acls) {
		t.Fatalf("CreateACLs answered %d results for %d ACLs", len(created.Errors), len(acls))
	}
	for i, e := range created.Errors {
		if e != nil {
			t.Fatalf("creating ACL %d: %v", i, e)
		}
	}

	anyOfPrincipal := ACLFilter{
		ResourceTypeFilter:        ResourceTypeAny,
		ResourcePatternTypeFilter: PatternTypeAny,
		PrincipalFilter:           principal,
		Operation:                 ACLOperationTypeAny,
		PermissionType:            ACLPermissionTypeAny,
	}
	desc, err := client.DescribeACLs(ctx, &DescribeACLsRequest{Filter: anyOfPrincipal})
	if err != nil || desc.Error != nil {
		t.Fatalf("DescribeACLs: %+v, %v", desc, err)
	}
	want := []ACLResource{
		{ResourceType: ResourceTypeGroup, ResourceName: "grp-", PatternType: PatternTypePrefixed, ACLs: []ACLDescription{
			{Principal: principal, Host: "*", Operation: ACLOperationTypeDescribe, PermissionType: ACLPermissionTypeAllow},
		}},
		{ResourceType: ResourceTypeTopic, ResourceName: topic, PatternType: PatternTypeLiteral, ACLs: []ACLDescription{
			{Principal: principal, Host: "*", Operation: ACLOperationTypeRead, PermissionType: ACLPermissionTypeAllow},
			{Principal: principal, Host: "10.0.0.1", Operation: ACLOperationTypeWrite, PermissionType: ACLPermissionTypeDeny},
		}},
	}
	if got := adminSortedACLs(desc.Resources); !reflect.DeepEqual(got, want) {
		t.Fatalf("described ACLs:\n got %+v\nwant %+v", got, want)
	}

	// A narrower filter: the topic's Deny ACLs only.
	desc, err = client.DescribeACLs(ctx, &DescribeACLsRequest{Filter: ACLFilter{
		ResourceTypeFilter: ResourceTypeTopic, ResourceNameFilter: topic, ResourcePatternTypeFilter: PatternTypeLiteral,
		PrincipalFilter: principal, Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeDeny,
	}})
	if err != nil || desc.Error != nil || len(desc.Resources) != 1 || len(desc.Resources[0].ACLs) != 1 || desc.Resources[0].ACLs[0].Host != "10.0.0.1" {
		t.Fatalf("DescribeACLs of the Deny ACLs: %+v, %v", desc, err)
	}

	del, err := client.DeleteACLs(ctx, &DeleteACLsRequest{Filters: []DeleteACLsFilter{
		{
			ResourceTypeFilter: ResourceTypeTopic, ResourceNameFilter: topic, ResourcePatternTypeFilter: PatternTypeLiteral,
			PrincipalFilter: principal, Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny,
		},
		{
			ResourceTypeFilter: ResourceTypeGroup, ResourcePatternTypeFilter: PatternTypeAny,
			PrincipalFilter: principal + "-nobody", Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny,
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(del.Results) != 2 || del.Results[0].Error != nil || del.Results[1].Error != nil {
		t.Fatalf("DeleteACLs results %+v", del.Results)
	}
	if n := len(del.Results[1].MatchingACLs); n != 0 {
		t.Errorf("the filter matching nothing deleted %d ACLs", n)
	}
	deleted := del.Results[0].MatchingACLs
	sort.Slice(deleted, func(i, j int) bool { return deleted[i].Host < deleted[j].Host })
	wantDeleted := []DeleteACLsMatchingACLs{
		{ResourceType: ResourceTypeTopic, ResourceName: topic, ResourcePatternType: PatternTypeLiteral, Principal: principal, Host: "*", Operation: ACLOperationTypeRead, PermissionType: ACLPermissionTypeAllow},
		{ResourceType: ResourceTypeTopic, ResourceName: topic, ResourcePatternType: PatternTypeLiteral, Principal: principal, Host: "10.0.0.1", Operation: ACLOperationTypeWrite, PermissionType: ACLPermissionTypeDeny},
	}
	if !reflect.DeepEqual(deleted, wantDeleted) {
		t.Fatalf("deleted ACLs:\n got %+v\nwant %+v", deleted, wantDeleted)
	}

	desc, err = client.DescribeACLs(ctx, &DescribeACLsRequest{Filter: anyOfPrincipal})
	if err != nil || desc.Error != nil {
		t.Fatalf("DescribeACLs: %+v, %v", desc, err)
	}
	if got := adminSortedACLs(desc.Resources); !reflect.DeepEqual(got, want[:1]) {
		t.Fatalf("ACLs left: %+v, want only the group's", got)
	}
	t.Cleanup(func() {
		client.DeleteACLs(ctx, &DeleteACLsRequest{Filters: []DeleteACLsFilter{{
			ResourceTypeFilter: ResourceTypeAny, ResourcePatternTypeFilter: PatternTypeAny,
			PrincipalFilter: principal, Operation: ACLOperationTypeAny, PermissionType: ACLPermissionTypeAny,
		}}})
	})
}

// adminSortedACLs orders resources by type and name, and their ACLs by
// host, so that answers compare regardless of the broker's order.
func adminSortedACLs(rs []ACLResource) []ACLResource {
	out := append([]ACLResource(nil), rs...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].ResourceType != out[j].ResourceType {
			return out[i].ResourceType > out[j].ResourceType // groups (3) first
		}
		return out[i].ResourceName < out[j].ResourceName
	})
	for i := range out {
		acls := append([]ACLDescription(nil), out[i].ACLs...)
		sort.Slice(acls, func(a, b int) bool { return acls[a].Host < acls[b].Host })
		out[i].ACLs = acls
	}
	return out
}
