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
}

// Service implements ports.Searcher.
type Service struct {
	cfg      Config
	store    ports.ResourceStore
	text     ports.TextIndex
	vis      *core.Visibility
	vectors  *embedding.Syncer // nil without an embedder
	reranker ports.Reranker    // nil without a reranker
}

var _ ports.Searcher = (*Service)(nil)

// New returns a search service; vectors and reranker may be nil.
func New(cfg Config, store ports.ResourceStore, text ports.TextIndex, vis *core.Visibility, vectors *embedding.Syncer, reranker ports.Reranker) *Service {
	if cfg.VectorWeight <= 0 {
		cfg.VectorWeight = 1
	}
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
func (s *Service) Search(ctx context.Context, req core.SearchRequest) (core.SearchResponse, error) {
	req, err := validate(req)
	if err != nil {
		return core.SearchResponse{}, err
	}
	resp := core.SearchResponse{Source: core.SourceFor(req.Catalogs), Query: req.Query, Lang: req.Lang, Results: []core.Hit{}}
	depth := max(minDepth, req.Offset+req.Limit)
	if req.Category != "" || req.Unit != "" {
		depth = filterDepth
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
		vec, note = s.vectorSearch(ctx, req, depth)
		if note != "" {
			resp.Notes = append(resp.Notes, note)
		}
	}
	// Resolve candidates in fused order until the page (or the rerank
	// window) is full, dropping withdrawn and filtered-out resources.
	need := req.Offset + req.Limit
	if req.Rerank && s.reranker != nil {
		need = max(need, rerankWindow)
	}
	var kept []*candidate
	err = s.vis.Read(req.Catalogs, func() error {
		fts, err := s.text.Search(ctx, core.TextQuery{Text: req.Query, Lang: req.Lang, Catalogs: req.Catalogs, Limit: depth})
		if err != nil {
			return core.Unavailablef(err, "full-text index failed")
		}
		kept, err = s.resolve(ctx, fuse(fts, vec, s.cfg.VectorWeight), req, need)
		return err
	})
	if err != nil {
		return core.SearchResponse{}, err
	}
	if req.Rerank {
		if note := s.rerank(ctx, req.Query, req.Lang, kept); note != "" {
			resp.Notes = append(resp.Notes, note)
		}
	}
	if req.Offset >= len(kept) {
		return resp, nil
	}
	kept = kept[req.Offset:min(len(kept), req.Offset+req.Limit)]
	for _, c := range kept {
		resp.Results = append(resp.Results, hit(c, req))
	}
	return resp, nil
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
	req.Category = strings.TrimSpace(req.Category)
	req.Unit = strings.TrimSpace(req.Unit)
	return req, nil
}

// vectorSearch returns the vector list, or a note saying why there is none.
func (s *Service) vectorSearch(ctx context.Context, req core.SearchRequest, depth int) ([]core.Scored, string) {
	emb := s.vectors.Embedder()
	if emb == nil {
		return nil, "vector search unavailable: no embedder is configured; results are full-text only"
	}
	if s.vectors.Index().Len() == 0 {
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
	byKey := make(map[core.Key]*candidate, len(fts)+len(vec))
	var out []*candidate
	get := func(k core.Key) *candidate {
		c, ok := byKey[k]
		if !ok {
			c = &candidate{key: k, ref: k.String()}
			byKey[k] = c
			out = append(out, c)
		}
		return c
	}
	for i, sc := range fts {
		c := get(sc.Key)
		c.ftsRank, c.ftsScore = i+1, sc.Score
		c.fused += 1 / float64(core.RRFK+i+1)
	}
	for i, sc := range vec {
		c := get(sc.Key)
		c.vecRank, c.vecScore = i+1, sc.Score
		c.fused += w / float64(core.RRFK+i+1)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.fused != b.fused {
			return a.fused > b.fused
		}
		if ba, bb := bestRank(a), bestRank(b); ba != bb {
			return ba < bb
		}
		return a.ref < b.ref
	})
	return out
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
		if req.Category != "" || req.Unit != "" {
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
			if !ok || r.Withdrawn || !matches(&r, req) {
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

func matches(r *core.Resource, req core.SearchRequest) bool {
	if req.Category != "" && !strings.EqualFold(r.Category, req.Category) && !strings.EqualFold(r.CategoryEN, req.Category) {
		return false
	}
	if req.Unit != "" && !sameUnit(r.Unit, req.Unit) {
		return false
	}
	return true
}

func sameUnit(a, b string) bool {
	n := strings.NewReplacer("m3", "m³", "m2", "m²")
	return strings.EqualFold(n.Replace(strings.TrimSpace(a)), n.Replace(strings.TrimSpace(b)))
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
