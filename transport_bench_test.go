package kafka

import (
	"context"
	"testing"

	"github.com/segmentio/kafka-go/internal/fakebroker"
)

// BenchmarkTransportProduce measures pipelined produce round trips through
// the transport to a fake broker on loopback.
func BenchmarkTransportProduce(b *testing.B) {
	fc := fakebroker.New(b, 1)
	fc.SetHandler(func(r *fakebroker.Request) { tpProduceReply(r, 0) })
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	ctx := context.Background()
	if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := tr.RoundTrip(ctx, fc.Addr(), tpProduceRequest(0, -1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
