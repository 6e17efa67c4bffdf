package hosted

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/keyfile"
	"github.com/climatesearch/climatesearch/adapters/unkey/unkeytest"
)

func TestHostedRefusesToStartWithoutWhatItNeeds(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte(keyfile.Line("acme", "sk_acme_1")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no admin token", map[string]string{"SERVICE_ADMIN_TOKEN": "", "SERVICE_API_KEYS_FILE": keys}, "SERVICE_ADMIN_TOKEN"},
		{"no way in", map[string]string{}, "SERVICE_PAYMENT_SECRET, SERVICE_UNKEY_ROOT_KEY or SERVICE_API_KEYS_FILE"},
		{"two key sources", map[string]string{"SERVICE_API_KEYS_FILE": keys, "SERVICE_UNKEY_ROOT_KEY": "root"}, "choose one source"},
		{"short payment secret", map[string]string{"SERVICE_PAYMENT_SECRET": "short"}, "at least 32"},
		{"price without secret", map[string]string{"SERVICE_API_KEYS_FILE": keys, "SERVICE_PAYMENT_AMOUNT": "1000"}, "without SERVICE_PAYMENT_SECRET"},
		{"tempo without addresses", map[string]string{"SERVICE_PAYMENT_SECRET": paymentSecret, "SERVICE_PAYMENT_AMOUNT": "1000", "SERVICE_PAYMENT_CURRENCY": "USD", "SERVICE_PAYMENT_RECIPIENT": "me", "SERVICE_PAYMENT_RPC_URL": "http://127.0.0.1:9"}, "0x address"},
		{"tempo without an RPC URL", map[string]string{"SERVICE_PAYMENT_SECRET": paymentSecret, "SERVICE_PAYMENT_AMOUNT": "1000", "SERVICE_PAYMENT_CURRENCY": "0x20c0000000000000000000000000000000000001", "SERVICE_PAYMENT_RECIPIENT": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e"}, "SERVICE_PAYMENT_RPC_URL"},
		{"a zero price", map[string]string{"SERVICE_PAYMENT_SECRET": paymentSecret, "SERVICE_PAYMENT_AMOUNT": "0"}, "SERVICE_PAYMENT_AMOUNT"},
		{"a malformed key file", map[string]string{"SERVICE_API_KEYS_FILE": writeFile(t, "acme not-a-hash\n")}, "line 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := baseEnv(t)
			for k, v := range c.env {
				env[k] = v
			}
			p := spawn(t, env)
			code := p.exit(t)
			out := strings.TrimSpace(p.stderr.String())
			if code == 0 || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, stderr %q, want it to name %q", code, out, c.want)
			}
		})
	}
}

func writeFile(t *testing.T, s string) string {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The decision order for keys, over the key file, and what /admin, the
// console and the public paths do with and without them.
func TestKeyFileGuardsAPIAndMCP(t *testing.T) {
	env := baseEnv(t)
	env["SERVICE_API_KEYS_FILE"] = writeFile(t, "# customers\n"+keyfile.Line("acme", "sk_acme_1")+"\n")
	p := start(t, env)

	for _, path := range []string{"/healthz", "/readyz", "/openapi.yaml", "/docs", "/docs/swagger-ui.css", "/console/static/console.css"} {
		if a := do(t, "GET", p.URL+path, ""); a.Status != 200 {
			t.Errorf("public %s: %d", path, a.Status)
		}
	}
	if a := do(t, "GET", p.URL+"/api/resources", "", "Authorization", "Bearer sk_acme_1"); a.Status != 200 {
		t.Fatalf("a valid key: %d %s", a.Status, a.Body)
	}
	a := do(t, "GET", p.URL+"/api/resources", "", "Authorization", "Bearer sk_nobody")
	if a.Status != 401 || a.Header.Get("WWW-Authenticate") == "" || !strings.Contains(a.Header.Get("WWW-Authenticate"), `error="invalid_token"`) || !strings.Contains(a.Body, `"error"`) {
		t.Fatalf("an unknown key: %d %v %s", a.Status, a.Header, a.Body)
	}
	// No credential and no payment offered: 401 with a Bearer challenge.
	a = do(t, "GET", p.URL+"/api/search?q=betong", "")
	if a.Status != 401 || !strings.HasPrefix(a.Header.Get("WWW-Authenticate"), `Bearer realm="127.0.0.1"`) {
		t.Fatalf("no credential: %d %v", a.Status, a.Header)
	}
	// /admin never takes a customer key; the admin token works.
	if a := do(t, "GET", p.URL+"/admin/webhooks", "", "Authorization", "Bearer sk_acme_1"); a.Status != 401 {
		t.Fatalf("a customer key on /admin: %d", a.Status)
	}
	if a := do(t, "GET", p.URL+"/admin/webhooks", "", "X-Admin-Token", adminToken); a.Status != 200 {
		t.Fatalf("the admin token on /admin: %d %s", a.Status, a.Body)
	}
	// ... and the admin token does not call /api for free.
	if a := do(t, "GET", p.URL+"/api/resources", "", "X-Admin-Token", adminToken); a.Status != 401 {
		t.Fatalf("the admin token on /api: %d", a.Status)
	}
	// The console is for signed-in operators only, whatever else is sent.
	if a := do(t, "GET", p.URL+"/?q=betong", "", "Authorization", "Bearer sk_acme_1"); a.Status != 303 || !strings.HasPrefix(a.Header.Get("Location"), "/signin") {
		t.Fatalf("console with a customer key: %d %s", a.Status, a.Header.Get("Location"))
	}
	a = do(t, "POST", p.URL+"/signin", "token="+adminToken+"&next=%2Fdata", "Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "same-origin")
	cookie := a.Header.Get("Set-Cookie")
	if a.Status != 303 || cookie == "" {
		t.Fatalf("sign in: %d", a.Status)
	}
	if a := do(t, "GET", p.URL+"/data", "", "Cookie", strings.Split(cookie, ";")[0]); a.Status != 200 {
		t.Fatalf("console after signing in: %d", a.Status)
	}
	// The operator's inspector calls /api and /mcp of its own process, and
	// the guard lets exactly those through.
	a = do(t, "GET", p.URL+"/?q=betong&vector=true&inspect=true", "", "Cookie", strings.Split(cookie, ";")[0])
	if a.Status != 200 || !strings.Contains(a.Body, "REST and MCP agree") || strings.Contains(a.Body, "HTTP 401") {
		t.Fatalf("inspector in the hosted build: %d %.3000s", a.Status, a.Body)
	}
	if a := do(t, "GET", p.URL+"/api/resources", "", "X-Climatesearch-Internal", "guess"); a.Status != 401 {
		t.Fatalf("a guessed internal header: %d", a.Status)
	}

	// MCP: connecting and listing the tools are free; calling one is not.
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	a = do(t, "POST", p.URL+"/mcp", initBody, "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	sid := a.Header.Get("Mcp-Session-Id")
	if a.Status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", a.Status, a.Body)
	}
	h := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Mcp-Session-Id", sid}
	do(t, "POST", p.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h...)
	if a := do(t, "POST", p.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h...); a.Status != 200 || !strings.Contains(a.Body, "search_climate_data") {
		t.Fatalf("tools/list: %d %s", a.Status, a.Body)
	}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_resource_details","arguments":{"id":"national:6000000000"}}}`
	if a := do(t, "POST", p.URL+"/mcp", call, h...); a.Status != 401 {
		t.Fatalf("tools/call without a key: %d %s", a.Status, a.Body)
	}
	if a := do(t, "POST", p.URL+"/mcp", call, append(h, "Authorization", "Bearer sk_acme_1")...); a.Status != 200 || !strings.Contains(a.Body, `"result"`) {
		t.Fatalf("tools/call with a key: %d %s", a.Status, a.Body)
	}
	if logs := p.stoppedLogs(t); strings.Contains(logs, "sk_acme_1") || strings.Contains(logs, adminToken) {
		t.Fatal("a key or the admin token reached the log")
	}
}

// Unkey's wire format: verdicts, rate limits, an outage, and the cache.
func TestUnkeyVerdictsOutageAndCache(t *testing.T) {
	un := unkeytest.NewServer(t, "unkey_root_test")
	un.AddKey("sk_valid", unkeytest.Key{Name: "acme"})
	un.AddKey("sk_expired", unkeytest.Key{Code: "EXPIRED"})
	un.AddKey("sk_disabled", unkeytest.Key{Code: "DISABLED"})
	reset := time.Now().Add(30 * time.Second).UnixMilli()
	un.AddKey("sk_limited", unkeytest.Key{Code: "RATE_LIMITED", Ratelimits: []unkeytest.Ratelimit{{Name: "requests", Exceeded: true, Limit: 10, Duration: 60000, Reset: reset}}})
	env := baseEnv(t)
	env["SERVICE_UNKEY_URL"] = un.URL
	env["SERVICE_UNKEY_ROOT_KEY"] = "unkey_root_test"
	p := start(t, env)

	for i := 0; i < 20; i++ {
		if a := do(t, "GET", p.URL+"/api/resources", "", "Authorization", "Bearer sk_valid"); a.Status != 200 {
			t.Fatalf("valid key, request %d: %d %s", i, a.Status, a.Body)
		}
	}
	if n := un.Calls(); n != 1 {
		t.Fatalf("20 requests with one key made %d key-service calls, want 1", n)
	}
	for _, k := range []string{"sk_expired", "sk_disabled", "sk_unknown"} {
		a := do(t, "GET", p.URL+"/api/resources", "", "Authorization", "Bearer "+k)
		if a.Status != 401 || !strings.Contains(a.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: %d %v", k, a.Status, a.Header)
		}
	}
	a := do(t, "GET", p.URL+"/api/resources", "", "Authorization", "Bearer sk_limited")
	if a.Status != 429 || a.Header.Get("Retry-After") == "" || a.Header.Get("Retry-After") == "0" {
		t.Fatalf("rate-limited: %d %v %s", a.Status, a.Header, a.Body)
	}
	// The key service fails: 503, not a bad key (a new key, so the cache cannot answer).
	un.Fail(503)
	un.AddKey("sk_new", unkeytest.Key{})
	a = do(t, "GET", p.URL+"/api/resources", "", "Authorization", "Bearer sk_new")
	if a.Status != 503 || !strings.Contains(a.Body, "key service") {
		t.Fatalf("key service down: %d %s", a.Status, a.Body)
	}
	// ... while a cached valid key keeps working.
	if a := do(t, "GET", p.URL+"/api/resources", "", "Authorization", "Bearer sk_valid"); a.Status != 200 {
		t.Fatalf("cached key during the outage: %d", a.Status)
	}
	if logs := p.stoppedLogs(t); strings.Contains(logs, "sk_valid") || strings.Contains(logs, "unkey_root_test") {
		t.Fatal("a key reached the log")
	}
}
