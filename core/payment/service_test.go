package payment

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// --- fakes -------------------------------------------------------------------

// fakeMethod accepts a payload {"reference": "…"} and refuses or fails
// when told to.
type fakeMethod struct {
	name   string
	err    error
	proofs []core.PaymentProof
}

func (m *fakeMethod) Name() string { return m.name }

func (m *fakeMethod) Verify(_ context.Context, p core.PaymentProof) (core.PaymentReceipt, error) {
	m.proofs = append(m.proofs, p)
	if m.err != nil {
		return core.PaymentReceipt{}, m.err
	}
	var pl struct {
		Reference string `json:"reference"`
	}
	if err := json.Unmarshal(p.Payload, &pl); err != nil || pl.Reference == "" {
		return core.PaymentReceipt{}, core.Invalidf("no reference")
	}
	return core.PaymentReceipt{Method: m.name, Reference: pl.Reference}, nil
}

// memLedger is ports.PaymentLedger in memory.
type memLedger struct {
	mu   sync.Mutex
	used map[string]time.Time
	err  error
}

func (l *memLedger) Spend(_ context.Context, id, ref string, until time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return false, l.err
	}
	if l.used == nil {
		l.used = map[string]time.Time{}
	}
	if _, ok := l.used["ch/"+id]; ok {
		return false, nil
	}
	if _, ok := l.used["ref/"+ref]; ok {
		return false, nil
	}
	l.used["ch/"+id], l.used["ref/"+ref] = until, until
	return true, nil
}

var _ ports.PaymentLedger = (*memLedger)(nil)

// --- helpers -----------------------------------------------------------------

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newService(t *testing.T, mods ...func(*Config)) (*Service, *fakeMethod, *memLedger, *clock) {
	t.Helper()
	clk := &clock{now: t0}
	cfg := Config{
		Secret:    []byte("test-secret-of-at-least-16-bytes"),
		Amount:    "10000",
		Currency:  "0x20c0000000000000000000000000000000000000",
		Recipient: "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00",
		Now:       clk.Now,
	}
	for _, m := range mods {
		m(&cfg)
	}
	method := &fakeMethod{name: "tempo"}
	if cfg.Method != "" {
		method.name = cfg.Method
	}
	ledger := &memLedger{}
	s, err := New(cfg, []ports.PaymentMethod{method}, ledger)
	if err != nil {
		t.Fatal(err)
	}
	return s, method, ledger, clk
}

var searchCall = core.Call{Host: "api.example.com:8080", Method: "GET", PathQuery: "/api/search?q=sp%C3%A5nskiva", What: "search"}

// parseChallengeHeader reads a WWW-Authenticate value with the rules of
// mppx's Challenge.deserialize (node_modules/mppx/dist/Challenge.js:
// extractPaymentAuthParams, parseAuthParams, readQuotedAuthParamValue,
// the \uXXXX unescape included) and its schema checks (method name,
// expires and digest formats, required parameters).
func parseChallengeHeader(t *testing.T, header string) map[string]string {
	t.Helper()
	if !strings.HasPrefix(header, "Payment ") {
		t.Fatalf("no Payment scheme: %q", header)
	}
	in := []rune(strings.TrimLeft(header[len("Payment"):], " \t"))
	out := map[string]string{}
	i := 0
	isSpace := func(c rune) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	isToken := func(c rune) bool {
		return c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	hex4 := regexp.MustCompile(`^[0-9A-Fa-f]{4}$`)
	for i < len(in) {
		for i < len(in) && (isSpace(in[i]) || in[i] == ',') {
			i++
		}
		if i >= len(in) {
			break
		}
		start := i
		for i < len(in) && isToken(in[i]) {
			i++
		}
		key := strings.ToLower(string(in[start:i]))
		if key == "" {
			t.Fatalf("malformed auth-param at %d in %q", i, header)
		}
		for i < len(in) && isSpace(in[i]) {
			i++
		}
		if i >= len(in) || in[i] != '=' {
			break
		}
		i++
		for i < len(in) && isSpace(in[i]) {
			i++
		}
		var value string
		if i < len(in) && in[i] == '"' {
			i++
			var units []uint16
			closed := false
			for i < len(in) {
				c := in[i]
				i++
				if c == '\\' && i < len(in) {
					if in[i] == 'u' && i+5 <= len(in) && hex4.MatchString(string(in[i+1:i+5])) {
						n, _ := strconv.ParseUint(string(in[i+1:i+5]), 16, 16)
						units = append(units, uint16(n))
						i += 5
						continue
					}
					units = append(units, utf16.Encode([]rune{in[i]})...)
					i++
					continue
				}
				if c == '"' {
					closed = true
					break
				}
				units = append(units, utf16.Encode([]rune{c})...)
			}
			if !closed {
				t.Fatalf("unterminated quoted-string in %q", header)
			}
			value = string(utf16.Decode(units))
		} else {
			start := i
			for i < len(in) && in[i] != ',' {
				i++
			}
			value = strings.TrimSpace(string(in[start:i]))
		}
		if _, dup := out[key]; dup {
			t.Fatalf("duplicate parameter %s", key)
		}
		out[key] = value
	}
	for _, k := range []string{"id", "realm", "method", "intent", "request"} {
		if out[k] == "" {
			t.Fatalf("challenge without %s: %q", k, header)
		}
	}
	if len(out["request"]) > 16*1024 {
		t.Fatalf("request parameter too large")
	}
	if !regexp.MustCompile(`^[a-z][a-z0-9:_-]*$`).MatchString(out["method"]) {
		t.Fatalf("method %q is not lowercase", out["method"])
	}
	if e := out["expires"]; e != "" && !regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$`).MatchString(e) {
		t.Fatalf("expires %q is not what mppx accepts", e)
	}
	if d := out["digest"]; d != "" && !strings.HasPrefix(d, "sha-256=") {
		t.Fatalf("digest %q is not what mppx accepts", d)
	}
	for _, c := range header {
		if c > 0xff {
			t.Fatalf("header has a character a fetch Headers object refuses: %q", c)
		}
	}
	return out
}

// credentialFor builds an Authorization value answering the challenge in
// header, as mppx's Credential.serialize does (JSON.stringify of
// {challenge:{…, request: "<base64url>"}, payload, source}).
func credentialFor(t *testing.T, header string, payload any, edit func(map[string]any)) string {
	t.Helper()
	p := parseChallengeHeader(t, header)
	ch := map[string]any{}
	for k, v := range p {
		ch[k] = v
	}
	if edit != nil {
		edit(ch)
	}
	b, err := json.Marshal(map[string]any{"challenge": ch, "payload": payload, "source": "did:pkh:eip155:4217:0x1111111111111111111111111111111111111111"})
	if err != nil {
		t.Fatal(err)
	}
	return "Payment " + base64.RawURLEncoding.EncodeToString(b)
}

func decodeRequest(t *testing.T, b64 string) map[string]any {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// --- challenge -----------------------------------------------------------------

// The challenge of a fixed clock, secret and nonce, byte for byte as
// mppx 0.11.0 serialises the same challenge (Challenge.from with
// secretKey, then Challenge.serialize, run with node on the npm package):
// the same request bytes, the same HMAC id, the same parameter order and
// quoting.
func TestChallengeGolden(t *testing.T) {
	s, _, _, _ := newService(t)
	s.nonce = func() string { return "AAAAAAAAAAAAAAAAAAAAAA" }
	ch := s.Challenge(context.Background(), searchCall)
	const mppx = `Payment id="oJNQmkk7fGPGO7flDAzVmbOnlpluEyqtNj3q7hhq6Ng", realm="api.example.com", method="tempo", intent="charge", request="eyJhbW91bnQiOiIxMDAwMCIsImN1cnJlbmN5IjoiMHgyMGMwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwIiwiZGVzY3JpcHRpb24iOiJzZWFyY2giLCJleHRlcm5hbElkIjoiR0VUIC9hcGkvc2VhcmNoP3E9c3AlQzMlQTVuc2tpdmEiLCJyZWNpcGllbnQiOiIweDc0MmQzNUNjNjYzNEMwNTMyOTI1YTNiODQ0QmM5ZTc1OTVmOGZFMDAifQ", description="search", expires="2026-11-23T12:05:00Z", opaque="eyJub25jZSI6IkFBQUFBQUFBQUFBQUFBQUFBQUFBQUEifQ"`
	if ch.Header != mppx {
		t.Errorf("header\n got %s\nwant %s", ch.Header, mppx)
	}
	if ch.ID != "oJNQmkk7fGPGO7flDAzVmbOnlpluEyqtNj3q7hhq6Ng" {
		t.Errorf("id %s", ch.ID)
	}
	p := parseChallengeHeader(t, ch.Header)
	req := decodeRequest(t, p["request"])
	if req["externalId"] != "GET /api/search?q=sp%C3%A5nskiva" || req["amount"] != "10000" {
		t.Errorf("request %v", req)
	}
	var prob map[string]any
	if err := json.Unmarshal(ch.Problem, &prob); err != nil {
		t.Fatal(err)
	}
	if prob["type"] != ProblemPaymentRequired || prob["title"] != "Payment Required" || prob["status"] != 402.0 ||
		prob["challengeId"] != ch.ID || prob["detail"] != "Payment is required (search)." {
		t.Errorf("problem %s", ch.Problem)
	}
	var obj map[string]any
	if err := json.Unmarshal(ch.Object, &obj); err != nil {
		t.Fatal(err)
	}
	if obj["id"] != ch.ID || obj["opaque"] != p["opaque"] || obj["request"].(map[string]any)["externalId"] != req["externalId"] {
		t.Errorf("object %s", ch.Object)
	}
}

// A body digest, a chain id and a description beyond Latin-1: the id is
// the one mppx computes, and the header, read with mppx's rules, carries
// the same values as mppx's own serialisation (which leaves "ö" raw; Go
// escapes it, since a Go header is bytes and fetch reads them as Latin-1).
func TestChallengeGoldenDigestAndUnicode(t *testing.T) {
	s, _, _, _ := newService(t, func(c *Config) { c.ChainID = 4217 })
	s.nonce = func() string { return "AAAAAAAAAAAAAAAAAAAAAA" }
	call := core.Call{Host: "api.example.com", Method: "post", PathQuery: "/api/resources/batch?catalog=dkbr",
		BodyDigest: "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:", What: "sök — “klimat” 🌍"}
	ch := s.Challenge(context.Background(), call)
	const mppx = `Payment id="r3WtbXIZREORFkiuz6LZP7ctNeoWga04efg07UHwxKM", realm="api.example.com", method="tempo", intent="charge", request="eyJhbW91bnQiOiIxMDAwMCIsImN1cnJlbmN5IjoiMHgyMGMwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwIiwiZGVzY3JpcHRpb24iOiJzw7ZrIOKAlCDigJxrbGltYXTigJ0g8J-MjSIsImV4dGVybmFsSWQiOiJQT1NUIC9hcGkvcmVzb3VyY2VzL2JhdGNoP2NhdGFsb2c9ZGticiIsIm1ldGhvZERldGFpbHMiOnsiY2hhaW5JZCI6NDIxN30sInJlY2lwaWVudCI6IjB4NzQyZDM1Q2M2NjM0QzA1MzI5MjVhM2I4NDRCYzllNzU5NWY4ZkUwMCJ9", description="sök \u2014 \u201cklimat\u201d \ud83c\udf0d", digest="sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:", expires="2026-11-23T12:05:00Z", opaque="eyJub25jZSI6IkFBQUFBQUFBQUFBQUFBQUFBQUFBQUEifQ"`
	got, want := parseChallengeHeader(t, ch.Header), parseChallengeHeader(t, mppx)
	if len(got) != len(want) {
		t.Errorf("parameters\n got %v\nwant %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	if got["description"] != call.What {
		t.Errorf("description %q", got["description"])
	}
}

func TestChallengesAreFresh(t *testing.T) {
	s, _, _, _ := newService(t)
	a := s.Challenge(context.Background(), searchCall)
	b := s.Challenge(context.Background(), searchCall)
	if a.ID == b.ID || a.Header == b.Header {
		t.Fatal("two challenges for the same call in the same second share an id")
	}
}

func TestRealm(t *testing.T) {
	s, _, _, _ := newService(t)
	for host, want := range map[string]string{
		"api.example.com:8080": "api.example.com", "API.example.com": "api.example.com",
		"[::1]:8080": "::1", "127.0.0.1": "127.0.0.1", "": "climatesearch",
	} {
		if got := s.realm(core.Call{Host: host}); got != want {
			t.Errorf("realm(%q) = %q, want %q", host, got, want)
		}
	}
	s2, _, _, _ := newService(t, func(c *Config) { c.Realm = "climatesearch.example" })
	if got := s2.realm(searchCall); got != "climatesearch.example" {
		t.Errorf("configured realm: %q", got)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	m := &fakeMethod{name: "tempo"}
	ok := Config{Secret: []byte("0123456789abcdef"), Amount: "1", Currency: "c", Recipient: "r"}
	cases := map[string]func(*Config){
		"short secret":     func(c *Config) { c.Secret = []byte("short") },
		"decimal amount":   func(c *Config) { c.Amount = "1.5" },
		"zero amount":      func(c *Config) { c.Amount = "000" },
		"no currency":      func(c *Config) { c.Currency = "" },
		"no recipient":     func(c *Config) { c.Recipient = " " },
		"unknown method":   func(c *Config) { c.Method = "stripe" },
		"uppercase method": func(c *Config) { c.Method = "Tempo" },
	}
	for name, mod := range cases {
		cfg := ok
		mod(&cfg)
		methods := []ports.PaymentMethod{m}
		if cfg.Method == "Tempo" {
			methods = []ports.PaymentMethod{&fakeMethod{name: "Tempo"}}
		}
		if _, err := New(cfg, methods, &memLedger{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(ok, []ports.PaymentMethod{m}, nil); err == nil {
		t.Error("no ledger: accepted")
	}
	if _, err := New(ok, []ports.PaymentMethod{m, &fakeMethod{name: "tempo"}}, &memLedger{}); err == nil {
		t.Error("duplicate methods: accepted")
	}
	if s, err := New(ok, []ports.PaymentMethod{m}, &memLedger{}); err != nil || s.cfg.TTL != 5*time.Minute || s.cfg.Method != "tempo" {
		t.Errorf("defaults: %v %+v", err, s)
	}
}

// --- pay -----------------------------------------------------------------------

func TestPayAccepts(t *testing.T) {
	s, method, _, _ := newService(t)
	ctx := context.Background()
	ch := s.Challenge(ctx, searchCall)
	auth := credentialFor(t, ch.Header, map[string]string{"reference": "0xabc"}, nil)
	r, hdr, err := s.Pay(ctx, searchCall, auth)
	if err != nil {
		t.Fatal(err)
	}
	if r.Reference != "0xabc" || r.Method != "tempo" || r.Status != "success" || !r.Timestamp.Equal(t0) {
		t.Errorf("receipt %+v", r)
	}
	// Payment-Receipt: base64url JSON that mppx's Receipt.deserialize
	// accepts (method, reference, status "success", an ISO 8601 timestamp).
	raw, err := base64.RawURLEncoding.DecodeString(hdr)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"method":"tempo","reference":"0xabc","status":"success","timestamp":"2026-11-23T12:00:00.000Z"}`
	if string(raw) != want {
		t.Errorf("receipt header %s", raw)
	}
	// The method saw what the call costs and which challenge it pays.
	p := method.proofs[0]
	if p.Request != (core.PaymentRequest{Amount: "10000", Currency: s.cfg.Currency, Recipient: s.cfg.Recipient,
		Path: "GET /api/search?q=sp%C3%A5nskiva", Description: "search"}) {
		t.Errorf("proof request %+v", p.Request)
	}
	if p.ChallengeID != ch.ID || p.Realm != "api.example.com" || p.Method != "tempo" ||
		p.Source != "did:pkh:eip155:4217:0x1111111111111111111111111111111111111111" || !p.Expires.Equal(t0.Add(5*time.Minute)) {
		t.Errorf("proof %+v", p)
	}
}

// MCP carries the credential as a JSON object, its request an object.
func TestPayAcceptsMCPCredentialObject(t *testing.T) {
	s, _, _, _ := newService(t)
	ctx := context.Background()
	call := core.Call{Host: "localhost:8080", Method: "POST", PathQuery: "/mcp", What: "tools/call search_climate_data"}
	ch := s.Challenge(ctx, call)
	cred := `{"challenge":` + string(ch.Object) + `,"payload":{"reference":"r-mcp"}}`
	if _, _, err := s.Pay(ctx, call, cred); err != nil {
		t.Fatal(err)
	}
}

// A credential whose request was re-encoded (padded, keys in another
// order) is the same request: mppx canonicalises it again before checking
// the id, and so does Pay.
func TestPayCanonicalisesTheEchoedRequest(t *testing.T) {
	s, _, _, _ := newService(t)
	ctx := context.Background()
	ch := s.Challenge(ctx, searchCall)
	auth := credentialFor(t, ch.Header, map[string]string{"reference": "r1"}, func(c map[string]any) {
		req := decodeRequest(t, c["request"].(string))
		b, _ := json.MarshalIndent(req, "", "  ") // other whitespace
		c["request"] = base64.URLEncoding.EncodeToString(b)
	})
	if _, _, err := s.Pay(ctx, searchCall, auth); err != nil {
		t.Fatal(err)
	}
}

// Every refusal: a *core.PaymentRefused with a fresh challenge for the call
// and the problem type a client acts on.
func TestPayRefusals(t *testing.T) {
	ctx := context.Background()
	ok := map[string]string{"reference": "0xabc"}
	type tc struct {
		name   string
		call   core.Call // the call paid (default searchCall)
		auth   func(t *testing.T, s *Service, clk *clock) string
		setup  func(m *fakeMethod, l *memLedger, clk *clock)
		typ    string
		detail string
	}
	issued := func(s *Service, call core.Call) string { return s.Challenge(ctx, call).Header }
	tamper := func(param, value string) func(t *testing.T, s *Service, _ *clock) string {
		return func(t *testing.T, s *Service, _ *clock) string {
			return credentialFor(t, issued(s, searchCall), ok, func(c map[string]any) { c[param] = value })
		}
	}
	// resign re-computes the id with the real secret, as if the server had
	// issued the challenge, to reach the checks behind the HMAC.
	resign := func(edit func(c *challenge)) func(t *testing.T, s *Service, _ *clock) string {
		return func(t *testing.T, s *Service, _ *clock) string {
			p := parseChallengeHeader(t, issued(s, searchCall))
			c := challenge{ID: p["id"], Realm: p["realm"], Method: p["method"], Intent: p["intent"], Request: p["request"],
				Description: p["description"], Digest: p["digest"], Expires: p["expires"], Opaque: p["opaque"]}
			edit(&c)
			c.ID = computeID(s.cfg.Secret, c)
			b, _ := json.Marshal(map[string]any{"challenge": map[string]string{"id": c.ID, "realm": c.Realm, "method": c.Method,
				"intent": c.Intent, "request": c.Request, "expires": c.Expires, "opaque": c.Opaque}, "payload": ok})
			return "Payment " + base64.RawURLEncoding.EncodeToString(b)
		}
	}
	otherRequest := func(edit func(m map[string]any)) string {
		m := map[string]any{"amount": "10000", "currency": "0x20c0000000000000000000000000000000000000",
			"recipient": "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00", "externalId": "GET /api/search?q=sp%C3%A5nskiva", "description": "search"}
		edit(m)
		b, _ := canonical(m)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	raw := func(s string) func(*testing.T, *Service, *clock) string {
		return func(*testing.T, *Service, *clock) string { return s }
	}
	b64 := func(s string) string { return "Payment " + base64.RawURLEncoding.EncodeToString([]byte(s)) }
	cases := []tc{
		{name: "not the Payment scheme", auth: raw("Bearer abc"), typ: ProblemMalformedCredential},
		{name: "empty", auth: raw(""), typ: ProblemMalformedCredential},
		{name: "not base64url", auth: raw("Payment %%%"), typ: ProblemMalformedCredential},
		{name: "mppx validate's garbage", auth: raw("Payment dGhpcyBpcyBnYXJiYWdl"), typ: ProblemMalformedCredential},
		{name: "not a JSON object", auth: raw(b64(`[1,2]`)), typ: ProblemMalformedCredential},
		{name: "no challenge", auth: raw(b64(`{"payload":{}}`)), typ: ProblemMalformedCredential},
		{name: "no payload", auth: func(t *testing.T, s *Service, _ *clock) string {
			return credentialFor(t, issued(s, searchCall), nil, nil)
		}, typ: ProblemMalformedCredential, detail: "no payload"},
		{name: "challenge without id", auth: func(t *testing.T, s *Service, _ *clock) string {
			return credentialFor(t, issued(s, searchCall), ok, func(c map[string]any) { delete(c, "id") })
		}, typ: ProblemMalformedCredential},
		{name: "id not a string", auth: func(t *testing.T, s *Service, _ *clock) string {
			return credentialFor(t, issued(s, searchCall), ok, func(c map[string]any) { c["id"] = 7 })
		}, typ: ProblemMalformedCredential},
		{name: "request not base64url JSON", auth: tamper("request", "bm90IGpzb24"), typ: ProblemMalformedCredential},
		{name: "too long", auth: raw("Payment " + strings.Repeat("A", 70000)), typ: ProblemMalformedCredential},

		// Each parameter is bound by the id.
		{name: "tampered id", auth: tamper("id", "AAAA"), typ: ProblemInvalidChallenge, detail: "not issued by this server"},
		{name: "tampered realm", auth: tamper("realm", "evil.example"), typ: ProblemInvalidChallenge, detail: "not issued by this server"},
		{name: "tampered method", auth: tamper("method", "stripe"), typ: ProblemInvalidChallenge, detail: "not issued by this server"},
		{name: "tampered intent", auth: tamper("intent", "session"), typ: ProblemInvalidChallenge, detail: "not issued by this server"},
		{name: "tampered request (amount 1)", auth: tamper("request", otherRequest(func(m map[string]any) { m["amount"] = "1" })), typ: ProblemInvalidChallenge, detail: "not issued by this server"},
		{name: "tampered request (recipient)", auth: tamper("request", otherRequest(func(m map[string]any) { m["recipient"] = "0xbad" })), typ: ProblemInvalidChallenge, detail: "not issued by this server"},
		{name: "tampered expires", auth: tamper("expires", "2099-01-01T00:00:00Z"), typ: ProblemInvalidChallenge, detail: "not issued by this server"},
		{name: "tampered digest", auth: tamper("digest", "sha-256=:AAAA:"), typ: ProblemInvalidChallenge, detail: "not issued by this server"},
		{name: "tampered opaque", auth: tamper("opaque", "eyJub25jZSI6IngifQ"), typ: ProblemInvalidChallenge, detail: "not issued by this server"},
		{name: "added header parameter", auth: tamper("header", "X-Pay"), typ: ProblemInvalidChallenge, detail: "not issued by this server"},
		{name: "signed with another secret", auth: func(t *testing.T, s *Service, _ *clock) string {
			p := parseChallengeHeader(t, issued(s, searchCall))
			c := challenge{Realm: p["realm"], Method: p["method"], Intent: p["intent"], Request: p["request"], Expires: p["expires"], Opaque: p["opaque"]}
			c.ID = computeID([]byte("another-secret-of-16-bytes"), c)
			return credentialFor(t, headerValue(c), ok, nil)
		}, typ: ProblemInvalidChallenge, detail: "not issued by this server"},

		// Issued by this server, but not for this call.
		{name: "another realm", auth: resign(func(c *challenge) { c.Realm = "other.example" }), typ: ProblemInvalidChallenge, detail: "another realm"},
		{name: "another intent", auth: resign(func(c *challenge) { c.Intent = "session" }), typ: ProblemInvalidChallenge, detail: `intent "session"`},
		{name: "unregistered method", auth: resign(func(c *challenge) { c.Method = "stripe" }), typ: ProblemInvalidChallenge, detail: `method "stripe"`},
		{name: "wrong path", call: core.Call{Host: searchCall.Host, Method: "GET", PathQuery: "/api/search?q=betong", What: "search"},
			auth: func(t *testing.T, s *Service, _ *clock) string {
				return credentialFor(t, issued(s, searchCall), ok, nil)
			}, typ: ProblemInvalidChallenge, detail: "another call or price"},
		{name: "wrong HTTP method", call: core.Call{Host: searchCall.Host, Method: "POST", PathQuery: searchCall.PathQuery, What: "search"},
			auth: func(t *testing.T, s *Service, _ *clock) string {
				return credentialFor(t, issued(s, searchCall), ok, nil)
			}, typ: ProblemInvalidChallenge, detail: "another call or price"},
		{name: "old price", auth: resign(func(c *challenge) { c.Request = otherRequest(func(m map[string]any) { m["amount"] = "1" }) }),
			typ: ProblemInvalidChallenge, detail: "another call or price"},
		{name: "digest mismatch", call: core.Call{Host: "api.example.com", Method: "POST", PathQuery: "/api/x", BodyDigest: "sha-256=:BBBB:"},
			auth: func(t *testing.T, s *Service, _ *clock) string {
				return credentialFor(t, issued(s, core.Call{Host: "api.example.com", Method: "POST", PathQuery: "/api/x", BodyDigest: "sha-256=:AAAA:"}), ok, nil)
			}, typ: ProblemInvalidChallenge, detail: "another request body"},
		{name: "digest dropped", call: core.Call{Host: "api.example.com", Method: "POST", PathQuery: "/api/x", BodyDigest: "sha-256=:BBBB:"},
			auth: func(t *testing.T, s *Service, _ *clock) string {
				return credentialFor(t, issued(s, core.Call{Host: "api.example.com", Method: "POST", PathQuery: "/api/x"}), ok, nil)
			}, typ: ProblemInvalidChallenge, detail: "another request body"},
		{name: "no expiry", auth: resign(func(c *challenge) { c.Expires = "" }), typ: ProblemInvalidChallenge, detail: "no expiry"},
		{name: "malformed expiry", auth: resign(func(c *challenge) { c.Expires = "tomorrow" }), typ: ProblemInvalidChallenge, detail: "malformed"},
		{name: "expired", auth: func(t *testing.T, s *Service, clk *clock) string {
			a := credentialFor(t, issued(s, searchCall), ok, nil)
			clk.now = clk.now.Add(5*time.Minute + time.Second)
			return a
		}, typ: ProblemPaymentExpired, detail: "Payment expired at 2026-11-23T12:05:00Z."},

		// The method's verdict and the ledger's.
		{name: "verification failed", auth: func(t *testing.T, s *Service, _ *clock) string {
			return credentialFor(t, issued(s, searchCall), ok, nil)
		}, setup: func(m *fakeMethod, _ *memLedger, _ *clock) { m.err = core.Invalidf("no transfer to the recipient") },
			typ: ProblemVerificationFailed, detail: "Payment verification failed: no transfer to the recipient."},
		{name: "payload the method cannot read", auth: func(t *testing.T, s *Service, _ *clock) string {
			return credentialFor(t, issued(s, searchCall), map[string]string{"hash": "0x1"}, nil)
		}, typ: ProblemVerificationFailed},
		{name: "replayed reference", auth: func(t *testing.T, s *Service, _ *clock) string {
			return credentialFor(t, issued(s, searchCall), ok, nil)
		}, setup: func(_ *fakeMethod, l *memLedger, _ *clock) { l.used = map[string]time.Time{"ref/0xabc": t0} },
			typ: ProblemInvalidChallenge, detail: "already used"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, m, l, clk := newService(t)
			if c.setup != nil {
				c.setup(m, l, clk)
			}
			call := searchCall
			if c.call.Host != "" {
				call = c.call
			}
			auth := c.auth(t, s, clk)
			_, hdr, err := s.Pay(ctx, call, auth)
			var refused *core.PaymentRefused
			if !errors.As(err, &refused) {
				t.Fatalf("got %v, want a refusal", err)
			}
			if hdr != "" {
				t.Errorf("receipt header on a refusal: %q", hdr)
			}
			ch := refused.Challenge
			if ch.ProblemType != c.typ {
				t.Errorf("problem type %s, want %s (%s)", ch.ProblemType, c.typ, refused.Detail)
			}
			if !strings.Contains(refused.Detail, c.detail) {
				t.Errorf("detail %q, want it to contain %q", refused.Detail, c.detail)
			}
			// A fresh challenge for this call, with its problem.
			p := parseChallengeHeader(t, ch.Header)
			if p["id"] != ch.ID || decodeRequest(t, p["request"])["externalId"] != strings.ToUpper(call.Method)+" "+call.PathQuery {
				t.Errorf("fresh challenge %s", ch.Header)
			}
			if p["digest"] != call.BodyDigest || p["expires"] != clk.now.Add(5*time.Minute).UTC().Truncate(time.Second).Format(time.RFC3339) {
				t.Errorf("fresh challenge %s", ch.Header)
			}
			var prob struct {
				Type, Title, Detail, ChallengeID string
				Status                           int
			}
			if err := json.Unmarshal(ch.Problem, &prob); err != nil {
				t.Fatal(err)
			}
			if prob.Type != c.typ || prob.Title != problemTitles[c.typ] || prob.Status != 402 || prob.ChallengeID != ch.ID || prob.Detail != refused.Detail {
				t.Errorf("problem %s", ch.Problem)
			}
			m.err, l.used = nil, nil
			if _, _, err := s.Pay(ctx, call, credentialFor(t, ch.Header, map[string]string{"reference": "fresh"}, nil)); err != nil {
				t.Errorf("the fresh challenge cannot be paid: %v", err)
			}
		})
	}
}

func TestPayReplay(t *testing.T) {
	s, _, _, _ := newService(t)
	ctx := context.Background()
	auth := credentialFor(t, s.Challenge(ctx, searchCall).Header, map[string]string{"reference": "0x1"}, nil)
	if _, _, err := s.Pay(ctx, searchCall, auth); err != nil {
		t.Fatal(err)
	}
	// The same credential again.
	_, _, err := s.Pay(ctx, searchCall, auth)
	var refused *core.PaymentRefused
	if !errors.As(err, &refused) || refused.Challenge.ProblemType != ProblemInvalidChallenge {
		t.Fatalf("replay: %v", err)
	}
	// The same payment for another challenge.
	auth2 := credentialFor(t, s.Challenge(ctx, searchCall).Header, map[string]string{"reference": "0x1"}, nil)
	if _, _, err := s.Pay(ctx, searchCall, auth2); !errors.As(err, &refused) || refused.Challenge.ProblemType != ProblemInvalidChallenge {
		t.Fatalf("reused payment: %v", err)
	}
	// The same challenge with another payment.
	auth3 := credentialFor(t, parseHeaderOf(t, auth), map[string]string{"reference": "0x2"}, nil)
	if _, _, err := s.Pay(ctx, searchCall, auth3); !errors.As(err, &refused) || refused.Challenge.ProblemType != ProblemInvalidChallenge {
		t.Fatalf("reused challenge: %v", err)
	}
}

// parseHeaderOf rebuilds the challenge header a credential answers.
func parseHeaderOf(t *testing.T, auth string) string {
	t.Helper()
	c, err := parseCredential(auth)
	if err != nil {
		t.Fatal(err)
	}
	return headerValue(c.Challenge)
}

// An unreachable rail or ledger is an outage, not a refusal: the guard
// answers 503 and the client keeps its challenge.
func TestPayOutages(t *testing.T) {
	ctx := context.Background()
	down := core.Unavailablef(errors.New("connection refused"), "tempo rpc")

	s, m, _, _ := newService(t)
	m.err = down
	_, _, err := s.Pay(ctx, searchCall, credentialFor(t, s.Challenge(ctx, searchCall).Header, map[string]string{"reference": "x"}, nil))
	var refused *core.PaymentRefused
	if err == nil || errors.As(err, &refused) || core.KindOf(err) != core.KindUnavailable {
		t.Errorf("rail down: %v", err)
	}

	s, _, l, _ := newService(t)
	l.err = core.Unavailablef(errors.New("disk"), "store")
	_, _, err = s.Pay(ctx, searchCall, credentialFor(t, s.Challenge(ctx, searchCall).Header, map[string]string{"reference": "x"}, nil))
	if err == nil || errors.As(err, &refused) || core.KindOf(err) != core.KindUnavailable {
		t.Errorf("ledger down: %v", err)
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:         `plain`,
		`a "b" \c`:      `a \"b\" \\c`,
		"line\r\nbreak": "linebreak",
		"ö—🌍":           `\u00f6\u2014\ud83c\udf0d`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %q, want %q", in, got, want)
		}
		if got := parseChallengeHeader(t, `Payment id="1", realm="r", method="m", intent="i", request="e30", description="`+quote(in)+`"`)["description"]; got != strings.NewReplacer("\r", "", "\n", "").Replace(in) {
			t.Errorf("round trip of %q: %q", in, got)
		}
	}
}
