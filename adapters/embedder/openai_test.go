package embedder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.Embedder = (*OpenAI)(nil)

func TestMain(m *testing.M) {
	backoffBase = time.Millisecond // retries in tests must not wait for the real backoff
	os.Exit(m.Run())
}

// server is a stand-in for an OpenAI-compatible embeddings server. It
// answers every input with 3x its hash vector (not normalised, as some
// servers do), in reverse index order, unless reply overrides the answer.
type server struct {
	t     *testing.T
	mu    sync.Mutex
	calls [][]string   // inputs of every request, in order
	auth  atomic.Value // Authorization of the last request
	reply func(n int, w http.ResponseWriter, req embeddingRequest) bool
	*httptest.Server
}

func newServer(t *testing.T, reply func(n int, w http.ResponseWriter, req embeddingRequest) bool) *server {
	s := &server{t: t, reply: reply}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	s.auth.Store(r.Header.Get("Authorization"))
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		s.t.Errorf("got %s %s, want POST /v1/embeddings", r.Method, r.URL.Path)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		s.t.Errorf("Content-Type %q", ct)
	}
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		s.t.Errorf("body is not JSON: %v", err)
	}
	for k := range raw {
		if !slices.Contains([]string{"model", "input", "dimensions", "encoding_format"}, k) {
			s.t.Errorf("unexpected body field %q", k)
		}
	}
	var req embeddingRequest
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &req)
	if req.Dimensions != 320 || req.EncodingFormat != "float" || req.Model == "" {
		s.t.Errorf("body: dimensions %d, encoding_format %q, model %q", req.Dimensions, req.EncodingFormat, req.Model)
	}
	s.mu.Lock()
	s.calls = append(s.calls, req.Input)
	n := len(s.calls)
	s.mu.Unlock()
	if s.reply != nil && s.reply(n, w, req) {
		return
	}
	answer(w, req.Input, 320)
}

// answer writes an OpenAI embeddings response, data in reverse index order.
func answer(w http.ResponseWriter, inputs []string, dim int) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := []item{}
	for i := len(inputs) - 1; i >= 0; i-- {
		v := make([]float32, dim)
		copy(v, NewHash().Embed(inputs[i]))
		for k := range v {
			v[k] *= 3
		}
		data = append(data, item{Object: "embedding", Index: i, Embedding: v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": "test-model",
		"usage": map[string]int{"prompt_tokens": len(inputs), "total_tokens": len(inputs)},
	})
}

func (s *server) requests() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func mustOpenAI(t *testing.T, cfg OpenAIConfig) *OpenAI {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOpenAIWireFormatAndOrder(t *testing.T) {
	s := newServer(t, nil)
	texts := []string{"glasull", "betong", "spånskiva", "stålbalk"}
	for _, base := range []string{s.URL, s.URL + "/", s.URL + "/v1", s.URL + "/v1/", s.URL + "/v1/embeddings"} {
		o := mustOpenAI(t, OpenAIConfig{BaseURL: base, Model: "intfloat/multilingual-e5-small", APIKey: "sekret"})
		if o.ID() != "openai:intfloat/multilingual-e5-small:320" || o.Dim() != 320 {
			t.Fatalf("ID %q, Dim %d", o.ID(), o.Dim())
		}
		vs, err := o.EmbedDocuments(context.Background(), texts)
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		for i, text := range texts {
			if math.Abs(norm(vs[i])-1) > 1e-5 {
				t.Errorf("vector %d has norm %v: answers must be normalised", i, norm(vs[i]))
			}
			if c := cosine(vs[i], NewHash().Embed(text)); c < 0.9999 {
				t.Errorf("%s: vector %d is not the one of %q (cos %v): data must be ordered by index", base, i, text, c)
			}
		}
		if got := s.auth.Load(); got != "Bearer sekret" {
			t.Errorf("Authorization %q", got)
		}
	}
	if got := s.requests()[0]; !slices.Equal(got, texts) {
		t.Errorf("inputs %q", got)
	}

	noKey := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL})
	if _, err := noKey.EmbedQuery(context.Background(), "glasull"); err != nil {
		t.Fatal(err)
	}
	if got := s.auth.Load(); got != "" {
		t.Errorf("no key configured, yet Authorization %q was sent", got)
	}
}

func TestOpenAIBatches(t *testing.T) {
	s := newServer(t, nil)
	o := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL, BatchSize: 64})
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = fmt.Sprintf("produkt %d", i)
	}
	vs, err := o.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if len(reqs) != 2 || len(reqs[0]) != 64 || len(reqs[1]) != 36 {
		t.Fatalf("want batches of 64 and 36, got %d requests", len(reqs))
	}
	for i, text := range texts {
		if c := cosine(vs[i], NewHash().Embed(text)); c < 0.9999 {
			t.Fatalf("vector %d is not the one of %q", i, text)
		}
	}
	if vs, err := o.EmbedDocuments(context.Background(), nil); err != nil || len(vs) != 0 || len(s.requests()) != 2 {
		t.Errorf("no texts: %d vectors, %v; must not call the server", len(vs), err)
	}
}

func TestOpenAITextsWithoutWordsAreNotSent(t *testing.T) {
	s := newServer(t, nil)
	o := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL, DocumentPrefix: "passage: "})
	vs, err := o.EmbedDocuments(context.Background(), []string{"", "glasull", " - "})
	if err != nil {
		t.Fatal(err)
	}
	if reqs := s.requests(); len(reqs) != 1 || !slices.Equal(reqs[0], []string{"passage: glasull"}) {
		t.Fatalf("requests %q", reqs)
	}
	if len(vs[0]) != 320 || norm(vs[0]) != 0 || norm(vs[2]) != 0 || math.Abs(norm(vs[1])-1) > 1e-5 {
		t.Fatalf("want zero vectors for the empty texts, norms %v %v %v", norm(vs[0]), norm(vs[1]), norm(vs[2]))
	}
}

func TestOpenAIPrefixes(t *testing.T) {
	s := newServer(t, nil)
	o := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL, QueryPrefix: "query: ", DocumentPrefix: "passage: "})
	if _, err := o.EmbedQuery(context.Background(), "glasull"); err != nil {
		t.Fatal(err)
	}
	if _, err := o.EmbedDocuments(context.Background(), []string{"a b", "c"}); err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if !slices.Equal(reqs[0], []string{"query: glasull"}) || !slices.Equal(reqs[1], []string{"passage: a b", "passage: c"}) {
		t.Fatalf("requests %q", reqs)
	}
	plain := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL})
	other := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL, QueryPrefix: "search_query: ", DocumentPrefix: "search_document: "})
	if !strings.HasPrefix(o.ID(), plain.ID()+":p") || o.ID() == other.ID() {
		t.Errorf("prefixes change vectors, so they must change the ID: %q %q %q", plain.ID(), o.ID(), other.ID())
	}
}

func TestOpenAIRetriesServerErrors(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
		if n == 1 {
			http.Error(w, `{"error":{"message":"model is loading"}}`, http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	o := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL})
	if _, err := o.EmbedQuery(context.Background(), "glasull"); err != nil {
		t.Fatalf("a 503 then a success must succeed: %v", err)
	}
	if n := len(s.requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}

	down := newServer(t, func(int, http.ResponseWriter, embeddingRequest) bool { panic(http.ErrAbortHandler) })
	_, err := mustOpenAI(t, OpenAIConfig{BaseURL: down.URL}).EmbedQuery(context.Background(), "glasull")
	if err == nil || core.KindOf(err) != core.KindUnavailable || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Fatalf("network errors: want unavailable after 3 attempts, got %v", err)
	}
	if n := len(down.requests()); n != 3 {
		t.Fatalf("%d requests, want 1 + DefaultRetries", n)
	}
}

func TestOpenAIHonoursRetryAfter(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
			return true
		}
		return false
	})
	o := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL})
	start := time.Now()
	if _, err := o.EmbedQuery(context.Background(), "glasull"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 950*time.Millisecond {
		t.Fatalf("retried after %v, before the server's Retry-After: 1", d)
	}

	// A Retry-After beyond the caller's deadline fails now, not at the deadline.
	s = newServer(t, func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start = time.Now()
	_, err := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL}).EmbedQuery(ctx, "glasull")
	if err == nil || !strings.Contains(err.Error(), "429") || time.Since(start) > time.Second {
		t.Fatalf("want an immediate 429 error, got %v after %v", err, time.Since(start))
	}
}

func TestOpenAIDoesNotRetryClientErrors(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter, _ embeddingRequest) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"The model 'nope' does not exist.","type":"invalid_request_error"}}`))
		return true
	})
	_, err := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL, Model: "nope"}).EmbedQuery(context.Background(), "glasull")
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "The model 'nope' does not exist.") {
		t.Fatalf("want the server's 400 message, got %v", err)
	}
	if core.KindOf(err) != core.KindUnavailable {
		t.Errorf("kind %v, want unavailable", core.KindOf(err))
	}
	if n := len(s.requests()); n != 1 {
		t.Fatalf("a 400 was tried %d times", n)
	}
}

func TestOpenAIRejectsBadAnswers(t *testing.T) {
	cases := map[string]struct {
		body string
		want string
	}{
		"dimension": {"", "embedding server returned 768-dimensional vectors; configure a model that supports dimensions=320"},
		"count":     {`{"data":[{"index":0,"embedding":[1]}]}`, "returned 1 vectors for 2 inputs"},
		"index":     {`{"data":[{"index":0,"embedding":V},{"index":0,"embedding":V}]}`, "index 0"},
		"range":     {`{"data":[{"index":0,"embedding":V},{"index":2,"embedding":V}]}`, "index 2"},
		"zero":      {`{"data":[{"index":0,"embedding":Z},{"index":1,"embedding":Z}]}`, "vector of length 0"},
		"overflow":  {`{"data":[{"index":0,"embedding":[1e999]},{"index":1,"embedding":[1]}]}`, "not an OpenAI embeddings response"},
		"html":      {`<html>proxy</html>`, "not an OpenAI embeddings response"},
	}
	zero := "[" + strings.TrimSuffix(strings.Repeat("0,", 320), ",") + "]"
	unit := "[1" + strings.Repeat(",0", 319) + "]"
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, func(_ int, w http.ResponseWriter, req embeddingRequest) bool {
				if c.body == "" {
					answer(w, req.Input, 768)
					return true
				}
				_, _ = w.Write([]byte(strings.NewReplacer("Z", zero, "V", unit).Replace(c.body)))
				return true
			})
			_, err := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL}).EmbedDocuments(context.Background(), []string{"glasull", "betong"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want %q, got %v", c.want, err)
			}
			if n := len(s.requests()); n != 1 {
				t.Errorf("a bad answer was retried: %d requests", n)
			}
		})
	}
}

func TestOpenAITimeout(t *testing.T) {
	// The server answers only when the test ends: a call returns only
	// through its timeout (without one it would hang and the test time
	// out), with no wall-clock bound to flake on a busy machine.
	release := make(chan struct{})
	s := newServer(t, func(_ int, _ http.ResponseWriter, _ embeddingRequest) bool {
		<-release
		return true
	})
	t.Cleanup(func() { close(release) }) // before the server's Close (cleanups run last first)
	o := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL, Timeout: 50 * time.Millisecond, Retries: 1})
	_, err := o.EmbedQuery(context.Background(), "glasull")
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 50ms") {
		t.Fatalf("want a timeout naming 50ms, got %v", err)
	}
	if !strings.Contains(err.Error(), "gave up after 2 attempts") || len(s.requests()) != 2 {
		t.Errorf("a timeout is retried once with Retries 1: %v, %d requests", err, len(s.requests()))
	}

	none := mustOpenAI(t, OpenAIConfig{BaseURL: s.URL, Timeout: 50 * time.Millisecond, Retries: -1})
	if _, err := none.EmbedQuery(context.Background(), "glasull"); err == nil || strings.Contains(err.Error(), "gave up") {
		t.Errorf("Retries -1 means one attempt: %v", err)
	}
}

func TestOpenAIConfigErrors(t *testing.T) {
	for name, cfg := range map[string]OpenAIConfig{
		"no url":     {Model: "m"},
		"ftp url":    {BaseURL: "ftp://host/v1", Model: "m"},
		"no host":    {BaseURL: "http:///v1", Model: "m"},
		"no model":   {BaseURL: "http://localhost:8000"},
		"dimensions": {BaseURL: "http://localhost:8000", Model: "m", Dimensions: 768},
	} {
		if _, err := NewOpenAI(cfg); core.KindOf(err) != core.KindInvalid {
			t.Errorf("%s: want an invalid-config error, got %v", name, err)
		}
	}
}

func TestNew(t *testing.T) {
	for _, kind := range []string{"", "hash", " HASH "} {
		e, err := New(kind, OpenAIConfig{})
		if err != nil || e == nil || e.ID() != HashID {
			t.Errorf("New(%q) = %v, %v", kind, e, err)
		}
	}
	e, err := New("none", OpenAIConfig{})
	if e != nil || err != nil {
		t.Errorf("New(none) = %v, %v; want nil, nil", e, err)
	}
	e, err = New("openai", OpenAIConfig{BaseURL: "http://localhost:8000/v1", Model: "m", Timeout: time.Second})
	if err != nil || e.ID() != "openai:m:320" {
		t.Errorf("New(openai) = %v, %v", e, err)
	}
	e, err = New("openai", OpenAIConfig{})
	if e != nil || core.KindOf(err) != core.KindInvalid {
		t.Errorf("New(openai) without a URL = %v, %v; want an untyped nil and an invalid error", e, err)
	}
	if _, err := New("bert", OpenAIConfig{}); core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), "hash, openai or none") {
		t.Errorf("unknown kind: %v", err)
	}
}
