package blugeindex

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/blugelabs/bluge"
	blugesearch "github.com/blugelabs/bluge/search"

	"github.com/climatesearch/climatesearch/core"
)

// RankedPrefix answers what fusing the list Search(ctx, q) returns needs of
// it, without ranking all of it (q.Limit is typically core.MaxMatchSet, the
// whole match set up to that, for a hybrid search): hits are the first
// entries of that list exactly (keys, scores, order), at least the first n
// when they can be told apart from the rest cheaply; whole says they are
// the whole list. places holds, for each of keys, its rank and score in
// the list (Rank 0: not in it), whether among hits or further down.
// matched is how many match, as Count says.
//
// The list Search returns is the depth best documents by BM25 (ties at the
// cut included, see fullCandidates) rescored by name coverage, which at
// most doubles a score (rerank). So the best documents by BM25 down to a
// score s, rescored, hold every entry of the list scoring 2s or more, in
// the list's order. The keys are placed by one walk down to half the least
// rescored score among them (placeKeys), which gives the first n entries
// too when the keys lie that deep; otherwise a second walk finds the n
// best rescored (rescoredTop).
func (x *Index) RankedPrefix(ctx context.Context, q core.TextQuery, n int, keys []core.Key) (hits []core.Scored, whole bool, places []core.ListPlace, matched int, err error) {
	text := core.CleanText(q.Text)
	places = make([]core.ListPlace, len(keys))
	if text == "" {
		return nil, true, places, 0, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = core.DefaultLimit
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.writer == nil {
		return nil, false, nil, 0, ErrClosed
	}
	reader := x.reader
	lex := x.lex
	tq := analyzeQuery(text, lex)
	p := planQuery(tq, lex, text, q.Lang, q.Catalogs)
	snap, err := snapshotOf(ctx, reader)
	if err != nil {
		return nil, false, nil, 0, err
	}
	// The match set is counted first in a small index (microseconds), and
	// the list asked for is then no longer than the set, so the depth and
	// the work are the set's; in a large one it is counted beside the
	// ranking, on the other core, since the list is the same either way:
	// a smaller set only makes it shorter.
	var counted chan countResult
	if docSpace(snap) < x.splitFrom() {
		if matched, err = countMatches(ctx, reader, p); err != nil {
			return nil, false, nil, 0, err
		}
		limit = min(limit, max(matched, 1))
	} else {
		counted = make(chan countResult, 1)
		go func() {
			n, err := countMatches(ctx, reader, p)
			counted <- countResult{n, err}
		}()
	}
	hits, whole, err = x.prefix(ctx, snap, reader, lex, tq, p, n, limit, keys, places)
	if counted != nil {
		c := <-counted
		if err = errors.Join(err, c.err); err == nil {
			matched = c.n
			whole = whole || len(hits) >= min(matched, limit)
		}
	}
	if err != nil {
		return nil, false, nil, 0, err
	}
	return hits, whole, places, matched, nil
}

// countResult is a count of matches, or why it failed.
type countResult struct {
	n   int
	err error
}

// prefix is RankedPrefix's ranking, of a list of at most limit entries.
func (x *Index) prefix(ctx context.Context, snap blugesearch.Reader, reader *bluge.Reader, lex *lexicon, tq *textQuery, p *plan, n, limit int, keys []core.Key, places []core.ListPlace) (hits []core.Scored, whole bool, err error) {
	depth := max(limit, rerankDepth) // as search asks topK
	wholeList := func() ([]core.Scored, bool, error) {
		hits, err := x.blockTopK(ctx, reader, p, lex, depth)
		if err != nil {
			return nil, false, err
		}
		rerank(hits, tq, lex)
		hits = hits[:min(len(hits), limit)]
		placeIn(hits, keys, places)
		return hits, true, nil
	}
	if max(n, rerankDepth) >= depth {
		return wholeList()
	}
	ids, ok, err := x.ids.of(snap, lex)
	if err != nil {
		return nil, false, err
	}
	if !ok { // not bluge's own snapshot: the whole list
		return wholeList()
	}
	n = min(n, limit)
	hits, whole, enough, err := placeKeys(ctx, snap, ids, &x.blocks, x.splitFrom(), p, tq, lex, n, limit, depth, keys, places)
	if err != nil || enough {
		return hits, whole, err
	}
	return rescoredTop(ctx, snap, ids, &x.blocks, x.splitFrom(), p, tq, lex, n, depth)
}

// rescoredTop returns the first entries of the list search returns with
// depth (rescored by name coverage, then cut to its limit): at most n of
// them, whole when they are all its matches.
//
// It walks the postings as topK does, but keeps the n best rescored
// scores: rescoring at most doubles a BM25 score, so a document whose
// BM25 bounds add up to less than half the n-th best rescored score cannot
// enter. The documents it scores at or above half the final threshold
// hold every document that outscores, by BM25, any of the n best rescored;
// so it tells which of those are among the list's candidates (the depth
// best by BM25 with the ties at the cut, see fullCandidates), which is
// where the list takes them from.
func rescoredTop(ctx context.Context, snap blugesearch.Reader, ids *docIDs, blocks *blockCache, split uint64, p *plan, tq *textQuery, lex *lexicon, n, depth int) (hits []core.Scored, whole bool, err error) {
	if len(p.clauses) == 0 || n <= 0 {
		return nil, len(p.clauses) == 0, nil
	}
	cq := newCoverQuery(tq, lex)
	var r rescored
	if space := docSpace(snap); space < split {
		r, err = rescoredIn(ctx, snap, ids, blocks, p, cq, lex, n, depth, 0, 0, nil)
	} else {
		// Two halves side by side (see bestByBM25): each keeps its own n
		// best rescored and the documents that tell the candidates; their
		// union holds the whole's.
		var halves [2]rescored
		err = inHalves(space, func(i int, from, to uint64, share *halfSide) (err error) {
			halves[i], err = rescoredIn(ctx, snap, ids, blocks, p, cq, lex, n, depth, from, to, share)
			return err
		})
		r.cands = append(halves[0].cands, halves[1].cands...)
		r.bm25 = append(halves[0].bm25, halves[1].bm25...)
		r.threshold, r.depthBM25 = nthBest(r.cands, n), nthBest(r.bm25, depth)
	}
	if err != nil {
		return nil, false, err
	}
	t := r.threshold
	whole = math.IsInf(t, -1) // fewer than n matches: all of them scored
	best := firstInOrder(keepAbove(r.cands, t), n, ids)
	if whole && len(best) <= depth {
		// Every match, fewer than the depth: all are candidates.
		hits, err := scoredOf(best, ids)
		return hits, true, err
	}
	// Where each of them comes in the candidates' order (BM25, then key):
	// the documents before one of them all score, by BM25, at least its
	// BM25 score, which is at least half its rescored score, so they are
	// all in bm25. The candidates are the depth best and those scoring as
	// the last of them, at most 2*depth (see ranked).
	bm25 := keepAbove(r.bm25, max(t/(1+coverageBoost), r.depthBM25))
	docs := make([]uint64, len(best))
	for i, b := range best {
		docs[i] = b.doc
	}
	in := inCandidates(bm25, docs, depth, ids.id)
	kept := best[:0]
	for i, b := range best {
		if in[i] {
			kept = append(kept, b)
		}
	}
	hits, err = scoredOf(kept, ids)
	return hits, false, err
}

// rescored is what rescoredIn found: the documents at or above the n-th
// best rescored score (threshold, -Inf when fewer), and by BM25 those
// that can outscore one of them and are not below the depth-th best BM25
// score seen (depthBM25, -Inf when fewer).
type rescored struct {
	cands, bm25          []scoredDoc
	threshold, depthBM25 float64
}

// rescoredIn is rescoredTop's walk over the documents from from to to (to
// 0: to the end).
func rescoredIn(ctx context.Context, snap blugesearch.Reader, ids *docIDs, blocks *blockCache, p *plan, cq *coverQuery, lex *lexicon, n, depth int, from, to uint64, share *halfSide) (rescored, error) {
	top := newTopScores(n)
	cands, bm25 := pruned{least: 2 * n}, pruned{least: 4 * n}
	// bm25 keeps what tells the candidates (inCandidates): the documents
	// that can outscore, by BM25, one of the n best rescored (half the
	// threshold) and that are not below the depth-th best BM25 score
	// seen (byBM25), since no candidate is. Without the second bound a word
	// in a sixth of a million names kept hundreds of thousands of them.
	byBM25 := newTopScores(depth)
	bm25Cut := func() float64 { return max(top.threshold()/(1+coverageBoost), byBM25.threshold()) }
	err := walk(ctx, snap, p, lex, top, walkOpts{
		floor:  math.Inf(-1),
		scale:  1 + coverageBoost,
		blocks: blocks,
		from:   from,
		to:     to,
		share:  share,
		rescore: func(doc uint64, score float64) float64 {
			return score * (1 + coverageBoost*ids.coverage(doc, cq))
		},
		scored: func(doc uint64, score float64) {
			if score > byBM25.threshold() {
				byBM25.add(score)
			}
			bm25.add(scoredDoc{doc, score}, bm25Cut())
		},
		found: func(doc uint64, score float64) {
			cands.add(scoredDoc{doc, score}, top.threshold())
		},
	})
	return rescored{
		cands:     keepAbove(cands.docs, top.threshold()),
		bm25:      keepAbove(bm25.docs, bm25Cut()),
		threshold: top.threshold(),
		depthBM25: byBM25.threshold(),
	}, err
}

// firstInOrder returns the first n of docs in the list's order (score,
// then id), sorted; it reorders docs.
func firstInOrder(docs []scoredDoc, n int, ids *docIDs) []scoredDoc {
	if n < len(docs) {
		docs = keepAbove(docs, nthScore(docs, n)) // with the ties at the n-th
	}
	slices.SortFunc(docs, func(a, b scoredDoc) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(ids.id(a.doc), ids.id(b.doc))
	})
	return docs[:min(len(docs), n)]
}

// scoredOf reads the keys of docs.
func scoredOf(docs []scoredDoc, ids *docIDs) ([]core.Scored, error) {
	hits := make([]core.Scored, len(docs))
	for i, d := range docs {
		key, ok := parseKey(ids.id(d.doc))
		if !ok {
			return nil, fmt.Errorf("blugeindex: hit without a valid key (doc %d)", d.doc)
		}
		hits[i] = core.Scored{Key: key, Score: d.score}
	}
	return hits, nil
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
	last := nthScore(bm25, depth) // the depth-th best BM25 score
	above, ties := around(bm25, last)
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
	if len(tied) == 0 || above+ties <= 2*depth {
		return in // all the ties are candidates
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

// around counts the documents scoring above last and those scoring as it.
func around(docs []scoredDoc, last float64) (above, ties int) {
	for _, d := range docs {
		switch {
		case d.score > last:
			above++
		case d.score == last:
			ties++
		}
	}
	return above, ties
}

// leastIDs says which of docs are the room of least id (all when they are
// no more): which documents scoring as the depth-th best are candidates
// when room is what the better ones leave of 2*depth (inCandidates, when
// docs are every document scoring so). A heap of room ids rather than a
// map of every one and a sort of them all: a word of every name ties a
// million documents (over 100 MB and a second of sorting per search),
// as it does in ranked.
func leastIDs(docs []uint64, room int, id func(uint64) string) []bool {
	in := make([]bool, len(docs))
	if room <= 0 {
		return in
	}
	if len(docs) <= room {
		for i := range in {
			in[i] = true
		}
		return in
	}
	least := idHeap{room: room} // the room least ids seen, the greatest on top
	for _, d := range docs {
		least.offer(keyedDoc{id: id(d)})
	}
	for i, d := range docs {
		in[i] = id(d) <= least.h[0].id
	}
	return in
}

// nthBest is the n-th best score of docs, -Inf when they are fewer: the
// threshold a topScores of n would have after seeing them.
func nthBest(docs []scoredDoc, n int) float64 {
	if len(docs) < n {
		return math.Inf(-1)
	}
	return nthScore(docs, n)
}

// nthScore returns the n-th best score of docs (1-based, n <= len(docs)).
func nthScore(docs []scoredDoc, n int) float64 {
	scores := make([]float64, len(docs))
	for i, d := range docs {
		scores[i] = d.score
	}
	return nthLargest(scores, n)
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
func placeIn(hits []core.Scored, keys []core.Key, places []core.ListPlace) {
	for i, k := range keys {
		for j := range hits {
			if hits[j].Key == k {
				places[i] = core.ListPlace{Rank: j + 1, Score: hits[j].Score}
				break
			}
		}
	}
}

// placeKeys sets the places of keys in the list (of limit entries from
// depth candidates, see RankedPrefix) exactly, by one walk (two halves side
// by side from split documents on, bestByBM25): the documents
// scoring, by BM25, at least half the least rescored score of the keys
// that match (floor), kept down to the depth-th best of them (no candidate
// is below it). Those hold every entry of the list the keys come after or
// with. hits are the first n entries (or fewer, whole, when the list is
// shorter) when the walk saw them all (enough); it did when they all
// rescore to 2*floor or more, or when it saw every candidate: the depth
// best reach the floor.
func placeKeys(ctx context.Context, snap blugesearch.Reader, ids *docIDs, blocks *blockCache, split uint64, p *plan, tq *textQuery, lex *lexicon, n, limit, depth int, keys []core.Key, places []core.ListPlace) (hits []core.Scored, whole, enough bool, err error) {
	if len(p.clauses) == 0 {
		return nil, true, true, nil
	}
	docs, scores, err := scoresOf(snap, p, lex, blocks, keys)
	if err != nil {
		return nil, false, false, err
	}
	cq := newCoverQuery(tq, lex)
	rescore := func(doc uint64, score float64) float64 {
		return score * (1 + coverageBoost*ids.coverage(doc, cq))
	}
	floor := math.Inf(1)
	for i, s := range scores {
		if s > 0 {
			floor = min(floor, rescore(docs[i], s)/(1+coverageBoost))
		}
	}
	if math.IsInf(floor, 1) {
		return nil, false, false, nil // no key matches: none is in the list
	}
	floor *= 1 - 1e-9 // below each key's, whatever the rounding
	found, last, err := bestByBM25(ctx, snap, p, lex, depth, blocks, floor, split)
	if err != nil {
		return nil, false, false, err
	}
	// Every candidate was seen when the depth best all reach the floor;
	// else fewer than depth documents do, and all of them are candidates.
	complete := !math.IsInf(last, -1)
	// The candidates among them: all when fewer than depth; else the ones
	// above the depth-th best and those scoring as it, in id order, up to
	// 2*depth (leastIDs decides only those).
	// Both lists are sized first: a word of every name ties all of found.
	var in []bool
	kept := len(found)
	if complete {
		above, ties := around(found, last)
		tied := make([]uint64, 0, ties)
		for _, f := range found {
			if f.score == last {
				tied = append(tied, f.doc)
			}
		}
		in = leastIDs(tied, 2*depth-above, ids.id)
		kept = len(found) - ties + min(ties, max(2*depth-above, 0))
	}
	// The candidates rescored, down to where the list is known exactly, in
	// the walk's order; the list's order is found only for the first n and
	// counted for the keys.
	list := make([]scoredDoc, 0, kept)
	t := 0
	for _, f := range found {
		if complete && f.score == last {
			t++
			if !in[t-1] {
				continue
			}
		}
		list = append(list, f)
	}
	rescoreAll(list, rescore)
	if !complete {
		least := (1 + coverageBoost) * floor
		list = keepAbove(list, least)
	}
	ranks := newRankCounter(list, ids)
	for i, d := range docs {
		if scores[i] <= 0 {
			continue
		}
		at := slices.IndexFunc(list, func(e scoredDoc) bool { return e.doc == d })
		if at < 0 {
			continue // not a candidate
		}
		if rank := ranks.rank(list[at]); rank <= limit {
			places[i] = core.ListPlace{Rank: rank, Score: list[at].score}
		}
	}
	size := min(len(list), limit) // of the list, when complete
	if !complete && size < n {
		return nil, false, false, nil
	}
	hits, err = scoredOf(firstInOrder(list, min(n, size), ids), ids)
	return hits, complete && len(hits) == size, err == nil, err
}

// rescoreAll rescores docs in place, on both cores when they are many
// (thousands when a vector hit lies deep in a long list): the coverage of
// each name is most of what placing the keys costs after the walk.
func rescoreAll(docs []scoredDoc, rescore func(doc uint64, score float64) float64) {
	each := func(ds []scoredDoc) {
		for i := range ds {
			ds[i].score = rescore(ds[i].doc, ds[i].score)
		}
	}
	if len(docs) < rescoreSplitFrom {
		each(docs)
		return
	}
	half := len(docs) / 2
	done := make(chan struct{})
	go func() {
		each(docs[:half])
		close(done)
	}()
	each(docs[half:])
	<-done
}

// rescoreSplitFrom is how many documents rescoreAll splits between two
// goroutines: about a third of a millisecond of coverage.
const rescoreSplitFrom = 1024

// rankCounter counts the entries of a list before an entry of it: those
// scoring higher, and those scoring the same with a smaller id. The ids of
// a group of equal scores (thousands when a word alone is asked) are read
// and sorted once, for the first entry of the group asked about.
type rankCounter struct {
	list []scoredDoc
	ids  *docIDs
	tied map[float64][]string
}

func newRankCounter(list []scoredDoc, ids *docIDs) *rankCounter {
	return &rankCounter{list: list, ids: ids, tied: map[float64][]string{}}
}

// rank returns e's rank in the list (1 for the first).
func (r *rankCounter) rank(e scoredDoc) int {
	higher := 0
	for _, o := range r.list {
		if o.score > e.score {
			higher++
		}
	}
	group, ok := r.tied[e.score]
	if !ok {
		for _, o := range r.list {
			if o.score == e.score {
				group = append(group, r.ids.id(o.doc))
			}
		}
		slices.Sort(group)
		r.tied[e.score] = group
	}
	before, _ := slices.BinarySearch(group, r.ids.id(e.doc))
	return 1 + higher + before
}

// scoresOf returns the live document of each of keys in the snapshot and
// its settled BM25 score as topK computes it (0 for a key without a live
// document of the plan's catalogs matching the plan).
func scoresOf(snap blugesearch.Reader, p *plan, lex *lexicon, blocks *blockCache, keys []core.Key) (docs []uint64, scores []float64, err error) {
	type docOf struct {
		i   int
		doc uint64
	}
	var found []docOf
	docs = make([]uint64, len(keys))
	for i, k := range keys {
		docs[i] = noDoc
		it, err := snap.PostingsIterator([]byte(k.String()), "_id", false, false, false)
		if err != nil {
			return nil, nil, fmt.Errorf("blugeindex: look up %s: %w", k, err)
		}
		pst, err := it.Next()
		if err == nil && pst != nil {
			docs[i] = pst.Number()
			found = append(found, docOf{i, pst.Number()})
		}
		_ = it.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("blugeindex: look up %s: %w", k, err)
		}
	}
	slices.SortFunc(found, func(a, b docOf) int { return cmp.Compare(a.doc, b.doc) })
	scores = make([]float64, len(keys))
	if len(found) == 0 {
		return docs, scores, nil
	}
	filter, err := newCatalogPostings(snap, p.catalogs)
	if err != nil {
		return nil, nil, err
	}
	defer filter.close()
	in := make([]bool, len(found))
	for d := range found {
		if d > 0 && found[d].doc == found[d-1].doc {
			in[d] = in[d-1]
			continue
		}
		ok, err := filter.holds(found[d].doc)
		if err != nil {
			return nil, nil, err
		}
		in[d] = ok
	}
	// The cursors the walk reads (a long list's from the block cache,
	// where moving to a document is a search in memory), each moved along
	// the keys' documents in order.
	cs, err := openCursors(snap, p, lex, blocks)
	defer closeCursors(cs)
	if err != nil {
		return nil, nil, err
	}
	parts := make([][]part, len(found))
	for _, c := range cs {
		for d := 0; d < len(found) && c.doc != noDoc; d++ {
			if c.doc < found[d].doc {
				if err := c.advance(found[d].doc); err != nil {
					return nil, nil, err
				}
			}
			if c.doc == found[d].doc {
				parts[d] = append(parts[d], part{c.clause, c.score()})
			}
		}
	}
	for d, f := range found {
		if in[d] && len(parts[d]) > 0 {
			scores[f.i] = settle(sumInClauseOrder(parts[d]))
		}
	}
	return docs, scores, nil
}
