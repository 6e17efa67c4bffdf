package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
)

// versionedCore answers a lookup with a description naming the current
// version (a write changes it) and counts the lookups it computed; onGet,
// when set, runs inside the lookup (a write landing meanwhile).
type versionedCore struct {
	loadingCore
	version atomic.Int64
	gets    atomic.Int64
	onGet   func()
}

func (f *versionedCore) Get(context.Context, string, core.Lang) (core.Resource, error) {
	f.gets.Add(1)
	if f.onGet != nil {
		f.onGet()
	}
	desc := "version " + strconv.FormatInt(f.version.Load(), 10) + " " + strings.Repeat("spånskiva ", 200)
	return core.Resource{ID: "6000000000", Catalog: core.National, Name: "Spånskiva", Description: desc}, nil
}

func versionedAPI(t *testing.T) (*API, *versionedCore, *fakeStamp) {
	t.Helper()
	st := &fakeStamp{}
	st.write(time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC))
	f := &versionedCore{}
	f.loaded = true
	api := New(Deps{Search: f, Resources: f, Compare: f, Ingest: f, Log: zap.NewNop(), Generations: st})
	api.Validators(st, "seed", false)
	return api, f, st
}

func serve(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

const lookupPath = "/api/resources/national:6000000000"

// TestKeptAnswerValidators: a kept answer, served with the headers kept
// with it, carries the ETag and Last-Modified its computation had, answers
// 304 to them (If-None-Match and If-Modified-Since), says Vary and its
// Content-Length plain and gzipped; after a write the old tag gets the new
// answer under a new tag, and HEAD has the GET's headers.
func TestKeptAnswerValidators(t *testing.T) {
	api, f, st := versionedAPI(t)
	first := serve(api, http.MethodGet, lookupPath)
	tag, mod := first.Header().Get("ETag"), first.Header().Get("Last-Modified")
	if first.Code != http.StatusOK || !strings.HasPrefix(tag, `W/"`) || mod != "Tue, 24 Nov 2026 05:00:00 GMT" {
		t.Fatalf("computed answer: %d ETag %q Last-Modified %q", first.Code, tag, mod)
	}
	stamps := st.stamps.Load()
	kept := serve(api, http.MethodGet, lookupPath)
	if f.gets.Load() != 1 {
		t.Fatalf("the second GET computed the answer again (%d lookups)", f.gets.Load())
	}
	if st.stamps.Load() != stamps {
		t.Errorf("the kept answer's validators were computed again (the stamp read %d times), not kept with it", st.stamps.Load()-stamps)
	}
	for _, h := range []string{"ETag", "Last-Modified", "Cache-Control", "Content-Type", "Vary"} {
		if kept.Header().Get(h) != first.Header().Get(h) || kept.Header().Get(h) == "" {
			t.Errorf("kept answer's %s %q, the computed one had %q", h, kept.Header().Get(h), first.Header().Get(h))
		}
	}
	if !bytes.Equal(kept.Body.Bytes(), first.Body.Bytes()) || kept.Header().Get("Content-Length") != strconv.Itoa(first.Body.Len()) {
		t.Errorf("kept answer: %d bytes, Content-Length %q; computed %d bytes", kept.Body.Len(), kept.Header().Get("Content-Length"), first.Body.Len())
	}
	if id := kept.Header().Get(RequestIDHeader); !generatedID.MatchString(id) || id == first.Header().Get(RequestIDHeader) {
		t.Errorf("kept answer's request id %q (the first one's %q)", id, first.Header().Get(RequestIDHeader))
	}

	for _, cond := range [][]string{{"If-None-Match", tag}, {"If-None-Match", `"other", ` + strings.TrimPrefix(tag, "W/")}, {"If-Modified-Since", mod}} {
		w := serve(api, http.MethodGet, lookupPath, cond...)
		if w.Code != http.StatusNotModified || w.Body.Len() != 0 || w.Header().Get("ETag") != tag || w.Header().Get("Last-Modified") != mod ||
			w.Header().Get("Cache-Control") != "public, no-cache" || !varies(w.Header(), "Accept-Encoding") {
			t.Errorf("%s %s: %d, %d bytes, headers %v", cond[0], cond[1], w.Code, w.Body.Len(), w.Header())
		}
	}
	if w := serve(api, http.MethodGet, lookupPath, "If-None-Match", `W/"other"`); w.Code != http.StatusOK || w.Body.Len() == 0 {
		t.Errorf("another tag: %d, %d bytes", w.Code, w.Body.Len())
	}
	if w := serve(api, http.MethodGet, lookupPath, "If-Modified-Since", "Mon, 23 Nov 2026 05:00:00 GMT"); w.Code != http.StatusOK {
		t.Errorf("If-Modified-Since before the last write: %d", w.Code)
	}

	z := serve(api, http.MethodGet, lookupPath, "Accept-Encoding", "gzip")
	if z.Code != http.StatusOK || z.Header().Get("Content-Encoding") != "gzip" || z.Header().Get("ETag") != tag ||
		z.Header().Get("Content-Length") != strconv.Itoa(z.Body.Len()) || !varies(z.Header(), "Accept-Encoding") {
		t.Fatalf("gzipped kept answer: %d %v", z.Code, z.Header())
	}
	zr, err := gzip.NewReader(z.Body)
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, first.Body.Bytes()) {
		t.Errorf("the gzipped kept answer is not the answer")
	}
	if w := serve(api, http.MethodGet, lookupPath, "If-None-Match", tag, "Accept-Encoding", "gzip"); w.Code != http.StatusNotModified {
		t.Errorf("If-None-Match with gzip: %d", w.Code)
	}

	for _, ae := range []string{"", "gzip"} {
		get := serve(api, http.MethodGet, lookupPath, "Accept-Encoding", ae)
		head := serve(api, http.MethodHead, lookupPath, "Accept-Encoding", ae)
		if head.Code != http.StatusOK || head.Body.Len() != 0 {
			t.Errorf("HEAD (%q): %d, %d bytes", ae, head.Code, head.Body.Len())
		}
		for _, h := range []string{"ETag", "Last-Modified", "Content-Length", "Content-Encoding", "Content-Type", "Vary", "Cache-Control"} {
			if head.Header().Get(h) != get.Header().Get(h) {
				t.Errorf("HEAD (%q) %s %q, GET %q", ae, h, head.Header().Get(h), get.Header().Get(h))
			}
		}
	}

	// A write: the old tag gets the new answer, under a new tag.
	f.version.Store(1)
	st.write(time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC))
	for round := range 2 { // computed, then kept
		w := serve(api, http.MethodGet, lookupPath, "If-None-Match", tag)
		if w.Code != http.StatusOK || w.Header().Get("ETag") == tag || !strings.HasPrefix(w.Header().Get("ETag"), `W/"`) ||
			w.Header().Get("Last-Modified") != "Tue, 24 Nov 2026 06:00:00 GMT" || !strings.Contains(w.Body.String(), "version 1") {
			t.Errorf("after a write, round %d: %d ETag %q (old %q) Last-Modified %q", round, w.Code, w.Header().Get("ETag"), tag, w.Header().Get("Last-Modified"))
		}
		if nm := serve(api, http.MethodGet, lookupPath, "If-None-Match", w.Header().Get("ETag")); nm.Code != http.StatusNotModified {
			t.Errorf("after a write, round %d: the new tag: %d", round, nm.Code)
		}
	}
	if f.gets.Load() != 2 {
		t.Errorf("%d lookups computed, want 2 (one per generation)", f.gets.Load())
	}
}

// TestKeptAnswerWriteDuringComputation: an answer computed while a write
// became visible is sent without validators and not kept; the next
// request computes and keeps it with the newer data's tag.
func TestKeptAnswerWriteDuringComputation(t *testing.T) {
	api, f, st := versionedAPI(t)
	f.onGet = func() { st.write(time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)) }
	w := serve(api, http.MethodGet, lookupPath)
	if w.Code != http.StatusOK || w.Header().Get("ETag") != "" || w.Header().Get("Last-Modified") != "" {
		t.Fatalf("answer computed across a write: %d ETag %q Last-Modified %q", w.Code, w.Header().Get("ETag"), w.Header().Get("Last-Modified"))
	}
	f.onGet = nil
	a, b := serve(api, http.MethodGet, lookupPath), serve(api, http.MethodGet, lookupPath)
	if f.gets.Load() != 2 {
		t.Errorf("%d lookups computed, want 2 (the first answer was not kept)", f.gets.Load())
	}
	if a.Header().Get("ETag") == "" || b.Header().Get("ETag") != a.Header().Get("ETag") || b.Header().Get("Last-Modified") != "Tue, 24 Nov 2026 06:00:00 GMT" {
		t.Errorf("then: ETag %q and kept %q, Last-Modified %q", a.Header().Get("ETag"), b.Header().Get("ETag"), b.Header().Get("Last-Modified"))
	}
}

// TestKeptAnswerWithCORS: the Vary a kept answer says joins the Origin
// that the CORS policy put first, and the shared header values are not
// written into.
func TestKeptAnswerWithCORS(t *testing.T) {
	api, _, _ := versionedAPI(t)
	h := NewCORS([]string{"https://app.example.com"}).Wrap(api)
	serve(h, http.MethodGet, lookupPath)
	for range 2 {
		w := serve(h, http.MethodGet, lookupPath, "Origin", "https://app.example.com")
		if w.Code != http.StatusOK || !varies(w.Header(), "Origin") || !varies(w.Header(), "Accept-Encoding") ||
			w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" {
			t.Errorf("kept answer through CORS: %d %v", w.Code, w.Header())
		}
	}
	if len(varyAcceptEncoding) != 1 || varyAcceptEncoding[0] != "Accept-Encoding" || len(publicNoCache) != 1 || publicNoCache[0] != "public, no-cache" {
		t.Errorf("a shared header value was written into: %q %q", varyAcceptEncoding, publicNoCache)
	}
}
