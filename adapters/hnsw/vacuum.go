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

func (x *Index) needVacuum() bool {
	return x.dead >= vacuumMinDead && x.dead*vacuumShare >= x.live+x.dead
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
// because no new link ever points to a tombstone (insert links only live
// nodes), so once a node is repaired it never again links to a slot this
// vacuum frees. Nodes deleted meanwhile wait for the next vacuum. Only
// one vacuum runs at a time; a writer that finds one running moves on.
func (x *Index) vacuum() {
	if !x.vacMu.TryLock() {
		return
	}
	defer x.vacMu.Unlock()

	x.mu.Lock()
	n := len(x.nodes)
	doomed := make([]bool, n)
	var gone []uint32
	for s := range x.nodes {
		if x.nodes[s].state == dead {
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
		x.l0[int(s)*(x.m0+1)] = 0
	}
	// Reused last first: the lowest slots go first, for no deeper reason
	// than a deterministic order.
	slices.Reverse(gone)
	x.free = append(x.free, gone...)
	x.dead -= len(gone)
	x.epoch++
}

// repair drops the links of slot s to tombstones. A live node gets new
// links in their place; a tombstone, which only routes until its own
// vacuum, just loses the links to slots about to be freed.
func (x *Index) repair(s uint32, doomed []bool) {
	nd := &x.nodes[s]
	if nd.state == free {
		return
	}
	c := x.wctx
	for l := 0; l <= int(nd.level); l++ {
		ls := x.links(s, l)
		if nd.state == dead {
			keep := ls[:0]
			for _, o := range ls {
				if int(o) >= len(doomed) || !doomed[o] {
					keep = append(keep, o)
				}
			}
			x.setLinks(s, l, keep)
			continue
		}
		if !slices.ContainsFunc(ls, func(o uint32) bool { return x.nodes[o].state != live }) {
			continue
		}
		c.nextGen(len(x.nodes))
		c.visit(s)
		next, lost := c.next[:0], 0
		for _, o := range ls {
			if x.nodes[o].state == live {
				if c.visit(o) {
					next = append(next, o)
				}
				continue
			}
			lost++
			for _, o2 := range x.links(o, l) {
				if x.nodes[o2].state == live && c.visit(o2) {
					next = append(next, o2)
				}
			}
		}
		c.next = next
		sims := c.scratch(len(next))[:len(next)]
		x.dots(x.vec(s), next, sims)
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
			if x.nodes[o].state == live {
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
				x.addLink(n.slot, s, l, n.sim)
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
	v := x.vec(s)
	ep := cand{dot(v, x.vec(x.entry)), x.entry}
	for up := x.maxLevel; up > l; up-- {
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
// the lowest slot among equals; with no live node the graph is empty.
func (x *Index) newEntry() {
	x.maxLevel = -1
	for s := range x.nodes {
		nd := &x.nodes[s]
		if nd.state == live && int(nd.level) > x.maxLevel {
			x.entry, x.maxLevel = uint32(s), int(nd.level)
		}
	}
}
