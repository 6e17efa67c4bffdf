package hnsw

import (
	"slices"
	"time"
)

// A vacuum starts once this share of the slots are tombstones (and at
// least vacuumMinDead of them). Tombstones cost searches little (they are
// walked, not returned) but a vacuum costs a pass over every node, so it
// is batched: at 1/10 the pass is amortised over many deletes.
const (
	vacuumShare   = 10 // 1/10 of the slots
	vacuumMinDead = 64
	// vacuumSlice bounds how long a vacuum holds the write lock at a time,
	// so searches and writes run between the steps.
	vacuumSlice = time.Millisecond
)

// needVacuum: the caller holds idMu or mu's write lock.
func (x *Index) needVacuum() bool {
	return x.dead >= vacuumMinDead && x.dead*vacuumShare >= x.Len()+x.dead
}

// vacuum removes the tombstones present when it starts, as FreshDiskANN
// consolidates deletes: every node that links to a tombstone gets, in its
// place, the tombstone's own live links as candidates, and the heuristic
// picks its new links from them and its surviving ones. The graph then
// stays as well connected as if the deleted nodes had never been there,
// and the slots are reused.
//
// It runs in steps of about vacuumSlice under the write lock. Between
// steps, searches run and writers may add and delete: that is safe
// because no new link ever points to a node that was a tombstone when
// the vacuum started (inserts choose only live nodes, and an insert runs
// between two steps, never across one), so once a node is repaired it
// never again links to a slot this vacuum frees. Nodes deleted meanwhile
// (an insert may still link to one it chose while it was live) wait for
// the next vacuum. Only one vacuum runs at a time; a writer that finds one
// running moves on.
func (x *Index) vacuum() {
	if !x.vacMu.TryLock() {
		return
	}
	defer x.vacMu.Unlock()

	x.mu.Lock()
	n := int(x.used.Load())
	doomed := make([]bool, n)
	var gone []uint32
	for s := range n {
		if x.stateOf(uint32(s)) == dead {
			doomed[s] = true
			gone = append(gone, uint32(s))
		}
	}
	x.mu.Unlock()
	if len(gone) == 0 {
		return
	}

	for s := 0; s < n; {
		x.mu.Lock()
		stop := time.Now().Add(vacuumSlice)
		for ; s < n && time.Now().Before(stop); s++ {
			if !doomed[s] {
				x.repair(uint32(s), doomed)
			}
		}
		x.mu.Unlock()
	}

	x.mu.Lock()
	defer x.mu.Unlock()
	for _, s := range gone {
		x.nodes[s] = node{}
		x.state[s] = free
		x.l0.at(s)[0] = 0
	}
	// Reused last first: the lowest slots go first, for no deeper reason
	// than a deterministic order.
	slices.Reverse(gone)
	x.free = append(x.free, gone...)
	x.dead -= len(gone)
}

// repair drops the links of slot s to tombstones. A live node gets new
// links in their place; a tombstone, which only routes until its own
// vacuum, just loses the links to slots about to be freed.
func (x *Index) repair(s uint32, doomed []bool) {
	state := x.stateOf(s)
	if state == free {
		return
	}
	c := x.wctx
	for l := 0; l <= int(x.nodes[s].level); l++ {
		ls := x.links(s, l)
		if state == dead {
			keep := c.slots[:0]
			for _, o := range ls {
				if int(o) >= len(doomed) || !doomed[o] {
					keep = append(keep, o)
				}
			}
			c.slots = keep
			x.setLinks(s, l, keep)
			continue
		}
		if !slices.ContainsFunc(ls, func(o uint32) bool { return x.stateOf(o) != live }) {
			continue
		}
		c.nextGen(len(x.nodes))
		c.visit(s)
		next, lost := c.next[:0], 0
		for _, o := range ls {
			if x.stateOf(o) == live {
				if c.visit(o) {
					next = append(next, o)
				}
				continue
			}
			lost++
			for _, o2 := range x.links(o, l) {
				if x.stateOf(o2) == live && c.visit(o2) {
					next = append(next, o2)
				}
			}
		}
		c.next = next
		sims := c.scratch(len(next))[:len(next)]
		x.dots(x.decoded(s, &c.qa), next, sims)
		cs := c.prune[:0]
		for i, o := range next {
			cs = append(cs, cand{sims[i], o})
		}
		if 2*lost >= len(ls) || len(cs) < x.maxLinks(l)/2 {
			cs = x.refill(s, l, cs)
		}
		slices.SortFunc(cs, byBest)
		c.prune = cs
		// The links s had to live nodes, to tell the new ones.
		old := c.old[:0]
		for _, o := range ls {
			if x.stateOf(o) == live {
				old = append(old, o)
			}
		}
		c.old = old
		sel := x.selectNeighbors(cs, x.maxLinks(l), c)
		// The heuristic alone leaves s with fewer links than it had: on
		// insert a list grows back with the links of later nodes, here
		// nothing would refill it. The best of the candidates it passed
		// over bring s back to its count, as hnswlib's
		// keepPrunedConnections does.
		for _, e := range cs {
			if len(sel) >= len(ls) {
				break
			}
			if !slices.ContainsFunc(sel, func(o cand) bool { return o.slot == e.slot }) {
				sel = append(sel, e)
			}
		}
		c.sel = sel
		x.setLinks(s, l, slotsOf(sel, &c.slots))
		// New links go both ways, as on insert: a graph of one-way links
		// repaired around a deleted region loses its way into it.
		for _, n := range sel {
			if !slices.Contains(old, n.slot) {
				x.addLink(c, n.slot, s, l, n.sim)
			}
		}
	}
}

// refill adds to cs the candidates an insert of s would find on layer l.
// It is for a node whose neighbourhood was deleted wholesale, say a
// catalog whose vectors sat together: the tombstones' links then offer
// too few live nodes, and without a search s could be cut off.
func (x *Index) refill(s uint32, l int, cs []cand) []cand {
	c := x.wctx
	v := x.decoded(s, &c.qa)
	t := x.top.Load()
	ep := cand{x.sim(v, entryOf(t)), entryOf(t)}
	for up := topLevel(t); up > l; up-- {
		ep = x.greedy(c, v, ep, up)
	}
	x.searchLayer(c, v, ep, x.efC, l)
	for _, r := range c.res {
		if r.slot != s && !slices.ContainsFunc(cs, func(o cand) bool { return o.slot == r.slot }) {
			cs = append(cs, r)
		}
	}
	return cs
}

// newEntry picks the live node of the highest layer as the entry point,
// the lowest slot among equals; with no live node the graph is empty. The
// caller holds topMu.
func (x *Index) newEntry() {
	var t uint64
	for s := range int(x.used.Load()) {
		if x.stateOf(uint32(s)) == live && int(x.nodes[s].level) > topLevel(t) {
			t = packTop(uint32(s), int(x.nodes[s].level))
		}
	}
	x.top.Store(t)
}
