package kafka

import (
	"errors"
	"testing"
)

func TestClientAlterConfigs(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	topic := adminTopic(t, client, 1)
	defaults := adminTopicConfigs(ctx, t, client, topic, "retention.ms", "cleanup.policy")

	alter := func(validate bool, configs ...AlterConfigRequestConfig) *AlterConfigsResponse {
		t.Helper()
		res, err := client.AlterConfigs(ctx, &AlterConfigsRequest{
			ValidateOnly: validate,
			Resources:    []AlterConfigRequestResource{{ResourceType: ResourceTypeTopic, ResourceName: topic, Configs: configs}},
		})
		if err != nil {
			t.Fatal(err)
		}
		key := AlterConfigsResponseResource{Type: int8(ResourceTypeTopic), Name: topic}
		if e, ok := res.Errors[key]; !ok || e != nil || len(res.Errors) != 1 {
			t.Fatalf("AlterConfigs errors %v, want a nil error for %+v", res.Errors, key)
		}
		return res
	}

	alter(false, AlterConfigRequestConfig{Name: "retention.ms", Value: "7777"}, AlterConfigRequestConfig{Name: "cleanup.policy", Value: "compact"})
	got := adminTopicConfigs(ctx, t, client, topic, "retention.ms", "cleanup.policy")
	if got["retention.ms"].ConfigValue != "7777" || got["cleanup.policy"].ConfigValue != "compact" {
		t.Fatalf("configs after AlterConfigs: %+v", got)
	}

	// AlterConfigs replaces the whole configuration: entries left out go
	// back to their defaults.
	alter(false, AlterConfigRequestConfig{Name: "retention.ms", Value: "8888"})
	got = adminTopicConfigs(ctx, t, client, topic, "retention.ms", "cleanup.policy")
	if got["retention.ms"].ConfigValue != "8888" || got["cleanup.policy"].ConfigValue != defaults["cleanup.policy"].ConfigValue {
		t.Fatalf("configs after replacing: %+v, want retention.ms 8888 and the default cleanup.policy", got)
	}

	alter(true, AlterConfigRequestConfig{Name: "retention.ms", Value: "1"})
	if v := adminTopicConfigs(ctx, t, client, topic, "retention.ms")["retention.ms"].ConfigValue; v != "8888" {
		t.Fatalf("retention.ms = %s after a validate-only change, want 8888", v)
	}

	missing := topic + "-missing"
	res, err := client.AlterConfigs(ctx, &AlterConfigsRequest{Resources: []AlterConfigRequestResource{{
		ResourceType: ResourceTypeTopic, ResourceName: missing,
		Configs: []AlterConfigRequestConfig{{Name: "retention.ms", Value: "1"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Errors[AlterConfigsResponseResource{Type: int8(ResourceTypeTopic), Name: missing}]; !errors.Is(e, UnknownTopicOrPartition) {
		t.Fatalf("altering a missing topic: %v, want UnknownTopicOrPartition", e)
	}
}
