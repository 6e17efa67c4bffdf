package e2e

import (
	"bytes"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/shareddata"
	"github.com/climatesearch/climatesearch/web"
)

// The operator console's error paths, over HTTP against the whole app: each
// page answers with the status REST gives for the same mistake and shows the
// API's own message. The browser flows are in test/console.

// page is a console answer (HTML, not validated against /openapi.yaml).
type page struct {
	Status int
	Header http.Header
	Body   string
}

// browser is a cookie-keeping client that does not follow redirects, so
// tests see the post/redirect/get answers themselves.
type browser struct {
	t   *testing.T
	e   *env
	cli *http.Client
}

func newBrowser(t *testing.T, e *env) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, e: e, cli: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.cli.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.e.URL+path, nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

// post sends a form as the console's own page would (same origin).
func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.e.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", b.e.URL)
	return b.do(req)
}

func (b *browser) upload(path, filename string, data []byte, fields map[string]string) page {
	b.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	fw, _ := w.CreateFormFile("file", filename)
	_, _ = fw.Write(data)
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, b.e.URL+path, &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

// follow GETs the Location of a redirect.
func (b *browser) follow(p page) page {
	b.t.Helper()
	if p.Status != http.StatusSeeOther {
		b.t.Fatalf("want a 303 redirect, got %d: %.600s", p.Status, p.Body)
	}
	return b.get(p.Header.Get("Location"))
}

// shows fails unless the page holds msg as HTML-escaped text.
func (p page) shows(t *testing.T, msg string) {
	t.Helper()
	if !strings.Contains(p.Body, html.EscapeString(msg)) {
		t.Fatalf("page (%d) does not show %q:\n%.3000s", p.Status, msg, p.Body)
	}
}

func TestConsolePagesAnswerWithStrictHeaders(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	b := newBrowser(t, e)
	for _, path := range []string{"/", "/?q=sp%C3%A5nskiva", "/data", "/ingest", "/compare", "/compare?a=6000000000&b=6000000168", "/connect", "/webhooks", "/resources/national:6000000000"} {
		p := b.get(path)
		if p.Status != 200 || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s %.500s", path, p.Status, p.Header.Get("Content-Type"), p.Body)
		}
		csp := p.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			p.Header.Get("X-Content-Type-Options") != "nosniff" || p.Header.Get("Referrer-Policy") == "" {
			t.Fatalf("%s: headers %v", path, p.Header)
		}
		if regexp.MustCompile(`<script>|<script [^>]*>[^<]`).MatchString(p.Body) || strings.Contains(p.Body, " onclick=") || strings.Contains(p.Body, " style=") {
			t.Fatalf("%s: inline script or style in the page", path)
		}
		// Every asset is this host's own.
		for _, m := range regexp.MustCompile(`(?:src|href)="(https?:)?//`).FindAllString(p.Body, -1) {
			if !strings.Contains(p.Body, "klimatdatabasen.boverket.se") {
				t.Fatalf("%s: links another host: %s", path, m)
			}
		}
		for _, src := range regexp.MustCompile(`<(?:script|link)[^>]+(?:src|href)="([^"]+)"`).FindAllStringSubmatch(p.Body, -1) {
			if !strings.HasPrefix(src[1], "/console/static/") {
				t.Fatalf("%s: asset %s is not served by the console", path, src[1])
			}
		}
	}
}

func TestConsoleResourceErrors(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	b := newBrowser(t, e)

	p := b.get("/resources/national:6000000000")
	p.shows(t, "Spånskiva")
	p.shows(t, "https://klimatdatabasen.boverket.se/detaljer/")
	p.shows(t, "get_resource_details")

	// Unknown id: 404 with the API's message.
	rest := e.get("/api/resources/national:999")
	p = b.get("/resources/national:999")
	if p.Status != 404 || rest.Status != 404 {
		t.Fatalf("unknown id: page %d, REST %d", p.Status, rest.Status)
	}
	p.shows(t, rest.errMsg(t))

	// An unknown catalog prefix: 400.
	p = b.get("/resources/nowhere:1")
	if p.Status != 400 {
		t.Fatalf("bad catalog: %d", p.Status)
	}
	p.shows(t, "unknown catalog")

	// Ambiguous bare id: 409 with links to both candidates.
	r := e.do(http.MethodPost, "/admin/resources", []byte(`{"catalog":"dkbr","version":"BR25","resources":[{"id":"6000000000","name":"Spånplade","unit":"kg","a1a3":0.4}]}`), nil)
	if r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	rest = e.get("/api/resources/6000000000")
	p = b.get("/resources/6000000000")
	if p.Status != 409 || rest.Status != 409 {
		t.Fatalf("ambiguous: page %d REST %d", p.Status, rest.Status)
	}
	p.shows(t, rest.errMsg(t))
	for _, want := range []string{`href="/resources/national:6000000000"`, `href="/resources/dkbr:6000000000"`} {
		if !strings.Contains(p.Body, want) {
			t.Fatalf("ambiguous page lacks the candidate link %s", want)
		}
	}
}

func TestConsoleEscapesDataAndLinksDanishIDs(t *testing.T) {
	e := newEnv(t, nil)
	b := newBrowser(t, e)
	r := e.do(http.MethodPost, "/admin/resources", []byte(`{"catalog":"dkbr","version":"BR25","resources":[{"id":"#X1","name":"<script>alert(1)</script> tagsten","unit":"kg","a1a3":0.4,"category":"<b>Tag</b>"}]}`), nil)
	if r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	for _, path := range []string{"/?q=tagsten&databases=dkbr", "/resources/dkbr:%23X1", "/data?catalog=dkbr", "/data?chart=dkbr"} {
		p := b.get(path)
		if p.Status != 200 {
			t.Fatalf("%s: %d %.800s", path, p.Status, p.Body)
		}
		if strings.Contains(p.Body, "<script>alert") || strings.Contains(p.Body, "<b>Tag</b>") {
			t.Fatalf("%s: data rendered as markup", path)
		}
		if !strings.Contains(p.Body, "&lt;script&gt;alert(1)&lt;/script&gt; tagsten") {
			t.Fatalf("%s: name not shown as text:\n%.2000s", path, p.Body)
		}
		if path != "/resources/dkbr:%23X1" && !strings.Contains(p.Body, `href="/resources/dkbr:%23X1"`) {
			t.Fatalf("%s: the Danish id is not linked path-escaped:\n%.3000s", path, p.Body)
		}
	}
}

func TestConsoleQueryErrors(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	b := newBrowser(t, e)
	for _, c := range []struct{ page, rest string }{
		{"/?q=x&lang=de", "/api/search?q=x&lang=de"},
		{"/?q=x&databases=nowhere", "/api/search?q=x&databases=nowhere"},
		{"/?q=x&limit=0", "/api/search?q=x&limit=0"},
		{"/?q=" + strings.Repeat("a", core.MaxQueryLen+1), "/api/search?q=" + strings.Repeat("a", core.MaxQueryLen+1)},
	} {
		rest := e.get(c.rest)
		p := b.get(c.page)
		if p.Status != 400 || rest.Status != 400 {
			t.Fatalf("%s: page %d, REST %d", c.page, p.Status, rest.Status)
		}
		msg := rest.errMsg(t)
		msg = strings.TrimPrefix(msg, "databases: ")
		p.shows(t, msg)
	}
	// The answer shows ranks, scores, match source, the notes and the timing.
	p := b.get("/?q=sp%C3%A5nskiva&vector=true&rerank=true")
	for _, want := range []string{"national:6000000000", "server time", "no reranker is configured", "curl -s", "tools/call", "search_climate_data"} {
		if !strings.Contains(p.Body, want) {
			t.Fatalf("search page lacks %q:\n%.3000s", want, p.Body)
		}
	}
	// The inspector runs REST and MCP for real and says whether they agree.
	p = b.get("/?q=sp%C3%A5nskiva&vector=true&inspect=true")
	p.shows(t, "REST and MCP agree: the same 10 hits in the same order")
	p = b.get("/?q=sp%C3%A5nskiva&inspect=true")
	p.shows(t, "REST asked with MCP's settings agrees hit for hit")
}

func TestConsoleCompareErrors(t *testing.T) {
	e := newEnv(t, nil)
	e.mustIngest()
	b := newBrowser(t, e)
	p := b.get("/compare?a=national:6000000000&b=national:6000000168&unit=m3")
	if p.Status != 200 {
		t.Fatalf("compare: %d %.2000s", p.Status, p.Body)
	}
	for _, want := range []string{"has the lower typical A1-A3", "The delta is A minus B", "<svg", "kg/m³"} {
		if !strings.Contains(p.Body, html.EscapeString(want)) && !strings.Contains(p.Body, want) {
			t.Fatalf("compare page lacks %q:\n%.3000s", want, p.Body)
		}
	}
	for _, c := range []struct {
		query  string
		status int
	}{
		{"a=national:6000000000&b=national:6000000168&unit=parsec", 400},
		{"a=national:6000000000&b=national:6000000168&impact=worst", 400},
		{"a=national:6000000000&b=national:999", 404},
		{"a=national:6000000000&b=", 400},
	} {
		rest := e.get("/api/resources/compare?" + c.query)
		p := b.get("/compare?" + c.query)
		if p.Status != c.status || rest.Status != c.status {
			t.Fatalf("%s: page %d, REST %d, want %d", c.query, p.Status, rest.Status, c.status)
		}
		p.shows(t, rest.errMsg(t))
	}
	// Ticking one hit instead of two.
	p = b.get("/compare?pick=national:6000000000")
	if p.Status != 400 {
		t.Fatalf("one pick: %d", p.Status)
	}
	p.shows(t, "tick exactly two hits to compare; 1 were ticked")
	p = b.get("/compare?pick=national:6000000000&pick=national:6000000168")
	if p.Status != 200 || !strings.Contains(p.Body, `id="delta"`) {
		t.Fatalf("two picks: %d", p.Status)
	}
}

func TestConsoleIngestErrorsAndPreviewLifetime(t *testing.T) {
	e := newEnv(t, nil)
	b := newBrowser(t, e)

	// A file the readers cannot read: the API's message, nothing stashed.
	bad := []byte("\x00\x01 this is not a spreadsheet")
	rest := e.postForm("/admin/ingest/preview", "notes.txt", bad, nil)
	p := b.upload("/ingest/upload", "notes.txt", bad, nil)
	if p.Status != 400 || rest.Status != 400 {
		t.Fatalf("bad file: page %d, REST %d", p.Status, rest.Status)
	}
	p.shows(t, rest.errMsg(t))

	// No file at all.
	p = b.upload("/ingest/upload", "", nil, nil)
	if p.Status != 400 {
		t.Fatalf("no file: %d", p.Status)
	}

	// Unknown (expired) and malformed preview ids.
	p = b.get("/ingest?preview=pv_0123456789abcdef0123456789abcdef")
	if p.Status != 404 {
		t.Fatalf("expired preview: %d", p.Status)
	}
	p.shows(t, "preview pv_0123456789abcdef0123456789abcdef is unknown or expired (previews last 30m0s); upload the file again")
	p = b.get("/ingest?preview=../../etc")
	if p.Status != 400 {
		t.Fatalf("malformed preview: %d", p.Status)
	}
	p = b.post("/ingest/apply", url.Values{"preview_id": {"pv_0123456789abcdef0123456789abcdef"}, "catalog": {"dkbr"}, "map.id": {"x"}})
	if p.Status != 404 {
		t.Fatalf("apply of an expired preview: %d", p.Status)
	}

	// The real workbook: preview, then the page survives a reload and a restart.
	br25 := shareddata.Read(t, "data", "dkbr", "br25-tabel7-2025.xlsx")
	p = b.upload("/ingest/upload", "br25-tabel7-2025.xlsx", br25, nil)
	loc := p.Header.Get("Location")
	p = b.follow(p)
	if p.Status != 200 || !strings.Contains(p.Body, "#B1318") || !strings.Contains(p.Body, `<option selected>Sorterings ID</option>`) {
		t.Fatalf("preview page: %d %.3000s", p.Status, p.Body)
	}
	e.restart()
	p = b.get(loc)
	if p.Status != 200 || !strings.Contains(p.Body, "#B1318") {
		t.Fatalf("preview after a restart: %d", p.Status)
	}
	id := regexp.MustCompile(`pv_[0-9a-f]{32}`).FindString(loc)

	// A map without the id column: refused with the API's message, nothing stored.
	form := url.Values{"preview_id": {id}, "catalog": {"dkbr"}, "version": {"BR25"}, "map.name": {"Navn"}, "map.a1a3": {"Global Opvarmning, modul A1-A3"}, "action": {"apply"}}
	restR := e.postForm("/admin/ingest/file?catalog=dkbr", "", nil, map[string]string{"preview_id": id, "version": "BR25", "map.name": "Navn", "map.a1a3": "Global Opvarmning, modul A1-A3"})
	if restR.Status != 400 {
		t.Fatalf("REST without map.id: %d %s", restR.Status, restR.Body)
	}
	p = b.follow(b.post("/ingest/apply", form))
	p.shows(t, restR.errMsg(t))
	if r := e.get("/api/resources?databases=dkbr"); strings.Contains(string(r.Body), "B1318") {
		t.Fatal("a refused apply stored resources")
	}

	// Dry run then apply with the suggested map.
	var pv core.IngestPreview
	e.postForm("/admin/ingest/preview", "br25.xlsx", br25, nil).json(t, &pv)
	form = url.Values{"preview_id": {id}, "catalog": {"br25"}, "version": {"BR25"}, "action": {"dry"}}
	for k, v := range pv.SuggestedMap {
		form.Set("map."+k, v)
	}
	p = b.follow(b.post("/ingest/apply", form))
	p.shows(t, "Dry run: nothing was stored")
	if !strings.Contains(p.Body, `id="r-upserted">504<`) {
		t.Fatalf("dry run counts: %.4000s", p.Body)
	}
	form.Set("action", "apply")
	p = b.follow(b.post("/ingest/apply", form))
	if !strings.Contains(p.Body, "Applied") || !strings.Contains(p.Body, `id="r-upserted">504<`) {
		t.Fatalf("apply: %.4000s", p.Body)
	}
	var list core.ListResponse
	e.get("/api/resources?databases=dkbr").json(t, &list)
	if len(list.Resources) != 504 {
		t.Fatalf("dkbr holds %d resources after the apply", len(list.Resources))
	}
}

func TestConsoleSignInAndCrossOriginRefusal(t *testing.T) {
	const token = "console-test-token-0123456789"
	e := newEnv(t, map[string]string{"SERVICE_ADMIN_TOKEN": token})
	b := newBrowser(t, e)

	// Reading pages are open; admin pages send to the sign-in.
	if p := b.get("/"); p.Status != 200 {
		t.Fatalf("query page: %d", p.Status)
	}
	p := b.get("/ingest")
	if p.Status != 303 || p.Header.Get("Location") != "/signin?next=%2Fingest" {
		t.Fatalf("ingest without a session: %d %s", p.Status, p.Header.Get("Location"))
	}
	if p := b.get("/data"); p.Status != 200 || strings.Contains(p.Body, `action="/data/ingest"`) {
		t.Fatalf("data without a session offers the ingest button")
	}
	p = b.post("/webhooks", url.Values{"url": {"https://example.org/hook"}})
	if p.Status != 303 || !strings.HasPrefix(p.Header.Get("Location"), "/signin") {
		t.Fatalf("a POST without a session: %d", p.Status)
	}

	// A wrong token is refused.
	p = b.post("/signin", url.Values{"token": {"nope"}, "next": {"/ingest"}})
	if p.Status != 401 {
		t.Fatalf("wrong token: %d", p.Status)
	}
	p.shows(t, "That is not the admin token")

	// The right one: a session cookie that is not the token.
	p = b.post("/signin", url.Values{"token": {token}, "next": {"/ingest"}})
	if p.Status != 303 || p.Header.Get("Location") != "/ingest" {
		t.Fatalf("sign in: %d %s", p.Status, p.Header.Get("Location"))
	}
	sc := p.Header.Get("Set-Cookie")
	if !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict") || strings.Contains(sc, token) || !strings.Contains(sc, "Max-Age=") {
		t.Fatalf("session cookie: %s", sc)
	}
	if p := b.get("/ingest"); p.Status != 200 {
		t.Fatalf("ingest after signing in: %d", p.Status)
	}
	// An open redirect is not possible through next.
	if p := b.post("/signin", url.Values{"token": {token}, "next": {"//evil.example/"}}); p.Header.Get("Location") != "/" {
		t.Fatalf("next=//evil.example/ redirected to %s", p.Header.Get("Location"))
	}

	// A cross-site form post is refused and changes nothing, even signed in.
	for _, h := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}, {"Origin": "http://evil.example"}} {
		req, _ := http.NewRequest(http.MethodPost, e.URL+"/webhooks", strings.NewReader("url=https%3A%2F%2Fexample.org%2Fhook"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		p := b.do(req)
		if p.Status != 403 {
			t.Fatalf("cross-origin post %v: %d", h, p.Status)
		}
	}
	var ds struct {
		Destinations []core.Destination `json:"destinations"`
	}
	e.do(http.MethodGet, "/admin/webhooks", nil, map[string]string{"X-Admin-Token": token}).json(t, &ds)
	if len(ds.Destinations) != 0 {
		t.Fatalf("a refused post added %d destinations", len(ds.Destinations))
	}

	// Sign out ends the session.
	if p := b.post("/signout", nil); p.Status != 303 {
		t.Fatalf("sign out: %d", p.Status)
	}
	if p := b.get("/ingest"); p.Status != 303 {
		t.Fatalf("ingest after signing out: %d", p.Status)
	}
}

func TestConsoleWebhookErrors(t *testing.T) {
	e := newEnv(t, nil)
	b := newBrowser(t, e)
	// A private address is refused with the API's message.
	rest := e.do(http.MethodPost, "/admin/webhooks", []byte(`{"url":"http://127.0.0.1:9/hook"}`), nil)
	p := b.post("/webhooks", url.Values{"url": {"http://127.0.0.1:9/hook"}, "kind": {"auto"}, "enabled": {"true"}})
	if p.Status != 400 || rest.Status != 400 {
		t.Fatalf("private address: page %d, REST %d", p.Status, rest.Status)
	}
	p.shows(t, rest.errMsg(t))
	p.shows(t, "http://127.0.0.1:9/hook") // what was typed stays in the form
	if p := b.get("/webhooks/wh_0000000000000000"); p.Status != 404 {
		t.Fatalf("unknown destination: %d", p.Status)
	}
	if p := b.post("/webhooks/wh_0000000000000000/test", nil); p.Status != 404 {
		t.Fatalf("test of an unknown destination: %d", p.Status)
	}
}

// TestConsolePagesStayUnder200KB loads both real catalogs and checks that
// no page, with its stylesheet and script, transfers more than 200 KB.
// The sizes are logged for docs/PERFORMANCE.md (go test -v -run PagesStay).
func TestConsolePagesStayUnder200KB(t *testing.T) {
	e := newEnv(t, map[string]string{"SERVICE_WEBHOOK_ALLOW_PRIVATE": "true"})
	e.mustIngest()
	loadBR25(t, e)
	b := newBrowser(t, e)
	assets := 0
	for _, a := range []string{"/console/static/console.css", "/console/static/console.js"} {
		p := b.get(a)
		ct := p.Header.Get("Content-Type")
		if p.Status != 200 || !(strings.HasPrefix(ct, "text/css") || strings.HasPrefix(ct, "text/javascript") || strings.HasPrefix(ct, "application/javascript")) ||
			p.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: %d %s", a, p.Status, ct)
		}
		assets += len(p.Body)
	}
	p := b.upload("/ingest/upload", "br25-tabel7-2025.xlsx", shareddata.Read(t, "data", "dkbr", "br25-tabel7-2025.xlsx"), nil)
	preview := p.Header.Get("Location")
	b.post("/webhooks", url.Values{"url": {"http://127.0.0.1:9/hook"}, "enabled": {"true"}})
	var ds struct {
		Destinations []core.Destination `json:"destinations"`
	}
	e.get("/admin/webhooks").json(t, &ds)
	if len(ds.Destinations) != 1 {
		t.Fatalf("destinations: %v", ds.Destinations)
	}
	const limit = 200 << 10
	for _, path := range []string{"/", "/?q=sp%C3%A5nskiva&limit=100", "/?q=betong&limit=100&inspect=true", "/resources/national:6000000000",
		"/data", "/data?chart=dkbr", "/data?limit=200", preview, "/compare?a=national:6000000000&b=national:6000000168",
		"/connect", "/webhooks", "/webhooks/" + ds.Destinations[0].ID} {
		p := b.get(path)
		if p.Status != 200 {
			t.Fatalf("%s: %d %.500s", path, p.Status, p.Body)
		}
		t.Logf("%-60s %7d bytes, %7d with assets", path, len(p.Body), len(p.Body)+assets)
		if len(p.Body)+assets > limit {
			t.Errorf("%s: %d bytes with its assets, over the 200 KB budget", path, len(p.Body)+assets)
		}
	}
}

// loadBR25 loads the real BR25 workbook into dkbr through the REST API.
func loadBR25(t *testing.T, e *env) {
	t.Helper()
	br25 := shareddata.Read(t, "data", "dkbr", "br25-tabel7-2025.xlsx")
	var pv core.IngestPreview
	e.postForm("/admin/ingest/preview", "br25-tabel7-2025.xlsx", br25, nil).json(t, &pv)
	fields := map[string]string{"preview_id": pv.PreviewID, "version": "BR25"}
	for k, v := range pv.SuggestedMap {
		fields["map."+k] = v
	}
	if r := e.postForm("/admin/ingest/file?catalog=dkbr", "", nil, fields); r.Status != 200 {
		t.Fatalf("loading BR25: %d %s", r.Status, r.Body)
	}
}

// TestConnectShowsEveryEndpoint: /connect has a curl example for every
// path of /openapi.yaml, against the host the browser used, with the admin
// header as a placeholder (never the token) where one is needed.
func TestConnectShowsEveryEndpoint(t *testing.T) {
	const token = "connect-test-token-42"
	e := newEnv(t, map[string]string{"SERVICE_ADMIN_TOKEN": token})
	b := newBrowser(t, e)
	p := b.get("/connect")
	if p.Status != 200 || strings.Contains(p.Body, token) {
		t.Fatalf("connect: %d, token shown: %v", p.Status, strings.Contains(p.Body, token))
	}
	body := html.UnescapeString(p.Body)
	doc := openapiDoc(t)
	for _, path := range doc.Paths.InMatchingOrder() {
		if path == "/docs" {
			if !strings.Contains(body, `href="/docs"`) {
				t.Error("no link to /docs")
			}
			continue
		}
		re := regexp.MustCompile(regexp.QuoteMeta(e.URL) + regexp.MustCompile(`\\\{[a-z_]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), `[^/\s'?]+`) + `(?:[\s'?<"]|$)`)
		if !re.MatchString(body) {
			t.Errorf("/connect has no curl example for %s", path)
		}
	}
	if !strings.Contains(body, "X-Admin-Token: <your SERVICE_ADMIN_TOKEN>") {
		t.Error("admin examples lack the header placeholder")
	}
	for _, cfg := range []string{`"url": "` + e.URL + `/mcp"`, "claude mcp add --transport http climatesearch " + e.URL + "/mcp", e.URL + "/mcp/sse", "mcp-remote"} {
		if !strings.Contains(body, cfg) {
			t.Errorf("/connect lacks %q", cfg)
		}
	}
}

func openapiDoc(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(web.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
