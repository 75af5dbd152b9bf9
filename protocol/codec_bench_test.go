package protocol

import (
	"bytes"
	"io"
	"strconv"
	"testing"
)

func benchRequest() *testRequest {
	msg := &testRequest{Name: "bench", Count: 1, Data: make([]byte, 256), IDs: make([]int32, 64), Extra: "x"}
	for i := 0; i < 100; i++ {
		msg.Items = append(msg.Items, testItem{Key: "key-" + strconv.Itoa(i), Value: uint16(i), F: 1, T: 1})
	}
	return msg
}

func BenchmarkWriteRequest(b *testing.B) {
	msg := benchRequest()
	for _, v := range []int16{1, 3} {
		b.Run("v"+strconv.Itoa(int(v)), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := WriteRequest(io.Discard, v, 1, "client", msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReadRequest(b *testing.B) {
	msg := benchRequest()
	for _, v := range []int16{1, 3} {
		b.Run("v"+strconv.Itoa(int(v)), func(b *testing.B) {
			var buf bytes.Buffer
			if err := WriteRequest(&buf, v, 1, "client", msg); err != nil {
				b.Fatal(err)
			}
			wire := buf.Bytes()
			r := bytes.NewReader(wire)
			b.SetBytes(int64(len(wire)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r.Reset(wire)
				if _, _, _, _, err := ReadRequest(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
