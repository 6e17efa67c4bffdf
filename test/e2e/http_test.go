package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/config"
)

// raw sends a request as a client that does not decompress by itself, so
// the test sees the encoding on the wire. header is name, value pairs.
func (e *env) raw(method, path string, header ...string) (*http.Response, []byte) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{
		Transport:     &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("bad gzip: %v", err)
	}
	return out
}

func varies(h http.Header, field string) bool {
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), field) {
				return true
			}
		}
	}
	return false
}

func batchDK(t *testing.T, e *env, name string, a1a3 float64) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"catalog": "dkbr", "version": "T", "resources": []map[string]any{
		{"id": "#H1", "name": name, "unit": "kg", "a1a3": a1a3},
		{"id": "#H2", "name": "Kalksten referenceblok", "unit": "kg", "a1a3": 1},
	}})
	if r := e.do(http.MethodPost, "/admin/resources", body, nil); r.Status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
}

// TestHeadAnswersEveryGetRoute: HEAD gives the status and headers of the
// GET (Content-Length and Content-Encoding included) and no body, on the
// API, the documents, the probes and the console; the MCP event streams are
// not opened by a HEAD.
func TestHeadAnswersEveryGetRoute(t *testing.T) {
	e := newEnv(t, nil)
	batchDK(t, e, "Kalksten blok", 2)
	for _, p := range []string{
		"/healthz", "/readyz", "/openapi.yaml", "/docs", "/docs/index.html",
		"/api/catalogs", "/api/resources?databases=dkbr", "/api/resources/" + url.PathEscape("dkbr:#H1"),
		"/api/search?q=kalksten&databases=dkbr", "/api/resources/" + url.PathEscape("dkbr:#nope"),
		"/", "/connect", "/data",
	} {
		for _, ae := range []string{"", "gzip"} {
			get, gb := e.raw(http.MethodGet, p, "Accept-Encoding", ae)
			head, hb := e.raw(http.MethodHead, p, "Accept-Encoding", ae)
			if head.StatusCode != get.StatusCode || len(hb) != 0 {
				t.Errorf("HEAD %s (%q): %d with %d body bytes; GET: %d", p, ae, head.StatusCode, len(hb), get.StatusCode)
			}
			for _, h := range []string{"Content-Type", "Content-Encoding", "Cache-Control", "ETag"} {
				if head.Header.Get(h) != get.Header.Get(h) {
					t.Errorf("HEAD %s (%q): %s %q, GET has %q", p, ae, h, head.Header.Get(h), get.Header.Get(h))
				}
			}
			if head.ContentLength != int64(len(gb)) {
				t.Errorf("HEAD %s (%q): Content-Length %d, the GET's body has %d bytes", p, ae, head.ContentLength, len(gb))
			}
		}
	}
	// /healthz used to answer 405 to HEAD.
	if r, _ := e.raw(http.MethodHead, "/healthz"); r.StatusCode != http.StatusOK {
		t.Errorf("HEAD /healthz: %d", r.StatusCode)
	}
	for _, p := range []string{"/mcp/sse", "/mcp"} {
		r, b := e.raw(http.MethodHead, p)
		if r.StatusCode != http.StatusMethodNotAllowed || len(b) != 0 || strings.Contains(r.Header.Get("Content-Type"), "event-stream") {
			t.Errorf("HEAD %s: %d %q %d bytes; want 405 without opening the stream", p, r.StatusCode, r.Header.Get("Content-Type"), len(b))
		}
	}
	// A HEAD of the backup would take a whole backup to throw it away.
	if r, _ := e.raw(http.MethodHead, "/admin/backup"); r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Content-Disposition") != "" {
		t.Errorf("HEAD /admin/backup: %d %q; want 405 without a backup", r.StatusCode, r.Header.Get("Content-Disposition"))
	}
}

// TestGzip: large text answers are gzipped when the client takes gzip,
// the same bytes once decompressed, with Vary: Accept-Encoding; a kept
// answer is served compressed too; small answers and clients without gzip
// get the plain body.
func TestGzip(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	for _, p := range []string{"/api/resources", "/openapi.yaml", "/docs/swagger-ui-bundle.js", "/"} {
		plain, pb := e.raw(http.MethodGet, p)
		if plain.StatusCode != http.StatusOK || plain.Header.Get("Content-Encoding") != "" {
			t.Fatalf("GET %s without Accept-Encoding: %d %q", p, plain.StatusCode, plain.Header.Get("Content-Encoding"))
		}
		if !varies(plain.Header, "Accept-Encoding") {
			t.Errorf("GET %s: no Vary: Accept-Encoding on the plain answer (%q)", p, plain.Header.Values("Vary"))
		}
		for round := range 3 { // the later rounds are kept answers
			zr, zb := e.raw(http.MethodGet, p, "Accept-Encoding", "br;q=1, gzip;q=0.8")
			if zr.StatusCode != http.StatusOK || zr.Header.Get("Content-Encoding") != "gzip" || !varies(zr.Header, "Accept-Encoding") {
				t.Fatalf("GET %s round %d with gzip: %d %q vary %q", p, round, zr.StatusCode, zr.Header.Get("Content-Encoding"), zr.Header.Values("Vary"))
			}
			if zr.ContentLength >= 0 && zr.ContentLength != int64(len(zb)) {
				t.Errorf("GET %s round %d: Content-Length %d, body %d", p, round, zr.ContentLength, len(zb))
			}
			if !bytes.Equal(gunzip(t, zb), pb) {
				t.Errorf("GET %s round %d: the gzipped answer is not the plain one", p, round)
			}
			if round == 0 {
				t.Logf("%s: %d bytes, %d gzipped (%.0f %%)", p, len(pb), len(zb), 100*float64(len(zb))/float64(len(pb)))
				if len(zb)*2 > len(pb) {
					t.Errorf("GET %s: gzip saved too little: %d -> %d", p, len(pb), len(zb))
				}
			}
		}
		if r, _ := e.raw(http.MethodGet, p, "Accept-Encoding", "gzip;q=0, identity"); r.Header.Get("Content-Encoding") != "" {
			t.Errorf("GET %s with gzip;q=0: %q", p, r.Header.Get("Content-Encoding"))
		}
	}
	if r, _ := e.raw(http.MethodGet, "/healthz", "Accept-Encoding", "gzip"); r.Header.Get("Content-Encoding") != "" {
		t.Errorf("/healthz (a few bytes) was compressed")
	}
	// The standard client (transparent gzip) reads the same answers.
	if r := e.get("/api/resources?databases=national"); r.Status != http.StatusOK {
		t.Errorf("GET /api/resources through the decompressing client: %d", r.Status)
	}
}

// TestETagAcrossIngest: the /api reads carry a weak ETag derived from the
// stored data; a matching If-None-Match gets 304 without a body until a
// write changes a catalog, and after a restart over the same data the tag
// is the same. Vector searches and failures carry none.
func TestETagAcrossIngest(t *testing.T) {
	e := newEnv(t, nil)
	batchDK(t, e, "Kalksten blok", 2)
	paths := []string{
		"/api/resources/" + url.PathEscape("dkbr:#H1"),
		"/api/resources?databases=dkbr",
		"/api/search?q=kalksten&databases=dkbr",
		"/api/resources/compare?a=" + q("dkbr:#H1") + "&b=" + q("dkbr:#H2") + "&unit=kg",
	}
	tags := map[string]string{}
	for _, p := range paths {
		r, _ := e.raw(http.MethodGet, p)
		tag := r.Header.Get("ETag")
		if r.StatusCode != http.StatusOK || !strings.HasPrefix(tag, `W/"`) || !strings.Contains(r.Header.Get("Cache-Control"), "no-cache") || r.Header.Get("Last-Modified") == "" {
			t.Fatalf("GET %s: %d ETag %q Cache-Control %q Last-Modified %q", p, r.StatusCode, tag, r.Header.Get("Cache-Control"), r.Header.Get("Last-Modified"))
		}
		tags[p] = tag
		nm, b := e.raw(http.MethodGet, p, "If-None-Match", tag, "Accept-Encoding", "gzip")
		if nm.StatusCode != http.StatusNotModified || len(b) != 0 || nm.Header.Get("ETag") != tag {
			t.Errorf("GET %s If-None-Match %s: %d, %d bytes, ETag %q", p, tag, nm.StatusCode, len(b), nm.Header.Get("ETag"))
		}
		if nm, _ := e.raw(http.MethodGet, p, "If-Modified-Since", r.Header.Get("Last-Modified")); nm.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s If-Modified-Since its Last-Modified: %d", p, nm.StatusCode)
		}
	}
	if tags[paths[0]] == tags[paths[1]] {
		t.Errorf("two different reads share the tag %s", tags[paths[0]])
	}
	for _, p := range []string{"/api/search?q=kalksten&databases=dkbr&vector=true", "/api/catalogs", "/api/resources/" + url.PathEscape("dkbr:#nope"), "/api/search?q=kalksten&lang=xx"} {
		r, _ := e.raw(http.MethodGet, p)
		if r.Header.Get("ETag") != "" || r.Header.Get("Last-Modified") != "" {
			t.Errorf("GET %s (%d) carries validators %q %q", p, r.StatusCode, r.Header.Get("ETag"), r.Header.Get("Last-Modified"))
		}
	}

	// A restart over the same data keeps the tags: clients' copies stay valid.
	e.restart()
	for _, p := range paths {
		if r, _ := e.raw(http.MethodGet, p, "If-None-Match", tags[p]); r.StatusCode != http.StatusNotModified {
			t.Errorf("after a restart, GET %s If-None-Match its tag: %d (new tag %q)", p, r.StatusCode, r.Header.Get("ETag"))
		}
	}

	// A write changes the catalog: every old tag now gets the new answer.
	batchDK(t, e, "Kalksten plade", 7.5)
	for _, p := range paths {
		r, b := e.raw(http.MethodGet, p, "If-None-Match", tags[p])
		if r.StatusCode != http.StatusOK || r.Header.Get("ETag") == tags[p] || r.Header.Get("ETag") == "" || !bytes.Contains(b, []byte("Kalksten plade")) {
			t.Errorf("after a write, GET %s If-None-Match the old tag: %d, ETag %q (old %q)", p, r.StatusCode, r.Header.Get("ETag"), tags[p])
		}
	}

	// The OpenAPI document: a tag of its content, 304 on a match.
	r, _ := e.raw(http.MethodGet, "/openapi.yaml")
	tag := r.Header.Get("ETag")
	if tag == "" {
		t.Fatal("/openapi.yaml has no ETag")
	}
	if r, b := e.raw(http.MethodGet, "/openapi.yaml", "If-None-Match", tag); r.StatusCode != http.StatusNotModified || len(b) != 0 {
		t.Errorf("/openapi.yaml If-None-Match: %d, %d bytes", r.StatusCode, len(b))
	}
	if r, _ := e.raw(http.MethodGet, "/openapi.yaml", "If-None-Match", `"other"`); r.StatusCode != http.StatusOK {
		t.Errorf("/openapi.yaml with another tag: %d", r.StatusCode)
	}
}

// TestCORS: with SERVICE_CORS_ORIGINS the public reads answer preflights
// and carry the CORS headers for the listed origins only; /admin and the
// console never do. Without the setting no CORS header is sent.
func TestCORS(t *testing.T) {
	const app, other = "https://app.example.com", "https://evil.example.net"
	e := newEnv(t, map[string]string{"SERVICE_CORS_ORIGINS": app + ", http://localhost:5173", "SERVICE_ADMIN_TOKEN": "tok"})
	pre := func(path, origin, method string) (*http.Response, []byte) {
		return e.raw(http.MethodOptions, path, "Origin", origin, "Access-Control-Request-Method", method,
			"Access-Control-Request-Headers", "x-request-id, if-none-match")
	}
	r, _ := pre("/api/search?q=betong", app, "GET")
	if r.StatusCode != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "GET") ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "X-Request-Id") ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "If-None-Match") || !varies(r.Header, "Origin") {
		t.Errorf("preflight from %s: %d %v", app, r.StatusCode, r.Header)
	}
	refused := func(what string, r *http.Response, b []byte) {
		t.Helper()
		var body struct{ Error string }
		_ = json.Unmarshal(b, &body)
		if r.StatusCode != http.StatusForbidden || r.Header.Get("Access-Control-Allow-Origin") != "" || body.Error == "" {
			t.Errorf("%s: %d ACAO %q body %s; want 403 with an Error and no CORS headers", what, r.StatusCode, r.Header.Get("Access-Control-Allow-Origin"), b)
		}
	}
	r, b := pre("/api/search?q=betong", other, "GET")
	refused("preflight from an origin not listed", r, b)
	r, b = pre("/admin/resources", app, "POST")
	refused("preflight of /admin", r, b)
	r, b = pre("/", app, "GET")
	refused("preflight of the console", r, b)
	r, b = pre("/api/search", app, "DELETE")
	refused("preflight of DELETE", r, b)

	r, _ = e.raw(http.MethodGet, "/api/catalogs", "Origin", app)
	if r.StatusCode != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != app || !varies(r.Header, "Origin") ||
		!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
		t.Errorf("GET /api/catalogs from %s: %d %v", app, r.StatusCode, r.Header)
	}
	r, _ = e.raw(http.MethodGet, "/api/catalogs", "Origin", other)
	if r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET /api/catalogs from %s: ACAO %q", other, r.Header.Get("Access-Control-Allow-Origin"))
	}
	for _, p := range []string{"/admin/events", "/", "/data"} {
		r, _ := e.raw(http.MethodGet, p, "Origin", app, "X-Admin-Token", "tok")
		if r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET %s from %s: ACAO %q", p, app, r.Header.Get("Access-Control-Allow-Origin"))
		}
	}

	// Off by default.
	d := newEnv(t, nil)
	r, _ = d.raw(http.MethodGet, "/api/catalogs", "Origin", app)
	if r.Header.Get("Access-Control-Allow-Origin") != "" || varies(r.Header, "Origin") {
		t.Errorf("without SERVICE_CORS_ORIGINS: %v", r.Header)
	}

	// A bad setting is refused at start with the reason.
	_, err := config.Load(nil, func(k string) (string, bool) {
		if k == "SERVICE_CORS_ORIGINS" {
			return "app.example.com/path", true
		}
		return "", false
	}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "SERVICE_CORS_ORIGINS") || !strings.Contains(err.Error(), "not an origin") {
		t.Errorf("bad SERVICE_CORS_ORIGINS: %v", err)
	}
}
