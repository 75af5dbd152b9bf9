package protocol

import (
	"runtime"
	"sync"
)

// rbKeep holds the record buffers given back, across garbage collections,
// in front of their sync.Pool, which every collection empties. A Reader of
// compressed batches collects every few megabytes it hands out, and the
// buffers of a megabyte or two that each collection dropped were allocated
// again, their pages returned to the OS by the scavenger in between and
// faulted back in: about a tenth of a partition Reader's CPU with 1 KiB
// zstd values (docs/bench/consumer/PROFILE.md). It holds at most
// rbKeepBytes, and lets go of all of it at a collection when nothing was
// taken since the one before, so a program that stops reading gets the
// memory back after a collection or two, as from a sync.Pool. (A finalizer
// of the program that never returns would stop the hook: the buffers kept
// then stay, within the bound.)
type rbKeep struct {
	mu    sync.Mutex
	bufs  []*rbBuf
	bytes int
	taken bool // since the last collection
}

// rbKeepBytes bounds each rbKeep: three partition readers' buffers for
// batches of the default 1 MB, with room for a larger batch.
const rbKeepBytes = 8 << 20

// rbKeepOut holds the buffers of rbBufPool, rbKeepIn those of rbInPool.
var rbKeepOut, rbKeepIn rbKeep

func (k *rbKeep) get() *rbBuf {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.taken = true
	n := len(k.bufs)
	if n == 0 {
		return nil
	}
	p := k.bufs[n-1]
	k.bufs[n-1] = nil
	k.bufs = k.bufs[:n-1]
	k.bytes -= cap(p.b)
	return p
}

// put keeps p unless that would pass rbKeepBytes.
func (k *rbKeep) put(p *rbBuf) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.bytes+cap(p.b) > rbKeepBytes {
		return false
	}
	k.bufs = append(k.bufs, p)
	k.bytes += cap(p.b)
	return true
}

// collected is called after each garbage collection.
func (k *rbKeep) collected() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.taken {
		clear(k.bufs)
		k.bufs, k.bytes = k.bufs[:0], 0
	}
	k.taken = false
}

// rbGCSentinel is an object nothing refers to: its finalizer runs after
// each garbage collection and sets up the next one's. It holds a pointer so
// that it is not packed with other small objects, which would keep it alive.
type rbGCSentinel struct{ _ *byte }

func rbWatchCollections() {
	runtime.SetFinalizer(new(rbGCSentinel), func(*rbGCSentinel) {
		rbKeepOut.collected()
		rbKeepIn.collected()
		rbWatchCollections()
	})
}

func init() { rbWatchCollections() }
