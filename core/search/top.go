package search

import (
	"context"
	"math"

	"github.com/climatesearch/climatesearch/core"
)

// prefixRanker is what a text index offers (blugeindex does) for fusing the
// top of its ranked list instead of all of it. RankedPrefix returns the
// first entries of the list Search(ctx, q) would return, exactly (at least
// n of them when they can be told apart from the rest cheaply; whole when
// they are all of it), for each of keys its rank and score in that list,
// among those entries or further down (Rank 0: not in the list), and how
// many match (as Count says; the index counts beside the ranking where
// that pays).
type prefixRanker interface {
	RankedPrefix(ctx context.Context, q core.TextQuery, n int, keys []core.Key) (hits []core.Scored, whole bool, places []core.ListPlace, matched int, err error)
}

// topOfLists answers a hybrid search without filters, facets or sort from
// the top of each list, as the whole match set would answer it (the same
// page, order, scores and total; see TestTopOfListsEqualsWholeSet).
//
// The whole way ranks every full-text match (up to core.MaxMatchSet), fuses
// them with the vector hits, loads them all from the store and counts the
// live ones. But Reciprocal Rank Fusion gives the full-text match at rank
// k at most 1/(60+k) (plus the vector term of a vector hit), so once the
// page is filled with candidates fusing above that, nothing further down
// the full-text list can enter it; only the vector hits' ranks in that
// list (however deep) are needed besides, and the total is the size of
// the list (min(matches, its depth)) plus the live vector hits outside it.
//
// A prefix of the page's size and the vector hits' count decides the page
// unless entries of it are no longer stored; then it asks the index for
// more, up to the whole list. done is false when even that does not decide
// it, and the caller then takes the whole way (resp is left unchanged).
func (s *Service) topOfLists(ctx context.Context, pr prefixRanker, req core.SearchRequest, tq core.TextQuery, vec []core.Scored, need int, resp *core.SearchResponse) (kept []*candidate, floored, total int, done bool, err error) {
	// The list is the whole match set up to core.MaxMatchSet; the index
	// says how long the set is.
	tq.Limit = max(tq.Limit, core.MaxMatchSet)
	keys := make([]core.Key, len(vec))
	for i, v := range vec {
		keys[i] = v.Key
	}
	w := s.cfg.VectorWeight
	for n := need + len(vec); ; n *= 4 {
		hits, whole, places, matched, err := pr.RankedPrefix(ctx, tq, n, keys)
		if err != nil {
			return nil, 0, 0, false, core.Unavailablef(err, "full-text index failed")
		}
		listLen := min(matched, tq.Limit)
		// The candidates whose fused score is known: the prefix and the
		// vector hits (with their full-text rank, deep as it may be),
		// fused as fuse does.
		f := newFusion(len(hits) + len(vec))
		f.addText(hits)
		// below bounds the fused score of every candidate not in f.cands:
		// a full-text match after the prefix.
		below := math.Inf(-1)
		if !whole {
			below = 1 / float64(core.RRFK+len(hits)+1)
		}
		var outside []*candidate // vector hits not in the full-text list
		for i, sc := range vec {
			if pl := places[i]; pl.Rank > len(hits) && f.byKey[sc.Key] == nil {
				f.addTextAt(pl.Rank, core.Scored{Key: sc.Key, Score: pl.Score})
			}
			c := f.addVector(i, sc, w)
			if places[i].Rank == 0 {
				outside = append(outside, c)
			}
		}
		sortFused(f.cands)
		var cands []*candidate
		cands, floored = s.floor(f.cands)
		kept, err = s.resolve(ctx, cands, req, need)
		if err != nil {
			return nil, 0, 0, false, err
		}
		decided := len(kept) == need && kept[need-1].fused > below
		if !decided && !math.IsInf(below, -1) {
			if n >= tq.Limit {
				return nil, 0, 0, false, nil
			}
			continue
		}
		// The total: the list (every entry live: the index holds live
		// resources only, read with the store) and the live vector hits
		// outside it, above the floor.
		total = listLen
		inKept := make(map[*candidate]bool, len(kept))
		for _, c := range kept {
			inKept[c] = true
		}
		var ask []core.Key
		counted := map[*candidate]bool{}
		for _, c := range outside {
			if counted[c] || (s.cfg.VectorFloor > 0 && c.vecScore < s.cfg.VectorFloor) {
				continue
			}
			counted[c] = true
			if inKept[c] {
				total++
			} else {
				ask = append(ask, c.key)
			}
		}
		if len(ask) > 0 {
			stored, err := s.store.GetMany(ctx, ask)
			if err != nil {
				return nil, 0, 0, false, core.Unavailablef(err, "store unavailable")
			}
			for _, sr := range stored {
				if !sr.Resource.Withdrawn {
					total++
				}
			}
		}
		if matched > core.MaxMatchSet {
			resp.Notes = append(resp.Notes, overMatchSet)
		}
		return kept, floored, total, true, nil
	}
}
