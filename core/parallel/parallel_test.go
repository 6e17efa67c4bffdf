package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestEachCallsEveryIterationOnce: below Above and above it, on several
// cores, every i in 0..n-1 is called exactly once and nothing else.
func TestEachCallsEveryIterationOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, Above - 1, Above, Above*3 + 17, 10_000} {
		calls := make([]atomic.Int32, n)
		Each(n, func(i int) {
			calls[i].Add(1)
		})
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("n=%d: iteration %d called %d times", n, i, c)
			}
		}
	}
}

// TestPartsCoverEveryIterationOnce: the parts are consecutive, do not
// overlap and cover 0..n-1.
func TestPartsCoverEveryIterationOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, Above - 1, Above, Above*3 + 17, 10_000} {
		calls := make([]atomic.Int32, n)
		Parts(n, func(from, to int) {
			for i := from; i < to; i++ {
				calls[i].Add(1)
			}
		})
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("n=%d: iteration %d in %d parts", n, i, c)
			}
		}
	}
}
