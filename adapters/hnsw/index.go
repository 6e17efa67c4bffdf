package hnsw

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
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

type slotState uint8

const (
	free slotState = iota // reusable; nothing links to it
	live                  // searchable
	dead                  // deleted: still routes searches until vacuumed
)

type node struct {
	id    string
	state slotState
	level int32
	upper [][]uint32 // upper[l-1] are the links on layer l
}

// Index is an in-memory HNSW index of id -> vector, safe for concurrent use.
// Searches share a read lock; Add, Delete and each step of a vacuum take
// the write lock.
type Index struct {
	dim        int
	m, m0      int
	efC, efS   int
	exactBelow int
	ml         float64 // level multiplier 1/ln(M) of the paper

	mu       sync.RWMutex
	rng      *rand.Rand
	ids      map[string]uint32 // live ids only
	nodes    []node
	vecs     []float32 // slot s at [s*dim, (s+1)*dim)
	l0       []uint32  // layer-0 links, stride m0+1: count, then the links
	free     []uint32
	live     int
	dead     int
	entry    uint32
	maxLevel int        // -1 while there is no entry point
	epoch    uint64     // counts vacuums that freed slots
	wctx     *searchCtx // scratch of the write-locked work

	rngMu sync.Mutex

	ctxs  sync.Pool // *searchCtx for searches
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
		rng:        rand.New(rand.NewPCG(uint64(opt.Seed), 0x9e3779b97f4a7c15)),
		ids:        make(map[string]uint32),
		maxLevel:   -1,
		wctx:       new(searchCtx),
	}
	x.ctxs.New = func() any { return new(searchCtx) }
	return x
}

// Len returns the number of live (searchable) vectors.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

// Add stores vec under id, replacing the vector id had. The vector is
// copied. It must have the index's dimension (ErrDimension), be non-zero
// and finite (ErrVector); the index expects it L2-normalised, so scores
// are cosines, but does not check that. Re-adding the same vector is a
// no-op.
func (x *Index) Add(id string, vec []float32) error {
	if id == "" {
		return ErrID
	}
	if len(vec) != x.dim {
		return fmt.Errorf("hnsw: %q has %d dimensions, the index %d: %w", id, len(vec), x.dim, ErrDimension)
	}
	if !usable(vec) {
		return fmt.Errorf("hnsw: %q: %w", id, ErrVector)
	}
	// Phase 1, under the read lock so searches and other Adds run
	// alongside: find the neighbours, which is nearly all the work.
	c := x.ctxs.Get().(*searchCtx)
	defer x.ctxs.Put(c)
	x.mu.RLock()
	if s, ok := x.ids[id]; ok && slices.Equal(x.vec(s), vec) {
		x.mu.RUnlock()
		return nil
	}
	level := x.randomLevel()
	x.plan(c, vec, level)
	x.mu.RUnlock()

	// Phase 2, under the write lock: link. Links to nodes deleted in
	// between are dropped; if a vacuum freed slots or the entry point
	// moved, the plan may name reused slots or miss the top layers, so
	// it is made again.
	x.mu.Lock()
	if c.epoch != x.epoch || c.entry != x.entry || c.top != x.maxLevel {
		x.plan(c, vec, level)
	}
	if s, ok := x.ids[id]; ok {
		x.kill(s)
	}
	x.link(x.alloc(id, level, vec), level, c)
	vac := x.needVacuum()
	x.mu.Unlock()
	if vac {
		x.vacuum()
	}
	return nil
}

// Delete removes id and reports whether it was there.
func (x *Index) Delete(id string) bool {
	x.mu.Lock()
	s, ok := x.ids[id]
	if ok {
		x.kill(s)
	}
	vac := x.needVacuum()
	x.mu.Unlock()
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
	if x.live == 0 {
		return nil
	}
	if x.live < x.exactBelow {
		return x.exact(query, k)
	}
	c := x.ctxs.Get().(*searchCtx)
	defer x.ctxs.Put(c)
	return x.search(c, query, k)
}

// search is the graph search of Search; the caller holds the read lock.
func (x *Index) search(c *searchCtx, query []float32, k int) []Result {
	ep := cand{dot(query, x.vec(x.entry)), x.entry}
	for l := x.maxLevel; l > 0; l-- {
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
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.exact(query, k)
}

func (x *Index) exact(q []float32, k int) []Result {
	k = min(k, x.live)
	if k == 0 {
		return nil
	}
	h := make(worstFirst, 0, k)
	var batch [4]uint32
	var sims [4]float32
	for s := 0; s < len(x.nodes); {
		n := 0
		for ; s < len(x.nodes) && n < 4; s++ {
			if x.nodes[s].state == live {
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

func (x *Index) vec(s uint32) []float32 {
	i := int(s) * x.dim
	return x.vecs[i : i+x.dim : i+x.dim]
}

// links returns the links of slot s on layer l; writers may modify them in
// place.
func (x *Index) links(s uint32, l int) []uint32 {
	if l == 0 {
		i := int(s) * (x.m0 + 1)
		return x.l0[i+1 : i+1+int(x.l0[i])]
	}
	return x.nodes[s].upper[l-1]
}

func (x *Index) setLinks(s uint32, l int, ls []uint32) {
	if l == 0 {
		i := int(s) * (x.m0 + 1)
		x.l0[i] = uint32(copy(x.l0[i+1:i+1+x.m0], ls))
		return
	}
	x.nodes[s].upper[l-1] = append(x.nodes[s].upper[l-1][:0], ls...)
}

// kill turns a live slot into a tombstone. The entry point moves to a
// live node at once: a dead entry would be repaired only as a tombstone
// (vacuum drops its links to freed slots and adds none), and searches
// could then start from a node that leads nowhere.
func (x *Index) kill(s uint32) {
	nd := &x.nodes[s]
	delete(x.ids, nd.id)
	nd.state = dead
	x.live--
	x.dead++
	if s == x.entry {
		x.newEntry()
	}
}

// alloc takes a free slot, or a new one, for a live node.
func (x *Index) alloc(id string, level int, v []float32) uint32 {
	var s uint32
	if n := len(x.free); n > 0 {
		s = x.free[n-1]
		x.free = x.free[:n-1]
		copy(x.vec(s), v)
		x.l0[int(s)*(x.m0+1)] = 0
	} else {
		s = uint32(len(x.nodes))
		x.nodes = append(x.nodes, node{})
		x.vecs = append(x.vecs, v...)
		x.l0 = append(x.l0, make([]uint32, x.m0+1)...)
	}
	x.nodes[s] = node{id: id, state: live, level: int32(level), upper: make([][]uint32, level)}
	x.ids[id] = s
	x.live++
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
// layer: Algorithm 1 of the paper, with the neighbour heuristic
// (Algorithm 4), up to the point where links are written. It only reads,
// so it runs under the read lock. Only live nodes are chosen, but the beam
// search walks through tombstones, so a region of deleted nodes still
// leads to the live ones behind it.
func (x *Index) plan(c *searchCtx, v []float32, level int) {
	c.epoch, c.entry, c.top = x.epoch, x.entry, x.maxLevel
	c.planned = c.planned[:0]
	if x.maxLevel < 0 {
		return
	}
	ep := cand{dot(v, x.vec(x.entry)), x.entry}
	for l := x.maxLevel; l > level; l-- {
		ep = x.greedy(c, v, ep, l)
	}
	top := min(level, x.maxLevel)
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

// link writes the links planned in c for the new node s, both ways.
func (x *Index) link(s uint32, level int, c *searchCtx) {
	for l, sel := range c.planned {
		sel = slices.DeleteFunc(sel, func(n cand) bool { return x.nodes[n.slot].state != live })
		x.setLinks(s, l, slotsOf(sel, &c.slots))
		for _, n := range sel {
			x.addLink(n.slot, s, l, n.sim)
		}
	}
	if level > x.maxLevel {
		x.entry, x.maxLevel = s, level
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
func (x *Index) addLink(n, s uint32, l int, sim float32) {
	mmax := x.maxLinks(l)
	ls := x.links(n, l)
	if slices.Contains(ls, s) { // a repair may add a link n has already
		return
	}
	if len(ls) < mmax {
		if l == 0 {
			i := int(n) * (x.m0 + 1)
			x.l0[i+1+len(ls)] = s
			x.l0[i]++
		} else {
			x.nodes[n].upper[l-1] = append(ls, s)
		}
		return
	}
	c := x.wctx
	// toN[i], toS[i]: similarity of member i to n and to s.
	toN, toS := slices.Grow(c.toN[:0], len(ls))[:len(ls)], slices.Grow(c.toS[:0], len(ls))[:len(ls)]
	c.toN, c.toS = toN, toS
	x.dots(x.vec(n), ls, toN)
	x.dots(x.vec(s), ls, toS) // the members are in cache now
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
		ev := x.vec(e.slot)
		ok := true
		j := 0
		for ; ok && j+4 <= len(out); j += 4 {
			r := out[j : j+4 : j+4]
			a, b, c, d := dot4(ev, x.vec(r[0].slot), x.vec(r[1].slot), x.vec(r[2].slot), x.vec(r[3].slot))
			ok = a <= e.sim && b <= e.sim && c <= e.sim && d <= e.sim
		}
		for ; ok && j < len(out); j++ {
			ok = dot(ev, x.vec(out[j].slot)) <= e.sim
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
		ls := x.links(ep.slot, l)
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
	dots   int       // similarities computed, for the benchmarks

	// The plan of an Add, and the state of the graph it was made on.
	planned [][]cand // planned[l]: the new node's links on layer l
	epoch   uint64
	entry   uint32
	top     int
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
// from ep, leaving the ef best live nodes in c.res. Tombstones are walked
// through but never returned. It returns the best node seen, dead or
// alive, as the way down when no live node was found.
func (x *Index) searchLayer(c *searchCtx, q []float32, ep cand, ef, l int) cand {
	c.nextGen(len(x.nodes))
	c.cands, c.res = c.cands[:0], c.res[:0]
	c.visit(ep.slot)
	c.cands.push(ep)
	if x.nodes[ep.slot].state == live {
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
		for _, n := range x.links(cur.slot, l) {
			if c.visit(n) {
				next = append(next, n)
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
				if x.nodes[n].state == live {
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
