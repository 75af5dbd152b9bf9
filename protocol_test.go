package kafka

import (
	"fmt"
	"io"
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

func TestMakeInts(t *testing.T) {
	b := []byte{0xff, 0xfe, 0xfd, 0xfc, 0x01, 0x02, 0x03, 0x04}
	if makeInt8(b) != -1 || makeInt16(b) != -2 || makeInt32(b) != -66052 || makeInt64(b) != -283691162926332 {
		t.Fatal(makeInt8(b), makeInt16(b), makeInt32(b), makeInt64(b))
	}
	if expectZeroSize(0, nil) != nil || expectZeroSize(3, nil) == nil || expectZeroSize(3, io.EOF) != io.EOF {
		t.Fatal("expectZeroSize")
	}
}
