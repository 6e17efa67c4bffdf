package reranker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
)

// Wire formats of the /rerank API.
const (
	// FlavorCohere sends {"model","query","documents","top_n"} and reads
	// {"results":[{"index","relevance_score"}]}: Cohere, Jina, vLLM.
	FlavorCohere = "cohere"
	// FlavorTEI sends {"query","texts","truncate":true} and reads
	// [{"index","score"}]: Text Embeddings Inference.
	FlavorTEI = "tei"
)

// DefaultTimeout bounds a rerank request when Config.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// maxBodyBytes caps an answer; Jina echoes the documents, still small.
const maxBodyBytes = 8 << 20

// Config tells the HTTP reranker where the server is.
type Config struct {
	// BaseURL is everything before /rerank: http://localhost:8080 for TEI,
	// https://api.cohere.com/v2 for Cohere, https://api.jina.ai/v1 for Jina,
	// http://localhost:8000 (or .../v1) for vLLM. A URL that already ends in
	// /rerank is used as it is.
	BaseURL string
	// Model is sent as "model" by the cohere flavor (omitted when empty;
	// Cohere and Jina require it). TEI serves one model and gets none.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// Flavor is the wire format: FlavorCohere (the default when empty) or
	// FlavorTEI.
	Flavor string
	// Timeout bounds each request; 0 means DefaultTimeout.
	Timeout time.Duration
	// HTTPClient is used for every request; nil means http.DefaultClient
	// (which drops Authorization on a redirect to another host).
	HTTPClient *http.Client
}

// HTTP reranks with a server speaking a /rerank API. Safe for concurrent use.
type HTTP struct {
	cfg    Config
	url    string
	id     string
	client *http.Client
}

// NewHTTP validates cfg and returns the reranker. It does not contact the
// server.
func NewHTTP(cfg Config) (*HTTP, error) {
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	cfg.Model = strings.TrimSpace(cfg.Model)
	cfg.Flavor = strings.ToLower(strings.TrimSpace(cfg.Flavor))
	u, err := url.Parse(cfg.BaseURL)
	if cfg.BaseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, core.Invalidf("http reranker: base URL %q is not an http(s) URL such as http://localhost:8080", cfg.BaseURL)
	}
	switch cfg.Flavor {
	case "":
		cfg.Flavor = FlavorCohere
	case FlavorCohere, FlavorTEI:
	default:
		return nil, core.Invalidf("unknown reranker flavor %q: use cohere (Cohere, Jina, vLLM) or tei", cfg.Flavor)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	h := &HTTP{cfg: cfg, client: cfg.HTTPClient}
	if h.client == nil {
		h.client = http.DefaultClient
	}
	h.url = strings.TrimRight(cfg.BaseURL, "/")
	if !strings.HasSuffix(h.url, "/rerank") {
		h.url += "/rerank"
	}
	h.id = cfg.Flavor + ":" + cfg.Model
	if cfg.Model == "" {
		h.id = cfg.Flavor + ":" + u.Host
	}
	return h, nil
}

// ID implements ports.Reranker: "<flavor>:<model>", or "<flavor>:<host>"
// when no model is configured.
func (h *HTTP) ID() string { return h.id }

type cohereRequest struct {
	Model     string   `json:"model,omitempty"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	TopN      int      `json:"top_n"`
}

type teiRequest struct {
	Query string   `json:"query"`
	Texts []string `json:"texts"`
	// Truncate cuts long texts to the model's window instead of failing
	// the whole request.
	Truncate bool `json:"truncate"`
}

type scored struct {
	Index *int     `json:"index"`
	Score *float64 `json:"score"`           // tei
	Rel   *float64 `json:"relevance_score"` // cohere
}

// Rerank implements ports.Reranker. No documents means no request.
func (h *HTTP) Rerank(ctx context.Context, query string, documents []string) ([]float64, error) {
	if len(documents) == 0 {
		return []float64{}, nil
	}
	scores, err := h.rerank(ctx, query, documents)
	if err != nil {
		return nil, core.Unavailablef(err, "reranker %s", h.id)
	}
	return scores, nil
}

func (h *HTTP) rerank(ctx context.Context, query string, documents []string) ([]float64, error) {
	var payload any = cohereRequest{Model: h.cfg.Model, Query: query, Documents: documents, TopN: len(documents)}
	if h.cfg.Flavor == FlavorTEI {
		payload = teiRequest{Query: query, Texts: documents, Truncate: true}
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", h.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if h.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		var ue *url.Error // it repeats the method and URL
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("POST %s: %w", h.url, h.cause(ctx, rctx, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("POST %s: HTTP %s%s", h.url, resp.Status, serverMessage(snippet))
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("POST %s: reading the answer: %w", h.url, h.cause(ctx, rctx, err))
	}
	if len(raw) > maxBodyBytes {
		return nil, fmt.Errorf("POST %s: answer exceeds %d bytes", h.url, maxBodyBytes)
	}
	var results []scored
	if h.cfg.Flavor == FlavorTEI {
		err = json.Unmarshal(raw, &results)
	} else {
		var r struct {
			Results []scored `json:"results"`
		}
		err = json.Unmarshal(raw, &r)
		results = r.Results
	}
	if err != nil {
		return nil, fmt.Errorf("POST %s: answer is not a %s rerank response: %w", h.url, h.cfg.Flavor, err)
	}
	return h.scores(results, len(documents))
}

// scores puts the results in document order; every document needs exactly
// one finite score.
func (h *HTTP) scores(results []scored, n int) ([]float64, error) {
	out := make([]float64, n)
	seen := make([]bool, n)
	for _, r := range results {
		s := r.Rel
		if h.cfg.Flavor == FlavorTEI {
			s = r.Score
		}
		switch {
		case r.Index == nil:
			return nil, errors.New("reranker returned a result without an index")
		case *r.Index < 0 || *r.Index >= n || seen[*r.Index]:
			return nil, fmt.Errorf("reranker returned a repeated or out-of-range index %d for %d documents", *r.Index, n)
		case s == nil:
			return nil, fmt.Errorf("reranker returned no score for document %d", *r.Index)
		case math.IsNaN(*s) || math.IsInf(*s, 0):
			return nil, fmt.Errorf("reranker returned a non-finite score for document %d", *r.Index)
		}
		out[*r.Index], seen[*r.Index] = *s, true
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("reranker returned %d scores for %d documents: none for document %d", len(results), n, i)
		}
	}
	return out, nil
}

// cause names a request's own timeout as such; a cancellation by the caller
// is passed on unchanged.
func (h *HTTP) cause(parent, rctx context.Context, err error) error {
	if parent.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %s: %w", h.cfg.Timeout, context.DeadlineExceeded)
	}
	return err
}

// serverMessage extracts the reason from an error body: Cohere and Jina
// answer {"message":...} or {"detail":...}, TEI {"error":"..."}, OpenAI-style
// servers {"error":{"message":...}}; anything else is quoted as it came.
func serverMessage(b []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(b, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			msg = s
		case e.Message != "":
			msg = e.Message
		case json.Unmarshal(e.Detail, &s) == nil && s != "":
			msg = s
		}
	}
	if msg == "" {
		msg = string(b)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if msg == "" || !utf8.ValidString(msg) {
		return ""
	}
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "..."
	}
	return ": " + msg
}
