//go:build hosted

package guard

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// fakeKeys answers verdicts by key; "down" fails like an outage.
type fakeKeys map[string]core.KeyVerdict

func (f fakeKeys) Check(_ context.Context, key string) (core.KeyVerdict, error) {
	if key == "down" {
		return core.KeyVerdict{}, errors.New("dial tcp: connection refused")
	}
	if v, ok := f[key]; ok {
		return v, nil
	}
	return core.KeyVerdict{Code: core.KeyNotFound}, nil
}

// fakePayments accepts "Payment good", refuses "Payment bad", fails on
// "Payment down"; it records the calls it was asked about.
type fakePayments struct{ calls []core.Call }

func (f *fakePayments) Challenge(_ context.Context, c core.Call) core.PaymentChallenge {
	f.calls = append(f.calls, c)
	return core.PaymentChallenge{ID: "ch1", Header: `Payment id="ch1", realm="r", method="tempo", intent="charge", request="e30", expires="2030-01-01T00:00:00Z"`,
		Problem: []byte(`{"type":"https://paymentauth.org/problems/payment-required","status":402}`)}
}

func (f *fakePayments) Pay(ctx context.Context, c core.Call, auth string) (core.PaymentReceipt, string, error) {
	f.calls = append(f.calls, c)
	switch auth {
	case "Payment good":
		return core.PaymentReceipt{Reference: "0xabc"}, "eyJyZWZlcmVuY2UiOiIweGFiYyJ9", nil
	case "Payment down":
		return core.PaymentReceipt{}, "", errors.New("rpc unreachable")
	}
	ch := f.Challenge(ctx, c)
	ch.Problem = []byte(`{"type":"https://paymentauth.org/problems/verification-failed","status":402}`)
	return core.PaymentReceipt{}, "", &core.PaymentRefused{Challenge: ch, Detail: "bad"}
}

const adminToken = "admin-token-for-tests-0123456789"

func newGuard(keys bool, pay *fakePayments) (*Guard, *int) {
	d := Deps{AdminToken: adminToken, Operator: func(r *http.Request) bool { return r.Header.Get("Cookie") == "operator" }}
	if keys {
		d.Keys = fakeKeys{
			"good":    {Valid: true, Code: core.KeyValid, Name: "acme"},
			"expired": {Code: core.KeyExpired},
			"off":     {Code: core.KeyDisabled},
			"slow":    {Code: core.KeyRateLimited, RetryAfter: 12 * time.Second},
		}
	}
	if pay != nil {
		d.Payments = pay
	}
	return New(d), new(int)
}

type answer struct {
	status int
	header http.Header
	body   string
	served bool
}

func serve(g *Guard, method, path, auth string, body string, header ...string) answer {
	var served bool
	h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served = true
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(200)
		_, _ = w.Write(b)
	}))
	req := httptest.NewRequest(method, "http://api.example.org"+path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Header(), rec.Body.String(), served}
}

func TestPublicPathsPassInTheHostedBuild(t *testing.T) {
	g, _ := newGuard(true, &fakePayments{})
	for _, p := range []string{"/healthz", "/readyz", "/openapi.yaml", "/docs", "/docs/swagger-ui.css", "/console/static/console.css", "/signin"} {
		if a := serve(g, "GET", p, "", ""); !a.served || a.status != 200 {
			t.Errorf("%s: %d served=%v", p, a.status, a.served)
		}
	}
}

func TestBearerKeys(t *testing.T) {
	g, _ := newGuard(true, &fakePayments{})
	if a := serve(g, "GET", "/api/search?q=x", "Bearer good", ""); !a.served {
		t.Fatalf("valid key: %d %s", a.status, a.body)
	}
	for _, key := range []string{"sk_live_nobody_knows", "expired", "off"} {
		a := serve(g, "GET", "/api/search?q=x", "Bearer "+key, "")
		if a.served || a.status != 401 || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), `Bearer realm="api.example.org", error="invalid_token"`) || !strings.Contains(a.body, `"error":`) {
			t.Errorf("%s: %d %v %s", key, a.status, a.header, a.body)
		}
		if strings.Contains(a.body+a.header.Get("WWW-Authenticate"), "sk_live") {
			t.Errorf("%s: the key is echoed: %s", key, a.body)
		}
	}
	a := serve(g, "GET", "/api/search?q=x", "Bearer slow", "")
	if a.served || a.status != 429 || a.header.Get("Retry-After") != "12" {
		t.Fatalf("rate-limited: %d %v", a.status, a.header)
	}
	a = serve(g, "GET", "/api/search?q=x", "Bearer down", "")
	if a.served || a.status != 503 || !strings.Contains(a.body, "key service") {
		t.Fatalf("key service down: %d %s", a.status, a.body)
	}
	// Without a key source, a Bearer key is refused as such.
	g, _ = newGuard(false, &fakePayments{})
	if a := serve(g, "GET", "/api/resources", "Bearer good", ""); a.served || a.status != 401 || !strings.Contains(a.body, "no API keys") {
		t.Fatalf("no key source: %d %s", a.status, a.body)
	}
}

func TestPayments(t *testing.T) {
	pay := &fakePayments{}
	g, _ := newGuard(true, pay)
	a := serve(g, "GET", "/api/search?q=betong", "Payment good", "")
	if !a.served || a.header.Get("Payment-Receipt") == "" || a.header.Get("Cache-Control") != "private" {
		t.Fatalf("paid: %d %v", a.status, a.header)
	}
	if c := pay.calls[len(pay.calls)-1]; c.PathQuery != "/api/search?q=betong" || c.Host != "api.example.org" || c.BodyDigest != "" {
		t.Fatalf("the call bound: %+v", c)
	}
	a = serve(g, "GET", "/api/search?q=betong", "Payment bad", "")
	if a.served || a.status != 402 || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Payment id=") ||
		a.header.Get("Content-Type") != "application/problem+json" || !strings.Contains(a.body, "verification-failed") || a.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("refused: %d %v %s", a.status, a.header, a.body)
	}
	if a := serve(g, "GET", "/api/search?q=betong", "Payment down", ""); a.served || a.status != 503 {
		t.Fatalf("rail down: %d", a.status)
	}
	// No credential: a fresh challenge.
	a = serve(g, "GET", "/api/resources/national:1", "", "")
	if a.served || a.status != 402 || !strings.Contains(a.body, "payment-required") {
		t.Fatalf("no credential: %d %s", a.status, a.body)
	}
	// An unknown scheme counts as no credential.
	if a := serve(g, "GET", "/api/resources", "Basic dXNlcjpwdw==", ""); a.served || a.status != 402 {
		t.Fatalf("basic: %d", a.status)
	}
	// Without payment configured: 401 and a Bearer challenge.
	g, _ = newGuard(true, nil)
	a = serve(g, "GET", "/api/resources", "", "")
	if a.served || a.status != 401 || a.header.Get("WWW-Authenticate") != `Bearer realm="api.example.org"` {
		t.Fatalf("no payment offered: %d %v", a.status, a.header)
	}
	if a := serve(g, "GET", "/api/resources", "Payment good", ""); a.served || a.status != 401 {
		t.Fatalf("payment when none is offered: %d", a.status)
	}
}

func TestAdminTakesNeitherKeysNorPayments(t *testing.T) {
	g, _ := newGuard(true, &fakePayments{})
	for _, auth := range []string{"", "Bearer good", "Payment good"} {
		a := serve(g, "POST", "/admin/ingest/run?catalog=national", auth, "")
		if a.served || a.status != 401 {
			t.Errorf("admin with %q: %d served=%v", auth, a.status, a.served)
		}
	}
	if a := serve(g, "POST", "/admin/ingest/run?catalog=national", "", "", "X-Admin-Token", adminToken); !a.served {
		t.Fatalf("admin token: %d", a.status)
	}
	// The admin token does not unlock /api unless configured.
	if a := serve(g, "GET", "/api/resources", "", "", "X-Admin-Token", adminToken); a.served || a.status != 402 {
		t.Fatalf("admin token on /api: %d", a.status)
	}
	g.d.AdminUnlocksAPI = true
	if a := serve(g, "GET", "/api/resources", "", "", "X-Admin-Token", adminToken); !a.served {
		t.Fatalf("admin token on /api when unlocked: %d", a.status)
	}
	if a := serve(g, "GET", "/api/resources", "", "", "X-Admin-Token", "wrong"); a.served || a.status != 402 {
		t.Fatalf("a wrong admin token on /api when unlocked: %d", a.status)
	}
}

func TestConsoleIsForOperators(t *testing.T) {
	g, _ := newGuard(true, &fakePayments{})
	for _, auth := range []string{"", "Bearer good", "Payment good"} {
		a := serve(g, "GET", "/data", auth, "")
		if a.served || a.status != 303 || a.header.Get("Location") != "/signin?next=%2Fdata" {
			t.Errorf("console with %q: %d %v", auth, a.status, a.header.Get("Location"))
		}
	}
	if a := serve(g, "GET", "/?q=x", "", "", "Cookie", "operator"); !a.served {
		t.Fatalf("operator: %d", a.status)
	}
}

func TestMCPChargesToolCallsOnly(t *testing.T) {
	pay := &fakePayments{}
	g, _ := newGuard(true, pay)
	free := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`,
		`not json`,
	}
	for _, b := range free {
		if a := serve(g, "POST", "/mcp", "", b); !a.served || a.body != b {
			t.Errorf("free %s: %d", b, a.status)
		}
	}
	for _, p := range []string{"/mcp/sse", "/mcp"} {
		if a := serve(g, "GET", p, "", ""); !a.served {
			t.Errorf("GET %s: %d", p, a.status)
		}
	}
	call := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_climate_data","arguments":{"query":"betong"}}}`
	for _, p := range []string{"/mcp", "/mcp/message?sessionId=abc"} {
		a := serve(g, "POST", p, "", call)
		if a.served || a.status != 402 {
			t.Fatalf("tools/call without a credential on %s: %d", p, a.status)
		}
	}
	last := pay.calls[len(pay.calls)-1]
	if !strings.HasPrefix(last.BodyDigest, "sha-256=:") || !strings.Contains(last.What, "search_climate_data") {
		t.Fatalf("the challenge binds the body: %+v", last)
	}
	batch := `[{"jsonrpc":"2.0","id":2,"method":"tools/list"},` + call + `]`
	if a := serve(g, "POST", "/mcp", "", batch); a.served || a.status != 402 {
		t.Fatalf("a batch with a tools/call: %d", a.status)
	}
	// Paid and keyed calls reach the MCP server with the body intact.
	if a := serve(g, "POST", "/mcp", "Payment good", call); !a.served || a.body != call || a.header.Get("Payment-Receipt") == "" {
		t.Fatalf("paid tools/call: %d %s", a.status, a.body)
	}
	if a := serve(g, "POST", "/mcp", "Bearer good", call); !a.served || a.body != call {
		t.Fatalf("keyed tools/call: %d", a.status)
	}
	// An oversized body is refused before any payment is asked.
	n := len(pay.calls)
	if a := serve(g, "POST", "/mcp", "", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"`+strings.Repeat("x", MaxMCPBody)+`"}}`); a.served || a.status != 413 || len(pay.calls) != n {
		t.Fatalf("oversized: %d, payment asked: %v", a.status, len(pay.calls) != n)
	}
}

func TestInternalTokenOnlyOpensWithTheExactValue(t *testing.T) {
	g, _ := newGuard(true, &fakePayments{})
	g.d.Internal = "per-process-secret"
	if a := serve(g, "GET", "/api/search?q=x", "", "", InternalHeader, "per-process-secret"); !a.served {
		t.Fatalf("internal call: %d", a.status)
	}
	for _, v := range []string{"", "per-process-secre", "per-process-secretX"} {
		if a := serve(g, "GET", "/api/search?q=x", "", "", InternalHeader, v); a.served {
			t.Fatalf("internal header %q let the call through", v)
		}
	}
	g.d.Internal = ""
	if a := serve(g, "GET", "/api/search?q=x", "", "", InternalHeader, ""); a.served {
		t.Fatal("an empty internal token opened /api")
	}
}

// TestLoadingRefusesChargedCallsBeforePayment: while the index loads after a
// start, /api and MCP tools/call answer 503 with Retry-After before any
// payment is taken or key verified; the free paths still pass.
func TestLoadingRefusesChargedCallsBeforePayment(t *testing.T) {
	pay := &fakePayments{}
	g, _ := newGuard(true, pay)
	loading := &core.Error{Kind: core.KindLoading, Msg: "the search index is still loading after a start (national: 0 of 9 resources indexed); retry in a few seconds"}
	var state error = loading
	g.d.Loading = func() error { return state }
	call := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_climate_data","arguments":{"query":"betong"}}}`
	for _, tc := range []struct{ method, path, auth, body string }{
		{"GET", "/api/search?q=x", "Payment good", ""},
		{"GET", "/api/resources", "Bearer good", ""},
		{"GET", "/api/resources", "", ""},
		{"POST", "/mcp", "Payment good", call},
	} {
		a := serve(g, tc.method, tc.path, tc.auth, tc.body)
		if a.served || a.status != 503 || a.header.Get("Retry-After") != "2" || !strings.Contains(a.body, "still loading") || !strings.Contains(a.body, "nothing was charged") {
			t.Errorf("%s %s (%s) while loading: %d served=%v %v %s", tc.method, tc.path, tc.auth, a.status, a.served, a.header, a.body)
		}
	}
	if len(pay.calls) != 0 {
		t.Errorf("payments were asked about while loading: %v", pay.calls)
	}
	for _, p := range []string{"/healthz", "/readyz", "/openapi.yaml"} {
		if a := serve(g, "GET", p, "", ""); !a.served {
			t.Errorf("%s while loading: %d", p, a.status)
		}
	}
	if a := serve(g, "POST", "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); !a.served {
		t.Errorf("tools/list while loading: %d", a.status)
	}
	state = nil
	if a := serve(g, "GET", "/api/search?q=x", "Payment good", ""); !a.served || len(pay.calls) != 1 {
		t.Errorf("paid call once loaded: %d served=%v, %d payment calls", a.status, a.served, len(pay.calls))
	}
}

// TestMetricsNeedTheAdminToken: /metrics is the operator's, like /admin:
// no customer key, payment or console cookie opens it, the admin token does.
func TestMetricsNeedTheAdminToken(t *testing.T) {
	g, _ := newGuard(true, &fakePayments{})
	for _, auth := range []string{"", "Bearer good", "Payment good"} {
		if a := serve(g, "GET", "/metrics", auth, ""); a.served || a.status != 401 {
			t.Errorf("/metrics with %q: %d served=%v", auth, a.status, a.served)
		}
	}
	if a := serve(g, "GET", "/metrics", "", "", "Cookie", "operator"); a.served {
		t.Errorf("/metrics opened by a console session")
	}
	if a := serve(g, "GET", "/metrics", "", "", "X-Admin-Token", "wrong"); a.served {
		t.Errorf("/metrics opened by a wrong token")
	}
	if a := serve(g, "GET", "/metrics", "", "", "X-Admin-Token", adminToken); !a.served || a.status != 200 {
		t.Errorf("/metrics with the admin token: %d served=%v", a.status, a.served)
	}
}
