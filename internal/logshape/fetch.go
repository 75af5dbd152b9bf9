package logshape

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// FetchRequest is what a Fetch asks of the partition.
type FetchRequest struct {
	Offset int64
	// MaxBytes bounds the records returned (the smaller of the request's
	// and the partition's limits); the first batch comes whole whatever
	// its size, as Kafka returns it.
	MaxBytes      int
	ReadCommitted bool
	// Rand picks the bound up to which aborted transactions are listed
	// among those Kafka could use (it takes it from a sparse offset
	// index); nil takes the loosest, the end of the segment.
	Rand *rand.Rand
}

// FetchResponse is Kafka's answer for the partition.
type FetchResponse struct {
	ErrorCode        int16
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	// Aborted is null reading uncommitted records, as Kafka sends it.
	Aborted []fetch.ResponseTransaction
	Records []byte
}

// errOffsetOutOfRange is Kafka's OFFSET_OUT_OF_RANGE.
const errOffsetOutOfRange = 1

// Fetch answers a Fetch of the partition as a Kafka broker does:
//
//   - from the first batch whose last offset is at or after the fetch
//     offset (a batch holding the offset, or the first after a gap), up
//     to the high watermark, or to the last stable offset when reading
//     committed records;
//   - within one segment;
//   - cut at MaxBytes, which may leave a partial batch at the end, except
//     that the first batch comes whole;
//   - reading committed records, the aborted transactions whose marker is
//     at or after the fetch offset and whose first offset is before an
//     upper bound Kafka takes from its offset index: the offset of a batch
//     starting at or after where the records were cut, or the end of the
//     segment. They come in the order of the transaction index (of their
//     markers), not sorted by first offset.
func (l *Log) Fetch(req FetchRequest) (FetchResponse, error) {
	if err := l.encode(); err != nil {
		return FetchResponse{}, err
	}
	res := FetchResponse{HighWatermark: l.End(), LastStableOffset: l.LastStable(), LogStartOffset: l.StartOffset}
	if req.Offset < l.StartOffset || req.Offset > res.HighWatermark {
		res.ErrorCode = errOffsetOutOfRange
		return res, nil
	}
	limit := res.HighWatermark
	if req.ReadCommitted {
		limit = res.LastStableOffset
		res.Aborted = []fetch.ResponseTransaction{}
	}
	first := len(l.Batches)
	for i, b := range l.Batches {
		if b.Last >= req.Offset {
			first = i
			break
		}
	}
	if req.Offset >= limit || first == len(l.Batches) || l.Batches[first].Base >= limit {
		return res, nil
	}

	seg := l.segment(l.Batches[first].Base)
	var avail []byte
	var bounds []int64 // where Kafka's index may say the records end
	for i := first; i < len(l.Batches) && l.segment(l.Batches[i].Base) == seg; i++ {
		if l.Batches[i].Base < limit {
			avail = append(avail, l.enc[i]...)
		}
	}
	size := min(len(avail), max(req.MaxBytes, len(l.enc[first])))
	res.Records = avail[:size]

	if req.ReadCommitted {
		// Kafka's bound: the first indexed batch at or after the cut, or
		// the segment's end. The index is sparse, so any of them can be
		// the one.
		pos, end := 0, l.segmentEnd(seg)
		for i := first; i < len(l.Batches) && l.segment(l.Batches[i].Base) == seg; i++ {
			if pos >= size {
				bounds = append(bounds, l.Batches[i].Base)
			}
			pos += len(l.enc[i])
			end = max(end, l.Batches[i].Last+1)
		}
		bounds = append(bounds, end)
		upper := bounds[len(bounds)-1]
		if req.Rand != nil {
			upper = bounds[req.Rand.Intn(len(bounds))]
		}
		for _, t := range l.Aborted {
			if t.MarkerOffset >= req.Offset && t.FirstOffset < upper {
				res.Aborted = append(res.Aborted, fetch.ResponseTransaction{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset})
			}
		}
	}
	return res, nil
}

// Frame encodes res as the whole Fetch response frame (size prefix
// included) of the given version for one partition, with the protocol
// package's encoder; the records, which that encoder would re-encode, are
// put in as they are.
func (res FetchResponse) Frame(version int16, correlationID int32, topic string, partition int32) ([]byte, error) {
	msg := &fetch.Response{Topics: []fetch.ResponseTopic{{
		Topic: topic,
		Partitions: []fetch.ResponsePartition{{
			Partition:            partition,
			ErrorCode:            res.ErrorCode,
			HighWatermark:        res.HighWatermark,
			LastStableOffset:     res.LastStableOffset,
			LogStartOffset:       res.LogStartOffset,
			DivergingEpoch:       fetch.ResponseEpochEndOffset{Epoch: -1, EndOffset: -1},
			CurrentLeader:        fetch.ResponseLeader{LeaderID: -1, LeaderEpoch: -1},
			SnapshotID:           fetch.ResponseSnapshotID{EndOffset: -1, Epoch: -1},
			AbortedTransactions:  res.Aborted,
			PreferredReadReplica: -1,
		}},
	}}}
	var buf bytes.Buffer
	if err := protocol.WriteResponse(&buf, version, correlationID, msg); err != nil {
		return nil, err
	}
	frame := buf.Bytes()
	// The record set is the partition's last field, written null. After it
	// come, in flexible versions, the (empty) tagged fields of the
	// partition, the topic and the response.
	var null, tail []byte
	if version >= 12 {
		null, tail = []byte{0}, []byte{0, 0, 0}
	} else {
		null = []byte{0xff, 0xff, 0xff, 0xff}
	}
	end := append(append([]byte(nil), null...), tail...)
	if !bytes.HasSuffix(frame, end) {
		return nil, fmt.Errorf("logshape: a v%d fetch response does not end with a null record set", version)
	}
	frame = frame[:len(frame)-len(end)]
	if version >= 12 {
		frame = binary.AppendUvarint(frame, uint64(len(res.Records))+1)
	} else {
		frame = binary.BigEndian.AppendUint32(frame, uint32(len(res.Records)))
	}
	frame = append(frame, res.Records...)
	frame = append(frame, tail...)
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	return frame, nil
}
