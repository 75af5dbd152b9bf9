// Command ordermodel runs the workload of TestWriterOrderUnderOneBatchBound
// (one batch per send, a sender slower than the producer) through a model of
// the design PR #1117 fell back to upstream: batches go to a bounded channel
// that one sender drains in order, and when the channel is full the producer
// does not wait but starts a goroutine that sends the batch once there is
// room. It prints how many batches the sender saw out of order, which
// depends on scheduling (docs/backpressure.md, question 2). It is a model of
// a rejected design, so it lives here and not in the library's tests.
//
//	go run ./docs/backpressure/ordermodel -n 5000 -procs 4
package main

import (
	"flag"
	"fmt"
	"runtime"
	"sync"
)

func main() {
	total := flag.Int("n", 5000, "batches to send")
	capacity := flag.Int("cap", 1, "capacity of the channel to the sender")
	procs := flag.Int("procs", 4, "GOMAXPROCS")
	flag.Parse()
	runtime.GOMAXPROCS(*procs)
	seen := goroutinePerPendingSend(*total, *capacity)
	fmt.Printf("goroutine per pending send, GOMAXPROCS=%d: %d inversions in %d batches (%d delivered)\n",
		*procs, inversions(seen), *total, len(seen))
}

// goroutinePerPendingSend returns the order in which the sender saw the
// batches 0..total-1.
func goroutinePerPendingSend(total, capacity int) []int {
	ch := make(chan int, capacity)
	seen := make([]int, 0, total)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for v := range ch {
			seen = append(seen, v)
			runtime.Gosched() // the network: the sender is slower than the producer
		}
	}()
	var pending sync.WaitGroup
	for i := 0; i < total; i++ {
		select {
		case ch <- i:
		default:
			pending.Add(1)
			go func(i int) {
				defer pending.Done()
				ch <- i
			}(i)
		}
	}
	pending.Wait()
	close(ch)
	<-drained
	return seen
}

// inversions counts the places where a value is smaller than the one
// before it.
func inversions(vals []int) int {
	n := 0
	for i := 1; i < len(vals); i++ {
		if vals[i] < vals[i-1] {
			n++
		}
	}
	return n
}
