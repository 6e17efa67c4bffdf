package reranker

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.Reranker = (*HTTP)(nil)

var docs = []string{"Glasull för isolering", "Betong C30/37", "Mineralull, skiva"}

// stand-in serves reply at path, checking the method, the headers and that
// the body has exactly the fields of the flavor.
func standIn(t *testing.T, path, key string, fields []string, check func(body map[string]any), reply func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != path {
			t.Errorf("got %s %s, want POST %s", r.Method, r.URL.Path, path)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		want := ""
		if key != "" {
			want = "Bearer " + key
		}
		if got := r.Header.Get("Authorization"); got != want {
			t.Errorf("Authorization %q, want %q", got, want)
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("body %s: %v", raw, err)
		}
		var keys []string
		for k := range body {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, fields) {
			t.Errorf("body fields %v, want %v", keys, fields)
		}
		if check != nil {
			check(body)
		}
		w.Header().Set("Content-Type", "application/json")
		reply(w)
	}))
	t.Cleanup(s.Close)
	return s, &calls
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestCohereWireFormat(t *testing.T) {
	check := func(body map[string]any) {
		if body["model"] != "rerank-v3.5" || body["query"] != "glasull" || body["top_n"] != float64(3) || !slices.Equal(strs(body["documents"]), docs) {
			t.Errorf("body %v", body)
		}
	}
	// Best first, as Cohere answers, with the fields it adds.
	reply := func(w http.ResponseWriter) {
		_, _ = io.WriteString(w, `{"id":"x","results":[
			{"index":2,"relevance_score":0.8},
			{"index":0,"relevance_score":0.9,"document":{"text":"Glasull för isolering"}},
			{"index":1,"relevance_score":0.01}],
			"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1}}}`)
	}
	s, _ := standIn(t, "/v2/rerank", "sekret", []string{"documents", "model", "query", "top_n"}, check, reply)
	for _, base := range []string{s.URL + "/v2", s.URL + "/v2/", s.URL + "/v2/rerank"} {
		h, err := NewHTTP(Config{BaseURL: base, Model: "rerank-v3.5", APIKey: "sekret"})
		if err != nil {
			t.Fatal(err)
		}
		if h.ID() != "cohere:rerank-v3.5" {
			t.Errorf("ID %q", h.ID())
		}
		got, err := h.Rerank(context.Background(), "glasull", docs)
		if err != nil || !slices.Equal(got, []float64{0.9, 0.01, 0.8}) {
			t.Fatalf("%s: scores %v, %v; want them in document order", base, got, err)
		}
	}
}

func TestTEIWireFormat(t *testing.T) {
	check := func(body map[string]any) {
		if body["query"] != "glasull" || body["truncate"] != true || !slices.Equal(strs(body["texts"]), docs) {
			t.Errorf("body %v", body)
		}
	}
	reply := func(w http.ResponseWriter) {
		_, _ = io.WriteString(w, `[{"index":1,"score":0.002},{"index":0,"score":0.97},{"index":2,"score":0.5}]`)
	}
	s, _ := standIn(t, "/rerank", "", []string{"query", "texts", "truncate"}, check, reply)
	h, err := NewHTTP(Config{BaseURL: s.URL, Flavor: " TEI "})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.ID(), "tei:127.0.0.1:") {
		t.Errorf("ID %q", h.ID())
	}
	got, err := h.Rerank(context.Background(), "glasull", docs)
	if err != nil || !slices.Equal(got, []float64{0.97, 0.002, 0.5}) {
		t.Fatalf("scores %v, %v", got, err)
	}
}

func TestNoDocumentsNoRequest(t *testing.T) {
	s, calls := standIn(t, "/rerank", "", nil, nil, func(http.ResponseWriter) {})
	h, _ := NewHTTP(Config{BaseURL: s.URL})
	got, err := h.Rerank(context.Background(), "glasull", nil)
	if err != nil || got == nil || len(got) != 0 || calls.Load() != 0 {
		t.Fatalf("%v, %v, %d requests", got, err, calls.Load())
	}
}

func TestErrorStatusesAreSurfacedNotRetried(t *testing.T) {
	for status, body := range map[int]string{
		http.StatusUnauthorized:        `{"message":"invalid api token"}`,
		http.StatusUnprocessableEntity: `{"error":"Input validation error: texts cannot be empty","error_type":"Validation"}`,
		http.StatusServiceUnavailable:  `{"error":{"message":"model overloaded"}}`,
		http.StatusBadGateway:          `<html>bad gateway</html>`,
	} {
		reply := func(w http.ResponseWriter) { w.WriteHeader(status); _, _ = io.WriteString(w, body) }
		s, calls := standIn(t, "/rerank", "", []string{"documents", "model", "query", "top_n"}, nil, reply)
		h, _ := NewHTTP(Config{BaseURL: s.URL, Model: "m"})
		_, err := h.Rerank(context.Background(), "glasull", docs)
		want := map[int]string{401: "invalid api token", 422: "texts cannot be empty", 503: "model overloaded", 502: "bad gateway"}[status]
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), http.StatusText(status)) {
			t.Errorf("%d: want %q in the error, got %v", status, want, err)
		}
		if core.KindOf(err) != core.KindUnavailable {
			t.Errorf("%d: kind %v", status, core.KindOf(err))
		}
		if calls.Load() != 1 {
			t.Errorf("%d: %d requests; reranking is not retried", status, calls.Load())
		}
	}
}

func TestTimeout(t *testing.T) {
	s, _ := standIn(t, "/rerank", "", []string{"query", "texts", "truncate"}, nil, func(http.ResponseWriter) { time.Sleep(300 * time.Millisecond) })
	h, _ := NewHTTP(Config{BaseURL: s.URL, Flavor: "tei", Timeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := h.Rerank(context.Background(), "glasull", docs)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 50ms") {
		t.Fatalf("want a timeout naming 50ms, got %v", err)
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("took %v", d)
	}
	if h, _ := NewHTTP(Config{BaseURL: s.URL}); h.cfg.Timeout != 5*time.Second {
		t.Errorf("default timeout %v", h.cfg.Timeout)
	}
}

func TestBadAnswers(t *testing.T) {
	cases := []struct {
		flavor, body, want string
	}{
		{"cohere", `{"results":[{"index":0,"relevance_score":0.9},{"index":2,"relevance_score":0.1}]}`, "none for document 1"},
		{"tei", `[{"index":0,"score":0.9},{"index":1,"score":0.5}]`, "none for document 2"},
		{"cohere", `{"results":[{"index":0,"relevance_score":0.9},{"index":0,"relevance_score":0.9},{"index":1,"relevance_score":0.1}]}`, "repeated or out-of-range index 0"},
		{"tei", `[{"index":0,"score":0.9},{"index":1,"score":0.5},{"index":3,"score":0.1}]`, "out-of-range index 3"},
		{"tei", `[{"index":0,"score":0.9},{"score":0.5}]`, "without an index"},
		{"cohere", `{"results":[{"index":0,"score":0.9}]}`, "no score for document 0"}, // a TEI answer to the cohere flavor
		{"tei", `{"results":[]}`, "not a tei rerank response"},
		{"cohere", `{"results":[]}`, "returned 0 scores for 3 documents"},
	}
	for _, c := range cases {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, c.body) }))
		defer s.Close()
		h, _ := NewHTTP(Config{BaseURL: s.URL, Flavor: c.flavor})
		_, err := h.Rerank(context.Background(), "glasull", docs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: want %q, got %v", c.flavor, c.body, c.want, err)
		}
	}
}

func TestConfigAndNew(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no url":  {},
		"no host": {BaseURL: "http://"},
		"scheme":  {BaseURL: "localhost:8080"},
		"flavor":  {BaseURL: "http://localhost:8080", Flavor: "voyage"},
	} {
		if _, err := NewHTTP(cfg); core.KindOf(err) != core.KindInvalid {
			t.Errorf("%s: want an invalid-config error, got %v", name, err)
		}
	}
	for _, kind := range []string{"", "none", " NONE "} {
		if r, err := New(kind, Config{}); r != nil || err != nil {
			t.Errorf("New(%q) = %v, %v; want nil, nil", kind, r, err)
		}
	}
	if r, err := New("http", Config{BaseURL: "http://localhost:8080", Model: "BAAI/bge-reranker-v2-m3"}); err != nil || r.ID() != "cohere:BAAI/bge-reranker-v2-m3" {
		t.Errorf("New(http) = %v, %v", r, err)
	}
	if r, err := New("http", Config{}); r != nil || core.KindOf(err) != core.KindInvalid {
		t.Errorf("New(http) without a URL = %v, %v; want an untyped nil and an invalid error", r, err)
	}
	if _, err := New("colbert", Config{}); core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), "none or http") {
		t.Errorf("unknown kind: %v", err)
	}
}
