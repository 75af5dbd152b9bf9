package fetch_test

import (
	"errors"
	"io"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

// FuzzFetchResponse: a decoded response that does not encode again is a
// failure, unless reading one of its record sets fails on its own (the
// batches of a response are checked as they are read).
func FuzzFetchResponse(f *testing.F) {
	prototest.FuzzResponse(f, prototest.ResponseFuzz{
		Key:              protocol.Fetch,
		MinVersion:       0,
		MaxVersion:       12,
		TaggedHeaderFrom: 12,
		EncodeMayFail: func(again protocol.Message) bool {
			return readAllRecords(again.(*fetch.Response)) != nil
		},
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
