package protocol

import (
	"runtime"
	"testing"
	"time"
)

func TestRBKeepHoldsUpToItsBound(t *testing.T) {
	var k rbKeep
	big := &rbBuf{b: make([]byte, 0, rbKeepBytes/2)}
	if !k.put(big) || !k.put(&rbBuf{b: make([]byte, 0, rbKeepBytes/2)}) {
		t.Fatal("refused buffers within the bound")
	}
	if k.put(&rbBuf{b: make([]byte, 0, 1)}) {
		t.Fatal("kept a buffer past rbKeepBytes")
	}
	if k.get() == nil || k.get() != big || k.get() != nil {
		t.Fatal("get does not give back what was kept, last first")
	}
	if k.bytes != 0 {
		t.Fatalf("%d bytes counted with nothing kept", k.bytes)
	}
}

// A kept buffer survives a collection when buffers were taken since the
// one before (a Reader at work), and goes at the first collection after
// none were (a program that stopped reading).
func TestRBKeepLetsGoWhenUnused(t *testing.T) {
	var k rbKeep
	p := &rbBuf{b: make([]byte, 0, 4096)}
	k.get()
	k.put(p)
	k.collected()
	if got := k.get(); got != p {
		t.Fatal("a buffer of a keep in use was dropped by a collection")
	}
	k.put(p)
	k.collected() // taken since the last one: kept
	k.collected() // nothing taken since: let go
	if k.get() != nil || k.bytes != 0 {
		t.Fatal("an unused keep held on to its buffers after a collection")
	}
}

// The collections reach rbKeepOut: a buffer given back and never taken
// again is let go by the garbage collector's own cycles.
func TestRBKeepFollowsGarbageCollections(t *testing.T) {
	p := rbGetBuf()
	p.b = append(p.b[:0], make([]byte, 64<<10)...)
	rbPutBuf(p)
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		rbKeepOut.mu.Lock()
		n := rbKeepOut.bytes
		rbKeepOut.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("rbKeepOut still holds %d bytes after 10 s of collections", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
