package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/climatesearch/climatesearch/core"
)

// loadingCore answers every read with the error of a catalog still loading
// into the index, until loaded is set; Ready reports the same.
type loadingCore struct {
	mu     sync.Mutex
	loaded bool
}

var errLoading = &core.Error{Kind: core.KindLoading, Msg: "the search index is still loading after a start (national: 20000 of 30000 resources indexed); retry in a few seconds"}

func (f *loadingCore) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.loaded {
		return nil
	}
	return errLoading
}

func (f *loadingCore) Search(_ context.Context, req core.SearchRequest) (core.SearchResponse, error) {
	if err := f.err(); err != nil {
		return core.SearchResponse{}, err
	}
	return core.SearchResponse{Query: req.Query}, nil
}

func (f *loadingCore) Get(context.Context, string, core.Lang) (core.Resource, error) {
	if err := f.err(); err != nil {
		return core.Resource{}, err
	}
	return core.Resource{ID: "1", Catalog: core.National}, nil
}

func (f *loadingCore) List(context.Context, core.ListRequest) (core.ListResponse, error) {
	if err := f.err(); err != nil {
		return core.ListResponse{}, err
	}
	return core.ListResponse{Resources: []core.Resource{}}, nil
}

func (f *loadingCore) Origin(context.Context, string) (string, error) {
	if err := f.err(); err != nil {
		return "", err
	}
	return "https://example.org/1", nil
}

func (f *loadingCore) Health(context.Context) core.Health { return core.Health{Status: "ok"} }

func (f *loadingCore) Ready(context.Context) core.Readiness {
	if f.err() == nil {
		return core.Readiness{Ready: true}
	}
	return core.Readiness{
		Loading: []core.CatalogLoad{{Catalog: core.National, Indexed: 20000, Total: 30000}},
		Reason:  "loading the search index: national: 20000 of 30000 resources indexed",
	}
}

func (f *loadingCore) Alternatives(context.Context, core.AlternativesRequest) (core.Alternatives, error) {
	if err := f.err(); err != nil {
		return core.Alternatives{}, err
	}
	return core.Alternatives{}, nil
}

func (f *loadingCore) Compare(context.Context, core.CompareRequest) (core.Comparison, error) {
	if err := f.err(); err != nil {
		return core.Comparison{}, err
	}
	return core.Comparison{}, nil
}

func (f *loadingCore) RunUpstream(context.Context, core.CatalogID) (core.IngestResult, error) {
	if err := f.err(); err != nil {
		return core.IngestResult{}, err
	}
	return core.IngestResult{}, nil
}

func (f *loadingCore) ApplyBatch(context.Context, core.ResourceBatch) (core.IngestResult, error) {
	if err := f.err(); err != nil {
		return core.IngestResult{}, err
	}
	return core.IngestResult{}, nil
}

// TestLoadingAnswers503WithRetryAfter: while the index loads, every read
// (and an ingest) answers 503 with Retry-After and the core's message,
// /healthz stays 200 and /readyz says what is loading; once loaded all is 200.
func TestLoadingAnswers503WithRetryAfter(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	f := &loadingCore{}
	api := New(Deps{Search: f, Resources: f, Compare: f, Ingest: f, Log: zap.New(obs)})
	do := func(method, path string) *httptest.ResponseRecorder {
		t.Helper()
		var body *strings.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"catalog":"national","resources":[]}`)
		} else {
			body = strings.NewReader("")
		}
		req := httptest.NewRequest(method, path, body)
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		return w
	}

	reads := []string{"/api/search?q=betong", "/api/resources", "/api/resources/1", "/api/resources/1/origin", "/api/resources/compare?a=1&b=2"}
	for _, path := range reads {
		w := do(http.MethodGet, path)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != RetryLoading {
			t.Errorf("GET %s while loading: %d Retry-After %q, want 503 with Retry-After %s", path, w.Code, w.Header().Get("Retry-After"), RetryLoading)
		}
		var e errorBody
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error != errLoading.Error() {
			t.Errorf("GET %s: body %s, want the core's message", path, w.Body)
		}
	}
	for _, path := range []string{"/admin/ingest/run?catalog=national", "/admin/resources"} {
		if w := do(http.MethodPost, path); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != RetryLoading {
			t.Errorf("POST %s while loading: %d Retry-After %q, want 503 (not the 502 of an unreachable publisher)", path, w.Code, w.Header().Get("Retry-After"))
		}
	}
	if n := logs.FilterMessage("request failed").Len(); n != 0 {
		t.Errorf("a start is not an incident: %d error lines", n)
	}

	if w := do(http.MethodGet, "/healthz"); w.Code != http.StatusOK {
		t.Errorf("/healthz while loading = %d, want 200 (liveness)", w.Code)
	}
	w := do(http.MethodGet, "/readyz")
	var r core.Readiness
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != RetryLoading || r.Ready ||
		len(r.Loading) != 1 || r.Loading[0].Catalog != core.National || !strings.Contains(r.Reason, "20000 of 30000") {
		t.Errorf("/readyz while loading: %d %s", w.Code, w.Body)
	}

	f.mu.Lock()
	f.loaded = true
	f.mu.Unlock()
	w = do(http.MethodGet, "/readyz")
	if w.Code != http.StatusOK || w.Header().Get("Retry-After") != "" || strings.TrimSpace(w.Body.String()) != `{"ready":true}` {
		t.Errorf("/readyz when loaded: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	for _, path := range reads {
		if w := do(http.MethodGet, path); w.Code >= 400 || w.Header().Get("Retry-After") != "" {
			t.Errorf("GET %s when loaded: %d %s", path, w.Code, w.Body)
		}
	}
}
