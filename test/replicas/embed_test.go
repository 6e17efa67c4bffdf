package replicas

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/embedder"
	"github.com/climatesearch/climatesearch/core"
)

// embeddings is a stand-in of an OpenAI-compatible /v1/embeddings server
// (its model the offline hash embedder) that counts the texts it embeds.
type embeddings struct {
	*httptest.Server
	mu    sync.Mutex
	texts map[string]int
}

func newEmbeddings(t *testing.T) *embeddings {
	e := &embeddings{texts: map[string]int{}}
	h := embedder.NewHash()
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model      string   `json:"model"`
			Input      []string `json:"input"`
			Dimensions int      `json:"dimensions"`
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil ||
			req.Model != "test-embed" || req.Dimensions != 320 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]item, len(req.Input))
		e.mu.Lock()
		for i, in := range req.Input {
			e.texts[in]++
			data[i] = item{Object: "embedding", Index: i, Embedding: h.Embed(in)}
		}
		e.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(e.Close)
	return e
}

// embedded counts the texts containing marker the server was asked for,
// and the most times one of them was.
func (e *embeddings) embedded(marker string) (texts, most int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for text, n := range e.texts {
		if strings.Contains(text, marker) {
			texts += n
			most = max(most, n)
		}
	}
	return texts, most
}

// TestReplicasEmbedAChangeOnce: with a remote embedder, a batch written
// through one replica is embedded once, by that replica; the others take
// its vectors from the database, and each finds the batch by vector.
func TestReplicasEmbedAChangeOnce(t *testing.T) {
	emb := newEmbeddings(t)
	c := newCluster(t, map[string]string{
		"SERVICE_EMBEDDER":       "openai",
		"SERVICE_EMBEDDER_URL":   emb.URL + "/v1",
		"SERVICE_EMBEDDER_MODEL": "test-embed",
	}, nil)
	a := c.reps[0]
	const n = 150
	var items []map[string]any
	for i := range n {
		items = append(items, map[string]any{"id": fmt.Sprintf("#R%03d", i), "name": fmt.Sprintf("Kalksandsten replika %d", i),
			"unit": "kg", "a1a3": float64(i)})
	}
	if r := a.postJSON(t, "/admin/resources", map[string]any{"catalog": "dkbr", "version": "R1", "resources": items}); r.status != http.StatusOK {
		t.Fatalf("batch on A: %d %.300s", r.status, r.body)
	}
	for _, r := range c.reps {
		took := eventually(t, "the batch's vectors on "+r.name, func() bool {
			a := r.get(t, "/api/search?vector=true&databases=dkbr&limit=5&q="+url.QueryEscape("kalksandsten replika"))
			if a.status != http.StatusOK {
				return false
			}
			var res core.SearchResponse
			a.decode(t, &res)
			for _, note := range res.Notes {
				if strings.HasPrefix(note, "vectors are still") || strings.HasPrefix(note, "vector search unavailable") {
					return false
				}
			}
			return len(res.Results) > 0
		})
		t.Logf("the batch's vectors on %s after %s", r.name, took)
	}
	texts, most := emb.embedded("Kalksandsten replika ") // the documents, not the query
	if texts != n || most != 1 {
		t.Fatalf("the embedder was asked for %d texts of the batch (one of them %d times), want each of the %d once", texts, most, n)
	}
}
