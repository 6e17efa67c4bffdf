package ingest

import (
	"runtime/debug"
	"sync"
)

// bulkGC lowers the garbage collector's target (GOGC) while bulk writes
// run, and restores it when the last one is done: a file ingest, a
// release of more resources than one batch, a change of several
// chunks. They allocate at a high rate (parsing, hashing, analyses, index
// segments) while the lexicon grows, and with the default target the heap
// grows to twice what is live before each collection: at 50 a
// 100,000-row file peaks about 100 MiB lower, for about an eighth more CPU
// (docs/PERFORMANCE.md 12r). Searches, small writes and batches keep the
// process's own target: a batch's size bounds its memory, and at 50 a
// load in batches spent a tenth more CPU (12zh).
type bulkGC struct {
	// percent is the target while bulk writes run, base the process's
	// own (GOGC from the environment, read when the service is made);
	// the target is used only when it is lower.
	percent, base int

	mu sync.Mutex
	n  int // bulk writes running
}

func newBulkGC(percent int) *bulkGC {
	base := debug.SetGCPercent(-1)
	debug.SetGCPercent(base)
	return &bulkGC{percent: percent, base: base}
}

// lowers tells whether the bulk target changes anything: it is set, and
// the process collects (GOGC is not off) with a higher target.
func (g *bulkGC) lowers() bool { return g.percent > 0 && g.base >= 0 && g.percent < g.base }

// enter is called when a bulk write starts; every enter has its leave.
func (g *bulkGC) enter() {
	if !g.lowers() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n == 0 {
		debug.SetGCPercent(g.percent)
	}
	g.n++
}

// leave is called when a bulk write is done. The last one sets the
// process's own target, not whatever it found at enter: the index also
// turns the collector off for a moment (while it writes or reads its
// snapshot, at a clean stop or a start), and an overlap of the two must
// not leave the bulk target behind for good.
func (g *bulkGC) leave() {
	if !g.lowers() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n--; g.n == 0 {
		debug.SetGCPercent(g.base)
	}
}
