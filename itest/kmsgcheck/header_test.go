package kmsgcheck

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// headerCases are API versions on each side of the switch to flexible
// versions, where the request header goes from v1 to v2 and the response
// header from v0 to v1 (never, for ApiVersions).
var headerCases = []struct {
	key      protocol.ApiKey
	versions []int16
}{
	{protocol.ApiVersions, []int16{0, 2, 3}},
	{protocol.Metadata, []int16{0, 8, 9}},
	{protocol.Produce, []int16{3, 8, 9}},
	{protocol.Fetch, []int16{4, 11, 12}},
	{protocol.FindCoordinator, []int16{2, 3}},
	{protocol.ListOffsets, []int16{5, 6}},
	{protocol.SaslHandshake, []int16{1}},
}

func filledRequest(t *testing.T, key protocol.ApiKey, v int16) kmsg.Request {
	t.Helper()
	req, err := buildRequest(oracleCase{key: key, version: v, mode: fillAll})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestRequestHeaderFraming compares our request frames, header v1 or v2,
// with kmsg's RequestFormatter for several client IDs, and reads kmsg's
// frames back with ReadRequest.
func TestRequestHeaderFraming(t *testing.T) {
	for _, hc := range headerCases {
		for _, v := range hc.versions {
			for _, clientID := range []string{"kmsgcheck-client", "", "ünïcode/ID with spaces"} {
				t.Run(fmt.Sprintf("%s/v%d/client=%q", hc.key, v, clientID), func(t *testing.T) {
					req := filledRequest(t, hc.key, v)
					// Both implementations send a non-empty client ID as a
					// nullable string, never compact. An empty one is sent
					// as "" in header v1, which old brokers need, and as
					// null in header v2, as upstream does.
					f := kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))
					if clientID == "" && req.IsFlexible() {
						f = kmsg.NewRequestFormatter()
					}
					want := f.AppendRequest(nil, req, 77)

					_, _, _, msg, err := protocol.ReadRequest(bytes.NewReader(want))
					if err != nil {
						t.Fatal(err)
					}
					var out bytes.Buffer
					if err := protocol.WriteRequest(&out, v, 77, clientID, msg); err != nil {
						t.Fatal(err)
					}
					if got := out.Bytes(); !bytes.Equal(got, want) {
						t.Fatalf("frames differ: %s", bytesDiff(want, got))
					}
					wantHeader := 4 + 2 + 2 + 4 + 2 + len(clientID)
					if clientID == "" && req.IsFlexible() {
						wantHeader = 4 + 2 + 2 + 4 + 2 // null: length -1
					}
					if req.IsFlexible() {
						wantHeader++ // empty tagged fields
					}
					if body := req.AppendTo(nil); len(want)-len(body) != wantHeader {
						t.Fatalf("header of %d bytes, want %d", len(want)-len(body), wantHeader)
					}
				})
			}
		}
	}
}

// TestReadRequestHeaderVariants reads request frames that kmsg (or a Java
// client) may send and that our own writer never does: a null client ID in
// header v1, and a header v2 with a tagged field.
func TestReadRequestHeaderVariants(t *testing.T) {
	for _, hc := range headerCases {
		for _, v := range hc.versions {
			t.Run(fmt.Sprintf("%s/v%d", hc.key, v), func(t *testing.T) {
				req := filledRequest(t, hc.key, v)
				frame := kmsg.NewRequestFormatter().AppendRequest(nil, req, 99) // null client ID
				if req.IsFlexible() {
					frame = withHeaderTag(frame, 4+2+2+4+2)
				}
				gotV, corr, clientID, msg, err := protocol.ReadRequest(bytes.NewReader(frame))
				if err != nil {
					t.Fatal(err)
				}
				if gotV != v || corr != 99 || clientID != "" {
					t.Fatalf("got version %d, correlation id %d, client ID %q", gotV, corr, clientID)
				}
				var out bytes.Buffer
				if err := protocol.WriteRequest(&out, v, 99, "x", msg); err != nil {
					t.Fatal(err)
				}
				want := kmsg.NewRequestFormatter(kmsg.FormatterClientID("x")).AppendRequest(nil, req, 99)
				if !bytes.Equal(out.Bytes(), want) {
					t.Fatalf("frames differ: %s", bytesDiff(want, out.Bytes()))
				}
			})
		}
	}
}

// withHeaderTag replaces the empty tagged-fields section at offset at of a
// frame with one holding an unknown tag, and fixes the frame size.
func withHeaderTag(frame []byte, at int) []byte {
	if frame[at] != 0 {
		panic("no empty tagged-fields section there")
	}
	out := append([]byte(nil), frame[:at]...)
	out = append(out, 1, 9, 3, 'a', 'b', 'c') // one field: tag 9, 3 bytes
	out = append(out, frame[at+1:]...)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out
}

// TestResponseHeaderFraming checks response header v0 and v1 both ways: our
// WriteResponse writes the header a broker writes (v1 only for flexible
// versions other than ApiVersions), and ReadResponse skips tagged fields
// in a v1 header.
func TestResponseHeaderFraming(t *testing.T) {
	for _, hc := range headerCases {
		for _, v := range hc.versions {
			t.Run(fmt.Sprintf("%s/v%d", hc.key, v), func(t *testing.T) {
				res := kmsg.ResponseForKey(int16(hc.key))
				f := filler{mode: fillAll, version: v, legacy: legacyRecords(hc.key, v)}
				f.fillMessage(res)
				res.SetVersion(v)
				body := res.AppendTo(nil)
				frame := responseFrame(hc.key, res, -5, body)

				headerV1 := res.IsFlexible() && hc.key != protocol.ApiVersions
				wantHeader := 4
				if headerV1 {
					wantHeader = 5
				}
				if got := len(frame) - 4 - len(body); got != wantHeader {
					t.Fatalf("harness: header of %d bytes, want %d", got, wantHeader)
				}

				corr, msg, err := protocol.ReadResponse(bytes.NewReader(frame), hc.key, v)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if err := protocol.WriteResponse(&out, v, -5, msg); err != nil {
					t.Fatal(err)
				}
				if corr != -5 || !bytes.Equal(out.Bytes(), frame) {
					t.Fatalf("correlation id %d; frames differ: %s", corr, bytesDiff(frame, out.Bytes()))
				}

				if headerV1 {
					tagged := withHeaderTag(frame, 4+4)
					corr, msg2, err := protocol.ReadResponse(bytes.NewReader(tagged), hc.key, v)
					if err != nil {
						t.Fatalf("response header with a tagged field: %v", err)
					}
					out.Reset()
					if err := protocol.WriteResponse(&out, v, corr, msg2); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(out.Bytes(), frame) {
						t.Fatalf("after a tagged header field, frames differ: %s", bytesDiff(frame, out.Bytes()))
					}
				}
			})
		}
	}
}

// TestTableCoversRegisteredPackages keeps apiPackages complete: every
// sub-package of protocol that registers message types must be in it, or
// the oracle would silently skip its API.
func TestTableCoversRegisteredPackages(t *testing.T) {
	dirs, err := filepath.Glob("../../protocol/*/*.go")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("cannot list the protocol sub-packages: %v", err)
	}
	inTable := map[string]bool{}
	keys := map[protocol.ApiKey]string{}
	for _, p := range apiPackages {
		inTable[p.dir] = true
		key := p.req().ApiKey()
		if other, ok := keys[key]; ok {
			t.Errorf("API %s in both %s and %s", key, other, p.dir)
		}
		keys[key] = p.dir
		if p.res().ApiKey() != key {
			t.Errorf("%s: request and response API keys differ", p.dir)
		}
	}
	registering := map[string]bool{}
	for _, file := range dirs {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// Overrides (rawproduce) share the API of a registered package and
		// are checked by the /raw cases.
		if bytes.Contains(src, []byte("protocol.Register(")) {
			registering[filepath.Base(filepath.Dir(file))] = true
		}
	}
	for dir := range registering {
		if !inTable[dir] {
			t.Errorf("protocol/%s registers message types but is not in apiPackages", dir)
		}
	}
	for dir := range inTable {
		if !registering[dir] {
			t.Errorf("apiPackages lists protocol/%s, which registers nothing", dir)
		}
	}
}

// TestRegisteredRanges checks what the oracle relies on: each API's request
// and response accept exactly the versions MinVersion..MaxVersion, and kmsg
// knows every one of them.
func TestRegisteredRanges(t *testing.T) {
	for _, p := range registeredAPIs(t) {
		key := p.req().ApiKey()
		lo, hi := key.MinVersion(), key.MaxVersion()
		if reason, ok := kmsgCannotExpress[key]; ok {
			t.Logf("%s v%d-v%d not checked against kmsg: %s", key, lo, hi, reason)
			continue
		}
		if kreq := kmsg.RequestForKey(int16(key)); kreq == nil || kreq.MaxVersion() < hi {
			t.Errorf("%s: kmsg cannot express v%d; list it in kmsgCannotExpress with the reason", key, hi)
		}
		for _, v := range []int16{lo - 1, hi + 1} {
			if v < 0 {
				continue
			}
			if err := protocol.WriteRequest(new(bytes.Buffer), v, 1, "", p.req()); err == nil {
				t.Errorf("%s: request v%d, outside v%d-v%d, encodes", key, v, lo, hi)
			}
			if err := protocol.WriteResponse(new(bytes.Buffer), v, 1, p.res()); err == nil {
				t.Errorf("%s: response v%d, outside v%d-v%d, encodes", key, v, lo, hi)
			}
		}
	}
	// The clips of the codec contract.
	if got := protocol.Produce.MaxVersion(); got != 11 {
		t.Errorf("Produce max version %d, want 11", got)
	}
	if got := protocol.Fetch.MaxVersion(); got != 12 {
		t.Errorf("Fetch max version %d, want 12", got)
	}
}
