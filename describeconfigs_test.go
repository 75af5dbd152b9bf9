package kafka

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/describeconfigs"
)

// adminTopicConfigs reads the named configuration entries of a topic.
func adminTopicConfigs(ctx context.Context, t *testing.T, client *Client, topic string, names ...string) map[string]DescribeConfigResponseConfigEntry {
	t.Helper()
	res, err := client.DescribeConfigs(ctx, &DescribeConfigsRequest{
		Resources: []DescribeConfigRequestResource{{ResourceType: ResourceTypeTopic, ResourceName: topic, ConfigNames: names}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 1 || res.Resources[0].Error != nil || res.Resources[0].ResourceName != topic || res.Resources[0].ResourceType != int8(ResourceTypeTopic) {
		t.Fatalf("DescribeConfigs answer %+v", res.Resources)
	}
	entries := map[string]DescribeConfigResponseConfigEntry{}
	for _, e := range res.Resources[0].ConfigEntries {
		entries[e.ConfigName] = e
	}
	return entries
}

func TestClientDescribeConfigs(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	topic := adminTopic(t, client, 1)

	res, err := client.DescribeConfigs(ctx, &DescribeConfigsRequest{
		Resources: []DescribeConfigRequestResource{
			{ResourceType: ResourceTypeTopic, ResourceName: topic, ConfigNames: []string{"retention.ms", "cleanup.policy"}},
			{ResourceType: ResourceTypeTopic, ResourceName: topic + "-missing", ConfigNames: []string{"retention.ms"}},
		},
		IncludeSynonyms:      true,
		IncludeDocumentation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 2 {
		t.Fatalf("DescribeConfigs answered %d resources, want 2: %+v", len(res.Resources), res.Resources)
	}
	var found, missing *DescribeConfigResponseResource
	for i := range res.Resources {
		switch res.Resources[i].ResourceName {
		case topic:
			found = &res.Resources[i]
		case topic + "-missing":
			missing = &res.Resources[i]
		}
	}
	if found == nil || missing == nil {
		t.Fatalf("DescribeConfigs answer %+v", res.Resources)
	}
	if !errors.Is(missing.Error, UnknownTopicOrPartition) {
		t.Errorf("describing a missing topic: %v, want UnknownTopicOrPartition", missing.Error)
	}
	if found.Error != nil || len(found.ConfigEntries) != 2 {
		t.Fatalf("described topic: %+v", found)
	}
	for _, e := range found.ConfigEntries {
		switch e.ConfigName {
		case "cleanup.policy":
			if e.ConfigValue != "delete" {
				t.Errorf("cleanup.policy = %q, want the default delete", e.ConfigValue)
			}
		case "retention.ms":
			if e.ConfigValue == "" {
				t.Error("retention.ms has no value")
			}
		default:
			t.Errorf("entry %q was not asked for", e.ConfigName)
		}
		if e.ReadOnly || e.IsSensitive {
			t.Errorf("entry %+v: read-only or sensitive", e)
		}
		// Default values come from the broker or the built-in defaults,
		// never from the topic (source 1).
		if e.ConfigSource == 1 {
			t.Errorf("entry %+v: topic source for a default value", e)
		}
	}

	// No names asks for every entry.
	all := adminTopicConfigs(ctx, t, client, topic)
	if len(all) < 3 {
		t.Fatalf("all configs of the topic: %d entries", len(all))
	}
	for _, name := range []string{"retention.ms", "cleanup.policy", "max.message.bytes"} {
		if _, ok := all[name]; !ok {
			t.Errorf("entry %s missing from all entries", name)
		}
	}
}

// Fields only some versions carry (IsDefault in v0, synonyms in v1+,
// types and documentation in v3+) and error messages are mapped.
func TestClientDescribeConfigsMapping(t *testing.T) {
	client, rt := adminFakeClient(func(req protocol.Message) (protocol.Message, error) {
		return &describeconfigs.Response{ThrottleTimeMs: 3, Resources: []describeconfigs.ResponseResource{
			{ResourceType: 4, ResourceName: "1", ConfigEntries: []describeconfigs.ResponseConfigEntry{{
				ConfigName: "log.retention.ms", ConfigValue: "100", ReadOnly: true, IsDefault: true, ConfigSource: 4, IsSensitive: true,
				ConfigSynonyms: []describeconfigs.ResponseConfigSynonym{{ConfigName: "log.retention.hours", ConfigValue: "168", ConfigSource: 5}},
				ConfigType:     5, ConfigDocumentation: "how long",
			}}},
			{ResourceType: 2, ResourceName: "t", ErrorCode: int16(TopicAuthorizationFailed), ErrorMessage: "denied"},
		}}, nil
	})
	res, err := client.DescribeConfigs(context.Background(), &DescribeConfigsRequest{
		Resources: []DescribeConfigRequestResource{
			{ResourceType: ResourceTypeBroker, ResourceName: "1", ConfigNames: []string{"log.retention.ms"}},
			{ResourceType: ResourceTypeTopic, ResourceName: "t"},
		},
		IncludeSynonyms: true, IncludeDocumentation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	wantReq := &describeconfigs.Request{IncludeSynonyms: true, IncludeDocumentation: true, Resources: []describeconfigs.RequestResource{
		{ResourceType: 4, ResourceName: "1", ConfigNames: []string{"log.retention.ms"}},
		{ResourceType: 2, ResourceName: "t"},
	}}
	if !reflect.DeepEqual(rt.sent[0], wantReq) {
		t.Errorf("sent %+v, want %+v", rt.sent[0], wantReq)
	}
	if res.Throttle != 3*time.Millisecond || len(res.Resources) != 2 {
		t.Fatalf("answer %+v", res)
	}
	want := DescribeConfigResponseResource{ResourceType: 4, ResourceName: "1", ConfigEntries: []DescribeConfigResponseConfigEntry{{
		ConfigName: "log.retention.ms", ConfigValue: "100", ReadOnly: true, IsDefault: true, ConfigSource: 4, IsSensitive: true,
		ConfigSynonyms: []DescribeConfigResponseConfigSynonym{{ConfigName: "log.retention.hours", ConfigValue: "168", ConfigSource: 5}},
		ConfigType:     5, ConfigDocumentation: "how long",
	}}}
	if !reflect.DeepEqual(res.Resources[0], want) {
		t.Errorf("broker resource %+v, want %+v", res.Resources[0], want)
	}
	if r := res.Resources[1]; r.ResourceName != "t" || !errors.Is(r.Error, TopicAuthorizationFailed) || !strings.Contains(r.Error.Error(), "denied") {
		t.Errorf("topic resource %+v", r)
	}
}

// Each broker's own configuration is asked of that broker; all of them
// come back from one call.
func TestClientDescribeConfigsBrokers(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	meta, err := client.Metadata(ctx, &MetadataRequest{})
	if err != nil || len(meta.Brokers) == 0 {
		t.Fatalf("Metadata: %+v, %v", meta, err)
	}
	var resources []DescribeConfigRequestResource
	want := map[string]bool{}
	for _, b := range meta.Brokers {
		name := fmt.Sprint(b.ID)
		resources = append(resources, DescribeConfigRequestResource{ResourceType: ResourceTypeBroker, ResourceName: name, ConfigNames: []string{"broker.id"}})
		want[name] = true
	}
	res, err := client.DescribeConfigs(ctx, &DescribeConfigsRequest{Resources: resources})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != len(resources) {
		t.Fatalf("described %d brokers, want %d: %+v", len(res.Resources), len(resources), res.Resources)
	}
	for _, r := range res.Resources {
		if r.Error != nil || r.ResourceType != int8(ResourceTypeBroker) || !want[r.ResourceName] {
			t.Errorf("broker resource %+v", r)
			continue
		}
		delete(want, r.ResourceName)
		// broker.id is the broker's own ID: each answer came from the
		// broker it describes.
		if len(r.ConfigEntries) != 1 || r.ConfigEntries[0].ConfigName != "broker.id" || r.ConfigEntries[0].ConfigValue != r.ResourceName {
			t.Errorf("broker %s: entries %+v", r.ResourceName, r.ConfigEntries)
		}
	}
}
