package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/embedder"
	"github.com/climatesearch/climatesearch/core"
)

// embeddingServer is a stand-in of an OpenAI-compatible /v1/embeddings
// server. Its "model" is the hash embedder, so answers are deterministic.
type embeddingServer struct {
	*httptest.Server
	calls atomic.Int64
	fail  atomic.Bool
	dim   atomic.Int64
	// held, while set, makes every request for more than one text (not a
	// query) wait until it is closed; the texts asked for meanwhile are
	// recorded in heldTexts.
	held      atomic.Pointer[chan struct{}]
	heldMu    sync.Mutex
	heldTexts []string
}

func newEmbeddingServer(t *testing.T) *embeddingServer {
	s := &embeddingServer{}
	s.dim.Store(320)
	h := embedder.NewHash()
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		if s.fail.Load() {
			http.Error(w, `{"error":{"message":"model overloaded"}}`, http.StatusBadRequest)
			return
		}
		var req struct {
			Model      string   `json:"model"`
			Input      []string `json:"input"`
			Dimensions int      `json:"dimensions"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "test-embed" || req.Dimensions != 320 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		if held := s.held.Load(); held != nil {
			s.heldMu.Lock()
			s.heldTexts = append(s.heldTexts, req.Input...)
			s.heldMu.Unlock()
			if len(req.Input) > 1 { // documents; a query passes
				<-*held
			}
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, in := range req.Input {
			v := h.Embed("model " + in)
			if d := int(s.dim.Load()); d != 320 {
				v = make([]float32, d)
				v[0] = 1
			}
			data = append(data, item{Object: "embedding", Index: i, Embedding: v})
		}
		// Answer out of order: clients must order by index.
		sort.Slice(data, func(i, j int) bool { return data[i].Index > data[j].Index })
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(s.Close)
	return s
}

// rerankServer is a stand-in of a Cohere-style /rerank server: documents
// containing the marker word score 0.9, the others less the later they come,
// so the test knows which order to expect.
type rerankServer struct {
	*httptest.Server
	fail atomic.Bool
}

func newRerankServer(t *testing.T, marker string) *rerankServer {
	s := &rerankServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/rerank" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if s.fail.Load() {
			http.Error(w, `{"message":"unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		var req struct {
			Model     string   `json:"model"`
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Query == "" {
			http.Error(w, `{"message":"bad request"}`, http.StatusBadRequest)
			return
		}
		type result struct {
			Index          int     `json:"index"`
			RelevanceScore float64 `json:"relevance_score"`
		}
		var out []result
		for i, d := range req.Documents {
			score := 0.1 / float64(i+1)
			if strings.Contains(d, marker) {
				score = 0.9
			}
			out = append(out, result{Index: i, RelevanceScore: score})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].RelevanceScore > out[j].RelevanceScore })
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "results": out})
	}))
	t.Cleanup(s.Close)
	return s
}

func doSearch(t *testing.T, e *env, query string) core.SearchResponse {
	t.Helper()
	r := e.get("/api/search?" + query)
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", query, r.Status, r.Body)
	}
	var s core.SearchResponse
	r.json(t, &s)
	return s
}

func TestRerankerReordersWithoutChangingRetrieval(t *testing.T) {
	rr := newRerankServer(t, "Bitumen")
	e := newEnv(t, map[string]string{"SERVICE_RERANKER": "http", "SERVICE_RERANKER_URL": rr.URL + "/v1", "SERVICE_RERANKER_MODEL": "test-rerank"})
	e.mustIngest()
	plain := doSearch(t, e, "q="+q("betong")+"&limit=5")
	if len(plain.Results) != 5 || plain.Results[0].Reranked {
		t.Fatalf("REST reranks only on rerank=true: %+v", plain.Results[0])
	}
	rer := doSearch(t, e, "q="+q("betong")+"&limit=5&rerank=true")
	if len(rer.Results) != 5 || len(rer.Notes) != 0 {
		t.Fatalf("reranked: %+v notes %v", rer.Results, rer.Notes)
	}
	retrieval := map[string]core.Hit{}
	for _, h := range plain.Results {
		retrieval[h.ID] = h
	}
	for i, h := range rer.Results {
		if !h.Reranked || h.RerankScore == nil {
			t.Fatalf("hit %d lacks reranked/rerank_score: %+v", i, h)
		}
		if i > 0 && *h.RerankScore > *rer.Results[i-1].RerankScore {
			t.Fatalf("not ordered by rerank_score at %d", i)
		}
		if p, ok := retrieval[h.ID]; ok && (p.Score != h.Score || p.MatchSource != h.MatchSource) {
			t.Fatalf("reranking changed score or match_source of %s: %v/%s vs %v/%s", h.ID, p.Score, p.MatchSource, h.Score, h.MatchSource)
		}
	}
	// The reranker is down: the retrieval order stays, and the answer says so.
	rr.fail.Store(true)
	down := doSearch(t, e, "q="+q("betong")+"&limit=5&rerank=true")
	if len(down.Notes) == 0 || !contains(down.Notes[0], "rerank failed") || down.Results[0].Reranked {
		t.Fatalf("failing reranker: %+v", down)
	}
	for i := range down.Results {
		if down.Results[i].ID != plain.Results[i].ID {
			t.Fatalf("fallback order differs at %d", i)
		}
	}
}

func TestOpenAICompatibleEmbedderAndItsFailures(t *testing.T) {
	emb := newEmbeddingServer(t)
	settings := map[string]string{"SERVICE_EMBEDDER": "openai", "SERVICE_EMBEDDER_URL": emb.URL, "SERVICE_EMBEDDER_MODEL": "test-embed"}
	e := newEnv(t, settings)
	e.mustIngest()
	s := doSearch(t, e, "q="+q("spånskiva")+"&vector=true&explain=true")
	if len(s.Notes) != 0 || s.Results[0].ID != "6000000000" || s.Results[0].MatchSource != core.MatchBoth || s.Results[0].Explain == nil || s.Results[0].Explain.VectorRank == 0 {
		t.Fatalf("hybrid with the openai embedder: %+v notes %v", s.Results[0], s.Notes)
	}
	// Only changed resources are embedded again.
	before := emb.calls.Load()
	e.mustIngest()
	if emb.calls.Load() != before {
		t.Fatalf("an unchanged release re-embedded (%d calls)", emb.calls.Load()-before)
	}
	// A failing embedder: full-text results and a note, never a 500.
	emb.fail.Store(true)
	s = doSearch(t, e, "q="+q("spånskiva")+"&vector=true")
	if len(s.Results) == 0 || s.Results[0].ID != "6000000000" || len(s.Notes) == 0 || !contains(s.Notes[0], "embedder failed") || s.Results[0].MatchSource != core.MatchFTS {
		t.Fatalf("failing embedder: %+v", s)
	}
	emb.fail.Store(false)
	// Vectors survive a restart without re-embedding.
	before = emb.calls.Load()
	e.restart()
	s = doSearch(t, e, "q="+q("spånskiva")+"&vector=true")
	if s.Results[0].MatchSource != core.MatchBoth {
		t.Fatalf("after restart: %+v %v", s.Results[0], s.Notes)
	}
	if got := emb.calls.Load() - before; got != 1 {
		t.Fatalf("after restart only the query is embedded, got %d calls", got)
	}
	// Switching the embedder re-embeds everything with the new model.
	e.settings["SERVICE_EMBEDDER"] = "hash"
	e.restart()
	deadline := 200
	for ; deadline > 0; deadline-- {
		s = doSearch(t, e, "q="+q("spånskiva")+"&vector=true")
		if len(s.Notes) == 0 {
			break
		}
	}
	if s.Results[0].MatchSource != core.MatchBoth {
		t.Fatalf("after switching to hash: %+v %v", s.Results[0], s.Notes)
	}
}

func TestWrongDimensionEmbeddingServerIsRefused(t *testing.T) {
	emb := newEmbeddingServer(t)
	emb.dim.Store(768)
	e := newEnv(t, map[string]string{"SERVICE_EMBEDDER": "openai", "SERVICE_EMBEDDER_URL": emb.URL, "SERVICE_EMBEDDER_MODEL": "test-embed"})
	e.mustIngest() // the ingest succeeds; resources are found by full text
	s := doSearch(t, e, "q="+q("spånskiva")+"&vector=true")
	if s.Results[0].ID != "6000000000" || len(s.Notes) == 0 {
		t.Fatalf("wrong dimension: %+v %v", s.Results[0], s.Notes)
	}
}

func TestSearchPagingFiltersAndExplain(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	all := doSearch(t, e, "q=betong&limit=20")
	page := doSearch(t, e, "q=betong&limit=5&offset=5")
	if len(page.Results) != 5 {
		t.Fatalf("page: %d", len(page.Results))
	}
	for i := range page.Results {
		if page.Results[i].ID != all.Results[5+i].ID {
			t.Fatalf("offset 5 differs at %d", i)
		}
	}
	cat := doSearch(t, e, "q=skiva&category=Isolering&limit=50")
	if len(cat.Results) == 0 {
		t.Fatal("category filter found nothing")
	}
	for _, h := range cat.Results {
		if h.Category != "Isolering" {
			t.Fatalf("category filter leaked %s (%s)", h.ID, h.Category)
		}
	}
	unit := doSearch(t, e, "q=solcell&unit=m2")
	if len(unit.Results) == 0 {
		t.Fatal("unit filter found nothing")
	}
	for _, h := range unit.Results {
		if h.Unit != "m²" && h.Unit != "m2" {
			t.Fatalf("unit filter leaked %s (%s)", h.ID, h.Unit)
		}
	}
	ex := doSearch(t, e, "q=betong&explain=true&vector=true&limit=3")
	for _, h := range ex.Results {
		if h.Explain == nil || h.Explain.Fused != h.Score || (h.Explain.FTSRank == 0 && h.Explain.VectorRank == 0) {
			t.Fatalf("explain: %+v", h.Explain)
		}
	}
}

// TestSmallIngestDoesNotWaitForBackgroundVectors: while the vectors of a
// large ingest are being built (the embedder holds document requests), a
// one-resource batch answers without asking the embedder (it joins the
// background queue instead of waiting behind it), hybrid search notes how
// many resources still wait for vectors, and once the embedder answers
// again the small batch's vector lands, after the large ingest's.
func TestSmallIngestDoesNotWaitForBackgroundVectors(t *testing.T) {
	emb := newEmbeddingServer(t)
	e := newEnv(t, map[string]string{"SERVICE_EMBEDDER": "openai", "SERVICE_EMBEDDER_URL": emb.URL, "SERVICE_EMBEDDER_MODEL": "test-embed"})
	e.mustIngest() // the national catalog, with its vectors
	held := make(chan struct{})
	emb.held.Store(&held)
	released := false
	release := func() {
		if !released {
			released = true
			emb.held.Store(nil)
			close(held)
		}
	}
	t.Cleanup(release)

	var large strings.Builder
	large.WriteString(`{"catalog":"dkbr","version":"V","resources":[`)
	for i := range 2500 {
		if i > 0 {
			large.WriteByte(',')
		}
		fmt.Fprintf(&large, `{"id":"#L%04d","name":"Lerblok nummer %d","unit":"kg","a1a3":1}`, i, i)
	}
	large.WriteString(`]}`)
	if r := e.do(http.MethodPost, "/admin/resources", []byte(large.String()), nil); r.Status != http.StatusOK {
		t.Fatalf("large batch: %d %s", r.Status, r.Body)
	}
	small := `{"catalog":"dkbr","version":"V","resources":[{"id":"#Z1","name":"Zeolitblok","unit":"kg","a1a3":2}]}`
	if r := e.do(http.MethodPost, "/admin/resources", []byte(small), nil); r.Status != http.StatusOK {
		t.Fatalf("small batch: %d %s", r.Status, r.Body)
	}
	emb.heldMu.Lock()
	asked := slices.ContainsFunc(emb.heldTexts, func(text string) bool { return strings.Contains(text, "Zeolitblok") })
	emb.heldMu.Unlock()
	if asked {
		t.Fatalf("the small batch asked the embedder while the large one's vectors were being built")
	}
	// Meanwhile hybrid search says how far the vectors are behind.
	s := doSearch(t, e, "databases=dkbr&q=zeolitblok&vector=true")
	if len(s.Results) == 0 || s.Results[0].ID != "#Z1" || len(s.Notes) != 1 || !contains(s.Notes[0], "vectors are still being computed for 2501 resources") {
		t.Fatalf("hybrid search while vectors catch up: %+v %v", s.Results, s.Notes)
	}
	release()
	for tries := 0; ; tries++ {
		s := doSearch(t, e, "databases=dkbr&q=zeolitblok&vector=true&explain=true")
		if len(s.Results) > 0 && s.Results[0].ID == "#Z1" && s.Results[0].Explain != nil && s.Results[0].Explain.VectorRank > 0 && len(s.Notes) == 0 {
			break
		}
		if tries == 600 {
			t.Fatalf("the small batch's vector never landed: %+v %v", s.Results, s.Notes)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
