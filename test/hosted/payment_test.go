package hosted

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const paymentSecret = "hosted-payment-secret-0123456789abcdef"

// paymentEnv runs the binary built with the test payment method (-tags
// hosted,paymenttest): payment offered, method "test", the demo snapshot as
// data (the publisher is unreachable).
func paymentEnv(t *testing.T) map[string]string {
	env := baseEnv(t)
	for k, v := range map[string]string{
		"SERVICE_PAYMENT_SECRET": paymentSecret, "SERVICE_PAYMENT_METHOD": "test", "SERVICE_PAYMENT_AMOUNT": "10000",
		"SERVICE_PAYMENT_CURRENCY": "0x20c0000000000000000000000000000000000001", "SERVICE_PAYMENT_RECIPIENT": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e",
		"SERVICE_BOOT_INGEST": "true", "SERVICE_UPSTREAM_URL": "http://127.0.0.1:1", "SERVICE_EXCEL_URL_SV": "http://127.0.0.1:1/sv.xlsx",
		"SERVICE_EXCEL_URL_EN": "http://127.0.0.1:1/en.xlsx", "SERVICE_INGEST_TIMEOUT": "2s",
	} {
		env[k] = v
	}
	return env
}

// startPaymentBinary runs the -tags hosted,paymenttest binary.
func startPaymentBinary(t *testing.T) *proc {
	t.Helper()
	return startBin(t, paymentBinPath, paymentEnv(t))
}

// mppxReport is what test/payment/client.mjs prints.
type mppxReport struct {
	Challenge, Paid   mppxAnswer
	Replay, OtherCall *mppxAnswer
}

type mppxAnswer struct {
	Status       int    `json:"status"`
	CacheControl string `json:"cacheControl"`
	Challenge    *struct {
		ID       string         `json:"id"`
		Realm    string         `json:"realm"`
		Method   string         `json:"method"`
		Intent   string         `json:"intent"`
		Request  map[string]any `json:"request"`
		Verified bool           `json:"verified"`
	} `json:"challenge"`
	ContentType string          `json:"contentType"`
	Problem     json.RawMessage `json:"problem"`
	Receipt     map[string]any  `json:"receipt"`
	Body        string          `json:"body"`
}

func (a *mppxAnswer) problemType() string {
	var p struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(a.Problem, &p)
	return p.Type
}

// runMppx runs the reference client (mppx 0.11.0, pinned in test/payment)
// against url.
func runMppx(t *testing.T, url, otherURL string) mppxReport {
	t.Helper()
	dir, err := filepath.Abs("../payment")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "mppx", "package.json")); err != nil {
		t.Fatalf("test/payment/node_modules lacks mppx: run `npm ci` in test/payment (test/suite.sh does it): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", url)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PAYMENT_SECRET="+paymentSecret, "PAYMENT_OTHER_URL="+otherURL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\n%s", err, stderr.String())
	}
	var r mppxReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("client.mjs printed %q: %v", stdout.String(), err)
	}
	t.Logf("mppx: %s", stdout.String())
	return r
}

// TestMppxPaysTheHostedBinary: the reference client parses and verifies the
// binary's challenge, pays with Mppx.create(...).fetch (402 -> credential ->
// 200 with a receipt), and sees its credential refused, with a fresh
// challenge, when it is replayed or used for another call.
func TestMppxPaysTheHostedBinary(t *testing.T) {
	p := startPaymentBinary(t)
	for _, path := range []string{"/api/search?q=sp%C3%A5nskiva", "/api/resources/national:6000000000", "/api/resources/compare?a=6000000000&b=6000000168", "/api/resources?databases=national"} {
		t.Run(path, func(t *testing.T) {
			r := runMppx(t, p.URL+path, p.URL+"/api/search?q=betong")
			c := r.Challenge
			if c.Status != 402 || c.Challenge == nil || !c.Challenge.Verified || c.CacheControl != "no-store" ||
				!strings.HasPrefix(c.ContentType, "application/problem+json") || c.problemType() != "https://paymentauth.org/problems/payment-required" {
				t.Fatalf("challenge: %+v", c)
			}
			if c.Challenge.Realm != "127.0.0.1" || c.Challenge.Intent != "charge" || c.Challenge.Request["amount"] != "10000" ||
				c.Challenge.Request["externalId"] != "GET "+path {
				t.Fatalf("challenge parameters: %+v", c.Challenge)
			}
			if r.Paid.Status != 200 || r.Paid.Receipt == nil || r.Paid.Receipt["status"] != "success" || r.Paid.Receipt["method"] != "test" {
				t.Fatalf("paid: %+v", r.Paid)
			}
			if r.Replay == nil || r.Replay.Status != 402 || r.Replay.Challenge == nil || !r.Replay.Challenge.Verified || r.Replay.Challenge.ID == c.Challenge.ID ||
				r.Replay.problemType() != "https://paymentauth.org/problems/invalid-challenge" {
				t.Fatalf("replay: %+v", r.Replay)
			}
			if r.OtherCall == nil || r.OtherCall.Status != 402 || r.OtherCall.Challenge == nil || !r.OtherCall.Challenge.Verified ||
				r.OtherCall.problemType() != "https://paymentauth.org/problems/invalid-challenge" {
				t.Fatalf("another call: %+v", r.OtherCall)
			}
		})
	}
	if strings.Contains(p.stoppedLogs(t), paymentSecret) {
		t.Fatal("the payment secret reached the log")
	}
}

// TestPaymentRefusalsOnTheWire: tampered, expired-looking, malformed and
// refused credentials all answer 402 with a fresh challenge and the draft's
// problem type; a rail outage answers 503; /admin never takes a payment.
func TestPaymentRefusalsOnTheWire(t *testing.T) {
	p := startPaymentBinary(t)
	url := p.URL + "/api/search?q=betong"
	fresh := do(t, "GET", url, "")
	if fresh.Status != 402 {
		t.Fatalf("no credential: %d", fresh.Status)
	}
	params := parseChallenge(t, fresh.Header.Get("WWW-Authenticate"))
	cred := func(ch map[string]string, payload map[string]any) string {
		b, _ := json.Marshal(map[string]any{"challenge": ch, "source": "did:test:payer", "payload": payload})
		return "Payment " + base64URL(b)
	}
	ok := map[string]any{"reference": "ref-" + params["id"][:8], "amount": "10000", "currency": "0x20c0000000000000000000000000000000000001",
		"recipient": "0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "externalId": "GET /api/search?q=betong"}
	tampered := cloneS(params)
	tampered["realm"] = "evil.example"
	expired := cloneS(params)
	expired["expires"] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	refuse := clone(ok)
	refuse["outcome"] = "refuse"
	outage := clone(ok)
	outage["outcome"] = "outage"
	for _, c := range []struct {
		name, auth, want string
		status           int
	}{
		{"malformed", "Payment !!!", "malformed-credential", 402},
		{"tampered realm", cred(tampered, ok), "invalid-challenge", 402},
		{"expired (id no longer matches)", cred(expired, ok), "invalid-challenge", 402},
		{"verification failed", cred(params, refuse), "verification-failed", 402},
		{"rail outage", cred(params, outage), "", 503},
	} {
		a := do(t, "GET", url, "", "Authorization", c.auth)
		if a.Status != c.status {
			t.Errorf("%s: %d %s", c.name, a.Status, a.Body)
			continue
		}
		if c.status == 402 && (!strings.Contains(a.Body, "https://paymentauth.org/problems/"+c.want) || !strings.HasPrefix(a.Header.Get("WWW-Authenticate"), "Payment id=")) {
			t.Errorf("%s: %v %s", c.name, a.Header, a.Body)
		}
	}
	// The untouched challenge still pays once: the refusals spent nothing.
	if a := do(t, "GET", url, "", "Authorization", cred(params, ok)); a.Status != 200 || a.Header.Get("Payment-Receipt") == "" || !strings.HasPrefix(a.Header.Get("Cache-Control"), "private") {
		t.Fatalf("paying after the refusals: %d %v %s", a.Status, a.Header, a.Body)
	}
	// ... and only once.
	if a := do(t, "GET", url, "", "Authorization", cred(params, ok)); a.Status != 402 || !strings.Contains(a.Body, "invalid-challenge") {
		t.Fatalf("replay: %d %s", a.Status, a.Body)
	}
	// Payments never reach /admin.
	if a := do(t, "POST", p.URL+"/admin/ingest/run?catalog=national", "", "Authorization", cred(params, ok)); a.Status != 401 {
		t.Fatalf("a payment on /admin: %d", a.Status)
	}
}

func cloneS(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func base64URL(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// parseChallenge reads the auth-params of a `Payment` challenge.
func parseChallenge(t *testing.T, h string) map[string]string {
	t.Helper()
	rest, ok := strings.CutPrefix(h, "Payment ")
	if !ok {
		t.Fatalf("not a Payment challenge: %q", h)
	}
	out := map[string]string{}
	for len(rest) > 0 {
		rest = strings.TrimLeft(rest, ", ")
		name, after, ok := strings.Cut(rest, `="`)
		if !ok {
			break
		}
		var v strings.Builder
		i := 0
		for ; i < len(after) && after[i] != '"'; i++ {
			if after[i] == '\\' && i+1 < len(after) {
				i++
			}
			v.WriteByte(after[i])
		}
		out[name] = v.String()
		rest = after[min(i+1, len(after)):]
	}
	if out["id"] == "" || out["request"] == "" {
		t.Fatalf("challenge without id or request: %q", h)
	}
	return out
}

func clone(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestMppxValidateTheHostedBinary runs `mppx validate` (discovery through
// /openapi.json, then the challenge and error-handling checks of every paid
// operation it finds). The wallet checks are not run: they need a funded
// wallet on a real chain.
func TestMppxValidateTheHostedBinary(t *testing.T) {
	p := startPaymentBinary(t)
	dir, _ := filepath.Abs("../payment")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("node_modules", "mppx", "dist", "bin.js"), "validate", p.URL, "-j")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var res struct {
		Discovery struct{ Found, Valid bool } `json:"discovery"`
		Endpoints []struct {
			Method, Path             string
			Challenge, ErrorHandling []struct{ Label, Severity, Detail string }
		} `json:"endpoints"`
		Summary struct{ Passed, Failed, Warnings int } `json:"summary"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("mppx validate: %v (%v)\n%s\n%s", err, runErr, stdout.String(), stderr.String())
	}
	if runErr != nil || res.Summary.Failed != 0 || res.Summary.Warnings != 0 || !res.Discovery.Found || !res.Discovery.Valid || len(res.Endpoints) != 7 {
		t.Fatalf("mppx validate (%v): %s", runErr, stdout.String())
	}
	for _, e := range res.Endpoints {
		if len(e.Challenge) == 0 || len(e.ErrorHandling) == 0 {
			t.Errorf("%s %s: no checks ran", e.Method, e.Path)
		}
	}
	t.Logf("mppx validate: %d passed on %d endpoints", res.Summary.Passed, len(res.Endpoints))
}
