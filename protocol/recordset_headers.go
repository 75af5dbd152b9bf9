package protocol

import (
	"unsafe"

	"github.com/segmentio/kafka-go/internal/keeplimit"
)

// rbHeaderArena gives the records of one streamed batch their headers for
// the program to keep, without allocations per record: records whose header
// keys and values come to at most rbHeaderArenaMax bytes share a Header
// array and a values array (renewed together, each up to about
// rbHeaderArenaBytes and rbHeaderArenaRecords records), and a header key
// equal to the same header's key in the previous record reuses that string
// (tracing and routing headers repeat their keys). A record the program
// keeps keeps the arrays it shares alive, and through them the headers of
// the other records in them: at most rbHeaderArenaRecords records of at
// most rbHeaderArenaMax bytes each. Records with larger headers get arrays
// of their own.
type rbHeaderArena struct {
	hs     []Header // the unused rest of the current Header array
	values []byte   // the unused rest of the current values array
	keys   []string // the header keys of the previous record with headers
}

const (
	rbHeaderArenaRecords = 32
	rbHeaderArenaBytes   = keeplimit.ArrayBytes // internal/keeplimit, as for keys and values
	rbHeaderArenaMax     = keeplimit.MaxShared
	rbHeaderSize         = int(unsafe.Sizeof(Header{}))
)

// own copies the headers of rec (validated), one of left records still to
// come in the batch (rec included).
func (a *rbHeaderArena) own(rec rbRecordV2, left int) []Header {
	n := rec.numHeaders
	var hs []Header
	var values []byte
	if rec.keyBytes+rec.valueBytes > rbHeaderArenaMax {
		hs, values = make([]Header, n), make([]byte, rec.valueBytes)
	} else {
		if len(a.hs) < n || len(a.values) < rec.valueBytes {
			k := rbArenaRecords(left, n*rbHeaderSize+rec.valueBytes)
			a.hs, a.values = make([]Header, n*k), make([]byte, rec.valueBytes*k)
		}
		hs, a.hs = a.hs[:n:n], a.hs[n:]
		values, a.values = a.values[:rec.valueBytes], a.values[rec.valueBytes:]
	}
	if cap(a.keys) < n {
		a.keys = make([]string, 0, n)
	}
	prev := a.keys
	a.keys = a.keys[:n]
	h := rec.headers
	for j := range hs {
		var key, v []byte
		key, v, h = rbNextHeader(h)
		if j < len(prev) && prev[j] == string(key) {
			hs[j].Key = prev[j]
		} else {
			hs[j].Key = string(key)
		}
		a.keys[j] = hs[j].Key
		switch {
		case v == nil:
		case len(v) == 0:
			hs[j].Value = []byte{}
		default:
			hs[j].Value = values[:len(v):len(v)]
			values = values[len(v):]
			copy(hs[j].Value, v)
		}
	}
	return hs
}

// rbArenaRecords is how many records of size bytes new shared arrays hold:
// rbHeaderArenaRecords, fewer when fewer are left in the batch or when that
// would pass rbHeaderArenaBytes, at least one.
func rbArenaRecords(left, size int) int {
	k := min(max(left, 1), rbHeaderArenaRecords)
	if size > 0 {
		k = min(k, max(rbHeaderArenaBytes/size, 1))
	}
	return k
}
