package blugeindex

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/blugelabs/bluge"
	"github.com/blugelabs/bluge/index"
	blugesearch "github.com/blugelabs/bluge/search"
	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/climatesearch/climatesearch/core"
)

// topK finds the candidates of a plan as fullCandidates does (the same
// keys, order and scores), without scoring every match: bluge's TopN
// collector scores each document that holds any query term, so its cost
// grows with the catalog (a common word matches a tenth of it).
//
// It walks the clauses' postings document by document with WAND pruning
// (Broder et al., 2003). Each clause's BM25 score stays below its weight
// (bluge's BM25 is weight * tf/(tf + k1*norm), the tf part below 1), so
// once the heap holds the depth best scores seen, a document whose clauses'
// weights add up to less than the depth-th score cannot be a candidate.
// The cursors are kept in document order; the next document looked at is
// the pivot, the first where the weights of the clauses positioned up to
// it reach the threshold, so documents holding only weak clauses are
// skipped. The pivot is scored from the clauses on it first, and the
// clauses behind it are read (skipping to it) only while what it has plus
// their weights can still reach the threshold, as MaxScore (Turtle and
// Flood, 1995) does. The result is exact, not an approximation: only
// documents that cannot reach the cut are skipped.
//
// Scores are summed in clause order (so they do not depend on the order
// in which postings were read) and settled like fullCandidates'; equal
// scores at the cut are ordered by key, read only for the final candidates.
func topK(ctx context.Context, reader *bluge.Reader, p *plan, lex *lexicon, depth int) ([]core.Scored, error) {
	return topKWith(ctx, reader, p, lex, depth, nil, nil, splitWalkFrom)
}

// blockTopK is topK with the index's block-max postings (blocks.go) and
// key cache: the same answer, skipping the blocks of long lists that
// cannot reach the threshold. Search uses it; topK stays as the path
// without the caches.
func (x *Index) blockTopK(ctx context.Context, reader *bluge.Reader, p *plan, lex *lexicon, depth int) ([]core.Scored, error) {
	return topKWith(ctx, reader, p, lex, depth, &x.blocks, &x.ids, x.splitFrom())
}

// topKWith walks in two halves from split documents on (see
// splitWalkFrom). The candidates' ids come from keys, or from the stored
// fields without it.
func topKWith(ctx context.Context, reader *bluge.Reader, p *plan, lex *lexicon, depth int, blocks *blockCache, keys *keyCache, split uint64) ([]core.Scored, error) {
	if len(p.clauses) == 0 {
		return nil, nil
	}
	snap, err := snapshotOf(ctx, reader)
	if err != nil {
		return nil, err
	}
	cands, _, err := bestByBM25(ctx, snap, p, lex, depth, blocks, math.Inf(-1), split)
	if err != nil {
		return nil, err
	}
	id := func(doc uint64) (string, error) { return storedID(snap, doc) }
	if keys != nil && len(cands) > 0 {
		ids, ok, err := keys.idsOf(snap)
		if err != nil {
			return nil, err
		}
		if ok {
			id = func(doc uint64) (string, error) { return ids.id(doc), nil }
		}
	}
	return ranked(cands, depth, id)
}

// bestByBM25 returns the documents of a plan scoring at least the floor
// and at least the depth-th best score of those (last; -Inf when fewer
// than depth reach the floor, and then all of them): the candidates, with
// the ties at the cut (see ranked).
//
// An index of split documents or more is walked in two halves of its
// documents, one per core, each keeping its own depth best: their union
// holds every document at or above the whole's depth-th best (a half's is
// at most the whole's), and the depth-th best of the union is it. Each
// half also skips what is below the other's and its own (depth/2)-th
// best (halfBound): the two hold depth documents at or above the lesser.
func bestByBM25(ctx context.Context, snap blugesearch.Reader, p *plan, lex *lexicon, depth int, blocks *blockCache, floor float64, split uint64) (docs []scoredDoc, last float64, err error) {
	n := docSpace(snap)
	if n < split {
		return candidatesIn(ctx, snap, p, lex, depth, blocks, floor, 0, n, n, nil)
	}
	var halves [2][]scoredDoc
	err = inHalves(n, func(i int, from, to uint64, share *halfSide) (err error) {
		halves[i], _, err = candidatesIn(ctx, snap, p, lex, depth, blocks, floor, from, to, n, share)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	docs = append(halves[0], halves[1]...)
	last = nthBest(docs, depth)
	return keepAbove(docs, last), last, nil
}

// inHalves runs walk on the two halves of n document numbers side by side,
// one goroutine each, the two sharing a halfBound, and joins their errors.
func inHalves(n uint64, walk func(half int, from, to uint64, share *halfSide) error) error {
	var errs [2]error
	var wg sync.WaitGroup
	share := newHalfBound()
	if halfBoundOff {
		share = nil
	}
	for i, r := range [2][2]uint64{{0, n / 2}, {n / 2, n}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = walk(i, r[0], r[1], share.side(i))
		}()
	}
	wg.Wait()
	return errors.Join(errs[:]...)
}

// halfBound is what the walks of two halves of an index tell each other:
// each its (depth/2)-th best score so far (rounded up). The halves then
// hold depth documents scoring at least the lesser of the two, so the
// whole's depth-th best is at least that and neither half needs anything
// below it. Without it each half walked down to its own depth-th best,
// about the whole's 2*depth-th.
type halfBound struct{ sides [2]halfSide }

// halfSide is one half's view of a halfBound.
type halfSide struct {
	own, other *atomic.Uint64 // float64 bits
}

func newHalfBound() *halfBound {
	var own [2]atomic.Uint64
	inf := math.Float64bits(math.Inf(-1))
	own[0].Store(inf)
	own[1].Store(inf)
	return &halfBound{sides: [2]halfSide{{&own[0], &own[1]}, {&own[1], &own[0]}}}
}

func (b *halfBound) side(i int) *halfSide {
	if b == nil {
		return nil
	}
	return &b.sides[i]
}

// halfBoundOff turns halfBound off, for benchmarks that compare.
var halfBoundOff = false

// publish records this half's (depth/2)-th best score; it only rises.
func (s *halfSide) publish(score float64) { s.own.Store(math.Float64bits(score)) }

// bound is the least score a document of either half needs to be among
// the whole's depth best (or tied with the last of them).
func (s *halfSide) bound() float64 {
	return min(math.Float64frombits(s.own.Load()), math.Float64frombits(s.other.Load()))
}

// splitWalkFrom is the index size (documents, deleted ones included) from
// which topK walks two halves side by side: below it a search takes about
// a millisecond or less, which a goroutine and a second heap would not
// shorten.
const splitWalkFrom = 200_000

// docSpace returns how many document numbers a snapshot spans (0 when it
// is not bluge's own snapshot).
func docSpace(snap blugesearch.Reader) uint64 {
	s, ok := snap.(*index.Snapshot)
	if !ok {
		return 0
	}
	n := uint64(0)
	for _, ss := range s.Segments() {
		w, ok := ss.(interface{ Segment() segment.Segment })
		if !ok {
			return 0
		}
		n += w.Segment().Count()
	}
	return n
}

// candidatesIn is bestByBM25 over the documents from from to to (to 0: to
// the end) of the snapshot's space, by accumulation when the list is deep
// and its postings few enough (accumulate.go), else in one walk.
func candidatesIn(ctx context.Context, snap blugesearch.Reader, p *plan, lex *lexicon, depth int, blocks *blockCache, floor float64, from, to, space uint64, share *halfSide) ([]scoredDoc, float64, error) {
	if docs, last, ok, err := accumulated(ctx, snap, p, lex, blocks, depth, floor, from, to, space); err != nil || ok {
		return docs, last, err
	}
	// The candidates are the depth best and the documents scoring as the
	// last of them (ranked): every document at or above the depth-th best
	// score, which the heap's threshold rises to. (fullCandidates fetches
	// twice as many from bluge to see the group of equal scores at the
	// cut; here the walk hands over every document at the threshold, equal
	// ones included, so a heap of depth suffices and prunes at the higher
	// score: 10 % off the median search at 100,000, PERFORMANCE 12n.)
	top := newTopScores(depth)
	cands := pruned{least: 2 * depth}
	err := walk(ctx, snap, p, lex, top, walkOpts{floor: floor, scale: 1, blocks: blocks, from: from, to: to, share: share, found: func(doc uint64, score float64) {
		cands.add(scoredDoc{doc, score}, top.threshold())
	}})
	if err != nil {
		return nil, 0, err
	}
	return keepAbove(cands.docs, top.threshold()), top.threshold(), nil
}

// pruned collects scored documents under a cut that only rises, dropping
// those below it whenever the list has doubled since the last drop (and
// holds 2*least or more): a list of the depth best costs its depth in
// memory, not every document that reached the cut of its time.
type pruned struct {
	docs        []scoredDoc
	least, kept int
}

func (l *pruned) add(d scoredDoc, cut float64) {
	l.docs = append(l.docs, d)
	if len(l.docs) >= 2*max(l.kept, l.least) {
		l.docs = keepAbove(l.docs, cut)
		l.kept = len(l.docs)
	}
}

// walkOpts tunes walk.
type walkOpts struct {
	// floor is the least settled BM25 score of a document walked.
	floor float64
	// scale bounds rescore: a rescored score is at most scale times the
	// settled BM25 score (1 without rescore).
	scale float64
	// rescore, when set, turns a document's settled BM25 score into the
	// score top keeps and found gets.
	rescore func(doc uint64, score float64) float64
	// scored, when set, gets each document's settled BM25 score once it is
	// known to reach the threshold when scaled (before rescore).
	scored func(doc uint64, score float64)
	// found, when set, gets each document's score added to top.
	found func(doc uint64, score float64)
	// blocks, when set, gives the long postings lists with their block
	// bounds (blocks.go); without it walk reads bluge's postings only.
	blocks *blockCache
	// from and to bound the documents walked to [from, to); to 0: to the
	// end.
	from, to uint64
	// share, when set, is this walk's side of a bound shared with the
	// walk of the other half (halfBound).
	share *halfSide
}

// walk scores, in document order, the documents of the plan's catalogs
// that can reach both top's threshold (after rescoring) and the floor,
// skipping the others (see topK), and adds each (re)score at or above the
// threshold to top, then hands it to found.
func walk(ctx context.Context, snap blugesearch.Reader, p *plan, lex *lexicon, top *topScores, o walkOpts) error {
	cs, err := openCursors(snap, p, lex, o.blocks)
	defer closeCursors(cs)
	if err != nil {
		return err
	}
	filter, err := newCatalogPostings(snap, p.catalogs)
	if err != nil {
		return err
	}
	defer filter.close()
	// With lists of the block cache, their block bounds skip documents.
	blockMax := slices.ContainsFunc(cs, func(c *cursor) bool { return c.bl != nil })

	// reach is the least raw sum that can settle at or above the threshold:
	// float32 rounding may lift a sum by one part in 2^24, and the float64
	// sums of bounds may err in their last bits.
	lower := o.floor * (1 - 1e-6)
	reach := max(lower, top.threshold()*(1-1e-6)/o.scale)
	parts := make([]part, 0, len(cs))
	best := make([]float64, len(p.clauses)) // per clause, the best bound of its cursors
	behind := make([]float64, 0, len(cs)+1)
	from := o.from         // the documents before it are decided
	var halfTop *topScores // with share: the (depth/2) best seen here
	shared := math.Inf(-1) // the bound last read from share
	if o.share != nil {
		halfTop = newTopScores((top.n + 1) / 2)
	}
	for visited := 0; ; visited++ {
		if visited&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if o.share != nil && visited&255 == 0 {
			if b := o.share.bound(); b > shared {
				shared = b
				reach = max(reach, shared*(1-1e-6)/o.scale)
			}
		}
		// The pivot: the first document, in document order, where the
		// clauses positioned up to it can reach the threshold. A document
		// before it holds only some of those clauses, too few to be a
		// candidate. Cursors on documents already decided (before from)
		// move on only when their weight is needed here.
		sortByDoc(cs)
		acc := 0.0
		pivot := -1
		clear(best)
		for i, c := range cs {
			if c.doc == noDoc {
				break
			}
			// The tiers of a clause hold different documents: a
			// document scores the best of their bounds, not their sum.
			if c.ub > best[c.clause] {
				acc += c.ub - best[c.clause]
				best[c.clause] = c.ub
			}
			if acc >= reach {
				pivot = i
				break
			}
		}
		if pivot < 0 {
			return nil // no document left can reach the threshold
		}
		if c := cs[pivot]; c.doc < from {
			var err error
			if c.doc == from-1 {
				err = c.next() // on the last pivot: the cheaper move
			} else {
				err = c.advance(from)
			}
			if err != nil {
				return err
			}
			continue
		}
		doc := cs[pivot].doc
		if o.to > 0 && doc >= o.to {
			return nil // past the range
		}
		if blockMax {
			// Block-max: the cursors on documents up to the pivot bound
			// every document from it to the end of their blocks (and
			// before the next cursor's document) by their blocks' bounds.
			// When those cannot reach the threshold, all of them are
			// decided at once.
			bound, end := 0.0, uint64(noDoc)
			clear(best)
			for _, c := range cs {
				if c.doc == noDoc {
					break
				}
				if c.doc > doc {
					end = min(end, c.doc-1)
					break
				}
				b, e := c.blockAt(doc)
				if b > best[c.clause] {
					bound += b - best[c.clause]
					best[c.clause] = b
				}
				end = min(end, e)
			}
			if bound < reach {
				if end == noDoc {
					return nil
				}
				from = end + 1
				continue
			}
		}
		from = doc + 1
		// Score the clauses positioned on the pivot; the ones behind it
		// may hold it too. Those are read (skipping to it) only while the
		// pivot can still reach the threshold, so most documents cost
		// only the postings that name them.
		on := pivot
		for on > 0 && cs[on-1].doc == doc {
			on--
		}
		parts = parts[:0]
		partial := 0.0
		for _, c := range cs[on:] {
			if c.doc != doc {
				break
			}
			s := c.score()
			partial += s
			parts = append(parts, part{c.clause, s})
		}
		// behind[i] bounds what the cursors cs[:i] can add: per clause
		// the best bound of its cursors (a clause's tiers hold different
		// documents), none for a clause already on the pivot.
		clear(best)
		for _, pt := range parts {
			best[pt.clause] = math.Inf(1)
		}
		behind = behind[:0]
		behind = append(behind, 0)
		for _, c := range cs[:on] {
			b := behind[len(behind)-1]
			if c.ub > best[c.clause] {
				b += c.ub - best[c.clause]
				best[c.clause] = c.ub
			}
			behind = append(behind, b)
		}
		reached := partial+behind[on] >= reach
		for i := on - 1; reached && i >= 0; i-- {
			c := cs[i]
			if err := c.advance(doc); err != nil {
				return err
			}
			if c.doc == doc {
				s := c.score()
				partial += s
				parts = append(parts, part{c.clause, s})
			}
			reached = partial+behind[i] >= reach
		}
		if !reached {
			continue
		}
		if ok, err := filter.holds(doc); err != nil || !ok {
			if err != nil {
				return err
			}
			continue
		}
		score := settle(sumInClauseOrder(parts))
		if score*o.scale < max(top.threshold(), shared) || score < o.floor {
			continue
		}
		if o.scored != nil {
			o.scored(doc, score)
		}
		if o.rescore != nil {
			if score = o.rescore(doc, score); score < top.threshold() {
				continue
			}
		}
		if top.add(score) {
			reach = max(lower, max(top.threshold(), shared)*(1-1e-6)/o.scale)
		}
		if halfTop != nil && score >= halfTop.threshold() && halfTop.add(score) {
			o.share.publish(halfTop.threshold())
		}
		if o.found != nil {
			o.found(doc, score)
		}
	}
}

// openCursors opens a cursor on the postings of each of the plan's
// clauses, each on its first document: one per tier of the list the block
// cache holds for a long list (blocks.go, when blocks is set), else bluge's
// postings. Close them with closeCursors, also after an error.
func openCursors(snap blugesearch.Reader, p *plan, lex *lexicon, blocks *blockCache) ([]*cursor, error) {
	sims := similarities(func() *lexicon { return lex })
	var cs []*cursor
	var segs []blockSegment
	if blocks != nil {
		if s, ok := blocks.segmentsOf(snap); ok {
			segs = s
		}
	}
	for i, cl := range p.clauses {
		scorer := sims[cl.field].Scorer(cl.boost, nil, nil)
		if segs != nil {
			tiers, ok, err := blocks.list(segs, cl.field, cl.term, func(im impact) float64 {
				return pairScore(scorer, im)
			})
			if err != nil {
				return cs, err
			}
			if ok {
				scores := scoreTables(tiers, scorer)
				for _, pieces := range tiers {
					c := &cursor{clause: i, scorer: scorer, bl: newBlockList(segs, pieces, scorer, scores)}
					if c.ub = min(cl.boost, c.bl.ub()); c.ub <= 0 {
						continue // an empty tier
					}
					cs = append(cs, c)
					if err := c.next(); err != nil {
						return cs, err
					}
				}
				continue
			}
		}
		it, err := snap.PostingsIterator([]byte(cl.term), cl.field, true, true, false)
		if err != nil {
			return cs, fmt.Errorf("blugeindex: postings of %s:%s: %w", cl.field, cl.term, err)
		}
		c := &cursor{it: it, clause: i, ub: cl.boost, scorer: scorer}
		cs = append(cs, c)
		if err := c.next(); err != nil {
			return cs, err
		}
	}
	return cs, nil
}

// closeCursors closes the bluge postings of cursors.
func closeCursors(cs []*cursor) {
	for _, c := range cs {
		if c.it != nil {
			_ = c.it.Close()
		}
	}
}

// sortByDoc orders cursors by their current document (insertion sort: the
// order changes little from one document to the next).
func sortByDoc(cs []*cursor) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].doc < cs[j-1].doc; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// noDoc marks a cursor past its last posting.
const noDoc = math.MaxUint64

// cursor is one clause's postings, positioned on a document.
type cursor struct {
	it     segment.PostingsIterator // bluge's postings, or
	bl     *blockList               // the block cache's (blocks.go)
	scorer blugesearch.Scorer
	clause int     // the clause's place in the plan
	ub     float64 // upper bound of its score: the BM25 weight
	doc    uint64  // current document, noDoc when done
	freq   int
	norm   float64
	known  float64 // the score of doc when already known, else -1
}

func (c *cursor) next() error {
	if c.bl != nil {
		c.bl.next(c)
		return nil
	}
	pst, err := c.it.Next()
	return c.set(pst, err)
}

// advance moves to the first document at or after doc, which must be after
// the current one (bluge's postings restart from the beginning otherwise).
func (c *cursor) advance(doc uint64) error {
	if c.bl != nil {
		c.bl.advance(c, doc)
		return nil
	}
	pst, err := c.it.Advance(doc)
	return c.set(pst, err)
}

// blockAt bounds the clause's scores of the documents from doc, at or
// after the cursor's, to end: its list's block there, or its bound to the
// end of the list when it has no blocks.
func (c *cursor) blockAt(doc uint64) (bound float64, end uint64) {
	if c.bl != nil {
		return c.bl.blockAt(doc)
	}
	return c.ub, noDoc
}

func (c *cursor) set(pst segment.Posting, err error) error {
	if err != nil {
		return fmt.Errorf("blugeindex: read postings: %w", err)
	}
	if pst == nil {
		c.doc = noDoc
		return nil
	}
	// The posting is reused by the next call: copy what scoring needs.
	c.doc, c.freq, c.norm, c.known = pst.Number(), pst.Frequency(), pst.Norm(), -1
	return nil
}

// score is the clause's BM25 score of the current document, by the same
// scorer bluge's term searcher uses.
func (c *cursor) score() float64 {
	if c.known >= 0 {
		return c.known
	}
	return c.scorer.Score(c.freq, c.norm)
}

// part is one clause's score of a document.
type part struct {
	clause int
	score  float64
}

// sumInClauseOrder adds a document's clause scores in the plan's order, so
// the sum does not depend on which clauses were essential when it was read.
func sumInClauseOrder(parts []part) float64 {
	// Insertion sort: a document matches a handful of clauses.
	for i := 1; i < len(parts); i++ {
		for j := i; j > 0 && parts[j].clause < parts[j-1].clause; j-- {
			parts[j], parts[j-1] = parts[j-1], parts[j]
		}
	}
	s := 0.0
	for _, pt := range parts {
		s += pt.score
	}
	return s
}

// scoredDoc is a candidate before its key is read.
type scoredDoc struct {
	doc   uint64
	score float64
}

// keepAbove keeps the candidates scoring at least t, in place.
func keepAbove(cands []scoredDoc, t float64) []scoredDoc {
	out := cands[:0]
	for _, c := range cands {
		if c.score >= t {
			out = append(out, c)
		}
	}
	return out
}

// topScores is a min-heap of the n best scores seen: its least is the
// threshold a document must reach to be a candidate.
type topScores struct {
	n int
	h []float64
}

// newTopScores keeps the n best scores; its heap grows as scores come (a
// hybrid search asks for 10,000 of a set that may hold a handful).
func newTopScores(n int) *topScores { return &topScores{n: n, h: make([]float64, 0, min(n, 256))} }

// threshold is the n-th best score seen, -Inf while fewer were seen.
func (t *topScores) threshold() float64 {
	if len(t.h) < t.n {
		return math.Inf(-1)
	}
	return t.h[0]
}

// add records a score at or above the threshold; it reports whether the
// threshold rose.
func (t *topScores) add(s float64) bool {
	if len(t.h) < t.n {
		t.h = append(t.h, s)
		for i := len(t.h) - 1; i > 0; {
			up := (i - 1) / 2
			if t.h[up] <= t.h[i] {
				break
			}
			t.h[up], t.h[i] = t.h[i], t.h[up]
			i = up
		}
		return len(t.h) == t.n
	}
	if s <= t.h[0] {
		return false
	}
	old := t.h[0]
	t.h[0] = s
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(t.h) && t.h[l] < t.h[least] {
			least = l
		}
		if r < len(t.h) && t.h[r] < t.h[least] {
			least = r
		}
		if least == i {
			break
		}
		t.h[i], t.h[least] = t.h[least], t.h[i]
		i = least
	}
	return t.h[0] > old
}

// ranked orders the candidates by score, equal scores by key, and keeps
// what fullCandidates keeps: the depth best and every further one scoring
// as the last of them, at most 2*depth. idOf reads a document's id: from
// the key cache, since a group of equal scores may hold thousands of
// documents and reading each one's stored _id decompressed its chunk of
// stored resources (at 300,000 resources a dozen searches mapped 167 MiB
// of them in; PERFORMANCE.md 12w).
//
// It sorts only what it keeps. A word most of a large catalog holds gives
// a tie group of hundreds of thousands at the depth-th score, and sorting
// them all by key was a second of CPU at a million (PERFORMANCE.md 12ze):
// the depth-th best score is found first, the candidates above it are
// fewer than depth, and of those scoring as it only the first by key are
// kept, through a heap of the room left.
func ranked(cands []scoredDoc, depth int, idOf func(doc uint64) (string, error)) ([]core.Scored, error) {
	if depth <= 0 {
		return []core.Scored{}, nil
	}
	top := newTopScores(depth)
	for _, c := range cands {
		top.add(c.score)
	}
	last := top.threshold() // -Inf when there are fewer than depth
	n := 0                  // above last: fewer than depth
	for _, c := range cands {
		if c.score > last {
			n++
		}
	}
	above := make([]keyedDoc, 0, n)
	tied := idHeap{room: 2*depth - n}
	for _, c := range cands {
		if c.score < last {
			continue
		}
		id, err := idOf(c.doc)
		if err != nil {
			return nil, err
		}
		if c.score > last {
			above = append(above, keyedDoc{c.score, id})
		} else {
			tied.offer(keyedDoc{c.score, id})
		}
	}
	slices.SortFunc(above, byScoreThenID)
	slices.SortFunc(tied.h, byScoreThenID)
	out := make([]core.Scored, 0, len(above)+len(tied.h))
	for _, ks := range [][]keyedDoc{above, tied.h} {
		for _, k := range ks {
			key, ok := parseKey(k.id)
			if !ok {
				return nil, fmt.Errorf("blugeindex: hit without a valid key (%q)", k.id)
			}
			out = append(out, core.Scored{Key: key, Score: k.score})
		}
	}
	return out, nil
}

// keyedDoc is a candidate with its document's id.
type keyedDoc struct {
	score float64
	id    string
}

// byScoreThenID orders candidates best first, equal scores by id.
func byScoreThenID(a, b keyedDoc) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// idHeap keeps the room candidates first by id among those offered: a
// max-heap by id, whose top is the one to give up for a lesser id.
type idHeap struct {
	room int
	h    []keyedDoc
}

func (t *idHeap) offer(k keyedDoc) {
	if len(t.h) < t.room {
		t.h = append(t.h, k)
		for i := len(t.h) - 1; i > 0; {
			up := (i - 1) / 2
			if t.h[up].id >= t.h[i].id {
				break
			}
			t.h[up], t.h[i] = t.h[i], t.h[up]
			i = up
		}
		return
	}
	if len(t.h) == 0 || k.id >= t.h[0].id {
		return
	}
	t.h[0] = k
	for i := 0; ; {
		most, l, r := i, 2*i+1, 2*i+2
		if l < len(t.h) && t.h[l].id > t.h[most].id {
			most = l
		}
		if r < len(t.h) && t.h[r].id > t.h[most].id {
			most = r
		}
		if most == i {
			return
		}
		t.h[i], t.h[most] = t.h[most], t.h[i]
		i = most
	}
}

// storedID reads a document's stored _id (`catalog:id`).
func storedID(snap blugesearch.Reader, doc uint64) (string, error) {
	var id string
	err := snap.VisitStoredFields(doc, func(field string, value []byte) bool {
		if field == "_id" {
			id = string(value)
			return false
		}
		return true
	})
	if err != nil {
		return "", fmt.Errorf("blugeindex: read hit: %w", err)
	}
	return id, nil
}

// catalogPostings keeps the documents of some catalogs (nil: of every
// one), asked about documents in increasing order.
type catalogPostings struct {
	cs []*cursor
}

func newCatalogPostings(snap blugesearch.Reader, catalogs []core.CatalogID) (*catalogPostings, error) {
	f := &catalogPostings{}
	if catalogs == nil {
		return f, nil
	}
	for _, c := range catalogs {
		it, err := snap.PostingsIterator([]byte(c), fieldCatalog, false, false, false)
		if err != nil {
			return nil, fmt.Errorf("blugeindex: postings of catalog %s: %w", c, err)
		}
		cur := &cursor{it: it}
		f.cs = append(f.cs, cur)
		if err := cur.next(); err != nil {
			f.close()
			return nil, err
		}
	}
	return f, nil
}

// holds tells whether doc belongs to one of the catalogs; docs must come
// in increasing order.
func (f *catalogPostings) holds(doc uint64) (bool, error) {
	if f.cs == nil {
		return true, nil
	}
	for _, c := range f.cs {
		if c.doc < doc {
			if err := c.advance(doc); err != nil {
				return false, err
			}
		}
		if c.doc == doc {
			return true, nil
		}
	}
	return false, nil
}

func (f *catalogPostings) close() {
	for _, c := range f.cs {
		if c.it != nil {
			_ = c.it.Close()
		}
	}
}

// snapshotRequest hands over the index snapshot a bluge.Reader searches:
// bluge gives a reader's postings only to the searchers of a request.
type snapshotRequest struct {
	*bluge.AllMatches
	snap blugesearch.Reader
}

func (r *snapshotRequest) Searcher(i blugesearch.Reader, config bluge.Config) (blugesearch.Searcher, error) {
	r.snap = i
	return r.AllMatches.Searcher(i, config)
}

// snapshotOf returns the snapshot of a reader, valid until the reader is
// closed.
func snapshotOf(ctx context.Context, reader *bluge.Reader) (blugesearch.Reader, error) {
	req := &snapshotRequest{AllMatches: bluge.NewAllMatches(bluge.NewMatchNoneQuery())}
	if _, err := reader.Search(ctx, req); err != nil {
		return nil, fmt.Errorf("blugeindex: open snapshot: %w", err)
	}
	if req.snap == nil {
		return nil, fmt.Errorf("blugeindex: open snapshot: bluge did not ask for a searcher")
	}
	return req.snap, nil
}
