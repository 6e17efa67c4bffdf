package blugeindex

import (
	"context"
	"math/bits"
	"sync"

	blugesearch "github.com/blugelabs/bluge/search"
)

// A deep list by accumulation.
//
// walk (topk.go) decides document by document which clauses to read: a
// sort of the cursors, a pivot, the block bounds, a heap. That pays when
// most documents are skipped, as for a page of 25. A list of thousands
// (placeKeys places vector hits down to core.MaxMatchSet) visits most of
// the documents its lists hold, and then the decisions cost more than the
// postings: at 1,000,000 resources the walks of the hybrid were two thirds
// of its CPU. Adding every posting of the plan's lists into an array by
// document, clause after clause, costs a few nanoseconds a posting and
// gives the same scores: a document's clause scores are added in the
// plan's order (as sumInClauseOrder), and the tiers of a clause hold
// different documents.

// accumulateMinDepth is the least depth accumulated: below it the pruned
// walk skips most documents, and counting the lists' postings to decide
// would cost a shallow search more than it could save.
const accumulateMinDepth = 1000

// accumulatePerDepth is how many postings per document of the depth
// accumulation reads at most before the walk may be cheaper. At 1,000,000
// resources and depth 10,000 accumulation took 0.7-4.6 ms for lists of
// 45,000 to 967,000 postings where the walk took 2.2-21 ms (every one of
// the scale queries; PERFORMANCE.md 12q), so the bound is loose: it keeps
// a list of millions of postings, where nothing was measured, on the walk.
const accumulatePerDepth = 128

// accumulator is the array one accumulation adds into, kept for the next.
type accumulator struct {
	score []float64 // by document, from the range's first
	held  []uint64  // bit i: document i was added to
}

var accumulators = sync.Pool{New: func() any { return new(accumulator) }}

// accumulation chooses between accumulation and the walk; benchmarks set
// it to compare the two on the same lists.
var accumulation = accumulateWhenCheaper

const (
	accumulateWhenCheaper = iota
	accumulateNever
	accumulateAlways
)

// accumulated is candidatesIn by accumulation: the documents from from to
// to of the plan's catalogs scoring at least floor and the depth-th best of
// them (last; -Inf when fewer reach the floor), in document order, with
// their scores as walk computes them. ok is false, and nothing is read,
// when the plan's lists hold too many postings for a list of depth (then
// walk). space is the snapshot's document numbers, for the share of the
// lists in range.
func accumulated(ctx context.Context, snap blugesearch.Reader, p *plan, lex *lexicon, blocks *blockCache, depth int, floor float64, from, to, space uint64) (docs []scoredDoc, last float64, ok bool, err error) {
	if accumulation == accumulateNever || blocks == nil || to <= from || space == 0 ||
		(depth < accumulateMinDepth && accumulation != accumulateAlways) {
		return nil, 0, false, nil
	}
	cs, err := openCursors(snap, p, lex, blocks)
	defer closeCursors(cs)
	if err != nil {
		return nil, 0, false, err
	}
	// The postings in range, estimated: a list outside the block cache is
	// shorter than its minimum (blockMinLen unless a test set another).
	postings := uint64(0)
	for _, c := range cs {
		if c.bl == nil {
			postings += uint64(blocks.minLength())
		} else {
			postings += c.bl.postings()
		}
	}
	if postings*(to-from)/space > uint64(accumulatePerDepth*depth) && accumulation != accumulateAlways {
		return nil, 0, false, nil
	}
	n := to - from
	a := accumulators.Get().(*accumulator)
	defer accumulators.Put(a)
	if uint64(len(a.score)) < n {
		a.score = make([]float64, n)
		a.held = make([]uint64, (n+63)/64)
	}
	words := (n + 63) / 64
	clean := false
	defer func() {
		if !clean { // an error left scores behind
			clear(a.score[:n])
			clear(a.held[:words])
		}
	}()
	read := 0
	for _, c := range cs { // in the plan's order (openCursors)
		if c.bl != nil {
			c.bl.addTo(a.score, a.held, from, to)
			continue
		}
		if c.doc < from {
			if err := c.advance(from); err != nil {
				return nil, 0, false, err
			}
		}
		for c.doc < to {
			i := c.doc - from
			a.score[i] += c.score()
			a.held[i>>6] |= 1 << (i & 63)
			if err := c.next(); err != nil {
				return nil, 0, false, err
			}
			if read++; read&0xffff == 0 {
				if err := ctx.Err(); err != nil {
					return nil, 0, false, err
				}
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, false, err
	}
	filter, err := newCatalogPostings(snap, p.catalogs)
	if err != nil {
		return nil, 0, false, err
	}
	defer filter.close()
	// In document order, as catalogPostings needs, keeping what reaches
	// the depth best so far (as walk's heap); each score read is cleared
	// for the next accumulation.
	top := newTopScores(depth)
	kept := pruned{least: 2 * depth}
	for w := range a.held[:words] {
		for word := a.held[w]; word != 0; word &= word - 1 {
			i := uint64(w)*64 + uint64(bits.TrailingZeros64(word))
			score := settle(a.score[i])
			a.score[i] = 0
			if score < floor || score < top.threshold() {
				continue
			}
			held, err := filter.holds(from + i)
			if err != nil {
				return nil, 0, false, err
			}
			if !held {
				continue
			}
			top.add(score)
			kept.add(scoredDoc{from + i, score}, top.threshold())
		}
		a.held[w] = 0
	}
	clean = true
	return keepAbove(kept.docs, top.threshold()), top.threshold(), true, nil
}
