package kmsgcheck

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTruncatedBodies cuts kmsg's message bodies short (keeping the frame
// consistent, so that the decoder itself meets the end of the data) at every
// length, and requires our decoder to return an error: every byte of those
// bodies is needed, so a decoder that succeeds has read past the end or
// guessed, and one that panics takes the whole client down.
func TestTruncatedBodies(t *testing.T) {
	for _, c := range allCases(t) {
		if c.mode != fillAll || c.raw {
			continue
		}
		t.Run(c.name(), func(t *testing.T) {
			var frame []byte
			var hdrLen int
			if c.response {
				res := kmsg.ResponseForKey(int16(c.key))
				f := filler{mode: c.mode, version: c.version, legacy: legacyRecords(c.key, c.version)}
				f.fillMessage(res)
				res.SetVersion(c.version)
				body := res.AppendTo(nil)
				frame = responseFrame(c.key, res, 1, body)
				hdrLen = len(frame) - len(body)
			} else {
				req, err := buildRequest(c)
				if err != nil {
					t.Fatal(err)
				}
				body := req.AppendTo(nil)
				frame = kmsg.NewRequestFormatter(kmsg.FormatterClientID("x")).AppendRequest(nil, req, 1)
				hdrLen = len(frame) - len(body)
			}
			var passed []int
			for n := hdrLen; n < len(frame); n++ {
				cut := append([]byte(nil), frame[:n]...)
				binary.BigEndian.PutUint32(cut, uint32(n-4))
				p, err := decodeFrame(c, cut)
				if p != nil {
					t.Fatalf("body cut to %d bytes: decoder panics: %v", n-hdrLen, p)
				}
				if err == nil {
					passed = append(passed, n-hdrLen)
				}
			}
			if len(passed) > 0 {
				t.Errorf("bodies of %d bytes cut to %v bytes decode without error", len(frame)-hdrLen, passed)
			}
		})
	}
}

// decodeFrame decodes a whole frame with our codec; a panic is reported
// apart from errors, as it is never acceptable.
func decodeFrame(c oracleCase, frame []byte) (panicked any, err error) {
	defer func() {
		panicked = recover()
	}()
	if c.response {
		_, _, err = protocol.ReadResponse(bytes.NewReader(frame), c.key, c.version)
	} else {
		_, _, _, _, err = protocol.ReadRequest(bytes.NewReader(frame))
	}
	return nil, err
}
