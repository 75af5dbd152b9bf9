package kafka

import (
	"context"
	"testing"
)

// BenchmarkTransportProduce measures pipelined produce round trips through
// the transport to a fake broker on loopback.
func BenchmarkTransportProduce(b *testing.B) {
	fc := tpNewFakeCluster(b, 1)
	fc.setHandler(func(r *tpFakeRequest) { tpProduceReply(r, 0) })
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	ctx := context.Background()
	if _, err := tr.RoundTrip(ctx, fc.addr(), tpProduceRequest(0, -1)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := tr.RoundTrip(ctx, fc.addr(), tpProduceRequest(0, -1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
