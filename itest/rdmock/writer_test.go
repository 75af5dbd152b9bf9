package rdmock_test

import (
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/itest/rdmock"
)

var codecs = []struct {
	name  string
	codec kafka.Compression
}{
	{"none", 0},
	{"gzip", kafka.Gzip},
	{"snappy", kafka.Snappy},
	{"lz4", kafka.Lz4},
	{"zstd", kafka.Zstd},
}

// The Writer, synchronous and asynchronous, in every codec: kcat reads back
// every message with its key, value and headers, in order per partition.
func TestWriterCodecs(t *testing.T) {
	const partitions, n = 3, 300
	c := rdmock.Start(t, 3)
	for _, async := range []bool{false, true} {
		for _, cc := range codecs {
			mode := "sync"
			if async {
				mode = "async"
			}
			t.Run(mode+"-"+cc.name, func(t *testing.T) {
				topic := topicName(t)
				c.CreateTopic(topic, partitions)
				msgs := messages(mode+cc.name, n, partitions)

				errs := make(chan error, n)
				w := &kafka.Writer{
					Addr:         kafka.TCP(c.Addrs...),
					Topic:        topic,
					Balancer:     keyPartitioner,
					Compression:  cc.codec,
					BatchSize:    40,
					BatchTimeout: 5 * time.Millisecond,
					RequiredAcks: kafka.RequireAll,
					Async:        async,
					Transport:    newTransport(t),
					Completion: func(ms []kafka.Message, err error) {
						for range ms {
							errs <- err
						}
					},
				}
				ctx := ctxFor(t, 60*time.Second)
				// Several calls, so that batches of one call and of the
				// next follow each other on each partition.
				for i := 0; i < n; i += 50 {
					if err := w.WriteMessages(ctx, msgs[i:i+50]...); err != nil {
						t.Fatalf("WriteMessages: %v", err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				for i := 0; i < n; i++ {
					select {
					case err := <-errs:
						if err != nil {
							t.Fatalf("completion error: %v", err)
						}
					default:
						t.Fatalf("%d completions after Close, want %d", i, n)
					}
				}
				got := rdmock.KcatConsume(t, c.Bootstrap(), topic, n)
				rdmock.SameRecords(t, "kcat", got, expected(msgs), false)
				if cc.codec == 0 || cc.codec == kafka.Gzip {
					got := rdmock.PythonConsume(t, c.Bootstrap(), topic, n, 30*time.Second)
					rdmock.SameRecords(t, "kafka-python", got, expected(msgs), false)
				}
			})
		}
	}
}
