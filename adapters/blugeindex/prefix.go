package blugeindex

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

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
		hits, err = topK(ctx, reader, p, lex, depth)
		if err != nil {
			return nil, false, nil, err
		}
		rerank(hits, tq, lex)
		hits = hits[:min(len(hits), limit)]
		placeIn(hits, keys, places)
		return hits, true, places, nil
	}
	// The best by BM25 down to the lowest score kept (sMin): a prefix of
	// the order the list is cut from (score, then key), shorter than the
	// depth, so all of it is among the list's candidates.
	cands, err := topK(ctx, reader, p, lex, m)
	if err != nil {
		return nil, false, nil, err
	}
	if len(cands) == 0 {
		return nil, true, places, nil
	}
	sMin := cands[len(cands)-1].Score
	all := len(cands) < m
	if !all {
		matched, err := countMatches(ctx, reader, p)
		if err != nil {
			return nil, false, nil, err
		}
		all = matched == len(cands)
	}
	rerank(cands, tq, lex)
	if all {
		// Every match: the list is these, rescored and cut.
		hits = cands[:min(len(cands), limit)]
		placeIn(hits, keys, places)
		return hits, true, places, nil
	}
	// A document not among them scores at most sMin by BM25, so at most
	// 2*sMin rescored: the entries above that are the list's first.
	k := 0
	for k < len(cands) && k < limit && cands[k].Score > 2*sMin {
		k++
	}
	hits = cands[:k]
	placeIn(hits, keys, places)
	var rest []int
	for i, pl := range places {
		if pl == PlaceOutside {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return hits, false, places, nil
	}
	if err := x.placeRest(ctx, reader, p, tq, lex, limit, keys, rest, places); err != nil {
		return nil, false, nil, err
	}
	return hits, false, places, nil
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
// all rank before it); unknown otherwise.
func (x *Index) placeRest(ctx context.Context, reader *bluge.Reader, p *plan, tq *textQuery, lex *lexicon, limit int, keys []core.Key, rest []int, places []int) error {
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
	floor := math.Inf(1)
	for _, j := range matching {
		rescored[j] = scores[j] * (1 + coverageBoost*coverage(lex.docs[keys[rest[j]]], tq))
		floor = min(floor, rescored[j]/2)
		places[rest[j]] = PlaceBeyond
	}
	if matched <= limit {
		return nil
	}
	// The limit+1 best BM25 scores at or above the lowest half of a
	// rescored score.
	top := newTopScores(limit + 1)
	if err := walk(ctx, snap, p, lex, top, floor, nil); err != nil {
		return err
	}
	best := slices.Clone(top.h)
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
