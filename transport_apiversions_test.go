package kafka

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
)

// avBroker plays a broker's side of the ApiVersions negotiation on one end of
// a pipe: for each request it records the version asked and writes the raw
// body that answer(version) returns, framed with the request's correlation ID.
type avBroker struct {
	requests [][]byte // every request frame received, size prefix included
	versions []int16
}

func (b *avBroker) serve(t *testing.T, nc net.Conn, answer func(version int16) string) {
	defer nc.Close()
	for {
		var size [4]byte
		if _, err := io.ReadFull(nc, size[:]); err != nil {
			return
		}
		req := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(nc, req); err != nil {
			return
		}
		b.requests = append(b.requests, append(size[:], req...))
		if key := int16(binary.BigEndian.Uint16(req)); key != int16(protocol.ApiVersions) {
			t.Errorf("request for API key %d during the negotiation", key)
			return
		}
		version := int16(binary.BigEndian.Uint16(req[2:]))
		b.versions = append(b.versions, version)
		body, err := hex.DecodeString(strings.ReplaceAll(answer(version), " ", ""))
		if err != nil {
			t.Errorf("bad hex in the test: %v", err)
			return
		}
		res := make([]byte, 8, 8+len(body))
		binary.BigEndian.PutUint32(res, uint32(4+len(body)))
		copy(res[4:8], req[4:8]) // correlation ID
		if _, err := nc.Write(append(res, body...)); err != nil {
			return
		}
	}
}

// negotiateWith runs the client's negotiation against answer and returns the
// handshake, the broker's record, and the negotiation's error.
func negotiateWith(t *testing.T, answer func(version int16) string) (*handshake, *avBroker, error) {
	t.Helper()
	client, server := net.Pipe()
	t.Cleanup(func() { client.Close() })
	client.SetDeadline(time.Now().Add(20 * time.Second)) // a hang guard
	b := &avBroker{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.serve(t, server, answer)
	}()
	hs := &handshake{nc: client, br: bufio.NewReader(client), clientID: "c", address: "broker:9092"}
	err := hs.negotiate()
	client.Close()
	<-done
	return hs, b, err
}

func avEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func avNoError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("negotiation failed: %v", err)
	}
}

// A broker supporting ApiVersions v0..v2, whose successful v2 answer lists
// ApiVersions 0..2 and Produce 0..9 (error, 2 entries, throttle time).
const avV2Answer = "0000 00000002 0012 0000 0002 0000 0000 0009 00000000"

func TestApiVersionsFallbackAnswerLayouts(t *testing.T) {
	maxV := protocol.ApiVersions.MaxVersion()
	if maxV < 3 {
		t.Fatalf("we open in v%d; these layouts only matter above v2", maxV)
	}

	tests := []struct {
		name    string
		refusal string // body answered to every version above 2
	}{
		// Kafka (KIP-511): a v0 body whatever the version asked, with the
		// broker's ApiVersions range as the only entry.
		{"v0 body (Kafka)", "0023 00000001 0012 0000 0002"},
		// The requested (flexible) version's layout, as specified: compact
		// array of 1 (encoded 2), the entry and its empty tagged fields,
		// the throttle time, the body's empty tagged fields.
		{"requested version's body", "0023 02 0012 0000 0002 00 00000000 00"},
		// librdkafka's mock cluster (2.0.2), captured from it: a one-byte
		// count of 1, the entry without tagged fields, the throttle time.
		{"librdkafka mock body", "0023 01 0012 0000 0002 00000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs, b, err := negotiateWith(t, func(v int16) string {
				if v > 2 {
					return tt.refusal
				}
				return avV2Answer
			})
			avNoError(t, err)
			// One refusal, then straight to the broker's highest version.
			avEqual(t, "b.versions", b.versions, []int16{maxV, 2})
			avEqual(t, "hs.ranges[protocol.Produce]", hs.ranges[protocol.Produce], [2]int16{0, 9})
			avEqual(t, "hs.ranges[protocol.ApiVersions]", hs.ranges[protocol.ApiVersions], [2]int16{0, 2})
			if _, ok := hs.versions[protocol.Produce]; !ok {
				t.Errorf("no Produce version negotiated: %v", hs.versions)
			}
		})
	}
}

// The bytes we send: the first request in our highest (flexible) version
// with the client software fields, the retry in v2 with an empty body.
func TestApiVersionsFallbackRequestBytes(t *testing.T) {
	_, b, err := negotiateWith(t, func(v int16) string {
		if v > 2 {
			return "0023 01 0012 0000 0002 00000000"
		}
		return avV2Answer
	})
	avNoError(t, err)
	if len(b.requests) != 2 {
		t.Fatalf("%d requests, want 2", len(b.requests))
	}

	maxV := protocol.ApiVersions.MaxVersion()
	first := "00000027" + // size: 39
		"0012" + hex.EncodeToString([]byte{byte(maxV >> 8), byte(maxV)}) + "00000001" +
		"0001" + hex.EncodeToString([]byte("c")) + "00" + // client ID, header tags
		"13" + hex.EncodeToString([]byte(clientSoftwareName)) +
		"07" + hex.EncodeToString([]byte(clientSoftwareVersion)) + "00"
	avEqual(t, "hex.EncodeToString(b.requests[0])", hex.EncodeToString(b.requests[0]), first)
	second := "0000000b" + "0012" + "0002" + "00000002" + "0001" + hex.EncodeToString([]byte("c"))
	avEqual(t, "hex.EncodeToString(b.requests[1])", hex.EncodeToString(b.requests[1]), second)
}

// A broker that supports only v0..v2 but whose refusal says nothing usable
// (no entries, or bytes in none of the known layouts): we step down one
// version at a time until it answers.
func TestApiVersionsFallbackWithoutRange(t *testing.T) {
	maxV := protocol.ApiVersions.MaxVersion()
	var want []int16
	for v := maxV; v >= 2; v-- {
		want = append(want, v)
	}
	for name, refusal := range map[string]string{
		"no entries, v0":       "0023 00000000",
		"no entries, mock":     "0023 00 00000000",
		"truncated":            "0023 0000",
		"error code only":      "0023",
		"other API only, v0":   "0023 00000001 0000 0000 0009",
		"count past the bytes": "0023 7fffffff 0012 0000 0002",
		"negative count":       "0023 ffffffff",
	} {
		t.Run(name, func(t *testing.T) {
			hs, b, err := negotiateWith(t, func(v int16) string {
				if v > 2 {
					return refusal
				}
				return avV2Answer
			})
			avNoError(t, err)
			avEqual(t, "b.versions", b.versions, want)
			avEqual(t, "hs.ranges[protocol.Produce]", hs.ranges[protocol.Produce], [2]int16{0, 9})
		})
	}
}

// A broker whose range tops out at v0: we ask v0 next, whose answer has no
// throttle time.
func TestApiVersionsFallbackToV0(t *testing.T) {
	hs, b, err := negotiateWith(t, func(v int16) string {
		if v > 0 {
			return "0023 00000001 0012 0000 0000"
		}
		return "0000 00000002 0012 0000 0000 0000 0000 0007"
	})
	avNoError(t, err)
	avEqual(t, "b.versions", b.versions, []int16{protocol.ApiVersions.MaxVersion(), 0})
	avEqual(t, "hs.ranges[protocol.Produce]", hs.ranges[protocol.Produce], [2]int16{0, 7})
}

// A range above the version refused (a confused broker) never makes us ask
// the same or a higher version again; a broker refusing every version ends
// the negotiation with UNSUPPORTED_VERSION after one request per version.
func TestApiVersionsFallbackEnds(t *testing.T) {
	maxV := protocol.ApiVersions.MaxVersion()
	_, b, err := negotiateWith(t, func(v int16) string {
		return "0023 00000001 0012 0000 7fff"
	})
	if !errors.Is(err, UnsupportedVersion) || !strings.Contains(err.Error(), "broker:9092") {
		t.Fatalf("error %v, want UNSUPPORTED_VERSION naming the broker", err)
	}
	var want []int16
	for v := maxV; v >= 0; v-- {
		want = append(want, v)
	}
	avEqual(t, "b.versions", b.versions, want)
}

// Other errors and broken answers are reported, not retried.
func TestApiVersionsOtherAnswers(t *testing.T) {
	_, b, err := negotiateWith(t, func(v int16) string { return "0021" }) // UNSUPPORTED_SASL_MECHANISM, truncated
	if err == nil || len(b.versions) != 1 {
		t.Fatalf("truncated answer: error %v after %d requests, want an error after 1", err, len(b.versions))
	}

	_, b, err = negotiateWith(t, func(v int16) string {
		// INVALID_REQUEST, as a flexible body with no entries.
		return "002a 01 00000000 00"
	})
	if !errors.Is(err, InvalidRequest) || len(b.versions) != 1 {
		t.Fatalf("INVALID_REQUEST answer: error %v after %d requests, want INVALID_REQUEST after 1", err, len(b.versions))
	}
}

// A refusal carrying another request's correlation ID is an error, not a
// retry on a stream that is out of step.
func TestApiVersionsRefusalCorrelationID(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	client.SetDeadline(time.Now().Add(20 * time.Second))
	go func() {
		defer server.Close()
		var size [4]byte
		if _, err := io.ReadFull(server, size[:]); err != nil {
			return
		}
		if _, err := io.CopyN(io.Discard, server, int64(binary.BigEndian.Uint32(size[:]))); err != nil {
			return
		}
		// Size 10, correlation ID 99 (the request's is 1), a v0 refusal.
		res, _ := hex.DecodeString("0000000a" + "00000063" + "0023" + "00000000")
		server.Write(res)
	}()
	hs := &handshake{nc: client, br: bufio.NewReader(client), clientID: "c", address: "a"}
	err := hs.negotiate()
	if err == nil || !strings.Contains(err.Error(), "correlation ID") {
		t.Fatalf("error %v, want a correlation ID mismatch", err)
	}
}

func FuzzApiVersionsRefusal(f *testing.F) {
	for _, s := range []string{
		"002300000001001200000002",
		"0023020012000000020000000000",
		"00230100120000000200000000",
		"0023",
	} {
		b, _ := hex.DecodeString(s)
		f.Add(b, int16(3))
		f.Add(b, int16(0))
	}
	f.Fuzz(func(t *testing.T, body []byte, version int16) {
		if len(body) < 2 || version < 0 || version > protocol.ApiVersions.MaxVersion() {
			return
		}
		res := apiVersionsRefusal(body, version)
		if res.ErrorCode != int16(UnsupportedVersion) {
			t.Fatalf("error code %d", res.ErrorCode)
		}
		if len(res.ApiKeys) > len(body) {
			t.Fatalf("%d entries from %d bytes", len(res.ApiKeys), len(body))
		}
	})
}
