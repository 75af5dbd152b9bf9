package logshape

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/protocol"
)

// Random builds a log of about n batches from rng: plain batches without a
// producer, batches of idempotent producers, transactions of several
// producers interleaved, committed and aborted, compressed and
// LogAppendTime batches, records with null keys, null values and headers,
// some large enough to exceed small fetch limits; then compacts it
// (records removed with the last offset kept, batches emptied, batches
// removed, markers kept) and splits it into segments. Every transaction is
// ended, and the last batch is one plain record keyed "end", which every
// consumer returns.
func Random(rng *rand.Rand, n int) *Log {
	l := &Log{}
	txnProducers := []int64{101, 102, 103, 104}[:1+rng.Intn(4)]
	idempotent := []int64{201, 202}
	codecs := []compress.Compression{compress.None, compress.None, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd}

	records := func() []Record {
		recs := make([]Record, 1+rng.Intn(6))
		for i := range recs {
			size := rng.Intn(40)
			if rng.Intn(12) == 0 {
				size = 200 + rng.Intn(600)
			}
			v := make([]byte, size)
			for j := range v {
				v[j] = byte('a' + rng.Intn(26))
			}
			r := Record{Key: []byte(fmt.Sprintf("k%d", rng.Intn(50))), Value: v}
			switch rng.Intn(10) {
			case 0:
				r.Key = nil
			case 1:
				r.Value = nil
			case 2:
				r.Key = []byte{}
			}
			if rng.Intn(5) == 0 {
				r.Headers = []protocol.Header{{Key: "h", Value: []byte(fmt.Sprint(rng.Intn(100)))}, {Key: "e", Value: []byte{}}}
			}
			recs[i] = r
		}
		return recs
	}
	batch := func(pid int64, txn bool) Batch {
		b := Batch{ProducerID: pid, Transactional: txn, Codec: codecs[rng.Intn(len(codecs))], Records: records()}
		if pid != NoProducer {
			b.ProducerEpoch = int16(rng.Intn(3))
		}
		if rng.Intn(6) == 0 {
			b.AppendTime = baseTime.Add(time.Duration(rng.Intn(1e6)) * time.Millisecond)
		}
		return b
	}
	endTxn := func(pid int64) {
		l.EndTxn(pid, 0, rng.Intn(2) == 0)
	}

	for len(l.Batches) < n {
		switch k := rng.Intn(10); {
		case k < 2:
			l.Append(batch(NoProducer, false))
		case k < 3:
			l.Append(batch(idempotent[rng.Intn(len(idempotent))], false))
		case k < 7:
			l.Append(batch(txnProducers[rng.Intn(len(txnProducers))], true))
		default:
			pid := txnProducers[rng.Intn(len(txnProducers))]
			if l.Open(pid) {
				endTxn(pid)
			}
		}
	}
	for _, pid := range txnProducers {
		if l.Open(pid) {
			endTxn(pid)
		}
	}

	l.Append(Batch{ProducerID: NoProducer, Records: []Record{{Key: []byte("end"), Value: []byte("end")}}})

	// Compaction: never the markers, which Kafka keeps for as long as the
	// transaction's data may be read, nor the last batch (the cleaner
	// leaves the active segment alone).
	kept := l.Batches[:0]
	for i, b := range l.Batches {
		if b.Marker == NoMarker && i < len(l.Batches)-1 && rng.Intn(3) == 0 {
			var left []Record
			for _, r := range b.Records {
				if rng.Intn(2) == 0 {
					left = append(left, r)
				}
			}
			b.Records = left
			if len(left) == 0 && rng.Intn(2) == 0 {
				continue // the cleaner dropped the emptied batch
			}
		}
		kept = append(kept, b)
	}
	l.Batches = kept

	for i := 1; i < len(l.Batches); i++ {
		if rng.Intn(8) == 0 {
			l.SegmentStarts = append(l.SegmentStarts, l.Batches[i].Base)
		}
	}
	return l
}
