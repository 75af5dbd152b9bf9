package bytepool

import (
	"math/rand"
	"testing"
)

// Every pooled size gets an array that holds it, at most an eighth larger,
// and no smaller class would have held it.
func TestGetFitsRequest(t *testing.T) {
	sizes := []int{0, 1, MinSize - 1, MinSize, MinSize + 1, 4095, 4096, 4097,
		100_000, 110_000, 1 << 20, 1<<20 + 1, 1 << maxBits, 1<<maxBits + 1}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 10000; i++ {
		sizes = append(sizes, rng.Intn(1<<maxBits+1<<20))
	}
	for i, n := range sizes {
		c := classFor(n)
		size := n
		if c >= 0 {
			size = classSize(c)
		}
		if i < 20 { // Get itself, on a few: the arrays are large
			b := Get(n)
			if len(b) != 0 || cap(b) != size {
				t.Fatalf("Get(%d): len %d cap %d, want cap %d", n, len(b), cap(b), size)
			}
		}
		if c < 0 {
			if n >= MinSize && n <= 1<<maxBits {
				t.Fatalf("size %d is not pooled", n)
			}
			continue
		}
		if size < n || size > n+n/8 {
			t.Fatalf("size %d gets class %d of %d B", n, c, size)
		}
		if c > 0 && classSize(c-1) >= n {
			t.Fatalf("size %d got class %d (%d B), class %d (%d B) holds it", n, c, classSize(c), c-1, classSize(c-1))
		}
	}
}

// An array put back serves only requests it holds: classOf never files a
// capacity under a class of larger arrays.
func TestPutFilesUnderClassItHolds(t *testing.T) {
	for c := 0; c < nClasses; c++ {
		size := classSize(c)
		if got := classOf(size); got != c {
			t.Fatalf("class %d size %d files under class %d", c, size, got)
		}
		if got := classOf(size - 1); got != c-1 && !(c == 0 && got == -1) {
			t.Fatalf("capacity %d (one under class %d) files under %d", size-1, c, got)
		}
	}
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 10000; i++ {
		n := MinSize + rng.Intn(1<<(maxBits+1)-MinSize)
		c := classOf(n)
		if c < 0 || classSize(c) > n {
			t.Fatalf("capacity %d filed under class %d of %d B", n, c, classSize(c))
		}
	}
	if classOf(MinSize-1) != -1 || classOf(1<<(maxBits+1)) != -1 {
		t.Fatal("sizes outside the pool are filed")
	}
}

// A recycled array comes back with its old bytes (Get does not zero) and a
// length of zero; sizes outside the pool are simply dropped by Put.
func TestPutThenGet(t *testing.T) {
	b := Get(5000)
	b = append(b, "abc"...)
	Put(b)
	Put(make([]byte, 10))        // too small: dropped
	Put(make([]byte, 0, 64<<20)) // too large: dropped
	for i := 0; i < 100; i++ {
		g := Get(5000)
		if len(g) != 0 || cap(g) < 5000 {
			t.Fatalf("len %d cap %d", len(g), cap(g))
		}
		Put(g)
	}
}

func BenchmarkGetPut100KB(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Put(Get(110_000))
	}
}
