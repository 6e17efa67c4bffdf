package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/climatesearch/climatesearch/core"
)

// brokenCore fails every lookup with an internal error (a 500).
type brokenCore struct{ *loadingCore }

func (*brokenCore) Get(context.Context, string, core.Lang) (core.Resource, error) {
	return core.Resource{}, errors.New("disk on fire")
}

type httpObs struct {
	route, method string
	status        int
}

type fakeMetrics struct {
	mu   sync.Mutex
	http []httpObs
}

func (m *fakeMetrics) ObserveHTTP(route, method string, status int, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.http = append(m.http, httpObs{route, method, status})
}
func (*fakeMetrics) ObserveSearch(string, int, time.Duration)            {}
func (*fakeMetrics) ObserveIngest(string, string, string, time.Duration) {}
func (*fakeMetrics) ObserveToolCall(string, string)                      {}
func (*fakeMetrics) ObserveWebhookAttempt(string)                        {}

var generatedID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TestRequestIDs: a sane X-Request-Id is kept and echoed, anything else
// (spaces, control characters, too long) is replaced by a generated one;
// every request gets one.
func TestRequestIDs(t *testing.T) {
	f := &loadingCore{loaded: true}
	api := New(Deps{Search: f, Resources: f, Compare: f, Ingest: f, Log: zap.NewNop()})
	for _, tc := range []struct{ sent, want string }{
		{"abc-123_X.y:z", "abc-123_X.y:z"},
		{"", ""},
		{"two words", ""},
		{"line\nbreak", ""},
		{strings.Repeat("a", 129), ""},
		{`"quoted"`, ""},
	} {
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		if tc.sent != "" {
			req.Header[RequestIDHeader] = []string{tc.sent}
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		got := w.Header().Get(RequestIDHeader)
		switch {
		case tc.want != "" && got != tc.want:
			t.Errorf("sent %q: echoed %q, want it kept", tc.sent, got)
		case tc.want == "" && !generatedID.MatchString(got):
			t.Errorf("sent %q: echoed %q, want a generated id", tc.sent, got)
		}
	}
	a, b := httptest.NewRecorder(), httptest.NewRecorder()
	api.ServeHTTP(a, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	api.ServeHTTP(b, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if a.Header().Get(RequestIDHeader) == b.Header().Get(RequestIDHeader) {
		t.Errorf("two requests got the same generated id %q", a.Header().Get(RequestIDHeader))
	}
}

// TestAccessLogAtInfo: every request, a success included, writes one info
// line with the method, the route template (not the raw path), the status,
// the bytes, the duration, the client address and the request id; the
// request's metrics carry the same route template.
func TestAccessLogAtInfo(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	f := &loadingCore{loaded: true}
	m := &fakeMetrics{}
	api := New(Deps{Search: f, Resources: f, Compare: f, Ingest: f, Log: zap.New(obs), Metrics: m})
	w := loggedLookup(t, api, "req-1")
	lines := logs.FilterMessage("http").All()
	if len(lines) != 1 {
		t.Fatalf("%d access log lines, want 1: %v", len(lines), logs.All())
	}
	l := lines[0]
	fields := l.ContextMap()
	if l.Level != zapcore.InfoLevel || fields["method"] != "GET" || fields["route"] != "/api/resources/:id" ||
		fields["status"] != int64(200) || fields["bytes"] != int64(w.Body.Len()) || fields["client"] != "192.0.2.7" ||
		fields["request_id"] != "req-1" || fields["took"] == nil {
		t.Errorf("access log line %v %v", l.Level, fields)
	}
	api.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/no/such/thing", nil))
	m.mu.Lock()
	defer m.mu.Unlock()
	want := []httpObs{{"/api/resources/:id", "GET", 200}, {"unmatched", "GET", 404}}
	if len(m.http) != 2 || m.http[0] != want[0] || m.http[1] != want[1] {
		t.Errorf("HTTP metrics %v, want %v", m.http, want)
	}
}

// loggedLookup looks up a resource from 192.0.2.7 with request id id, as
// the access log tests do, and fails unless it is found.
func loggedLookup(t *testing.T, api *API, id string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/api/resources/national:6000000000?lang=en", nil)
	req.RemoteAddr = "192.0.2.7:5555"
	req.Header.Set(RequestIDHeader, id)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("lookup: %d %s", w.Code, w.Body)
	}
	return w
}

// With Deps.Access the access line goes there, with the same facts, and
// not through Log; the path is without the query.
func TestAccessLogThroughAccess(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	f := &loadingCore{loaded: true}
	var got []AccessLine
	api := New(Deps{Search: f, Resources: f, Compare: f, Ingest: f, Log: zap.New(obs), Access: func(l AccessLine) { got = append(got, l) }})
	w := loggedLookup(t, api, "req-2")
	if n := logs.FilterMessage("http").Len(); n != 0 {
		t.Errorf("%d access lines through Log as well", n)
	}
	if len(got) != 1 {
		t.Fatalf("%d access lines, want 1", len(got))
	}
	l := got[0]
	if l.Method != "GET" || l.Route != "/api/resources/:id" || l.Path != "/api/resources/national:6000000000" || l.Status != 200 ||
		l.Bytes != int64(w.Body.Len()) || l.Client != "192.0.2.7" || l.RequestID != "req-2" || l.Took <= 0 {
		t.Errorf("access line %+v", l)
	}
}

// TestRequestIDInErrorsAndTheirLogs: a 500 names the request id in its
// Error body and in the error log line, the same id the answer's header
// carries.
func TestRequestIDInErrorsAndTheirLogs(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	f := &brokenCore{&loadingCore{loaded: true}}
	api := New(Deps{Search: f, Resources: f, Compare: f, Ingest: f, Log: zap.New(obs)})
	w := httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/resources/national:1", nil))
	id := w.Header().Get(RequestIDHeader)
	var body errorBody
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusInternalServerError || id == "" || body.RequestID != id {
		t.Fatalf("500: %d header id %q body %s", w.Code, id, w.Body)
	}
	if strings.Contains(w.Body.String(), "disk on fire") {
		t.Errorf("the 500 body shows the internal cause: %s", w.Body)
	}
	errs := logs.FilterMessage("request failed").All()
	if len(errs) != 1 || errs[0].ContextMap()["request_id"] != id {
		t.Fatalf("error log lines %v, want one naming request %s", errs, id)
	}
	// A 4xx names no request id in its body (the client's mistake).
	w = httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/search?bogus=1", nil))
	if w.Code != http.StatusBadRequest || strings.Contains(w.Body.String(), "request_id") {
		t.Errorf("400: %d %s", w.Code, w.Body)
	}
}

// TestAccessLogHasNoSecrets: the admin token, a customer key in the
// Authorization header and a key in the query string never reach a log
// line, whatever the request's outcome.
func TestAccessLogHasNoSecrets(t *testing.T) {
	obs, logs := observer.New(zapcore.DebugLevel)
	f := &loadingCore{loaded: true}
	const token, key, qkey = "admin-token-s3cret-XYZ", "sk_live_customer_KEY_123", "query-key-ABC987"
	api := New(Deps{Search: f, Resources: f, Compare: f, Ingest: f, Log: zap.New(obs), AdminToken: token})
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/api/search?q=betong&key=" + qkey},
		{http.MethodPost, "/admin/ingest/run?catalog=national&api_key=" + qkey},
		{http.MethodGet, "/api/resources/national:1?token=" + qkey},
	} {
		for _, tok := range []string{token, "wrong-" + token} {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			req.Header.Set("X-Admin-Token", tok)
			req.Header.Set("Authorization", "Bearer "+key)
			api.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	if logs.Len() == 0 {
		t.Fatal("no log lines at all")
	}
	for _, e := range logs.All() {
		line, _ := json.Marshal(map[string]any{"msg": e.Message, "fields": e.ContextMap()})
		for _, s := range []string{token, key, qkey} {
			if strings.Contains(string(line), s) {
				t.Errorf("log line %s contains the secret %q", line, s)
			}
		}
	}
}

// TestRequestContext: the request's context (Observe's reqInfo under the
// core's request id) carries the id to the core and to the request's
// logger, and passes the client's cancellation on to contexts derived
// from it.
func TestRequestContext(t *testing.T) {
	var sawID, sawInfo string
	var derivedErr error
	api := New(Deps{Log: zap.NewNop()})
	h := api.Observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		sawID = core.RequestID(ctx)
		if ri := infoOf(ctx); ri != nil {
			sawInfo = ri.id
		}
		<-ctx.Done() // the client goes away (below)
		derivedErr = ctx.Err()
	}))
	parent, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest(http.MethodGet, "/api/search?q=x", nil).WithContext(parent)
	req.Header.Set(RequestIDHeader, "ctx-1")
	time.AfterFunc(10*time.Millisecond, cancel)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if sawID != "ctx-1" || sawInfo != "ctx-1" || !errors.Is(derivedErr, context.Canceled) {
		t.Errorf("in the handler: core id %q, request info %q, derived context %v", sawID, sawInfo, derivedErr)
	}
}
