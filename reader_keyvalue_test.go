package kafka

import (
	"bytes"
	"runtime"
	"testing"
)

// A message's key and value are copies the program owns: equal to what
// was read, nil for null and empty for empty, neither sharing memory with
// the batch they came from, and neither able to overwrite the other, nor
// the messages copied before and after them from the same slab, by append,
// whichever is longer.
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
	var fresh keyValueSlab
	if key, value := fresh.copy([]byte{}, []byte{}); key == nil || value == nil {
		t.Fatalf("the first copy of an empty key and value: nil key %v, nil value %v", key == nil, value == nil)
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
			var slab keyValueSlab
			beforeKey, beforeValue := slab.copy([]byte("k0"), []byte("before"))
			key, value := slab.copy(k, v)
			afterKey, afterValue := slab.copy([]byte("k1"), []byte("after"))
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
			_ = append(beforeValue, "more"...)
			if string(beforeKey) != "k0" || string(beforeValue) != "before" || string(afterKey) != "k1" || string(afterValue) != "after" || !bytes.Equal(key, tc.k) || !bytes.Equal(value, tc.v) {
				t.Fatalf("neighbours changed: %q / %q, %q / %q, %q / %q", beforeKey, beforeValue, key, value, afterKey, afterValue)
			}
		})
	}
}

// Keys and values of up to keyValueSlabMax bytes together share arrays of
// keyValueSlabSize bytes, so that a kept message holds on to no more than
// that; larger ones take one allocation each, of their size (rounded up to
// the allocator's size class, at most an eighth more at these sizes). In
// both cases the bytes allocated per message stay within an eighth of its
// size.
func TestCopyKeyValueAllocations(t *testing.T) {
	for _, tc := range []struct {
		sizes  [2]int
		shared bool
	}{
		{[2]int{9, 91}, true}, {[2]int{0, 1}, true}, {[2]int{16, 496}, true}, {[2]int{200, 0}, true},
		{[2]int{9, 1024}, false}, {[2]int{1024, 9}, false}, {[2]int{1000, 1000}, false},
		{[2]int{300, 301}, false}, {[2]int{0, 5000}, false}, {[2]int{5000, 0}, false}, {[2]int{256, 257}, false},
	} {
		sizes := tc.sizes
		k := bytes.Repeat([]byte("k"), sizes[0])
		v := bytes.Repeat([]byte("v"), sizes[1])
		total := sizes[0] + sizes[1]
		var slab keyValueSlab
		var sink []byte
		const runs = 1000
		allocs := testing.AllocsPerRun(runs, func() { sink, _ = slab.copy(k, v) })
		if !tc.shared && allocs != 1 {
			t.Fatalf("%v: %v allocations per copy, want 1", sizes, allocs)
		}
		if tc.shared {
			// Ten slabs' worth of copies take ten arrays, or eleven when
			// the first copy starts a new one.
			perSlab := keyValueSlabSize / max(total, 1)
			n := testing.AllocsPerRun(100, func() {
				for i := 0; i < 10*perSlab; i++ {
					sink, _ = slab.copy(k, v)
				}
			})
			if n > 11 {
				t.Fatalf("%v: %v allocations for %d copies, want at most 11", sizes, n, 10*perSlab)
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < runs; i++ {
			sink, _ = slab.copy(k, v)
		}
		runtime.ReadMemStats(&after)
		per := float64(after.TotalAlloc-before.TotalAlloc) / runs
		if float64(total) >= 8 && per > float64(total)*1.125+16 {
			t.Errorf("%v: %.0f bytes allocated per copy of %d", sizes, per, total)
		}
		_ = sink
	}
}
