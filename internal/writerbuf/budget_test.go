package writerbuf

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitQueued polls until n tickets are queued: a goroutine about to call
// Acquire cannot be observed otherwise.
func waitQueued(t *testing.T, b *Budget, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for b.Waiting() != n {
		if time.Now().After(deadline) {
			t.Fatalf("expected %d queued tickets, have %d", n, b.Waiting())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestBudgetGrantsUpToLimit(t *testing.T) {
	b := New(10)
	if !b.TryAcquire(4) || !b.TryAcquire(6) {
		t.Fatal("free units were refused")
	}
	if b.TryAcquire(1) {
		t.Fatal("acquired beyond the limit")
	}
	if got := b.Used(); got != 10 {
		t.Fatalf("used = %d, want 10", got)
	}
	b.Release(6)
	if !b.TryAcquire(6) {
		t.Fatal("released units were not reusable")
	}
}

func TestBudgetReserveGrantedOnArrival(t *testing.T) {
	b := New(3)
	tk := b.Reserve(3)
	if !tk.Granted() {
		t.Fatal("ticket with free units should be granted on arrival")
	}
	if err := tk.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	tk2 := b.Reserve(1)
	if tk2.Granted() {
		t.Fatal("ticket granted although the budget is full")
	}
	if b.Waiting() != 1 {
		t.Fatalf("waiting = %d, want 1", b.Waiting())
	}
	b.Release(1)
	if !tk2.Granted() {
		t.Fatal("release did not grant the queued ticket")
	}
	if err := tk2.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b.Used() != 3 {
		t.Fatalf("used = %d, want 3", b.Used())
	}
}

func TestBudgetTooLarge(t *testing.T) {
	b := New(5)
	if err := b.Acquire(context.Background(), 6); err == nil {
		t.Fatal("a request over the limit must fail, not wait forever")
	}
	if b.Waiting() != 0 || b.Used() != 0 {
		t.Fatal("failed request left state behind")
	}
}

// The head of the line blocks smaller requests behind it, and grants happen
// in arrival order.
func TestBudgetFIFO(t *testing.T) {
	b := New(10)
	if !b.TryAcquire(10) {
		t.Fatal("initial acquire failed")
	}
	big := b.Reserve(8)
	small := b.Reserve(1)
	if b.TryAcquire(1) {
		t.Fatal("TryAcquire overtook queued tickets")
	}
	b.Release(5) // 5 free: not enough for the head (8), so nobody passes
	if big.Granted() || small.Granted() {
		t.Fatal("a ticket overtook the head of the line")
	}
	b.Release(5) // 10 free: head takes 8, then 1 fits
	if !big.Granted() || !small.Granted() {
		t.Fatal("tickets not granted once room was made")
	}
	if b.Used() != 9 {
		t.Fatalf("used = %d, want 9", b.Used())
	}
}

func TestBudgetFIFOAcrossGoroutines(t *testing.T) {
	const waiters = 50
	b := New(1)
	if !b.TryAcquire(1) {
		t.Fatal("initial acquire failed")
	}
	order := make(chan int, waiters)
	var wg sync.WaitGroup
	for i := 0; i < waiters; i++ {
		// Queue them one by one so that arrival order is known.
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := b.Acquire(context.Background(), 1); err != nil {
				t.Error(err)
				return
			}
			order <- i
			b.Release(1)
		}(i)
		waitQueued(t, b, i+1)
	}
	b.Release(1)
	wg.Wait()
	close(order)
	want := 0
	for got := range order {
		if got != want {
			t.Fatalf("waiter %d served at position %d", got, want)
		}
		want++
	}
}

func TestBudgetContextCancel(t *testing.T) {
	b := New(2)
	if !b.TryAcquire(2) {
		t.Fatal("initial acquire failed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- b.Acquire(ctx, 2) }()
	waitQueued(t, b, 1)
	behind := b.Reserve(1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if b.Waiting() != 1 {
		t.Fatalf("cancelled waiter still queued: waiting = %d", b.Waiting())
	}
	// The cancelled head no longer blocks the ticket behind it.
	b.Release(1)
	if !behind.Granted() {
		t.Fatal("ticket behind a cancelled waiter was not granted")
	}
	if b.Used() != 2 {
		t.Fatalf("used = %d, want 2", b.Used())
	}
}

// When the cancelled waiter leaves, the ticket behind it may fit right away.
func TestBudgetCancelUnblocksFollowers(t *testing.T) {
	b := New(4)
	if !b.TryAcquire(3) {
		t.Fatal("initial acquire failed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	head := b.Reserve(4)
	follower := b.Reserve(1)
	cancel()
	if err := head.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if !follower.Granted() {
		t.Fatal("follower that fits stayed blocked behind a departed head")
	}
}

func TestBudgetClose(t *testing.T) {
	b := New(1)
	if !b.TryAcquire(1) {
		t.Fatal("initial acquire failed")
	}
	const waiters = 5
	errs := make(chan error, waiters)
	for i := 0; i < waiters; i++ {
		go func() { errs <- b.Acquire(context.Background(), 1) }()
	}
	waitQueued(t, b, waiters)
	b.Close()
	for i := 0; i < waiters; i++ {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v, want ErrClosed", err)
		}
	}
	if err := b.Acquire(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after close: %v", err)
	}
	if b.TryAcquire(0) {
		t.Fatal("TryAcquire succeeded after close")
	}
	// Units granted before Close are still given back.
	b.Release(1)
	if b.Used() != 0 {
		t.Fatalf("used = %d after release", b.Used())
	}
	b.Close() // idempotent
}

func TestBudgetCancelTicket(t *testing.T) {
	b := New(2)
	granted := b.Reserve(2)
	queued := b.Reserve(1)
	queued.Cancel()
	if b.Waiting() != 0 {
		t.Fatal("cancelled ticket still queued")
	}
	if err := queued.Wait(context.Background()); err == nil {
		t.Fatal("cancelled ticket reported success")
	}
	granted.Cancel()
	if b.Used() != 0 {
		t.Fatalf("cancel of granted ticket kept units: used = %d", b.Used())
	}
	granted.Cancel() // no double release
	if b.Used() != 0 {
		t.Fatalf("double cancel released twice: used = %d", b.Used())
	}
}

func TestBudgetReleaseTooMuchPanics(t *testing.T) {
	b := New(1)
	defer func() {
		if recover() == nil {
			t.Fatal("over-release did not panic")
		}
	}()
	b.Release(1)
}

// Many goroutines hammer the budget; the invariant 0 <= used <= limit must
// hold at every grant, observed by the holders themselves.
func TestBudgetStress(t *testing.T) {
	const limit = 7
	b := New(limit)
	var holding atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				n := int64(1 + (g+i)%3)
				ctx, cancel := context.WithCancel(context.Background())
				if i%7 == 0 {
					cancel()
				}
				err := b.Acquire(ctx, n)
				cancel()
				if err != nil {
					continue
				}
				if h := holding.Add(n); h > limit {
					t.Errorf("holding %d units, limit %d", h, limit)
				}
				holding.Add(-n)
				b.Release(n)
			}
		}(g)
	}
	wg.Wait()
	if b.Used() != 0 || b.Waiting() != 0 {
		t.Fatalf("leftover state: used=%d waiting=%d", b.Used(), b.Waiting())
	}
}
