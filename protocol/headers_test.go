package protocol_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/apiversions"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ApiVersions is flexible from v3, but its response header stays v0 (no
// tagged-fields byte after the correlation ID); its request header is v2.
func TestApiVersionsHeaders(t *testing.T) {
	var buf bytes.Buffer
	// FinalizedFeaturesEpoch at its default (-1) stays off the wire.
	res := &apiversions.Response{ApiKeys: []apiversions.ApiKeyResponse{{ApiKey: 18, MinVersion: 0, MaxVersion: 3}}, FinalizedFeaturesEpoch: -1}
	if err := protocol.WriteResponse(&buf, 3, 5, res); err != nil {
		t.Fatal(err)
	}
	want := unhex(t, `00000013 00000005
		0000
		02 0012 0000 0003 00
		00000000
		00`)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("got  %x\nwant %x", buf.Bytes(), want)
	}
	id, got, err := protocol.ReadResponse(&buf, protocol.ApiVersions, 3)
	if err != nil || id != 5 {
		t.Fatalf("id=%d err=%v", id, err)
	}
	if keys := got.(*apiversions.Response).ApiKeys; len(keys) != 1 || keys[0].MaxVersion != 3 {
		t.Fatalf("decoded %+v", got)
	}

	buf.Reset()
	req := &apiversions.Request{ClientSoftwareName: "kg", ClientSoftwareVersion: "1"}
	if err := protocol.WriteRequest(&buf, 3, 6, "id", req); err != nil {
		t.Fatal(err)
	}
	want = unhex(t, `00000013 0012 0003 00000006 0002 6964 00
		03 6b67 02 31 00`)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("got  %x\nwant %x", buf.Bytes(), want)
	}
}

func TestNilMessage(t *testing.T) {
	var buf bytes.Buffer
	if err := protocol.WriteRequest(&buf, 0, 1, "", nil); err == nil {
		t.Fatal("no error for a nil message")
	}
	if err := protocol.WriteRequest(&buf, 0, 1, "", (*apiversions.Request)(nil)); err == nil {
		t.Fatal("no error for a nil pointer")
	}
	if buf.Len() != 0 {
		t.Fatalf("%d bytes written", buf.Len())
	}
}
