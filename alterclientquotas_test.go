package kafka

import (
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"
)

func TestClientClientQuotas(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	user := fmt.Sprintf("quota-user-%d", time.Now().UnixNano())

	userOnly := []AlterClientQuotaEntity{{EntityType: "user", EntityName: user}}
	userAndClient := []AlterClientQuotaEntity{{EntityType: "user", EntityName: user}, {EntityType: "client-id", EntityName: "app"}}
	alter, err := client.AlterClientQuotas(ctx, &AlterClientQuotasRequest{Entries: []AlterClientQuotaEntry{
		{Entities: userOnly, Ops: []AlterClientQuotaOps{
			{Key: "producer_byte_rate", Value: 1024},
			{Key: "consumer_byte_rate", Value: 2048.5},
		}},
		{Entities: userAndClient, Ops: []AlterClientQuotaOps{{Key: "request_percentage", Value: 50}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []AlterClientQuotaResponseQuotas{{Entities: userOnly}, {Entities: userAndClient}}
	if !reflect.DeepEqual(alter.Entries, want) {
		t.Fatalf("AlterClientQuotas answer %+v, want %+v", alter.Entries, want)
	}
	t.Cleanup(func() {
		client.AlterClientQuotas(ctx, &AlterClientQuotasRequest{Entries: []AlterClientQuotaEntry{
			{Entities: userOnly, Ops: []AlterClientQuotaOps{{Key: "producer_byte_rate", Remove: true}, {Key: "consumer_byte_rate", Remove: true}}},
			{Entities: userAndClient, Ops: []AlterClientQuotaOps{{Key: "request_percentage", Remove: true}}},
		}})
	})

	describe := func(strict bool) []DescribeClientQuotasResponseQuotas {
		t.Helper()
		res, err := client.DescribeClientQuotas(ctx, &DescribeClientQuotasRequest{
			Components: []DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 0, Match: user}},
			Strict:     strict,
		})
		if err != nil || res.Error != nil {
			t.Fatalf("DescribeClientQuotas: %+v, %v", res, err)
		}
		for i := range res.Entries {
			e := &res.Entries[i]
			sort.Slice(e.Entities, func(a, b int) bool { return e.Entities[a].EntityType > e.Entities[b].EntityType })
			sort.Slice(e.Values, func(a, b int) bool { return e.Values[a].Key > e.Values[b].Key })
		}
		sort.Slice(res.Entries, func(a, b int) bool { return len(res.Entries[a].Entities) < len(res.Entries[b].Entities) })
		return res.Entries
	}

	userQuotas := DescribeClientQuotasResponseQuotas{
		Entities: []DescribeClientQuotasEntity{{EntityType: "user", EntityName: user}},
		Values:   []DescribeClientQuotasValue{{Key: "producer_byte_rate", Value: 1024}, {Key: "consumer_byte_rate", Value: 2048.5}},
	}
	bothQuotas := DescribeClientQuotasResponseQuotas{
		Entities: []DescribeClientQuotasEntity{{EntityType: "user", EntityName: user}, {EntityType: "client-id", EntityName: "app"}},
		Values:   []DescribeClientQuotasValue{{Key: "request_percentage", Value: 50}},
	}
	if got, want := describe(false), []DescribeClientQuotasResponseQuotas{userQuotas, bothQuotas}; !reflect.DeepEqual(got, want) {
		t.Fatalf("quotas of %s:\n got %+v\nwant %+v", user, got, want)
	}
	// Strict leaves out the entity that also names a client ID.
	if got, want := describe(true), []DescribeClientQuotasResponseQuotas{userQuotas}; !reflect.DeepEqual(got, want) {
		t.Fatalf("strict quotas of %s:\n got %+v\nwant %+v", user, got, want)
	}

	// ValidateOnly changes nothing; Remove removes.
	alter, err = client.AlterClientQuotas(ctx, &AlterClientQuotasRequest{ValidateOnly: true, Entries: []AlterClientQuotaEntry{
		{Entities: userOnly, Ops: []AlterClientQuotaOps{{Key: "producer_byte_rate", Remove: true}}},
	}})
	if err != nil || len(alter.Entries) != 1 || alter.Entries[0].Error != nil {
		t.Fatalf("validate-only AlterClientQuotas: %+v, %v", alter, err)
	}
	if got := describe(true); !reflect.DeepEqual(got, []DescribeClientQuotasResponseQuotas{userQuotas}) {
		t.Fatalf("quotas after a validate-only change: %+v", got)
	}
	alter, err = client.AlterClientQuotas(ctx, &AlterClientQuotasRequest{Entries: []AlterClientQuotaEntry{
		{Entities: userOnly, Ops: []AlterClientQuotaOps{{Key: "producer_byte_rate", Remove: true}}},
	}})
	if err != nil || len(alter.Entries) != 1 || alter.Entries[0].Error != nil {
		t.Fatalf("AlterClientQuotas remove: %+v, %v", alter, err)
	}
	userQuotas.Values = userQuotas.Values[1:]
	if got := describe(true); !reflect.DeepEqual(got, []DescribeClientQuotasResponseQuotas{userQuotas}) {
		t.Fatalf("quotas after removing producer_byte_rate: %+v, want %+v", got, userQuotas)
	}
}

// An empty entity name stands for the default entity: it is sent as null
// and comes back empty. The quota is for the default client ID of a user
// of this test only, so that it throttles nobody else.
func TestClientClientQuotasDefaultEntity(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	user := fmt.Sprintf("quota-default-%d", time.Now().UnixNano())
	entities := []AlterClientQuotaEntity{{EntityType: "user", EntityName: user}, {EntityType: "client-id"}}
	alter, err := client.AlterClientQuotas(ctx, &AlterClientQuotasRequest{Entries: []AlterClientQuotaEntry{
		{Entities: entities, Ops: []AlterClientQuotaOps{{Key: "request_percentage", Value: 200}}},
	}})
	if err != nil || len(alter.Entries) != 1 || alter.Entries[0].Error != nil {
		t.Fatalf("AlterClientQuotas on the default client ID: %+v, %v", alter, err)
	}
	t.Cleanup(func() {
		client.AlterClientQuotas(ctx, &AlterClientQuotasRequest{Entries: []AlterClientQuotaEntry{
			{Entities: entities, Ops: []AlterClientQuotaOps{{Key: "request_percentage", Remove: true}}},
		}})
	})
	res, err := client.DescribeClientQuotas(ctx, &DescribeClientQuotasRequest{
		Components: []DescribeClientQuotasRequestComponent{
			{EntityType: "user", MatchType: 0, Match: user},
			{EntityType: "client-id", MatchType: 1},
		},
		Strict: true,
	})
	if err != nil || res.Error != nil {
		t.Fatalf("DescribeClientQuotas: %+v, %v", res, err)
	}
	if len(res.Entries) == 1 {
		e := res.Entries[0].Entities
		sort.Slice(e, func(a, b int) bool { return e[a].EntityType > e[b].EntityType })
	}
	want := []DescribeClientQuotasResponseQuotas{{
		Entities: []DescribeClientQuotasEntity{{EntityType: "user", EntityName: user}, {EntityType: "client-id"}},
		Values:   []DescribeClientQuotasValue{{Key: "request_percentage", Value: 200}},
	}}
	if !reflect.DeepEqual(res.Entries, want) {
		t.Fatalf("quotas of the default client ID of %s: %+v, want %+v", user, res.Entries, want)
	}
}
