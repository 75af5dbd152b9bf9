package apiversions_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"regexp"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

// wire builds expected bytes by hand, following the Kafka spec's primitive
// types, independently of the codec under test.
type wire []byte

func (w wire) i16(v int16) wire { return binary.BigEndian.AppendUint16(w, uint16(v)) }
func (w wire) i32(v int32) wire { return binary.BigEndian.AppendUint32(w, uint32(v)) }
func (w wire) i64(v int64) wire { return binary.BigEndian.AppendUint64(w, uint64(v)) }
func (w wire) uv(v uint64) wire { return binary.AppendUvarint(w, v) }
func (w wire) boolean(b bool) wire {
	if b {
		return append(w, 1)
	}
	return append(w, 0)
}

// cstr is COMPACT_STRING (uvarint length+1).
func (w wire) cstr(s string) wire { return append(w.uv(uint64(len(s))+1), s...) }

// raw appends bytes as they are (tagged-field sections, UUIDs, ...).
func (w wire) raw(b ...byte) wire { return append(w, b...) }

// requestBody encodes req at version v and strips the request header
// (client ID "c"; header v2 adds an empty tagged-field section).
func requestBody(t *testing.T, v int16, flexible bool, req protocol.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, v, 7, "c", req); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
		t.Fatalf("frame size %d, frame has %d bytes", got, len(b)-4)
	}
	hdr := 4 + 2 + 2 + 4 + 2 + 1
	if flexible {
		if b[hdr] != 0 {
			t.Fatalf("request header tagged fields: got %#x", b[hdr])
		}
		hdr++
	}
	return b[hdr:]
}

// responseBody encodes res at version v and strips the response header
// (header v1 adds an empty tagged-field section).
func responseBody(t *testing.T, v int16, taggedHeader bool, res protocol.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, v, 7, res); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
		t.Fatalf("frame size %d, frame has %d bytes", got, len(b)-4)
	}
	hdr := 8
	if taggedHeader {
		if b[hdr] != 0 {
			t.Fatalf("response header tagged fields: got %#x", b[hdr])
		}
		hdr++
	}
	return b[hdr:]
}

// readResponse frames body as a response of version v and decodes it.
func readResponse(t *testing.T, key protocol.ApiKey, v int16, taggedHeader bool, body []byte) protocol.Message {
	t.Helper()
	frame := wire{}.i32(0).i32(7)
	if taggedHeader {
		frame = frame.uv(0)
	}
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	id, msg, err := protocol.ReadResponse(bytes.NewReader(frame), key, v)
	if err != nil {
		t.Fatal(err)
	}
	if id != 7 {
		t.Fatalf("correlation ID %d", id)
	}
	return msg
}

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
	if got := requestBody(t, 1, false, &apiversions.Request{}); len(got) != 0 {
		t.Errorf("v1 request body: got % x, want nothing", got)
	}

	res := &apiversions.Response{
		ErrorCode:      0,
		ApiKeys:        []apiversions.ApiKeyResponse{{ApiKey: 3, MinVersion: 0, MaxVersion: 12}},
		ThrottleTimeMs: 5,
	}
	want := wire{}.i16(0).i32(1).i16(3).i16(0).i16(12).i32(5)
	if got := responseBody(t, 1, false, res); !bytes.Equal(got, want) {
		t.Errorf("v1 response:\ngot  % x\nwant % x", got, want)
	}
	if got := readResponse(t, protocol.ApiVersions, 1, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v1 response decoded as %+v", got)
	}
}

func TestApiVersionsGoldenV3(t *testing.T) {
	req := &apiversions.Request{ClientSoftwareName: "kgo", ClientSoftwareVersion: "1.0"}
	want := wire{}.cstr("kgo").cstr("1.0").uv(0)
	if got := requestBody(t, 3, true, req); !bytes.Equal(got, want) {
		t.Errorf("v3 request:\ngot  % x\nwant % x", got, want)
	}

	res := &apiversions.Response{
		ApiKeys:                []apiversions.ApiKeyResponse{{ApiKey: 18, MinVersion: 0, MaxVersion: 4}},
		ThrottleTimeMs:         1,
		SupportedFeatures:      []apiversions.SupportedFeature{{Name: "f", MinVersion: 1, MaxVersion: 2}},
		FinalizedFeaturesEpoch: 5,
		ZkMigrationReady:       true,
	}
	feature := wire{}.uv(2).cstr("f").i16(1).i16(2).uv(0)
	epoch := wire{}.i64(5)
	want = wire{}.i16(0).
		uv(2).i16(18).i16(0).i16(4).uv(0). // ApiKeys, one element
		i32(1).
		uv(3). // three tagged fields, by increasing tag; tag 2 is empty
		uv(0).uv(uint64(len(feature))).raw(feature...).
		uv(1).uv(uint64(len(epoch))).raw(epoch...).
		uv(3).uv(1).boolean(true)
	// ApiVersions responses keep header v0 even when flexible.
	if got := responseBody(t, 3, false, res); !bytes.Equal(got, want) {
		t.Errorf("v3 response:\ngot  % x\nwant % x", got, want)
	}
	if got := readResponse(t, protocol.ApiVersions, 3, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("v3 response decoded as %+v", got)
	}

	// Unknown tags are skipped.
	unknown := wire{}.i16(0).uv(1).uv(0).i32(0).uv(1).uv(9).uv(2).raw(0xAA, 0xBB)
	got := readResponse(t, protocol.ApiVersions, 3, false, unknown).(*apiversions.Response)
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
	want := wire{}.i16(0).uv(1).i32(0).
		uv(1).uv(1).uv(8).i64(0)
	if got := responseBody(t, 3, false, res); !bytes.Equal(got, want) {
		t.Errorf("epoch 0:\ngot  % x\nwant % x", got, want)
	}
	if got := readResponse(t, protocol.ApiVersions, 3, false, want); !reflect.DeepEqual(got, res) {
		t.Errorf("epoch 0 decoded as %+v", got)
	}

	res.FinalizedFeaturesEpoch = -1
	want = wire{}.i16(0).uv(1).i32(0).uv(0)
	if got := responseBody(t, 3, false, res); !bytes.Equal(got, want) {
		t.Errorf("epoch -1:\ngot  % x\nwant % x", got, want)
	}
	got := readResponse(t, protocol.ApiVersions, 4, false, want).(*apiversions.Response)
	if got.FinalizedFeaturesEpoch != -1 {
		t.Errorf("absent epoch decoded as %d, want -1", got.FinalizedFeaturesEpoch)
	}
}
