package protocol_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
)

// maxTestKey bounds the API keys tried: past the real ones, it reaches the
// test-only messages of this package's internal tests.
const maxTestKey = 1004

func registeredVersions(fn func(k protocol.ApiKey, v int16)) {
	for k := protocol.ApiKey(0); k < maxTestKey; k++ {
		if k >= 60 && k < 1000 && k != protocol.ConsumerGroupHeartbeat {
			continue
		}
		lo, hi := k.MinVersion(), k.MaxVersion()
		for v := lo; v <= hi; v++ {
			fn(k, v)
		}
	}
}

// FuzzReadResponse feeds arbitrary bytes to ReadResponse as a response of
// every registered API at every version: it must return (an error, most
// of the time) and never panic.
func FuzzReadResponse(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		registeredVersions(func(k protocol.ApiKey, v int16) {
			protocol.ReadResponse(bytes.NewReader(data), k, v)
		})
	})
}

// FuzzReadRequest does the same for the server side.
func FuzzReadRequest(f *testing.F) {
	f.Add([]byte{0, 0, 0, 10, 0, 3, 0, 1, 0, 0, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		protocol.ReadRequest(bytes.NewReader(data))
	})
}

// TestHostileFramesAllocateLittle decodes frames whose lengths and counts
// claim far more than they carry, for every API and version, and checks
// that the memory allocated stays proportional to the bytes received.
func TestHostileFramesAllocateLittle(t *testing.T) {
	frames := [][]byte{
		// announces 2 GiB, carries 8 bytes
		{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff},
	}
	// A frame made of 0x7f bytes: every int32 count or length reads as
	// ~2^31, every compact one as 126, int16 ones as 32639.
	big := bytes.Repeat([]byte{0x7f}, 256)
	big[0], big[1], big[2], big[3] = 0, 0, 0, 252
	frames = append(frames, big)
	ff := bytes.Repeat([]byte{0xff}, 256)
	ff[0], ff[1], ff[2], ff[3] = 0, 0, 0, 252
	frames = append(frames, ff)

	var before, after runtime.MemStats
	decodes := 0
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, frame := range frames {
		registeredVersions(func(k protocol.ApiKey, v int16) {
			decodes++
			protocol.ReadResponse(bytes.NewReader(frame), k, v)
		})
		protocol.ReadRequest(bytes.NewReader(frame))
	}
	runtime.ReadMemStats(&after)
	perDecode := (after.TotalAlloc - before.TotalAlloc) / uint64(decodes)
	// A frame is at most 256 bytes here; allow generous slack for the
	// message structs themselves, but nowhere near what the lengths claim.
	if perDecode > 256<<10 {
		t.Fatalf("%d bytes allocated per decode", perDecode)
	}
	t.Logf("%d decodes, %d bytes allocated per decode", decodes, perDecode)
}

// FuzzUnmarshal decodes arbitrary bytes as the consumer group payloads that
// members exchange through the coordinator (and so may come from any
// client), at every version.
func FuzzUnmarshal(f *testing.F) {
	sub := consumer.Subscription{Version: 1, Topics: []string{"a"}, UserData: []byte{1},
		OwnedPartitions: []consumer.TopicPartition{{Topic: "a", Partitions: []int32{0, 2}}}}
	for v := int16(0); v <= 3; v++ {
		if b, err := protocol.Marshal(v, sub); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for v := int16(-1); v <= 3; v++ {
			var s consumer.Subscription
			protocol.Unmarshal(data, v, &s)
			var a consumer.Assignment
			protocol.Unmarshal(data, v, &a)
		}
	})
}
