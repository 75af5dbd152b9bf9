package kafka

import (
	"errors"
	"testing"
)

func TestClientIncrementalAlterConfigs(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	topic := adminTopic(t, client, 1)
	before := adminTopicConfigs(ctx, t, client, topic, "retention.ms", "max.message.bytes")

	res, err := client.IncrementalAlterConfigs(ctx, &IncrementalAlterConfigsRequest{
		Resources: []IncrementalAlterConfigsRequestResource{{
			ResourceType: ResourceTypeTopic,
			ResourceName: topic,
			Configs: []IncrementalAlterConfigsRequestConfig{
				{Name: "retention.ms", Value: "123456", ConfigOperation: ConfigOperationSet},
				{Name: "max.message.bytes", Value: "65536", ConfigOperation: ConfigOperationSet},
			},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []IncrementalAlterConfigsResponseResource{{ResourceType: ResourceTypeTopic, ResourceName: topic}}
	if len(res.Resources) != 1 || res.Resources[0] != want[0] {
		t.Fatalf("IncrementalAlterConfigs answer %+v, want %+v", res.Resources, want)
	}
	got := adminTopicConfigs(ctx, t, client, topic, "retention.ms", "max.message.bytes")
	if got["retention.ms"].ConfigValue != "123456" || got["max.message.bytes"].ConfigValue != "65536" {
		t.Fatalf("configs after setting: %+v", got)
	}
	if got["retention.ms"].ConfigSource != 1 {
		t.Errorf("retention.ms source %d, want 1 (topic config)", got["retention.ms"].ConfigSource)
	}

	// Deleting one entry brings back its default and leaves the other.
	res, err = client.IncrementalAlterConfigs(ctx, &IncrementalAlterConfigsRequest{
		Resources: []IncrementalAlterConfigsRequestResource{{
			ResourceType: ResourceTypeTopic,
			ResourceName: topic,
			Configs:      []IncrementalAlterConfigsRequestConfig{{Name: "retention.ms", ConfigOperation: ConfigOperationDelete}},
		}},
	})
	if err != nil || len(res.Resources) != 1 || res.Resources[0].Error != nil {
		t.Fatalf("IncrementalAlterConfigs delete: %+v, %v", res, err)
	}
	got = adminTopicConfigs(ctx, t, client, topic, "retention.ms", "max.message.bytes")
	if got["retention.ms"].ConfigValue != before["retention.ms"].ConfigValue || got["max.message.bytes"].ConfigValue != "65536" {
		t.Fatalf("configs after deleting retention.ms: %+v (before %+v)", got, before)
	}

	// ValidateOnly changes nothing.
	res, err = client.IncrementalAlterConfigs(ctx, &IncrementalAlterConfigsRequest{
		ValidateOnly: true,
		Resources: []IncrementalAlterConfigsRequestResource{{
			ResourceType: ResourceTypeTopic,
			ResourceName: topic,
			Configs:      []IncrementalAlterConfigsRequestConfig{{Name: "max.message.bytes", Value: "1000", ConfigOperation: ConfigOperationSet}},
		}},
	})
	if err != nil || len(res.Resources) != 1 || res.Resources[0].Error != nil {
		t.Fatalf("IncrementalAlterConfigs validate only: %+v, %v", res, err)
	}
	if v := adminTopicConfigs(ctx, t, client, topic, "max.message.bytes")["max.message.bytes"].ConfigValue; v != "65536" {
		t.Fatalf("max.message.bytes = %s after a validate-only change, want 65536", v)
	}

	res, err = client.IncrementalAlterConfigs(ctx, &IncrementalAlterConfigsRequest{
		Resources: []IncrementalAlterConfigsRequestResource{{
			ResourceType: ResourceTypeTopic,
			ResourceName: topic + "-missing",
			Configs:      []IncrementalAlterConfigsRequestConfig{{Name: "retention.ms", Value: "1", ConfigOperation: ConfigOperationSet}},
		}},
	})
	if err != nil || len(res.Resources) != 1 || !errors.Is(res.Resources[0].Error, UnknownTopicOrPartition) {
		t.Fatalf("altering a missing topic: %+v, %v; want UnknownTopicOrPartition", res, err)
	}
}
