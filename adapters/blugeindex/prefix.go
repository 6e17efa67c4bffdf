package blugeindex

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/blugelabs/bluge"
	blugesearch "github.com/blugelabs/bluge/search"

	"github.com/climatesearch/climatesearch/core"
)

// Places of keys in a ranked list, as RankedPrefix reports them besides a
// key's 1-based rank in the prefix.
const (
	// PlaceOutside: the key is not in the list.
	PlaceOutside = 0
	// PlaceBeyond: the key is in the list, after the prefix.
	PlaceBeyond = -1
	// PlaceUnknown: the key matches the query, but whether the list holds
	// it was not decided cheaply.
	PlaceUnknown = -2
)

// RankedPrefix answers what fusing the list Search(ctx, q) returns needs of
// it, without ranking all of it (q.Limit is typically the whole match set,
// up to core.MaxMatchSet, for a hybrid search): hits are the first entries
// of that list exactly (keys, scores, order), at least the first n when
// they can be told apart from the rest at reasonable cost; whole says they
// are the whole list. places holds, for each of keys, its 1-based rank in
// hits, or PlaceOutside, PlaceBeyond or PlaceUnknown.
//
// The list Search returns is the depth best documents by BM25 (ties at the
// cut included, see fullCandidates) rescored by name coverage, which at
// most doubles a score (rerank). So the best documents by BM25 down to a
// score s, rescored, hold every entry of the list scoring above 2s, in the
// list's order: those are the hits. A key after them is looked up alone
// (its score, rescored) and placed by counting the documents that score
// above what can overtake it.
func (x *Index) RankedPrefix(ctx context.Context, q core.TextQuery, n int, keys []core.Key) (hits []core.Scored, whole bool, places []int, err error) {
	text := core.CleanText(q.Text)
	places = make([]int, len(keys))
	if text == "" {
		return nil, true, places, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = core.DefaultLimit
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.writer == nil {
		return nil, false, nil, ErrClosed
	}
	reader := x.reader
	lex := x.lex
	tq := analyzeQuery(text, lex)
	p := planQuery(tq, lex, text, q.Lang, q.Catalogs)
	depth := max(limit, rerankDepth) // as search asks topK
	m := max(n, rerankDepth)
	if m >= depth {
		hits, err = x.blockTopK(ctx, reader, p, lex, depth)
		if err != nil {
			return nil, false, nil, err
		}
		rerank(hits, tq, lex)
		hits = hits[:min(len(hits), limit)]
		placeIn(hits, keys, places)
		return hits, true, places, nil
	}
	snap, err := snapshotOf(ctx, reader)
	if err != nil {
		return nil, false, nil, err
	}
	ids, ok, err := x.ids.of(snap, lex)
	if err != nil {
		return nil, false, nil, err
	}
	if !ok { // not bluge's own snapshot: the whole list
		hits, err = x.blockTopK(ctx, reader, p, lex, depth)
		if err != nil {
			return nil, false, nil, err
		}
		rerank(hits, tq, lex)
		hits = hits[:min(len(hits), limit)]
		placeIn(hits, keys, places)
		return hits, true, places, nil
	}
	hits, whole, tops, err := rescoredTop(ctx, snap, ids, p, tq, lex, min(n, limit), depth)
	if err != nil {
		return nil, false, nil, err
	}
	placeIn(hits, keys, places)
	if whole {
		return hits, true, places, nil
	}
	var rest []int
	for i, pl := range places {
		if pl == PlaceOutside {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return hits, false, places, nil
	}
	if err := x.placeRest(ctx, reader, p, tq, lex, limit, tops, keys, rest, places); err != nil {
		return nil, false, nil, err
	}
	return hits, false, places, nil
}

// rescoredTop returns the first entries of the list search returns with
// depth (rescored by name coverage, then cut to its limit): at most n of
// them, whole when they are all its matches. tops holds the depth+1 best
// BM25 scores of all matches when the walk saw them all (a word in many
// names), which spares placeRest its own walk; else nil.
//
// It walks the postings as topK does, but keeps the n best rescored
// scores: rescoring at most doubles a BM25 score, so a document whose
// BM25 bounds add up to less than half the n-th best rescored score cannot
// enter. The documents it scores at or above half the final threshold
// hold every document that outscores, by BM25, any of the n best rescored;
// so it tells which of those are among the list's candidates (the depth
// best by BM25 with the ties at the cut, see fullCandidates), which is
// where the list takes them from.
func rescoredTop(ctx context.Context, snap blugesearch.Reader, ids *docIDs, p *plan, tq *textQuery, lex *lexicon, n, depth int) (hits []core.Scored, whole bool, tops *topScores, err error) {
	if len(p.clauses) == 0 || n <= 0 {
		return nil, len(p.clauses) == 0, nil, nil
	}
	top := newTopScores(n)
	cq := newCoverQuery(tq, lex)
	var cands, bm25 []scoredDoc
	keepFrom, keepBM25 := 0, 0
	// bm25 keeps what tells the candidates (inCandidates): the documents
	// that can outscore, by BM25, one of the n best rescored (half the
	// threshold) and that are not below the depth+1-th best BM25 score
	// seen (byBM25), since no candidate is. Without the second bound a word
	// in a sixth of a million names kept hundreds of thousands of them.
	byBM25 := newTopScores(depth + 1)
	bm25Cut := func() float64 { return max(top.threshold()/(1+coverageBoost), byBM25.threshold()) }
	keyOf := func(doc uint64) (core.Key, error) {
		key, ok := parseKey(ids.id(doc))
		if !ok {
			return core.Key{}, fmt.Errorf("blugeindex: hit without a valid key (doc %d)", doc)
		}
		return key, nil
	}
	err = walk(ctx, snap, p, lex, top, walkOpts{
		floor: math.Inf(-1),
		scale: 1 + coverageBoost,
		rescore: func(doc uint64, score float64) float64 {
			return score * (1 + coverageBoost*ids.coverage(doc, cq))
		},
		scored: func(doc uint64, score float64) {
			bm25 = append(bm25, scoredDoc{doc, score})
			if score > byBM25.threshold() {
				byBM25.add(score)
			}
			if len(bm25) >= 2*max(keepBM25, 4*n) {
				bm25 = keepAbove(bm25, bm25Cut())
				keepBM25 = len(bm25)
			}
		},
		found: func(doc uint64, score float64) {
			cands = append(cands, scoredDoc{doc, score})
			if len(cands) >= 2*max(keepFrom, 2*n) {
				cands = keepAbove(cands, top.threshold())
				keepFrom = len(cands)
			}
		},
	})
	if err != nil {
		return nil, false, nil, err
	}
	t := top.threshold()
	whole = math.IsInf(t, -1) // fewer than n matches: all of them scored
	// The walk scored every document reaching half the final threshold
	// (they can outscore the n-th rescored): when the depth+1 best of them
	// all reach it, with a margin for rounding, they are the best of all.
	if m := byBM25.threshold(); !whole && m*(1+coverageBoost) >= t*(1+1e-9) {
		tops = byBM25
	}
	cands = keepAbove(cands, t)
	type keyed struct {
		scoredDoc
		id string
	}
	order := func(a, b keyed) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	}
	best := make([]keyed, len(cands))
	for i, c := range cands {
		best[i] = keyed{c, ids.id(c.doc)}
	}
	slices.SortFunc(best, order)
	best = best[:min(len(best), n)]
	if whole && len(best) <= depth {
		// Every match, fewer than the depth: all are candidates.
		hits = make([]core.Scored, len(best))
		for i, b := range best {
			if hits[i].Key, err = keyOf(b.doc); err != nil {
				return nil, false, nil, err
			}
			hits[i].Score = b.score
		}
		return hits, true, nil, nil
	}
	// Where each of them comes in the candidates' order (BM25, then key):
	// the documents before one of them all score, by BM25, at least its
	// BM25 score, which is at least half its rescored score, so they are
	// all in bm25. The candidates are the depth best and those scoring as
	// the last of them, at most 2*depth (see ranked).
	bm25 = keepAbove(bm25, bm25Cut())
	docs := make([]uint64, len(best))
	for i, b := range best {
		docs[i] = b.doc
	}
	in := inCandidates(bm25, docs, depth, ids.id)
	for i, b := range best {
		if !in[i] {
			continue
		}
		key, err := keyOf(b.doc)
		if err != nil {
			return nil, false, nil, err
		}
		hits = append(hits, core.Scored{Key: key, Score: b.score})
	}
	return hits, false, tops, nil
}

// inCandidates says which of docs are among the candidates of the list
// (see ranked): the depth best of bm25 by BM25 score and those scoring as
// the last of them, in id order, up to 2*depth. bm25 holds every document
// scoring at least as any of docs, or at least as the depth-th best: one
// of docs missing from it scores below that and is no candidate.
func inCandidates(bm25 []scoredDoc, docs []uint64, depth int, id func(uint64) string) []bool {
	own := make(map[uint64]float64, len(docs)) // their BM25 scores
	for _, d := range docs {
		own[d] = 0
	}
	for _, c := range bm25 {
		if _, ok := own[c.doc]; ok {
			own[c.doc] = c.score
		}
	}
	in := make([]bool, len(docs))
	for i, d := range docs {
		in[i] = own[d] > 0 // fewer than depth: all of bm25 are
	}
	if len(bm25) <= depth {
		return in
	}
	scores := make([]float64, len(bm25))
	for i, c := range bm25 {
		scores[i] = c.score
	}
	last := nthLargest(scores, depth) // the depth-th best BM25 score
	above := 0
	for _, c := range bm25 {
		if c.score > last {
			above++
		}
	}
	// The ones scoring as the last, by id, and how many of the documents
	// scoring as the last come before each: one pass over those (thousands
	// when many names score alike), each placed among the few tied ones by
	// a binary search.
	type tie struct {
		i  int
		id string
	}
	var tied []tie
	for i, d := range docs {
		switch s := own[d]; {
		case s < last:
			in[i] = false
		case s == last:
			tied = append(tied, tie{i, id(d)})
		}
	}
	if len(tied) == 0 {
		return in
	}
	slices.SortFunc(tied, func(a, b tie) int { return strings.Compare(a.id, b.id) })
	counts := make([]int, len(tied)+1) // by the first tied one with a greater id
	for _, c := range bm25 {
		if c.score == last {
			k, _ := slices.BinarySearchFunc(tied, id(c.doc), func(t tie, id string) int {
				if t.id > id {
					return 1
				}
				return -1
			})
			counts[k]++
		}
	}
	before := 0
	for k, t := range tied {
		before += counts[k]
		in[t.i] = above+before < 2*depth
	}
	return in
}

// nthLargest returns the n-th largest of a (1-based), reordering a.
func nthLargest(a []float64, n int) float64 {
	k := n - 1 // its index in decreasing order
	lo, hi := 0, len(a)-1
	for lo < hi {
		p := a[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for a[i] > p {
				i++
			}
			for a[j] < p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k] // between j and i: equal to p
		}
	}
	return a[k]
}

// placeIn sets the places of the keys found in hits.
func placeIn(hits []core.Scored, keys []core.Key, places []int) {
	for i, k := range keys {
		for j := range hits {
			if hits[j].Key == k {
				places[i] = j + 1
				break
			}
		}
	}
}

// placeRest places the keys at rest, none of them among the list's first
// entries: outside when they do not match; beyond the prefix when every
// match is in the list (at most limit of them), or when fewer than limit
// documents score (by BM25) half of the key's rescored score or more (only
// those can rank before it, and they are all candidates); outside when at
// least limit documents score more than its rescored score by BM25 (they
// all rank before it); unknown otherwise. tops, when not nil, holds at
// least the limit+1 best BM25 scores of all matches (rescoredTop's);
// without them they are found by a walk.
func (x *Index) placeRest(ctx context.Context, reader *bluge.Reader, p *plan, tq *textQuery, lex *lexicon, limit int, tops *topScores, keys []core.Key, rest []int, places []int) error {
	snap, err := snapshotOf(ctx, reader)
	if err != nil {
		return err
	}
	scores, err := scoresOf(snap, p, lex, keys, rest)
	if err != nil {
		return err
	}
	var matching []int
	for j := range rest {
		if scores[j] > 0 {
			matching = append(matching, j)
		}
	}
	if len(matching) == 0 {
		return nil
	}
	matched, err := countMatches(ctx, reader, p)
	if err != nil {
		return err
	}
	rescored := make([]float64, len(rest))
	cq := newCoverQuery(tq, lex)
	floor := math.Inf(1)
	for _, j := range matching {
		rescored[j] = scores[j] * (1 + coverageBoost*coverage(lex.docs[keys[rest[j]]], cq))
		floor = min(floor, rescored[j]/2)
		places[rest[j]] = PlaceBeyond
	}
	if matched <= limit {
		return nil
	}
	if tops == nil || len(tops.h) < limit+1 {
		// The limit+1 best BM25 scores at or above the lowest half of a
		// rescored score (a score below that floor decides as -Inf does).
		tops = newTopScores(limit + 1)
		if err := walk(ctx, snap, p, lex, tops, walkOpts{floor: floor, scale: 1}); err != nil {
			return err
		}
	}
	best := slices.Clone(tops.h)
	slices.SortFunc(best, func(a, b float64) int { return cmp.Compare(b, a) })
	nth := func(i int) float64 { // the i-th best (1-based), -Inf when fewer
		if i > len(best) {
			return math.Inf(-1)
		}
		return best[i-1]
	}
	for _, j := range matching {
		r := rescored[j]
		switch {
		case nth(limit+1) < r/2:
			places[rest[j]] = PlaceBeyond
		case nth(limit) > r:
			places[rest[j]] = PlaceOutside
		default:
			places[rest[j]] = PlaceUnknown
		}
	}
	return nil
}

// scoresOf returns the settled BM25 score of the documents of keys[rest]
// as topK computes it (0 for a key without a live document of the plan's
// catalogs matching the plan).
func scoresOf(snap blugesearch.Reader, p *plan, lex *lexicon, keys []core.Key, rest []int) ([]float64, error) {
	type docOf struct {
		j   int
		doc uint64
	}
	var docs []docOf
	for j, i := range rest {
		it, err := snap.PostingsIterator([]byte(keys[i].String()), "_id", false, false, false)
		if err != nil {
			return nil, fmt.Errorf("blugeindex: look up %s: %w", keys[i], err)
		}
		pst, err := it.Next()
		if err == nil && pst != nil {
			docs = append(docs, docOf{j, pst.Number()})
		}
		_ = it.Close()
		if err != nil {
			return nil, fmt.Errorf("blugeindex: look up %s: %w", keys[i], err)
		}
	}
	slices.SortFunc(docs, func(a, b docOf) int { return cmp.Compare(a.doc, b.doc) })
	scores := make([]float64, len(rest))
	if len(docs) == 0 {
		return scores, nil
	}
	filter, err := newCatalogPostings(snap, p.catalogs)
	if err != nil {
		return nil, err
	}
	defer filter.close()
	in := make([]bool, len(docs))
	for d := range docs {
		if d > 0 && docs[d].doc == docs[d-1].doc {
			in[d] = in[d-1]
			continue
		}
		ok, err := filter.holds(docs[d].doc)
		if err != nil {
			return nil, err
		}
		in[d] = ok
	}
	sims := similarities(func() *lexicon { return lex })
	parts := make([][]part, len(docs))
	for ci, cl := range p.clauses {
		it, err := snap.PostingsIterator([]byte(cl.term), cl.field, true, true, false)
		if err != nil {
			return nil, fmt.Errorf("blugeindex: postings of %s:%s: %w", cl.field, cl.term, err)
		}
		c := &cursor{it: it, clause: ci, scorer: sims[cl.field].Scorer(cl.boost, nil, nil)}
		err = c.next()
		for d := 0; err == nil && d < len(docs) && c.doc != noDoc; d++ {
			if c.doc < docs[d].doc {
				err = c.advance(docs[d].doc)
			}
			if err == nil && c.doc == docs[d].doc {
				parts[d] = append(parts[d], part{ci, c.score()})
			}
		}
		_ = it.Close()
		if err != nil {
			return nil, err
		}
	}
	for d, dc := range docs {
		if in[d] && len(parts[d]) > 0 {
			scores[dc.j] = settle(sumInClauseOrder(parts[d]))
		}
	}
	return scores, nil
}
