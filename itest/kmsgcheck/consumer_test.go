package kmsgcheck

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/consumer"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConsumerProtocol runs the oracle on the consumer group protocol
// payloads (the member metadata of JoinGroup and the assignments of
// SyncGroup), which the consumer package encodes with protocol.Marshal:
// kmsg's ConsumerMemberMetadata and ConsumerMemberAssignment are the
// independent encodings, versions 0 to 3.
func TestConsumerProtocol(t *testing.T) {
	modes := []fillMode{fillAll, fillDefaults, fillSparse, fillEmpty, fillEmptyLeaves}
	for v := int16(0); v <= 3; v++ {
		for _, mode := range modes {
			t.Run(fmt.Sprintf("Subscription/v%d%s", v, mode), func(t *testing.T) {
				k := &kmsg.ConsumerMemberMetadata{}
				k.Default()
				f := filler{mode: mode, version: v}
				f.fillMessage(k)
				k.Version = v
				checkConsumerPayload(t, v, k, func() kmsgPayload { return new(kmsg.ConsumerMemberMetadata) }, &consumer.Subscription{}, mode)
			})
			t.Run(fmt.Sprintf("Assignment/v%d%s", v, mode), func(t *testing.T) {
				k := &kmsg.ConsumerMemberAssignment{}
				k.Default()
				f := filler{mode: mode, version: v}
				f.fillMessage(k)
				k.Version = v
				checkConsumerPayload(t, v, k, func() kmsgPayload { return new(kmsg.ConsumerMemberAssignment) }, &consumer.Assignment{}, mode)
			})
		}
	}
}

// kmsgPayload is a kmsg type that carries its version in its bytes.
type kmsgPayload interface {
	AppendTo([]byte) []byte
	ReadFrom([]byte) error
}

// checkConsumerPayload requires our Unmarshal then Marshal of kmsg's bytes
// to give them back, and kmsg to read our bytes as its own.
func checkConsumerPayload(t *testing.T, v int16, k kmsgPayload, fresh func() kmsgPayload, ours any, mode fillMode) {
	t.Helper()
	want := k.AppendTo(nil)
	if err := protocol.Unmarshal(want, v, ours); err != nil {
		t.Fatalf("our Unmarshal of kmsg's bytes: %v", err)
	}
	got, err := protocol.Marshal(v, ours)
	if err != nil {
		t.Fatalf("our Marshal: %v", err)
	}
	theirs, back := fresh(), fresh()
	if err := theirs.ReadFrom(want); err != nil {
		t.Fatalf("harness: kmsg cannot read its own bytes: %v", err)
	}
	if err := back.ReadFrom(got); err != nil {
		t.Fatalf("kmsg cannot read our bytes: %v", err)
	}
	diffs := valueDiff(theirs, back, 12)
	if !bytes.Equal(got, want) {
		t.Fatalf("bytes differ: %s\n  kmsg reads ours as (kmsg's value vs ours): %s", bytesDiff(want, got), strings.Join(diffs, "; "))
	}
	if len(diffs) > 0 {
		t.Fatalf("kmsg reads our identical bytes differently: %s", strings.Join(diffs, "; "))
	}
	if mode != fillAll {
		return
	}
	// Trace every value we decoded to kmsg's field; the Version, which the
	// kmsg side leaves out of the trace, is checked on its own.
	switch o := ours.(type) {
	case *consumer.Subscription:
		if o.Version != v {
			t.Fatalf("decoded Version %d, want %d", o.Version, v)
		}
		c := *o
		c.Version = 0
		ours = &c
	case *consumer.Assignment:
		if o.Version != v {
			t.Fatalf("decoded Version %d, want %d", o.Version, v)
		}
		c := *o
		c.Version = 0
		ours = &c
	}
	if wrong := fieldMapping(k, ours); len(wrong) > 0 {
		t.Fatalf("values land in the wrong fields: %s", strings.Join(wrong, "; "))
	}
}
