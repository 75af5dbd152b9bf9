package kafka

import (
	"bytes"
	"runtime"
	"testing"
)

// A message's key and value are copies the program owns: equal to what
// was read, nil for null and empty for empty, neither sharing memory with
// the batch they came from, and neither able to overwrite the other by
// append, whichever is longer.
func TestCopyKeyValueOwnsBoth(t *testing.T) {
	long := bytes.Repeat([]byte("v"), 1500)
	cases := []struct {
		name string
		k, v []byte
	}{
		{"both null", nil, nil},
		{"null key", nil, []byte("value")},
		{"null value", []byte("key"), nil},
		{"empty key", []byte{}, []byte("value")},
		{"empty value", []byte("key"), []byte{}},
		{"both empty", []byte{}, []byte{}},
		{"short key", []byte("user-0001"), long},
		{"long key", long, []byte("v")},
		{"equal lengths", long, bytes.Repeat([]byte("w"), 1500)},
		{"equal short", []byte("ab"), []byte("cd")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The source is one batch buffer, as the records' windows are.
			batch := append(append([]byte{}, tc.k...), tc.v...)
			var k, v []byte
			if tc.k != nil {
				k = batch[:len(tc.k):len(tc.k)]
			}
			if tc.v != nil {
				v = batch[len(tc.k):]
			}
			key, value := copyKeyValue(k, v)
			if (key == nil) != (tc.k == nil) || (value == nil) != (tc.v == nil) {
				t.Fatalf("nil key %v value %v, want %v %v", key == nil, value == nil, tc.k == nil, tc.v == nil)
			}
			if !bytes.Equal(key, tc.k) || !bytes.Equal(value, tc.v) {
				t.Fatalf("got %q / %q", key, value)
			}
			if cap(key) != len(key) || cap(value) != len(value) {
				t.Fatalf("capacities %d/%d for lengths %d/%d", cap(key), cap(value), len(key), len(value))
			}
			// Overwrite the batch, as the next fetch does: the copies stay.
			for i := range batch {
				batch[i] = 'x'
			}
			if !bytes.Equal(key, tc.k) || !bytes.Equal(value, tc.v) {
				t.Fatalf("the copies share the batch's memory: %q / %q", key, value)
			}
			key2 := append(key, "more"...)
			value2 := append(value, "more"...)
			if !bytes.Equal(key, tc.k) || !bytes.Equal(value, tc.v) || !bytes.Equal(key2[:len(key)], tc.k) || !bytes.Equal(value2[:len(value)], tc.v) {
				t.Fatalf("appending to one changed the other: %q / %q", key, value)
			}
		})
	}
}

// One allocation per message, of the size of key and value together
// (rounded up to the allocator's size class, at most an eighth more at
// these sizes), whichever of the two is longer.
func TestCopyKeyValueOneAllocation(t *testing.T) {
	for _, sizes := range [][2]int{{9, 1024}, {1024, 9}, {1000, 1000}, {300, 301}, {0, 5000}, {5000, 0}} {
		k := bytes.Repeat([]byte("k"), sizes[0])
		v := bytes.Repeat([]byte("v"), sizes[1])
		var sink []byte
		if n := testing.AllocsPerRun(100, func() { sink, _ = copyKeyValue(k, v) }); n != 1 {
			t.Fatalf("%v: %v allocations per copy", sizes, n)
		}
		const runs = 1000
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < runs; i++ {
			sink, _ = copyKeyValue(k, v)
		}
		runtime.ReadMemStats(&after)
		per := float64(after.TotalAlloc-before.TotalAlloc) / runs
		if total := float64(sizes[0] + sizes[1]); per > total*1.125+16 {
			t.Errorf("%v: %.0f bytes allocated per copy of %.0f", sizes, per, total)
		}
		_ = sink
	}
}
