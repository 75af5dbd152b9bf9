// Package prototest checks that protocol messages survive a trip through
// the wire codec: a message is written at a version, read back, and the
// result compared field by field with the original.
package prototest

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
)

// Bytes returns a protocol.Bytes holding b.
func Bytes(b []byte) protocol.Bytes { return protocol.NewBytes(b) }

// String returns a protocol.Bytes holding the bytes of s.
func String(s string) protocol.Bytes { return protocol.NewBytes([]byte(s)) }

const (
	testCorrelationID = 1234
	testClientID      = "me"
)

// TestRequest writes msg as a request of the given version, reads it back
// and fails t unless the header and the message come back unchanged.
func TestRequest(t *testing.T, version int16, msg protocol.Message) {
	snap := snapshot(msg)
	t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
		snap.restore()
		var buf bytes.Buffer
		if err := protocol.WriteRequest(&buf, version, testCorrelationID, testClientID, msg); err != nil {
			t.Fatal("write:", err)
		}
		wire := append([]byte(nil), buf.Bytes()...)
		snap.restore() // writing consumed the record readers
		apiVersion, correlationID, clientID, got, err := protocol.ReadRequest(&buf)
		if err != nil {
			t.Fatalf("read: %v\n%s", err, hex.Dump(wire))
		}
		if apiVersion != version {
			t.Errorf("version: got v%d, want v%d", apiVersion, version)
		}
		if correlationID != testCorrelationID {
			t.Errorf("correlation id: got %d, want %d", correlationID, testCorrelationID)
		}
		if clientID != testClientID {
			t.Errorf("client id: got %q, want %q", clientID, testClientID)
		}
		if buf.Len() != 0 {
			t.Errorf("%d bytes left after the request", buf.Len())
		}
		if diff := compare(msg, got); diff != "" {
			t.Errorf("request changed by the round trip: %s\n%s", diff, hex.Dump(wire))
		}
	})
}

// TestRequestWithOverride checks a request encoded with an override type
// (RegisterOverride): read back as the API's regular request type and
// written again, it must give the very same bytes.
func TestRequestWithOverride(t *testing.T, version int16, msg protocol.Message) {
	snap := snapshot(msg)
	t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
		snap.restore()
		var first bytes.Buffer
		if err := protocol.WriteRequest(&first, version, testCorrelationID, testClientID, msg); err != nil {
			t.Fatal("write:", err)
		}
		wire := append([]byte(nil), first.Bytes()...)
		snap.restore()
		_, _, _, got, err := protocol.ReadRequest(&first)
		if err != nil {
			t.Fatalf("read: %v\n%s", err, hex.Dump(wire))
		}
		var second bytes.Buffer
		if err := protocol.WriteRequest(&second, version, testCorrelationID, testClientID, got); err != nil {
			t.Fatal("second write:", err)
		}
		if !bytes.Equal(wire, second.Bytes()) {
			t.Errorf("override and regular encodings differ\noverride:\n%s\nregular:\n%s", hex.Dump(wire), hex.Dump(second.Bytes()))
		}
	})
}

// TestResponse writes msg as a response of the given version, reads it back
// and fails t unless it comes back unchanged.
func TestResponse(t *testing.T, version int16, msg protocol.Message) {
	snap := snapshot(msg)
	t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
		snap.restore()
		var buf bytes.Buffer
		if err := protocol.WriteResponse(&buf, version, testCorrelationID, msg); err != nil {
			t.Fatal("write:", err)
		}
		wire := append([]byte(nil), buf.Bytes()...)
		snap.restore()
		correlationID, got, err := protocol.ReadResponse(&buf, msg.ApiKey(), version)
		if err != nil {
			t.Fatalf("read: %v\n%s", err, hex.Dump(wire))
		}
		if correlationID != testCorrelationID {
			t.Errorf("correlation id: got %d, want %d", correlationID, testCorrelationID)
		}
		if buf.Len() != 0 {
			t.Errorf("%d bytes left after the response", buf.Len())
		}
		if diff := compare(msg, got); diff != "" {
			t.Errorf("response changed by the round trip: %s\n%s", diff, hex.Dump(wire))
		}
		release(got)
	})
}

// BenchmarkRequest measures writing and reading msg as a request.
func BenchmarkRequest(b *testing.B, version int16, msg protocol.Message) {
	snap := snapshot(msg)
	b.Run(fmt.Sprintf("v%d", version), func(b *testing.B) {
		snap.restore()
		var buf bytes.Buffer
		if err := protocol.WriteRequest(&buf, version, testCorrelationID, testClientID, msg); err != nil {
			b.Fatal(err)
		}
		wire := append([]byte(nil), buf.Bytes()...)

		b.Run("write", func(b *testing.B) {
			b.SetBytes(int64(len(wire)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				snap.restore()
				buf.Reset()
				if err := protocol.WriteRequest(&buf, version, testCorrelationID, testClientID, msg); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("read", func(b *testing.B) {
			b.SetBytes(int64(len(wire)))
			b.ReportAllocs()
			r := bytes.NewReader(wire)
			for i := 0; i < b.N; i++ {
				r.Reset(wire)
				_, _, _, got, err := protocol.ReadRequest(r)
				if err != nil {
					b.Fatal(err)
				}
				release(got)
			}
		})
	})
}

// BenchmarkResponse measures writing and reading msg as a response.
func BenchmarkResponse(b *testing.B, version int16, msg protocol.Message) {
	snap := snapshot(msg)
	b.Run(fmt.Sprintf("v%d", version), func(b *testing.B) {
		snap.restore()
		var buf bytes.Buffer
		if err := protocol.WriteResponse(&buf, version, testCorrelationID, msg); err != nil {
			b.Fatal(err)
		}
		wire := append([]byte(nil), buf.Bytes()...)
		key := msg.ApiKey()

		b.Run("write", func(b *testing.B) {
			b.SetBytes(int64(len(wire)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				snap.restore()
				buf.Reset()
				if err := protocol.WriteResponse(&buf, version, testCorrelationID, msg); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("read", func(b *testing.B) {
			b.SetBytes(int64(len(wire)))
			b.ReportAllocs()
			r := bytes.NewReader(wire)
			for i := 0; i < b.N; i++ {
				r.Reset(wire)
				_, got, err := protocol.ReadResponse(r, key, version)
				if err != nil {
					b.Fatal(err)
				}
				release(got)
			}
		})
	})
}
