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

// Each calls fn(0..n-1), on every core when n is Above or more, in blocks
// taken in turn; fn must not depend on the order.
func Each(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/Above+1)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
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
