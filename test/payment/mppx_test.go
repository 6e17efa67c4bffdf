// Package payment_test proves wire compatibility of core/payment with the
// reference client of the HTTP Payment scheme, mppx 0.11.0 (npm, pinned by
// package-lock.json): a small HTTP server guarded by core/payment (with
// the badger ledger and the test payment method) answers client.mjs,
// which parses and verifies the challenge with mppx, pays with
// Mppx.create(...).fetch and the test method's client side, and replays
// the credential.
package payment_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/payment"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/payment/testmethod"
)

const secret = "a-test-secret-of-at-least-32-bytes!!"

// guarded answers every request after payment, as the hosted guard will:
// 402 with the challenge and its problem, 503 on an outage, else the
// handler's answer with Payment-Receipt.
func guarded(p ports.Payments) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		call := core.Call{Host: r.Host, Method: r.Method, PathQuery: r.URL.RequestURI(), What: "search"}
		if len(body) > 0 {
			sum := sha256.Sum256(body)
			call.BodyDigest = "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
		}
		challenge := func(ch core.PaymentChallenge) {
			w.Header().Set("WWW-Authenticate", ch.Header)
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusPaymentRequired)
			_, _ = w.Write(ch.Problem)
		}
		auth := r.Header.Get("Authorization")
		if auth == "" {
			challenge(p.Challenge(r.Context(), call))
			return
		}
		receipt, header, err := p.Pay(r.Context(), call, auth)
		var refused *core.PaymentRefused
		switch {
		case errors.As(err, &refused):
			challenge(refused.Challenge)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Payment-Receipt", header)
		w.Header().Set("Cache-Control", "private")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"paid": receipt.Reference, "path": r.URL.RequestURI(), "body": string(body)})
	})
}

func newServer(t *testing.T) (*httptest.Server, *testmethod.Method) {
	t.Helper()
	st, err := badgerstore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	m := testmethod.New()
	svc, err := payment.New(payment.Config{
		Secret: []byte(secret), Method: testmethod.Name, Amount: "10000",
		Currency:  "0x20C000000000000000000000b9537d11c60E8b50",
		Recipient: "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00",
	}, []ports.PaymentMethod{m}, st)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", guarded(svc))
	mux.HandleFunc("GET /openapi.json", serveDiscovery)
	mux.HandleFunc("GET /llms.txt", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("# test server\nGET /api/search?q=… costs 10000 base units, paid with the HTTP Payment scheme.\n"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, m
}

// serveDiscovery is the discovery document `mppx validate` reads (not
// guarded): OpenAPI at /openapi.json, each paid operation with
// x-payment-info (amount, currency, intent, method) and a 402 response
// (node_modules/mppx/dist/discovery/Discovery.js, cli/validate/discovery.js).
func serveDiscovery(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]string{"title": "payment test server", "version": "1"},
		"paths": map[string]any{
			"/api/search": map[string]any{"get": map[string]any{
				"summary":    "search",
				"parameters": []any{map[string]any{"name": "q", "in": "query", "required": true, "schema": map[string]string{"type": "string"}}},
				"x-payment-info": map[string]string{
					"amount": "10000", "currency": "0x20C000000000000000000000b9537d11c60E8b50", "intent": "charge", "method": testmethod.Name,
				},
				"responses": map[string]any{"200": map[string]string{"description": "hits"}, "402": map[string]string{"description": "Payment Required"}},
			}},
		},
	})
}

type challengeReport struct {
	ID          string         `json:"id"`
	Realm       string         `json:"realm"`
	Method      string         `json:"method"`
	Intent      string         `json:"intent"`
	Request     map[string]any `json:"request"`
	Description string         `json:"description"`
	Digest      string         `json:"digest"`
	Expires     string         `json:"expires"`
	Opaque      string         `json:"opaque"`
	Verified    bool           `json:"verified"`
}

type problem struct {
	Type, Title, Detail, ChallengeID string
	Status                           int
}

type answer struct {
	Status       int              `json:"status"`
	CacheControl string           `json:"cacheControl"`
	Challenge    *challengeReport `json:"challenge"`
	Challenges   int              `json:"challenges"`
	ContentType  string           `json:"contentType"`
	Problem      json.RawMessage  `json:"problem"`
	Receipt      map[string]any   `json:"receipt"`
	Body         string           `json:"body"`
}

func (a answer) problem(t *testing.T) problem {
	t.Helper()
	var p problem
	if err := json.Unmarshal(a.Problem, &p); err != nil {
		t.Fatalf("problem body %s: %v", a.Problem, err)
	}
	return p
}

type report struct {
	Challenge answer  `json:"challenge"`
	Paid      answer  `json:"paid"`
	Replay    *answer `json:"replay"`
	OtherCall *answer `json:"otherCall"`
}

// runClient runs client.mjs against url (with body: a POST).
func runClient(t *testing.T, url, otherURL string, body ...string) report {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: install Node.js 20 or later to run the mppx wire check: %v", err)
	}
	if _, err := os.Stat(filepath.Join("node_modules", "mppx", "package.json")); err != nil {
		t.Fatalf("test/payment/node_modules lacks mppx: run `npm ci` in test/payment (test/suite.sh does it): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"client.mjs", url}, body...)...)
	cmd.Env = append(os.Environ(), "PAYMENT_SECRET="+secret, "PAYMENT_OTHER_URL="+otherURL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\n%s", err, stderr.String())
	}
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("client.mjs printed %q: %v", stdout.String(), err)
	}
	t.Logf("mppx report: %s", stdout.String())
	return r
}

// checkChallenge: mppx parsed the 402's challenge and its id verifies with
// the secret (mppx recomputed the HMAC over what it parsed).
func checkChallenge(t *testing.T, what string, a answer, wantType, wantExternalID string) {
	t.Helper()
	if a.Status != http.StatusPaymentRequired || a.Challenge == nil {
		t.Fatalf("%s: status %d, challenge %v", what, a.Status, a.Challenge)
	}
	c := a.Challenge
	if !c.Verified {
		t.Errorf("%s: mppx's Challenge.verify refuses the id", what)
	}
	if c.Method != testmethod.Name || c.Intent != "charge" || c.Realm != "127.0.0.1" || c.Request["externalId"] != wantExternalID ||
		c.Request["amount"] != "10000" || c.Expires == "" || c.Opaque == "" {
		t.Errorf("%s: challenge %+v", what, c)
	}
	if !strings.HasPrefix(a.ContentType, "application/problem+json") {
		t.Errorf("%s: content type %q", what, a.ContentType)
	}
	p := a.problem(t)
	if p.Type != wantType || p.Status != 402 || p.ChallengeID != c.ID {
		t.Errorf("%s: problem %+v", what, p)
	}
}

func TestMppxPaysASearch(t *testing.T) {
	srv, m := newServer(t)
	r := runClient(t, srv.URL+"/api/search?q=sp%C3%A5nskiva&limit=5", srv.URL+"/api/search?q=betong")

	checkChallenge(t, "challenge", r.Challenge, payment.ProblemPaymentRequired, "GET /api/search?q=sp%C3%A5nskiva&limit=5")
	if r.Challenge.Challenges != 1 || r.Challenge.CacheControl != "no-store" {
		t.Errorf("challenge answer %+v", r.Challenge)
	}

	// Mppx.create(...).fetch: 402 -> credential -> 200 with a receipt.
	if r.Paid.Status != http.StatusOK {
		t.Fatalf("paid: %d %s", r.Paid.Status, r.Paid.Problem)
	}
	ref, _ := r.Paid.Receipt["reference"].(string)
	if r.Paid.Receipt["method"] != testmethod.Name || r.Paid.Receipt["status"] != "success" || !strings.HasPrefix(ref, "test-") {
		t.Errorf("receipt %v", r.Paid.Receipt)
	}
	if !strings.Contains(r.Paid.Body, ref) {
		t.Errorf("body %s", r.Paid.Body)
	}
	proofs := m.Proofs()
	if len(proofs) == 0 || proofs[0].Request.Path != "GET /api/search?q=sp%C3%A5nskiva&limit=5" || proofs[0].Source != "test:anonymous-agent" {
		t.Errorf("proofs %+v", proofs)
	}

	// The same credential again, and for another search: refused with a
	// fresh challenge mppx verifies.
	if r.Replay == nil || r.OtherCall == nil {
		t.Fatal("no replay")
	}
	checkChallenge(t, "replay", *r.Replay, payment.ProblemInvalidChallenge, "GET /api/search?q=sp%C3%A5nskiva&limit=5")
	if r.Replay.Challenge.ID == r.Challenge.Challenge.ID {
		t.Error("replay: the refusal's challenge is not fresh")
	}
	if d := r.Replay.problem(t).Detail; !strings.Contains(d, "already used") {
		t.Errorf("replay detail %q", d)
	}
	checkChallenge(t, "other call", *r.OtherCall, payment.ProblemInvalidChallenge, "GET /api/search?q=betong")
	if d := r.OtherCall.problem(t).Detail; !strings.Contains(d, "another call") {
		t.Errorf("other call detail %q", d)
	}
	// The replay reaches the method (the ledger spends after verifying);
	// the other call is refused before it.
	if n := len(m.Proofs()); n != 2 {
		t.Errorf("the method verified %d payments, want 2", n)
	}
}

// A call with a body: the challenge carries its digest, which mppx echoes,
// and Mppx's fetch sends the same body again with the credential.
func TestMppxPaysAPostWithABody(t *testing.T) {
	srv, _ := newServer(t)
	body := `{"catalog":"dkbr","resources":[{"id":"1","name":"Betong C30/37 — 🌍"}]}`
	r := runClient(t, srv.URL+"/api/ingest/batch", "", body)
	checkChallenge(t, "challenge", r.Challenge, payment.ProblemPaymentRequired, "POST /api/ingest/batch")
	sum := sha256.Sum256([]byte(body))
	if want := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"; r.Challenge.Challenge.Digest != want {
		t.Errorf("digest %q, want %q", r.Challenge.Challenge.Digest, want)
	}
	if r.Paid.Status != http.StatusOK || !strings.Contains(r.Paid.Body, "dkbr") {
		t.Fatalf("paid: %d %s %s", r.Paid.Status, r.Paid.Problem, r.Paid.Body)
	}
}

// mppx's own conformance check of a server, `mppx validate` (discovery
// from /openapi.json, the 402 and its challenge, a malformed credential
// answered 402 with a fresh challenge): no check fails. Its payment step
// pays only tempo, stripe and evm, so it skips the test method; the
// payment is proven by the tests above.
func TestMppxValidate(t *testing.T) {
	srv, _ := newServer(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("node_modules", "mppx", "dist", "bin.js"), "validate", srv.URL, "-j")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var res struct {
		Discovery struct {
			Found bool `json:"found"`
			Valid bool `json:"valid"`
		} `json:"discovery"`
		Endpoints []struct {
			Method, Path  string
			Challenge     []struct{ Label, Severity, Detail string }
			ErrorHandling []struct{ Label, Severity, Detail string }
		} `json:"endpoints"`
		Summary struct{ Passed, Failed, Warnings int } `json:"summary"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("mppx validate: %v (%v)\n%s\n%s", err, runErr, stdout.String(), stderr.String())
	}
	t.Logf("mppx validate: %s", stdout.String())
	if runErr != nil || res.Summary.Failed != 0 || res.Summary.Warnings != 0 || !res.Discovery.Found || !res.Discovery.Valid {
		t.Errorf("mppx validate failed (%v): %+v", runErr, res.Summary)
	}
	if len(res.Endpoints) != 1 || res.Endpoints[0].Path != "/api/search" {
		t.Fatalf("endpoints %+v", res.Endpoints)
	}
	labels := map[string]string{}
	for _, c := range append(res.Endpoints[0].Challenge, res.Endpoints[0].ErrorHandling...) {
		labels[c.Label] = c.Severity
	}
	for _, l := range []string{"Returns 402 without credentials", "Challenge parseable", "Challenge expires in the future",
		"Realm matches server hostname", "Malformed credential returns 402", "Error response includes fresh challenge"} {
		if labels[l] != "pass" {
			t.Errorf("%s: %q", l, labels[l])
		}
	}
}

// MCP: the challenge object of a -32042 error (PaymentChallenge.Object) is
// what mppx's MCP client parses and verifies, and the credential object it
// puts in params._meta["org.paymentauth/credential"] pays the call.
func TestMppxMCPObjects(t *testing.T) {
	st, err := badgerstore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := payment.New(payment.Config{
		Secret: []byte(secret), Method: testmethod.Name, Amount: "10000", Currency: "0x20C000000000000000000000b9537d11c60E8b50",
		Recipient: "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00",
	}, []ports.PaymentMethod{testmethod.New()}, st)
	if err != nil {
		t.Fatal(err)
	}
	call := core.Call{Host: "localhost:8080", Method: "POST", PathQuery: "/mcp", What: "tools/call search_climate_data"}
	ch := svc.Challenge(context.Background(), call)

	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: %v", err)
	}
	cmd := exec.Command(node, "mcp.mjs")
	cmd.Env = append(os.Environ(), "PAYMENT_SECRET="+secret)
	cmd.Stdin = bytes.NewReader(ch.Object)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp.mjs: %v\n%s", err, stderr.String())
	}
	var out struct {
		Verified   bool            `json:"verified"`
		Credential json.RawMessage `json:"credential"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("mcp.mjs printed %q: %v", stdout.String(), err)
	}
	if !out.Verified {
		t.Errorf("mppx's Challenge.verify refuses the MCP challenge object %s", ch.Object)
	}
	r, hdr, err := svc.Pay(context.Background(), call, string(out.Credential))
	if err != nil || hdr == "" || !strings.HasPrefix(r.Reference, "test-") {
		t.Fatalf("the _meta credential %s: %v", out.Credential, err)
	}
}
