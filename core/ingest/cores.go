package ingest

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// onCoresAbove is the fewest items worth more than one goroutine.
const onCoresAbove = 256

// onCores calls fn(0..n-1) on every core when n is large enough, in
// blocks of 64 taken in turn; fn must not depend on the order.
func onCores(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/onCoresAbove+1)
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
				from := int(next.Add(64)) - 64
				if from >= n {
					return
				}
				for i := from; i < min(n, from+64); i++ {
					fn(i)
				}
			}
		})
	}
	wg.Wait()
}
