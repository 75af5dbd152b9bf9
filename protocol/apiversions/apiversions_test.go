package apiversions_test

import (
	"bytes"
	"reflect"
	"regexp"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestApiVersionsRoundTrip(t *testing.T) {
	keys := []apiversions.ApiKeyResponse{{ApiKey: 0, MinVersion: 3, MaxVersion: 11}, {ApiKey: 18, MinVersion: 0, MaxVersion: 4}}

	prototest.TestRequest(t, 0, &apiversions.Request{})
	prototest.TestRequest(t, 2, &apiversions.Request{})
	prototest.TestRequest(t, 4, &apiversions.Request{ClientSoftwareName: "kafka-go", ClientSoftwareVersion: "v0.4.51"})

	prototest.TestResponse(t, 0, &apiversions.Response{ErrorCode: 35, ApiKeys: keys})
	prototest.TestResponse(t, 2, &apiversions.Response{ApiKeys: keys, ThrottleTimeMs: 10})
	prototest.TestResponse(t, 4, &apiversions.Response{
		ApiKeys:                keys,
		ThrottleTimeMs:         10,
		SupportedFeatures:      []apiversions.SupportedFeature{{Name: "metadata.version", MinVersion: 1, MaxVersion: 20}},
		FinalizedFeaturesEpoch: 42,
		FinalizedFeatures:      []apiversions.FinalizedFeature{{Name: "metadata.version", MaxVersionLevel: 20, MinVersionLevel: 20}},
		ZkMigrationReady:       true,
	})
}

func TestApiVersionsGoldenV1(t *testing.T) {
	if got := prototest.RequestBody(t, 1, false, &apiversions.Request{}); len(got) != 0 {
		t.Errorf("v1 request body: got % x, want nothing", got)
	}

	res := &apiversions.Response{
		ErrorCode:      0,
		ApiKeys:        []apiversions.ApiKeyResponse{{ApiKey: 3, MinVersion: 0, MaxVersion: 12}},
		ThrottleTimeMs: 5,
	}
	want := prototest.Wire{}.I16(0).I32(1).I16(3).I16(0).I16(12).I32(5)
	if got := prototest.ResponseBody(t, 1, false, res); !bytes.Equal(got, want) {
		t.Errorf("v1 response:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadResponse(t, protocol.ApiVersions, 1, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v1 response decoded as %+v", got)
	}
}

func TestApiVersionsGoldenV3(t *testing.T) {
	req := &apiversions.Request{ClientSoftwareName: "kgo", ClientSoftwareVersion: "1.0"}
	want := prototest.Wire{}.CompactString("kgo").CompactString("1.0").Uvarint(0)
	if got := prototest.RequestBody(t, 3, true, req); !bytes.Equal(got, want) {
		t.Errorf("v3 request:\ngot  % x\nwant % x", got, want)
	}

	res := &apiversions.Response{
		ApiKeys:                []apiversions.ApiKeyResponse{{ApiKey: 18, MinVersion: 0, MaxVersion: 4}},
		ThrottleTimeMs:         1,
		SupportedFeatures:      []apiversions.SupportedFeature{{Name: "f", MinVersion: 1, MaxVersion: 2}},
		FinalizedFeaturesEpoch: 5,
		ZkMigrationReady:       true,
	}
	feature := prototest.Wire{}.Uvarint(2).CompactString("f").I16(1).I16(2).Uvarint(0)
	epoch := prototest.Wire{}.I64(5)
	want = prototest.Wire{}.I16(0).
		Uvarint(2).I16(18).I16(0).I16(4).Uvarint(0). // ApiKeys, one element
		I32(1).
		Uvarint(3). // three tagged fields, by increasing tag; tag 2 is empty
		Uvarint(0).Uvarint(uint64(len(feature))).Raw(feature...).
		Uvarint(1).Uvarint(uint64(len(epoch))).Raw(epoch...).
		Uvarint(3).Uvarint(1).Bool(true)
	// ApiVersions responses keep header v0 even when flexible.
	if got := prototest.ResponseBody(t, 3, false, res); !bytes.Equal(got, want) {
		t.Errorf("v3 response:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadResponse(t, protocol.ApiVersions, 3, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v3 response decoded as %+v", got)
	}

	// Unknown tags are skipped.
	unknown := prototest.Wire{}.I16(0).Uvarint(1).Uvarint(0).I32(0).Uvarint(1).Uvarint(9).Uvarint(2).Raw(0xAA, 0xBB)
	got := prototest.ReadResponse(t, protocol.ApiVersions, 3, false, unknown).(*apiversions.Response)
	if got.ErrorCode != 0 || len(got.ApiKeys) != 0 || got.SupportedFeatures != nil {
		t.Errorf("response with an unknown tag decoded as %+v", got)
	}
}

func TestApiVersionsPrepare(t *testing.T) {
	r := &apiversions.Request{}
	r.Prepare(2)
	if r.ClientSoftwareName != "" || r.ClientSoftwareVersion != "" {
		t.Errorf("v2 request changed: %+v", r)
	}
	valid := regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)
	r.Prepare(3)
	if !valid.MatchString(r.ClientSoftwareName) || !valid.MatchString(r.ClientSoftwareVersion) {
		t.Errorf("v3 software name %q, version %q: brokers refuse them", r.ClientSoftwareName, r.ClientSoftwareVersion)
	}
	r = &apiversions.Request{ClientSoftwareName: "app", ClientSoftwareVersion: "1"}
	r.Prepare(4)
	if r.ClientSoftwareName != "app" || r.ClientSoftwareVersion != "1" {
		t.Errorf("caller's values replaced: %+v", r)
	}
}

// FinalizedFeaturesEpoch defaults to -1: 0 is a real epoch that is sent, -1
// is left out, and a response without it reads as -1.
func TestApiVersionsFinalizedEpochDefault(t *testing.T) {
	res := &apiversions.Response{ApiKeys: []apiversions.ApiKeyResponse{}, FinalizedFeaturesEpoch: 0}
	want := prototest.Wire{}.I16(0).Uvarint(1).I32(0).
		Uvarint(1).Uvarint(1).Uvarint(8).I64(0)
	if got := prototest.ResponseBody(t, 3, false, res); !bytes.Equal(got, want) {
		t.Errorf("epoch 0:\ngot  % x\nwant % x", got, want)
	}
	if got := prototest.ReadResponse(t, protocol.ApiVersions, 3, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("epoch 0 decoded as %+v", got)
	}

	res.FinalizedFeaturesEpoch = -1
	want = prototest.Wire{}.I16(0).Uvarint(1).I32(0).Uvarint(0)
	if got := prototest.ResponseBody(t, 3, false, res); !bytes.Equal(got, want) {
		t.Errorf("epoch -1:\ngot  % x\nwant % x", got, want)
	}
	got := prototest.ReadResponse(t, protocol.ApiVersions, 4, false, want).(*apiversions.Response)
	if got.FinalizedFeaturesEpoch != -1 {
		t.Errorf("absent epoch decoded as %d, want -1", got.FinalizedFeaturesEpoch)
	}
}
