// Package search answers search questions. Full-text (BM25) retrieval always
// runs; vector retrieval joins when asked for and vectors exist; the lists
// are fused with Reciprocal Rank Fusion (k = 60); a reranker may reorder the
// top of the fused list. Degraded answers say why in notes, never fail.
package search

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/ports"
)

// Tuning of retrieval depth and remote calls.
const (
	// minDepth is how many candidates each list contributes at least, so
	// fusion sees more than one page.
	minDepth = 20
	// filterDepth is the depth when filters may discard most candidates.
	filterDepth = 1000
	// rerankWindow is how many fused candidates the reranker sees at least.
	rerankWindow = 30
	// queryEmbedTimeout bounds embedding the query: a slow model must not
	// make search slow; full-text answers instead.
	queryEmbedTimeout = 2 * time.Second
	rerankTimeout     = 5 * time.Second
)

// Config tunes fusion.
type Config struct {
	// VectorWeight scales the vector list's Reciprocal Rank Fusion terms
	// (weighted RRF); 1 is plain RRF. A lexical embedder deserves less say
	// than the full-text list it mostly repeats; a semantic one, an equal say.
	VectorWeight float64
	// VectorFloor is the relevance floor: a hit found only by the vector
	// list counts as a match when its similarity (cosine) reaches it; 0
	// keeps every vector hit. docs/SEARCH.md tells how it was chosen.
	VectorFloor float64
	// Metrics records each answered search (mode, results, duration); nil
	// records nothing.
	Metrics ports.Metrics
}

// Service implements ports.Searcher.
type Service struct {
	cfg      Config
	store    ports.ResourceStore
	text     ports.TextIndex
	vis      *core.Visibility
	vectors  *embedding.Syncer // nil without an embedder
	reranker ports.Reranker    // nil without a reranker
	// wholeHybrid answers hybrid searches by ranking, loading and fusing
	// the whole match set (the way before the top of each list sufficed):
	// the reference of the tests.
	wholeHybrid bool
}

var _ ports.Searcher = (*Service)(nil)

// New returns a search service; vectors and reranker may be nil.
func New(cfg Config, store ports.ResourceStore, text ports.TextIndex, vis *core.Visibility, vectors *embedding.Syncer, reranker ports.Reranker) *Service {
	if cfg.VectorWeight <= 0 {
		cfg.VectorWeight = 1
	}
	cfg.Metrics = ports.MetricsOrNone(cfg.Metrics)
	return &Service{cfg: cfg, store: store, text: text, vis: vis, vectors: vectors, reranker: reranker}
}

// candidate is a key with its place in each retrieval list.
type candidate struct {
	key                  core.Key
	ref                  string // key.String(), for cheap deterministic ties
	ftsRank, vecRank     int
	ftsScore, vecScore   float64
	fused                float64
	resource             core.Resource
	rerankScore          float64
	reranked, haveRerank bool
}

// Search validates the request, retrieves, fuses, optionally reranks and pages.
//
// An answer that needs no more than a page (full text only, no filter, sort
// or facet) resolves candidates until the page is full and asks the index
// for the count of the match set. Otherwise the whole match set is resolved:
// every full-text match (up to core.MaxMatchSet, best first) and the vector
// hits above the floor, loaded from the store, filtered, counted, faceted and
// optionally sorted by an impact value. A hybrid search without filters,
// sort or facets gets the same answer from the top of each list
// (topOfLists) when the text index can rank a prefix of its list.
func (s *Service) Search(ctx context.Context, req core.SearchRequest) (core.SearchResponse, error) {
	start := time.Now()
	resp, err := s.search(ctx, req, start)
	if err == nil {
		s.cfg.Metrics.ObserveSearch(s.mode(req), len(resp.Results), time.Since(start))
	}
	return resp, err
}

// mode names the kind of search for the metrics: reranked when a reranker
// was asked for and configured, hybrid with vectors, fulltext otherwise.
func (s *Service) mode(req core.SearchRequest) string {
	switch {
	case req.Rerank && s.reranker != nil:
		return ports.SearchReranked
	case req.Vector:
		return ports.SearchHybrid
	}
	return ports.SearchFullText
}

func (s *Service) search(ctx context.Context, req core.SearchRequest, start time.Time) (core.SearchResponse, error) {
	req, err := validate(req)
	if err != nil {
		return core.SearchResponse{}, err
	}
	resp := core.SearchResponse{Source: core.SourceFor(req.Catalogs), Query: req.Query, Lang: req.Lang, Results: []core.Hit{}}
	whole := req.Vector || req.Refine.Active()
	depth := max(minDepth, req.Offset+req.Limit)
	vecDepth := depth
	if req.Filtering() {
		vecDepth = filterDepth
	}

	if err := s.vis.Loaded(req.Catalogs); err != nil {
		return core.SearchResponse{}, err
	}
	// Vectors first, outside the gate: the query's embedding may wait on a
	// remote service. They lag the store anyway (embedding runs after an
	// ingest), so the answer's consistency comes from the full-text index
	// and the store, read together below.
	var vec []core.Scored
	if req.Vector {
		var note string
		vec, note = s.vectorSearch(ctx, req, vecDepth)
		if note != "" {
			resp.Notes = append(resp.Notes, note)
		}
	}
	// Resolve candidates in fused order until the page (or the rerank
	// window) is full, dropping withdrawn and filtered-out resources.
	need := req.Offset + req.Limit
	rerank := req.Rerank && !req.Sort.IsSet()
	if rerank && s.reranker != nil {
		need = max(need, rerankWindow)
	}
	var kept []*candidate
	var floored int
	total := -1 // set by the top of the lists (topOfLists)
	err = s.vis.Read(req.Catalogs, func() error {
		tq := core.TextQuery{Text: req.Query, Lang: req.Lang, Catalogs: req.Catalogs, Limit: depth}
		matched := -1
		var err error
		if req.Vector && !req.Refine.Active() && !s.wholeHybrid {
			if pr, ok := s.text.(prefixRanker); ok {
				var done bool
				kept, floored, total, done, err = s.topOfLists(ctx, pr, req, tq, vec, need, &resp)
				if err != nil || done {
					return err
				}
				total = -1
			}
		}
		if whole {
			// The whole match set, counted first so the ranked list is
			// sized to it (the index allocates for the depth asked).
			if matched, err = s.text.Count(ctx, tq); err != nil {
				return core.Unavailablef(err, "full-text index failed")
			}
			tq.Limit = max(depth, min(matched, core.MaxMatchSet))
		}
		var counted chan matchCount
		if !whole {
			// The page needs the count of a match set larger than the
			// page: counted beside the ranking (on the other core) and
			// waited for, so it reads the same release.
			counted = make(chan matchCount, 1)
			go func() {
				n, err := s.text.Count(ctx, tq)
				counted <- matchCount{n, err}
			}()
		}
		fts, err := s.text.Search(ctx, tq)
		if err != nil {
			if counted != nil {
				<-counted
			}
			return core.Unavailablef(err, "full-text index failed")
		}
		var cands []*candidate
		cands, floored = s.floor(fuse(fts, vec, s.cfg.VectorWeight))
		if !whole {
			kept, err = s.resolve(ctx, cands, req, need)
			c := <-counted
			if err != nil {
				return err
			}
			if len(fts) < depth {
				resp.Total = len(fts) // the index returned every match
				return nil
			}
			if c.err != nil {
				return core.Unavailablef(c.err, "full-text index failed")
			}
			resp.Total = c.n
			return nil
		}
		if matched > core.MaxMatchSet {
			resp.Notes = append(resp.Notes, overMatchSet)
		}
		if kept, err = s.resolve(ctx, cands, req, len(cands)); err != nil {
			return err
		}
		if len(kept) == 0 && (req.Category != "" || req.Unit != "") {
			return s.checkFilters(ctx, &req.Refine, req.Catalogs)
		}
		return nil
	})
	if err != nil {
		return core.SearchResponse{}, err
	}
	if whole {
		rs := make([]*core.Resource, len(kept))
		for i, c := range kept {
			rs[i] = &c.resource
		}
		if err := core.CheckSortUnits(rs, req.Sort); err != nil {
			return core.SearchResponse{}, err
		}
		resp.Total = len(kept)
		if total >= 0 {
			resp.Total = total
		}
		resp.Facets = core.CountFacets(rs, req.Facets, req.Lang)
		if req.Sort.IsSet() {
			sort.SliceStable(kept, func(i, j int) bool {
				return core.CompareImpact(&kept[i].resource, &kept[j].resource, req.Sort) < 0
			})
		}
	}
	if req.Rerank && req.Sort.IsSet() {
		resp.Notes = append(resp.Notes, "rerank is not applied with sort: results are ordered by sort="+req.Sort.String())
	}
	if rerank {
		window := kept[:min(len(kept), need)]
		if note := s.rerank(ctx, req.Query, req.Lang, window); note != "" {
			resp.Notes = append(resp.Notes, note)
		}
	}
	if resp.Total == 0 {
		resp.Notes = append(resp.Notes, nothingMatched(req, floored > 0))
	}
	if req.Offset < len(kept) {
		page := kept[req.Offset:min(len(kept), req.Offset+req.Limit)]
		for _, c := range page {
			resp.Results = append(resp.Results, hit(c, req))
		}
		if req.Highlight {
			if err := s.highlight(ctx, req, resp.Results); err != nil {
				return core.SearchResponse{}, err
			}
		}
	}
	resp.TookMs = core.Millis(time.Since(start))
	return resp, nil
}

// matchCount is the index's count of a match set, or why it failed.
type matchCount struct {
	n   int
	err error
}

// overMatchSet is the note of an answer whose match set is cut.
var overMatchSet = fmt.Sprintf("more than %d resources match: the total, the facets and the sort cover the %d most relevant full-text matches; add words or filters to narrow the search", core.MaxMatchSet, core.MaxMatchSet)

// nothingMatched is the note of an answer without any match.
func nothingMatched(req core.SearchRequest, floored bool) string {
	msg := fmt.Sprintf("nothing matched %q: no resource holds these words or close spellings", req.Query)
	if req.Vector {
		msg += ", and no vector neighbour is similar enough to count as a match"
		if floored {
			msg += " (the nearest fall below the relevance floor)"
		}
	}
	if req.Filtering() {
		msg += " within the filters"
	}
	return msg + "; try other or fewer words, a synonym, or the other language"
}

// floor drops the candidates found only by the vector list whose similarity
// is below the relevance floor: the nearest neighbours of any text, nonsense
// included, are only near, not relevant. It returns how many it dropped.
func (s *Service) floor(cands []*candidate) ([]*candidate, int) {
	if s.cfg.VectorFloor <= 0 {
		return cands, 0
	}
	out := cands[:0]
	dropped := 0
	for _, c := range cands {
		if c.ftsRank == 0 && c.vecScore < s.cfg.VectorFloor {
			dropped++
			continue
		}
		out = append(out, c)
	}
	return out, dropped
}

// checkFilters tells an unknown category or unit (400 naming the close
// valid values) from one that matches nothing for this query (no error).
// It reads the catalogs' vocabulary from the store: an empty filtered
// answer is rare, and the store is the truth.
func (s *Service) checkFilters(ctx context.Context, f *core.Refine, catalogs []core.CatalogID) error {
	v := core.NewVocabulary()
	for _, c := range catalogs {
		err := s.store.Scan(ctx, c, func(sr ports.StoredResource) error {
			if !sr.Resource.Withdrawn {
				v.Add(&sr.Resource)
			}
			return nil
		})
		if err != nil {
			return core.Unavailablef(err, "store unavailable")
		}
	}
	return v.Check(f, catalogs)
}

// highlight marks in each hit's shown name and description the words the
// index's analysis matches to the query.
func (s *Service) highlight(ctx context.Context, req core.SearchRequest, hits []core.Hit) error {
	texts := make([]string, 0, 2*len(hits))
	for i := range hits {
		texts = append(texts, hits[i].Name, hits[i].Description)
	}
	spans, err := s.text.Highlight(ctx, core.TextQuery{Text: req.Query, Lang: req.Lang, Catalogs: req.Catalogs}, texts)
	if err != nil {
		return core.Unavailablef(err, "full-text index failed")
	}
	for i := range hits {
		hits[i].Highlight = &core.Highlight{
			Name:        core.MarkSpans(hits[i].Name, spans[2*i]),
			Description: core.MarkSpans(hits[i].Description, spans[2*i+1]),
		}
	}
	return nil
}

func validate(req core.SearchRequest) (core.SearchRequest, error) {
	req.Query = strings.Join(strings.Fields(core.CleanText(req.Query)), " ")
	if req.Query == "" {
		return req, core.Invalidf("q is required: a few words in Swedish or English, e.g. q=spånskiva")
	}
	if n := utf8.RuneCountInString(req.Query); n > core.MaxQueryLen {
		return req, core.Invalidf("q is %d characters long; the limit is %d", n, core.MaxQueryLen)
	}
	if req.Limit == 0 {
		req.Limit = core.DefaultLimit
	}
	if req.Limit < 1 || req.Limit > core.MaxLimit {
		return req, core.Invalidf("limit must be between 1 and %d", core.MaxLimit)
	}
	if req.Offset < 0 || req.Offset > core.MaxOffset {
		return req, core.Invalidf("offset must be between 0 and %d", core.MaxOffset)
	}
	if req.Lang == "" {
		req.Lang = core.Swedish
	}
	if len(req.Catalogs) == 0 {
		req.Catalogs = core.Catalogs
	}
	if err := req.Refine.Normalize(); err != nil {
		return req, err
	}
	return req, nil
}

// vectorSearch returns the vector list, or a note saying why there is none.
func (s *Service) vectorSearch(ctx context.Context, req core.SearchRequest, depth int) ([]core.Scored, string) {
	emb := s.vectors.Embedder()
	if emb == nil {
		return nil, "vector search unavailable: no embedder is configured; results are full-text only"
	}
	if s.vectors.Index().Len() == 0 {
		if !s.vectors.Loaded() {
			// After a start, until the graph is taken up or rebuilt.
			return nil, "vector search unavailable: the vectors are still being loaded after the start; results are full-text only"
		}
		return nil, "vector search unavailable: no vectors are stored yet; results are full-text only"
	}
	qctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	defer cancel()
	qv, err := emb.EmbedQuery(qctx, req.Query)
	if err != nil {
		return nil, "vector search unavailable: the embedder failed (" + err.Error() + "); results are full-text only"
	}
	if len(qv) != ports.EmbeddingDim {
		return nil, "vector search unavailable: the embedder returned a vector of the wrong size; results are full-text only"
	}
	res, err := s.vectors.Index().Search(ctx, qv, req.Catalogs, depth)
	if err != nil {
		return nil, "vector search unavailable: " + err.Error() + "; results are full-text only"
	}
	if n := s.vectors.Backlog(); n > 0 {
		return res, fmt.Sprintf("vectors are still being computed for %d resources changed by a recent ingest; until then vector search does not see those changes (full text does)", n)
	}
	return res, ""
}

// fuse merges the lists by Reciprocal Rank Fusion, k = 60:
// score = 1/(k + rank_fts) + w/(k + rank_vector), w = 1 being plain RRF.
// Ties are broken by the best single rank, then by key, so equal input
// always gives the same order.
func fuse(fts, vec []core.Scored, w float64) []*candidate {
	f := newFusion(len(fts) + len(vec))
	f.addText(fts)
	for i, sc := range vec {
		f.addVector(i, sc, w)
	}
	sortFused(f.cands)
	return f.cands
}

// fusion gathers the candidates of fused lists by key, in the order first
// seen, adding each list's RRF share (fuse, and topOfLists on list prefixes).
type fusion struct {
	byKey map[core.Key]*candidate
	cands []*candidate
}

func newFusion(n int) *fusion {
	return &fusion{byKey: make(map[core.Key]*candidate, n)}
}

func (f *fusion) get(k core.Key) *candidate {
	c, ok := f.byKey[k]
	if !ok {
		c = &candidate{key: k, ref: k.String()}
		f.byKey[k] = c
		f.cands = append(f.cands, c)
	}
	return c
}

// addText adds the full-text list, ranked from 1.
func (f *fusion) addText(fts []core.Scored) {
	for i, sc := range fts {
		f.addTextAt(i+1, sc)
	}
}

// addTextAt adds one entry of the full-text list at its rank.
func (f *fusion) addTextAt(rank int, sc core.Scored) {
	c := f.get(sc.Key)
	c.ftsRank, c.ftsScore = rank, sc.Score
	c.fused += 1 / float64(core.RRFK+rank)
}

// addVector adds the vector hit at index i, weighted w.
func (f *fusion) addVector(i int, sc core.Scored, w float64) *candidate {
	c := f.get(sc.Key)
	c.vecRank, c.vecScore = i+1, sc.Score
	c.fused += w / float64(core.RRFK+i+1)
	return c
}

// sortFused orders candidates by fused score, then best single rank, then
// key, so equal input always gives the same order.
func sortFused(cs []*candidate) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.fused != b.fused {
			return a.fused > b.fused
		}
		if ba, bb := bestRank(a), bestRank(b); ba != bb {
			return ba < bb
		}
		return a.ref < b.ref
	})
}

func bestRank(c *candidate) int {
	switch {
	case c.ftsRank == 0:
		return c.vecRank
	case c.vecRank == 0:
		return c.ftsRank
	}
	return min(c.ftsRank, c.vecRank)
}

// resolve loads candidates' resources in fused order until need are kept.
func (s *Service) resolve(ctx context.Context, cands []*candidate, req core.SearchRequest, need int) ([]*candidate, error) {
	var kept []*candidate
	for start := 0; start < len(cands) && len(kept) < need; {
		// Fetch what the page still needs plus a little slack for withdrawn
		// or filtered-out candidates; with filters, larger steps.
		step := need - len(kept) + 2
		if req.Filtering() {
			step = max(step, 64)
		}
		end := min(len(cands), start+step)
		keys := make([]core.Key, 0, end-start)
		for _, c := range cands[start:end] {
			keys = append(keys, c.key)
		}
		stored, err := s.store.GetMany(ctx, keys)
		if err != nil {
			return nil, core.Unavailablef(err, "store unavailable")
		}
		byKey := make(map[core.Key]core.Resource, len(stored))
		for _, sr := range stored {
			byKey[sr.Resource.Key()] = sr.Resource
		}
		for _, c := range cands[start:end] {
			r, ok := byKey[c.key]
			if !ok || r.Withdrawn || !req.Keep(&r) {
				continue // a vector hit of a withdrawn resource, or filtered out
			}
			c.resource = r
			kept = append(kept, c)
			if len(kept) == need {
				break
			}
		}
		start = end
	}
	return kept, nil
}

// rerank reorders cands in place by the reranker's scores. On failure the
// retrieval order stays and the returned note says why.
func (s *Service) rerank(ctx context.Context, query string, lang core.Lang, cands []*candidate) string {
	if s.reranker == nil {
		return "rerank unavailable: no reranker is configured; results keep their retrieval order"
	}
	if len(cands) == 0 {
		return ""
	}
	docs := make([]string, len(cands))
	for i, c := range cands {
		r := c.resource
		r.Localize(lang)
		docs[i] = rerankText(&r)
	}
	rctx, cancel := context.WithTimeout(ctx, rerankTimeout)
	defer cancel()
	scores, err := s.reranker.Rerank(rctx, query, docs)
	if err == nil && len(scores) != len(cands) {
		err = errors.New("the reranker returned a different number of scores than documents")
	}
	if err != nil {
		return "rerank failed (" + err.Error() + "); results keep their retrieval order"
	}
	for i, c := range cands {
		c.rerankScore, c.reranked = scores[i], true
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].rerankScore > cands[j].rerankScore })
	return ""
}

// rerankText is what the reranker reads of a resource: the shown name, its
// synonyms and category, and the description.
func rerankText(r *core.Resource) string {
	parts := []string{r.Name}
	for _, s := range []string{r.Synonyms, r.SynonymsEN, r.Category, r.Description} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ". ")
}

func hit(c *candidate, req core.SearchRequest) core.Hit {
	r := c.resource
	r.Localize(req.Lang)
	h := core.Hit{Resource: r, Lang: req.Lang, Score: c.fused, Details: core.DetailsPath(c.key)}
	switch {
	case c.ftsRank > 0 && c.vecRank > 0:
		h.MatchSource = core.MatchBoth
	case c.vecRank > 0:
		h.MatchSource = core.MatchVector
	default:
		h.MatchSource = core.MatchFTS
	}
	if c.reranked {
		score := c.rerankScore
		h.Reranked, h.RerankScore = true, &score
	}
	if req.Explain {
		h.Explain = &core.Explain{FTSRank: c.ftsRank, FTSScore: c.ftsScore, VectorRank: c.vecRank, VectorScore: c.vecScore, Fused: c.fused}
	}
	return h
}
