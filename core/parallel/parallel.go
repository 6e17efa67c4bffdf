// Package parallel runs the independent iterations of a loop on every
// core. The ingest's diff and the index's analysis both need it, for
// work that runs while a write holds the catalog and one core would
// otherwise idle.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Above is the fewest iterations worth more than one goroutine.
const Above = 256

// block is how many iterations a worker takes at a time.
const block = 64

// workers is how many goroutines n iterations are worth.
func workers(n int) int { return min(runtime.GOMAXPROCS(0), n/Above+1) }

// Parts calls fn with consecutive parts [from, to) of 0..n-1, one part per
// core when n is Above or more, each on its own goroutine: for loops whose
// iterations share a worker's scratch.
func Parts(n int, fn func(from, to int)) {
	w := workers(n)
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for i := range w {
		wg.Go(func() { fn(i*n/w, (i+1)*n/w) })
	}
	wg.Wait()
}

// Each calls fn(0..n-1), on every core when n is Above or more, in blocks
// taken in turn; fn must not depend on the order.
func Each(n int, fn func(i int)) {
	w := workers(n)
	if w <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range w {
		wg.Go(func() {
			for {
				from := int(next.Add(block)) - block
				if from >= n {
					return
				}
				for i := from; i < min(n, from+block); i++ {
					fn(i)
				}
			}
		})
	}
	wg.Wait()
}
