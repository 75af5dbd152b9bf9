package fetch_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// FuzzFetchResponse feeds arbitrary response bodies to the decoder at
// every version: it must fail cleanly, never panic or over-allocate, and
// what it accepts must encode again, unless reading one of its record sets
// fails (batches of a response are checked as they are read).
func FuzzFetchResponse(f *testing.F) {
	f.Add(uint8(0), []byte{})
	f.Add(uint8(12-0), []byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(0), []byte{0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, v uint8, body []byte) {
		version := int16(0) + int16(v)%(12-0+1)
		frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
		frame = binary.BigEndian.AppendUint32(frame, 1)
		if version >= 12 && protocol.Fetch != protocol.ApiVersions {
			frame = append(frame, 0) // response header v1
			binary.BigEndian.PutUint32(frame, uint32(5+len(body)))
		}
		frame = append(frame, body...)
		_, msg, err := protocol.ReadResponse(bytes.NewReader(frame), protocol.Fetch, version)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := protocol.WriteResponse(&out, version, 1, msg); err != nil {
			// Encoding read the records; decode again to see whether
			// reading them fails on its own.
			_, again, _ := protocol.ReadResponse(bytes.NewReader(frame), protocol.Fetch, version)
			if readErr := readAllRecords(again.(*fetch.Response)); readErr == nil {
				t.Fatalf("v%d: decoded response does not encode: %v", version, err)
			}
		}
	})
}

// readAllRecords reads every record of res and returns the first error
// other than the end of a set.
func readAllRecords(res *fetch.Response) error {
	for _, topic := range res.Topics {
		for _, p := range topic.Partitions {
			if p.RecordSet.Records == nil {
				continue
			}
			for {
				_, err := p.RecordSet.Records.ReadRecord()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}
