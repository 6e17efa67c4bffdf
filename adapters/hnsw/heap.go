package hnsw

import "cmp"

// cand is a slot and its similarity to the vector being searched for.
type cand struct {
	sim  float32
	slot uint32
}

// byBest orders candidates best first; equal similarities fall back to the
// slot so every sort, and with it the whole build, is deterministic.
func byBest(a, b cand) int {
	if c := cmp.Compare(b.sim, a.sim); c != 0 {
		return c
	}
	return cmp.Compare(a.slot, b.slot)
}

// Hand-written binary heaps: container/heap goes through an interface on
// every swap, which costs more than the comparisons here.

// maxHeap holds the candidates still to expand, closest at the root.
type maxHeap []cand

func (h *maxHeap) push(c cand) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].sim >= s[i].sim {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
	*h = s
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, best := 2*i+1, i
		if l < n && s[l].sim > s[best].sim {
			best = l
		}
		if r := l + 1; r < n && s[r].sim > s[best].sim {
			best = r
		}
		if best == i {
			break
		}
		s[i], s[best] = s[best], s[i]
		i = best
	}
	*h = s
	return top
}

// minHeap holds the best results found so far, the worst of them at the
// root so it is the one a better candidate replaces.
type minHeap []cand

func (h *minHeap) push(c cand) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].sim <= s[i].sim {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
	*h = s
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, best := 2*i+1, i
		if l < n && s[l].sim < s[best].sim {
			best = l
		}
		if r := l + 1; r < n && s[r].sim < s[best].sim {
			best = r
		}
		if best == i {
			break
		}
		s[i], s[best] = s[best], s[i]
		i = best
	}
	*h = s
	return top
}
