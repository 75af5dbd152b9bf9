package kafka

import (
	"context"
	"errors"
	"testing"
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
