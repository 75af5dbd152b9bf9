package kafka

import "github.com/segmentio/kafka-go/internal/keeplimit"

// keyValueSlab copies the keys and values of fetched messages for the
// program to own. Small ones (up to keyValueSlabMax bytes together) are cut
// from shared arrays of keyValueSlabSize bytes: one allocation per few dozen
// 100-byte messages instead of one per message, about a tenth of a
// partition Reader's CPU per message at that size
// (docs/bench/consumer/PROFILE.md). A message the program keeps keeps its
// whole array alive, so the sharing stops at small messages: a kept message
// holds on to at most keyValueSlabSize bytes. Larger ones get an
// allocation of their own, as before.
//
// A slab belongs to one partition reader and is not safe for concurrent use.
type keyValueSlab struct {
	free []byte // the unused rest of the current array
}

// The limits of internal/keeplimit, shared with the headers' arrays.
const (
	keyValueSlabSize = keeplimit.ArrayBytes
	keyValueSlabMax  = keeplimit.MaxShared
)

// copy returns copies of k and v in one piece of memory: nil (null) stays
// nil and empty stays empty. Each has its capacity limited to its length,
// so appending to one cannot overwrite the other, nor the next message's.
func (s *keyValueSlab) copy(k, v []byte) (key, value []byte) {
	if k == nil && v == nil {
		return nil, nil
	}
	n := len(k) + len(v)
	var buf []byte
	if n > keyValueSlabMax {
		buf = make([]byte, n)
	} else {
		if s.free == nil || len(s.free) < n {
			// Also when n is 0: cut from no array, empty would come out null.
			s.free = make([]byte, keyValueSlabSize)
		}
		buf, s.free = s.free[:n:n], s.free[n:]
	}
	if k != nil {
		key = buf[:len(k):len(k)]
		copy(key, k)
	}
	if v != nil {
		value = buf[len(k):n:n]
		copy(value, v)
	}
	return key, value
}
