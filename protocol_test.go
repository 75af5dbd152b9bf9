package kafka

import (
	"fmt"
	"testing"
)

func TestApiVersionFormat(t *testing.T) {
	v := ApiVersion{ApiKey: 3, MinVersion: 1, MaxVersion: 12}
	tests := map[string]string{
		"%s":  "Metadata",
		"%d":  "3",
		"%-d": "1",
		"%+d": "12",
		"%v":  "Metadata[v1:v12]",
		"%-v": "v1",
		"%+v": "v12",
		"%#v": "kafka.ApiVersion{ApiKey:3 MinVersion:1 MaxVersion:12}",
	}
	for format, want := range tests {
		if got := fmt.Sprintf(format, v); got != want {
			t.Errorf("%s: got %q, want %q", format, got, want)
		}
	}
	if got := fmt.Sprint(ApiVersion{ApiKey: 999}); got != "999[v0:v0]" {
		t.Errorf("unknown key: got %q", got)
	}
	for key, name := range map[int16]string{0: "Produce", 1: "Fetch", 18: "ApiVersions", 44: "IncrementalAlterConfigs", 51: "AlterUserScramCredentials", 68: "ConsumerGroupHeartbeat"} {
		if got := fmt.Sprintf("%s", ApiVersion{ApiKey: key}); got != name {
			t.Errorf("key %d: got %q want %q", key, got, name)
		}
	}
}
