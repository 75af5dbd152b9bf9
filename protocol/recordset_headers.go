package protocol

// rbHeaderArena gives the records of one streamed batch their headers for
// the program to keep, without allocations per record: the Header arrays
// and the header values of a few dozen records at a time share arrays (at
// most rbHeaderArenaRecords records' worth, and no more than about
// rbHeaderArenaBytes of values unless one record has more), and a header key
// equal to the same header's key in the previous record reuses that string
// (tracing and routing headers repeat their keys). A record the program
// keeps keeps those shared arrays alive, which is why they stay small.
type rbHeaderArena struct {
	hs     []Header // the unused rest of the current Header array
	values []byte   // the unused rest of the current values array
	keys   []string // the header keys of the previous record with headers
}

const (
	rbHeaderArenaRecords = 32
	rbHeaderArenaBytes   = 4096
	rbHeaderSize         = 40 // a Header on 64-bit platforms: a string and a slice
)

// own copies the headers of rec (validated), one of left records still to
// come in the batch (rec included).
func (a *rbHeaderArena) own(rec rbRecordV2, left int) []Header {
	n := rec.numHeaders
	if len(a.hs) < n {
		a.hs = make([]Header, n*rbArenaRecords(left, n*rbHeaderSize))
	}
	hs := a.hs[:n:n]
	a.hs = a.hs[n:]
	if len(a.values) < rec.valueBytes {
		a.values = make([]byte, rec.valueBytes*rbArenaRecords(left, rec.valueBytes))
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
			hs[j].Value = a.values[:len(v):len(v)]
			a.values = a.values[len(v):]
			copy(hs[j].Value, v)
		}
	}
	return hs
}

// rbArenaRecords is how many records' worth of size bytes a new array
// holds: rbHeaderArenaRecords, fewer when fewer are left in the batch or
// when that would pass rbHeaderArenaBytes, at least one.
func rbArenaRecords(left, size int) int {
	k := min(max(left, 1), rbHeaderArenaRecords)
	if size > 0 {
		k = min(k, max(rbHeaderArenaBytes/size, 1))
	}
	return k
}
