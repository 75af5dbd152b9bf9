// Package bytepool recycles byte arrays of many sizes: arrays of similar
// size share a class, each class a sync.Pool, so a request for n bytes is
// served by an array of at most an eighth more than n, and arrays not asked
// for again go to the garbage collector like any other.
//
// It exists for the Writer's batch records: a batch of 100 B messages fills
// about 100 KB, and allocating that afresh per batch costs zeroing it and
// the scavenger returning the pages the previous ones freed.
package bytepool

import (
	"math/bits"
	"sync"
)

const (
	// minBits and maxBits bound the pooled sizes: smaller arrays are
	// cheaper to allocate than to pool, larger ones are rare and would
	// stay pinned while the pool holds them.
	minBits = 10 // 1 KiB
	maxBits = 24 // 16 MiB
	// subBits splits each power of two into 1<<subBits classes.
	subBits   = 3
	subPerBit = 1 << subBits
	nClasses  = (maxBits - minBits + 1) * subPerBit
)

// MinSize is the smallest size Get pools; smaller requests get a plain
// allocation and Put drops arrays of less capacity.
const MinSize = 1 << minBits

var pools [nClasses]sync.Pool // of *[]byte, len 0

// classSize is the capacity of the arrays class c allocates: from 2^k
// upwards in steps of 2^k/8 within octave k.
func classSize(c int) int {
	k := minBits + c/subPerBit
	return (1 << k) + (c%subPerBit)<<(k-subBits)
}

// classFor returns the smallest class whose arrays hold n bytes, or -1
// when n is outside the pooled sizes.
func classFor(n int) int {
	if n < MinSize || n > 1<<maxBits {
		return -1
	}
	k := bits.Len(uint(n)) - 1 // 2^k <= n < 2^(k+1)
	step := 1 << (k - subBits)
	sub := (n - 1<<k + step - 1) / step // round up within the octave
	c := (k-minBits)*subPerBit + sub
	if c >= nClasses {
		return -1
	}
	return c
}

// classOf returns the largest class whose arrays a capacity of n can
// stand in for, or -1.
func classOf(n int) int {
	if n < MinSize {
		return -1
	}
	if n >= 1<<(maxBits+1) {
		return -1
	}
	k := bits.Len(uint(n)) - 1
	sub := (n - 1<<k) >> (k - subBits) // round down within the octave
	return (k-minBits)*subPerBit + sub
}

// Get returns an empty slice with room for at least n bytes, recycled when
// one of its class is free. Its bytes are not zeroed.
func Get(n int) []byte {
	c := classFor(n)
	if c < 0 {
		return make([]byte, 0, n)
	}
	if p, _ := pools[c].Get().(*[]byte); p != nil {
		return (*p)[:0]
	}
	return make([]byte, 0, classSize(c))
}

// Put gives b's array for reuse by Get. The caller must not use b, nor any
// slice of its array, afterwards.
func Put(b []byte) {
	c := classOf(cap(b))
	if c < 0 {
		return
	}
	b = b[:0]
	pools[c].Put(&b)
}
