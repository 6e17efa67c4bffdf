package hnsw

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Defaults of Options; see the package comment for how they were measured.
const (
	DefaultM              = 16
	DefaultEfConstruction = 200
	DefaultEfSearch       = 128
	DefaultExactBelow     = 2000
)

// levelCap caps the random layer of a node. With M = 16 a level above 8
// has odds of 1 in 16^8; the cap only guards against pathological seeds.
const levelCap = 16

var (
	// ErrDimension is returned by Add for a vector of the wrong length.
	ErrDimension = errors.New("hnsw: wrong vector dimension")
	// ErrVector is returned by Add for a zero vector or one holding NaN or
	// ±Inf: a zero vector has no direction (the embedders return one for a
	// text without letters), and NaN would break every comparison.
	ErrVector = errors.New("hnsw: vector is zero or not finite")
	// ErrID is returned by Add for an empty id.
	ErrID = errors.New("hnsw: empty id")
)

// Options tune the index. Zero values take the defaults.
type Options struct {
	// M is the number of links a node keeps on each upper layer; layer 0
	// keeps 2*M. Values below 2 take DefaultM.
	M int
	// EfConstruction is the beam width when a node is inserted.
	EfConstruction int
	// EfSearch is the beam width of Search; Search widens it to k when
	// k is larger.
	EfSearch int
	// ExactBelow: while fewer live vectors than this are stored, Search
	// scans them all (Exact), which is then both faster and exact.
	// Negative means never.
	ExactBelow int
	// Seed drives the random layer of each node: the same seed and the
	// same sequence of calls give the same graph and the same answers.
	Seed int64
}

// Result is one match: the id and its dot product with the query, which is
// the cosine similarity for normalised vectors.
type Result struct {
	ID    string
	Score float32
}

type slotState = uint32

const (
	free    slotState = iota // reusable; nothing links to it
	pending                  // being inserted: walked, not yet returned
	live                     // searchable
	dead                     // deleted: still routes searches until vacuumed
)

type node struct {
	id    string
	level int32
	upper []uint32 // layers 1..level, m+1 words each: the count, then the links
}

// linkStripes is the number of locks that serialise the writers of link
// lists (a slot's lists are guarded by lock slot % linkStripes).
const linkStripes = 1024

// Index is an in-memory HNSW index of id -> vector, safe for concurrent use.
//
// Locking (the package comment has the why):
//   - mu is read-locked by searches and by every insert and delete from
//     start to end, and write-locked by what moves or frees slots under
//     them: growing the arrays and each step of a vacuum.
//   - idMu, taken only with mu read-locked, guards the ids, the free list,
//     the slots handed out and the count of tombstones.
//   - A slot's link lists are written under its stripe of linkMu and read
//     with atomic loads, so a search or an insert reading a list another
//     insert rewrites sees, word by word, the old or the new links, all of
//     them valid slots.
//   - state is read and written atomically; top (entry point and top
//     level) too, and an insert that raises the top level, or a delete
//     that may move the entry, holds topMu while it does.
type Index struct {
	dim        int
	m, m0      int
	efC, efS   int
	exactBelow int
	ml         float64 // level multiplier 1/ln(M) of the paper
	rot        *rotation

	mu    sync.RWMutex
	idMu  sync.Mutex
	ids   map[string]uint32 // ids of pending and live slots
	free  []uint32          // vacuumed slots below used
	used  atomic.Uint32     // slots [0, used) have been handed out
	live  atomic.Int64
	dead  int
	topMu sync.Mutex
	top   atomic.Uint64 // entry slot | (top level + 1) << 32; 0: empty

	// The arrays hold the capacity's slots (len(nodes)); they are
	// replaced, and pages added, only under mu's write lock.
	nodes  []node
	state  []uint32      // slotState of each slot
	vecs   paged[int8]   // slot s's codes, dim of them (dot.go)
	scales []float32     // slot s's scale
	l0     paged[uint32] // slot s's layer-0 links, m0+1 words: count, then the links

	linkMu [linkStripes]sync.Mutex

	rng   *rand.Rand
	pcg   *rand.PCG // rng's source, kept in a snapshot
	rngMu sync.Mutex

	wctx  *searchCtx // scratch of the vacuum, which holds the write lock
	ctxs  sync.Pool  // *searchCtx for searches and inserts
	vacMu sync.Mutex
}

// New returns an empty index of dim-dimensional vectors. It panics if dim
// is below 1.
func New(dim int, opt Options) *Index {
	if dim <= 0 {
		panic(fmt.Sprintf("hnsw: dimension %d", dim))
	}
	if opt.M < 2 {
		opt.M = DefaultM
	}
	if opt.EfConstruction <= 0 {
		opt.EfConstruction = DefaultEfConstruction
	}
	opt.EfConstruction = max(opt.EfConstruction, opt.M)
	if opt.EfSearch <= 0 {
		opt.EfSearch = DefaultEfSearch
	}
	switch {
	case opt.ExactBelow == 0:
		opt.ExactBelow = DefaultExactBelow
	case opt.ExactBelow < 0:
		opt.ExactBelow = 0
	}
	x := &Index{
		dim:        dim,
		m:          opt.M,
		m0:         2 * opt.M,
		efC:        opt.EfConstruction,
		efS:        opt.EfSearch,
		exactBelow: opt.ExactBelow,
		ml:         1 / math.Log(float64(opt.M)),
		pcg:        rand.NewPCG(uint64(opt.Seed), 0x9e3779b97f4a7c15),
		ids:        make(map[string]uint32),
		wctx:       new(searchCtx),
		rot:        newRotation(dim),
		vecs:       paged[int8]{width: dim},
		l0:         paged[uint32]{width: 2*opt.M + 1},
	}
	x.rng = rand.New(x.pcg)
	x.ctxs.New = func() any { return new(searchCtx) }
	return x
}

// Len returns the number of live (searchable) vectors.
func (x *Index) Len() int { return int(x.live.Load()) }

// Add stores vec under id, replacing the vector id had. The vector is
// copied. It must have the index's dimension (ErrDimension), be non-zero
// and finite (ErrVector); the index expects it L2-normalised, so scores
// are cosines, but does not check that. Re-adding the same vector is a
// no-op. Add may be called from several goroutines at once, alongside
// searches; AddBatch does that for a batch.
func (x *Index) Add(id string, vec []float32) error {
	if err := x.check(id, vec); err != nil {
		return err
	}
	c := x.ctxs.Get().(*searchCtx)
	defer x.ctxs.Put(c)
	if x.insert(c, id, vec) {
		x.vacuum()
	}
	return nil
}

func (x *Index) check(id string, vec []float32) error {
	if id == "" {
		return ErrID
	}
	if len(vec) != x.dim {
		return fmt.Errorf("hnsw: %q has %d dimensions, the index %d: %w", id, len(vec), x.dim, ErrDimension)
	}
	if !usable(vec) {
		return fmt.Errorf("hnsw: %q: %w", id, ErrVector)
	}
	return nil
}

// Item is one vector of AddBatch.
type Item struct {
	ID  string
	Vec []float32
}

// AddBatch adds the items as Add would one after the other, from
// GOMAXPROCS goroutines (hnswlib's parallel insertion): each insert
// searches the graph while the others link theirs, and the lists they
// share are locked one at a time. When an id comes twice, its last item
// is the one kept. Invalid items are left out and their errors returned;
// the others are added. With more than one goroutine the graph depends on
// the scheduling, so it is not reproducible from the seed.
func (x *Index) AddBatch(items []Item) error {
	var errs []error
	last := make(map[string]int, len(items))
	for i, it := range items {
		if err := x.check(it.ID, it.Vec); err != nil {
			errs = append(errs, err)
			continue
		}
		last[it.ID] = i
	}
	todo := make([]int, 0, len(last))
	for i, it := range items {
		if j, ok := last[it.ID]; ok && j == i {
			todo = append(todo, i)
		}
	}
	x.mu.Lock()
	x.grow(len(todo))
	x.mu.Unlock()

	var next atomic.Int64
	var vac atomic.Bool
	work := func() {
		c := x.ctxs.Get().(*searchCtx)
		defer x.ctxs.Put(c)
		for {
			i := int(next.Add(1) - 1)
			if i >= len(todo) {
				return
			}
			if it := items[todo[i]]; x.insert(c, it.ID, it.Vec) {
				vac.Store(true)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(todo)/minPerWorker)
	if workers <= 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(work)
		}
		wg.Wait()
	}
	if vac.Load() {
		x.vacuum()
	}
	return errors.Join(errs...)
}

// minPerWorker: a batch gets one goroutine per this many items, up to
// GOMAXPROCS; a goroutine costs more than a few inserts.
const minPerWorker = 16

// insert adds a checked vector and reports whether a vacuum is due.
//
// The new node is pending (walked through, not returned) until it is
// linked both ways, then live. A replaced vector is a tombstone from the
// start, so an id has one live vector at most at any time, and none while
// its new one is inserted.
func (x *Index) insert(c *searchCtx, id string, vec []float32) (vacuum bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	codes := slices.Grow(c.codes[:0], x.dim)[:x.dim]
	c.codes = codes
	scale := quantize(x.rot.apply(vec, c.query(x.dim)), codes)
	x.idMu.Lock()
	old, had := x.ids[id]
	if had && x.scales[old] == scale && slices.Equal(x.vec(old), codes) {
		x.idMu.Unlock()
		return false
	}
	for len(x.free) == 0 && int(x.used.Load()) == len(x.nodes) {
		x.idMu.Unlock()
		x.mu.RUnlock()
		x.mu.Lock()
		x.grow(1)
		x.mu.Unlock()
		x.mu.RLock()
		x.idMu.Lock()
		old, had = x.ids[id] // another writer may have come meanwhile
	}
	if had {
		x.kill(old)
	}
	level := x.randomLevel()
	s := x.alloc(id, level, codes, scale)
	vacuum = x.needVacuum()
	x.idMu.Unlock()
	if had {
		x.moveEntryFrom(old)
	}

	// Only an insert that raises the top level holds topMu throughout,
	// as in hnswlib; the top level only rises while mu is read-locked.
	t := x.top.Load()
	held := level > topLevel(t)
	if held {
		x.topMu.Lock()
		defer x.topMu.Unlock()
		t = x.top.Load()
	}
	// The node is placed by its vector as stored, as every later
	// comparison with it will see it.
	x.plan(c, x.decoded(s, &c.qa), level, t)
	x.link(c, s)
	if atomic.CompareAndSwapUint32(&x.state[s], pending, live) {
		x.live.Add(1)
		// The top may have come down meanwhile: its node deleted while s
		// was pending, newEntry picked the highest live node, lower than
		// s. s is then the entry, or a live node sits above the entry and
		// a search of its upper layers (a vacuum's refill) starts from a
		// node without them. Under topMu, and only while s is live: a
		// delete of s moves the entry off it only after its kill.
		if !held && level > topLevel(x.top.Load()) {
			x.topMu.Lock()
			defer x.topMu.Unlock()
			held = true
		}
		if held && level > topLevel(x.top.Load()) && x.stateOf(s) == live {
			x.top.Store(packTop(s, level))
		}
	}
	return vacuum
}

// Delete removes id and reports whether it was there.
func (x *Index) Delete(id string) bool {
	x.mu.RLock()
	x.idMu.Lock()
	s, ok := x.ids[id]
	if ok {
		x.kill(s)
	}
	vac := x.needVacuum()
	x.idMu.Unlock()
	if ok {
		x.moveEntryFrom(s)
	}
	x.mu.RUnlock()
	if vac {
		x.vacuum()
	}
	return ok
}

// Search returns the k live vectors most similar to query, best first,
// equal scores by id. It returns nil when k < 1, when query has the wrong
// dimension or is zero or not finite, and when the index is empty. Below
// ExactBelow live vectors it is Exact; above, approximate.
func (x *Index) Search(query []float32, k int) []Result {
	if k < 1 || len(query) != x.dim || !usable(query) {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.live.Load()
	if n == 0 {
		return nil
	}
	c := x.ctxs.Get().(*searchCtx)
	defer x.ctxs.Put(c)
	query = x.rot.apply(query, c.query(x.dim))
	if n < int64(x.exactBelow) || x.top.Load() == 0 {
		return x.exact(query, k)
	}
	return x.search(c, query, k)
}

// search is the graph search of Search; the caller holds the read lock.
func (x *Index) search(c *searchCtx, query []float32, k int) []Result {
	t := x.top.Load()
	entry := entryOf(t)
	ep := cand{x.sim(query, entry), entry}
	for l := topLevel(t); l > 0; l-- {
		ep = x.greedy(c, query, ep, l)
	}
	x.searchLayer(c, query, ep, max(x.efS, k), 0)
	out := make([]Result, len(c.res))
	for i, r := range c.res {
		out[i] = Result{x.nodes[r.slot].id, r.sim}
	}
	slices.SortFunc(out, compareResults)
	return out[:min(k, len(out))]
}

// Exact returns the same as Search would with an exhaustive scan: the k
// live vectors most similar to query, best first, equal scores by id.
// It is the oracle the tests measure recall against.
func (x *Index) Exact(query []float32, k int) []Result {
	if k < 1 || len(query) != x.dim || !usable(query) {
		return nil
	}
	c := x.ctxs.Get().(*searchCtx)
	defer x.ctxs.Put(c)
	query = x.rot.apply(query, c.query(x.dim))
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.exact(query, k)
}

// exact is the scan of Exact for a rotated query; the caller holds the
// read lock.
func (x *Index) exact(q []float32, k int) []Result {
	k = min(k, x.Len())
	if k <= 0 {
		return nil
	}
	h := make(worstFirst, 0, k)
	var batch [4]uint32
	var sims [4]float32
	used := int(x.used.Load())
	for s := 0; s < used; {
		n := 0
		for ; s < used && n < 4; s++ {
			if x.stateOf(uint32(s)) == live {
				batch[n] = uint32(s)
				n++
			}
		}
		x.dots(q, batch[:n], sims[:n])
		for i := range n {
			h.offer(Result{x.nodes[batch[i]].id, sims[i]}, k)
		}
	}
	slices.SortFunc(h, compareResults)
	return h
}

// worstFirst is a heap of the best results so far, the worst at the root.
type worstFirst []Result

// offer keeps r if it is among the k best so far.
func (h *worstFirst) offer(r Result, k int) {
	s := *h
	if len(s) < k {
		s = append(s, r)
		for i := len(s) - 1; i > 0; {
			p := (i - 1) / 2
			if compareResults(s[i], s[p]) <= 0 {
				break
			}
			s[i], s[p] = s[p], s[i]
			i = p
		}
		*h = s
		return
	}
	if r.Score < s[0].Score || compareResults(r, s[0]) >= 0 {
		return
	}
	s[0] = r
	for i := 0; ; {
		l, w := 2*i+1, i
		if l < k && compareResults(s[l], s[w]) > 0 {
			w = l
		}
		if l+1 < k && compareResults(s[l+1], s[w]) > 0 {
			w = l + 1
		}
		if w == i {
			break
		}
		s[i], s[w] = s[w], s[i]
		i = w
	}
}

// compareResults orders results best first: higher score, then lower id.
func compareResults(a, b Result) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}

// usable reports whether v is non-zero and finite.
func usable(v []float32) bool {
	var ss float64
	for _, f := range v {
		ss += float64(f) * float64(f)
	}
	return ss > 0 && !math.IsInf(ss, 0) // NaN fails ss > 0
}

func (x *Index) vec(s uint32) []int8 { return x.vecs.at(s) }

// linkWords returns the words of slot s's list on layer l: the count,
// then room for the links.
func (x *Index) linkWords(s uint32, l int) []uint32 {
	if l == 0 {
		return x.l0.at(s)
	}
	i := (l - 1) * (x.m + 1)
	return x.nodes[s].upper[i : i+x.m+1 : i+x.m+1]
}

// links returns the links of slot s on layer l as they are stored, for
// the holders of mu's write lock or of s's link lock; others use
// loadLinks.
func (x *Index) links(s uint32, l int) []uint32 {
	w := x.linkWords(s, l)
	return w[1 : 1+w[0]]
}

// loadLinks appends the links of slot s on layer l to buf, read with
// atomic loads: another insert may be rewriting the list, and each word
// read is then a link it had or will have, a valid slot either way.
func (x *Index) loadLinks(s uint32, l int, buf []uint32) []uint32 {
	w := x.linkWords(s, l)
	n := min(int(atomic.LoadUint32(&w[0])), len(w)-1)
	for i := 1; i <= n; i++ {
		buf = append(buf, atomic.LoadUint32(&w[i]))
	}
	return buf
}

// setLinks replaces the list of s on layer l, the links first and the
// count last; the caller holds s's link lock or mu's write lock. ls must
// not alias the list.
func (x *Index) setLinks(s uint32, l int, ls []uint32) {
	w := x.linkWords(s, l)
	ls = ls[:min(len(ls), len(w)-1)]
	for i, o := range ls {
		atomic.StoreUint32(&w[1+i], o)
	}
	atomic.StoreUint32(&w[0], uint32(len(ls)))
}

func (x *Index) linkLock(s uint32) *sync.Mutex { return &x.linkMu[s%linkStripes] }

func (x *Index) stateOf(s uint32) slotState { return atomic.LoadUint32(&x.state[s]) }

// packTop packs the entry point and the top level into x.top; 0 is the
// empty graph.
func packTop(entry uint32, level int) uint64 { return uint64(level+1)<<32 | uint64(entry) }
func entryOf(t uint64) uint32                { return uint32(t) }
func topLevel(t uint64) int                  { return int(t>>32) - 1 }

// kill turns a pending or live slot into a tombstone; the caller holds
// idMu, then calls moveEntryFrom(s) once it has let go of it.
func (x *Index) kill(s uint32) {
	delete(x.ids, x.nodes[s].id)
	if atomic.SwapUint32(&x.state[s], dead) == live {
		x.live.Add(-1)
	}
	x.dead++
}

// moveEntryFrom moves the entry point to a live node if it was s, which
// was just killed: a dead entry would be repaired only as a tombstone
// (vacuum drops its links to freed slots and adds none), and searches
// could then start from a node that leads nowhere.
func (x *Index) moveEntryFrom(s uint32) {
	x.topMu.Lock()
	defer x.topMu.Unlock()
	if t := x.top.Load(); t != 0 && entryOf(t) == s {
		x.newEntry()
	}
}

// grow makes room for n more slots than are handed out; the caller holds
// mu's write lock.
func (x *Index) grow(n int) {
	used := int(x.used.Load())
	if used+n <= len(x.nodes) {
		return
	}
	c := max(used+n, len(x.nodes)+len(x.nodes)/4, 64)
	x.nodes = append(make([]node, 0, c), x.nodes...)[:c]
	x.state = append(make([]uint32, 0, c), x.state...)[:c]
	x.scales = append(make([]float32, 0, c), x.scales...)[:c]
	x.vecs.grow(c) // paged: nothing copied
	x.l0.grow(c)
}

// alloc takes a free slot, or a new one, for a pending node; the caller
// holds idMu and has made room (grow).
func (x *Index) alloc(id string, level int, codes []int8, scale float32) uint32 {
	var s uint32
	if n := len(x.free); n > 0 {
		s = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		s = x.used.Load()
		x.used.Store(s + 1)
	}
	copy(x.vec(s), codes)
	x.scales[s] = scale
	nd := &x.nodes[s]
	nd.id, nd.level = id, int32(level)
	nd.upper = nil
	if level > 0 {
		nd.upper = make([]uint32, level*(x.m+1))
	}
	atomic.StoreUint32(&x.l0.at(s)[0], 0)
	x.ids[id] = s
	atomic.StoreUint32(&x.state[s], pending)
	return s
}

func (x *Index) randomLevel() int {
	x.rngMu.Lock()
	f := x.rng.Float64()
	x.rngMu.Unlock()
	l := int(-math.Log(1-f) * x.ml)
	return min(l, levelCap)
}

// plan finds the neighbours of a new node of the given level on each
// layer, from the entry point and top level packed in t: Algorithm 1 of
// the paper, with the neighbour heuristic (Algorithm 4), up to the point
// where links are written. It only reads. Only live nodes are chosen, but
// the beam search walks through tombstones and pending nodes, so a region
// of deleted nodes still leads to the live ones behind it.
func (x *Index) plan(c *searchCtx, v []float32, level int, t uint64) {
	c.planned = c.planned[:0]
	if t == 0 {
		return
	}
	entry, maxLevel := entryOf(t), topLevel(t)
	ep := cand{x.sim(v, entry), entry}
	for l := maxLevel; l > level; l-- {
		ep = x.greedy(c, v, ep, l)
	}
	top := min(level, maxLevel)
	for len(c.planned) <= top {
		c.planned = append(c.planned, nil)
	}
	c.planned = c.planned[:top+1]
	for l := top; l >= 0; l-- {
		best := x.searchLayer(c, v, ep, x.efC, l)
		w := append(c.sorted[:0], c.res...)
		slices.SortFunc(w, byBest)
		c.sorted = w
		c.planned[l] = append(c.planned[l][:0], x.selectNeighbors(w, x.m, c)...)
		if len(w) > 0 {
			ep = w[0]
		} else {
			ep = best
		}
	}
}

// link writes the links planned in c for the new node s: its own lists
// first, then the links back to it, after which other searches can reach
// it. A neighbour deleted since the plan still gets the link; the vacuum
// that frees it repairs that.
func (x *Index) link(c *searchCtx, s uint32) {
	mu := x.linkLock(s)
	mu.Lock()
	for l, sel := range c.planned {
		x.setLinks(s, l, slotsOf(sel, &c.slots))
	}
	mu.Unlock()
	for l, sel := range c.planned {
		for _, n := range sel {
			x.addLink(c, n.slot, s, l, n.sim)
		}
	}
}

// addLink adds the link n -> s on layer l; sim is their similarity.
//
// A full list is pruned with the heuristic of selectNeighbors, applied
// incrementally: s is dropped if a member closer to n than s is closer to
// s than n is; otherwise it replaces the farther members it dominates that
// way, or else the farthest member. For a list the heuristic produced,
// that is what the heuristic gives on the list plus s, for 2·|list| dot
// products instead of up to |list|²/2 (measured: build 1.5x faster at the
// same recall).
func (x *Index) addLink(c *searchCtx, n, s uint32, l int, sim float32) {
	mu := x.linkLock(n)
	mu.Lock()
	defer mu.Unlock()
	mmax := x.maxLinks(l)
	ls := x.links(n, l)
	if slices.Contains(ls, s) { // a repair may add a link n has already
		return
	}
	if len(ls) < mmax {
		w := x.linkWords(n, l)
		atomic.StoreUint32(&w[1+len(ls)], s)
		atomic.StoreUint32(&w[0], uint32(len(ls)+1))
		return
	}
	// toN[i], toS[i]: similarity of member i to n and to s.
	toN, toS := slices.Grow(c.toN[:0], len(ls))[:len(ls)], slices.Grow(c.toS[:0], len(ls))[:len(ls)]
	c.toN, c.toS = toN, toS
	x.dots(x.decoded(n, &c.qa), ls, toN)
	x.dots(x.decoded(s, &c.qb), ls, toS) // the members are in cache now
	for i := range ls {
		if toN[i] > sim && toS[i] > sim {
			return
		}
	}
	keep := c.slots[:0]
	worst, wi := float32(math.Inf(1)), -1
	for i, o := range ls {
		if toN[i] < sim && toS[i] > toN[i] {
			continue
		}
		if toN[i] < worst {
			worst, wi = toN[i], len(keep)
		}
		keep = append(keep, o)
	}
	if len(keep) >= mmax {
		keep = slices.Delete(keep, wi, wi+1)
	}
	c.slots = append(keep, s)
	x.setLinks(n, l, c.slots)
}

// selectNeighbors is the heuristic of the paper (Algorithm 4, without
// extending or keeping pruned candidates, as in hnswlib): going through
// cs best first, it keeps a candidate only when it is closer to the base
// than to every candidate already kept. Links then spread in every
// direction instead of bunching in the nearest cluster, which is what
// keeps the graph navigable.
func (x *Index) selectNeighbors(cs []cand, m int, c *searchCtx) []cand {
	out := c.sel[:0]
	for _, e := range cs {
		if len(out) >= m {
			break
		}
		ev := x.decoded(e.slot, &c.qb)
		ok := true
		j := 0
		for ; ok && j+4 <= len(out); j += 4 {
			r := out[j : j+4 : j+4]
			a, b, cc, d := x.sim4(ev, []uint32{r[0].slot, r[1].slot, r[2].slot, r[3].slot})
			ok = a <= e.sim && b <= e.sim && cc <= e.sim && d <= e.sim
		}
		for ; ok && j < len(out); j++ {
			ok = x.sim(ev, out[j].slot) <= e.sim
		}
		if ok {
			out = append(out, e)
		}
	}
	c.sel = out
	return out
}

func slotsOf(cs []cand, buf *[]uint32) []uint32 {
	out := (*buf)[:0]
	for _, c := range cs {
		out = append(out, c.slot)
	}
	*buf = out
	return out
}

// greedy walks layer l from ep to the closest node it can reach, the
// descent through the upper layers (ef = 1).
func (x *Index) greedy(c *searchCtx, q []float32, ep cand, l int) cand {
	sims := c.scratch(x.m0)
	for changed := true; changed; {
		changed = false
		ls := x.loadLinks(ep.slot, l, c.next[:0])
		c.next = ls
		x.dots(q, ls, sims[:len(ls)])
		c.dots += len(ls)
		for i, n := range ls {
			if sims[i] > ep.sim {
				ep, changed = cand{sims[i], n}, true
			}
		}
	}
	return ep
}

// searchCtx is the scratch space of one search, pooled so a search
// allocates nothing but its answer.
type searchCtx struct {
	marks  []uint32 // visited: marks[s] == gen
	gen    uint32
	cands  maxHeap
	res    minHeap
	sorted []cand
	prune  []cand
	sel    []cand
	slots  []uint32
	toN    []float32
	toS    []float32
	old    []uint32
	next   []uint32  // neighbours to score
	sims   []float32 // their scores
	codes  []int8    // an inserted vector's codes
	rq     []float32 // a query or inserted vector rotated
	qa, qb []float32 // stored vectors decoded to be queries
	dots   int       // similarities computed, for the benchmarks

	planned [][]cand // the plan of an insert: its links on layer l
}

func (c *searchCtx) nextGen(n int) {
	if len(c.marks) < n {
		c.marks = make([]uint32, n+n/4)
		c.gen = 0
	}
	c.gen++
	if c.gen == 0 {
		clear(c.marks)
		c.gen = 1
	}
}

// query returns c.rq with room for a vector of dim.
func (c *searchCtx) query(dim int) []float32 {
	if len(c.rq) < dim {
		c.rq = make([]float32, dim)
	}
	return c.rq[:dim]
}

// scratch returns c.sims with room for n scores.
func (c *searchCtx) scratch(n int) []float32 {
	if len(c.sims) < n {
		c.sims = make([]float32, n)
	}
	return c.sims
}

// visit marks s and reports whether it was unvisited.
func (c *searchCtx) visit(s uint32) bool {
	if c.marks[s] == c.gen {
		return false
	}
	c.marks[s] = c.gen
	return true
}

// searchLayer is the beam search of the paper (Algorithm 2) on layer l
// from ep, leaving the ef best live nodes in c.res. Tombstones and pending
// nodes are walked through but never returned. It returns the best node
// seen, live or not, as the way down when no live node was found.
func (x *Index) searchLayer(c *searchCtx, q []float32, ep cand, ef, l int) cand {
	c.nextGen(len(x.nodes))
	c.cands, c.res = c.cands[:0], c.res[:0]
	c.visit(ep.slot)
	c.cands.push(ep)
	if x.stateOf(ep.slot) == live {
		c.res.push(ep)
	}
	best := ep
	for len(c.cands) > 0 {
		cur := c.cands.pop()
		if len(c.res) >= ef && cur.sim < c.res[0].sim {
			break
		}
		// Score the unvisited neighbours together (see dot4), then
		// take them in link order as the paper does one by one.
		next := c.next[:0]
		w := x.linkWords(cur.slot, l)
		for i, n := 1, min(int(atomic.LoadUint32(&w[0])), len(w)-1); i <= n; i++ {
			if o := atomic.LoadUint32(&w[i]); c.visit(o) {
				next = append(next, o)
			}
		}
		c.next = next
		sims := c.scratch(x.m0)[:len(next)]
		x.dots(q, next, sims)
		c.dots += len(next)
		for i, n := range next {
			s := sims[i]
			if len(c.res) < ef || s > c.res[0].sim {
				c.cands.push(cand{s, n})
				if s > best.sim {
					best = cand{s, n}
				}
				if x.stateOf(n) == live {
					c.res.push(cand{s, n})
					if len(c.res) > ef {
						c.res.pop()
					}
				}
			}
		}
	}
	return best
}

// maxLinks is the cap on a list of layer l: 2·M on layer 0, as in the
// paper, M above.
func (x *Index) maxLinks(l int) int {
	if l == 0 {
		return x.m0
	}
	return x.m
}
