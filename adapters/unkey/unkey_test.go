package unkey_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/unkey"
	"github.com/climatesearch/climatesearch/adapters/unkey/unkeytest"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/access"
)

const (
	rootKey = "unkey_root_3ZbZ6kQpWx"
	liveKey = "sk_live_7f3a9c0d1e2b4a5f"
)

var now = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

func newVerifier(t *testing.T, s *unkeytest.Server, cfg unkey.Config) *unkey.Verifier {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = s.URL
	}
	if cfg.RootKey == "" {
		cfg.RootKey = rootKey
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return now }
	}
	v, err := unkey.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func verify(t *testing.T, v *unkey.Verifier, key string) core.KeyVerdict {
	t.Helper()
	verdict, err := v.Verify(context.Background(), key)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return verdict
}

// outage checks that err is an outage (KindUnavailable) that names neither
// the key nor the root key, and returns its message.
func outage(t *testing.T, err error, key string) string {
	t.Helper()
	if err == nil {
		t.Fatal("no error, want an outage")
	}
	if core.KindOf(err) != core.KindUnavailable {
		t.Errorf("kind %v, want KindUnavailable: %v", core.KindOf(err), err)
	}
	msg := err.Error()
	if strings.Contains(msg, key) {
		t.Errorf("error contains the key: %s", msg)
	}
	if strings.Contains(msg, rootKey) {
		t.Errorf("error contains the root key: %s", msg)
	}
	return msg
}

func TestValidKey(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	s.AddKey(liveKey, unkeytest.Key{Name: "acme-production", Credits: new(int64(950))})
	v := newVerifier(t, s, unkey.Config{})
	got := verify(t, v, liveKey)
	want := core.KeyVerdict{Valid: true, Code: core.KeyValid, Name: "acme-production"}
	if got != want {
		t.Errorf("verdict %+v, want %+v", got, want)
	}
	if r := s.Received(); len(r) != 1 || r[0] != liveKey {
		t.Errorf("the stand-in received %q", r)
	}
	if s.Calls() != 1 {
		t.Errorf("%d calls", s.Calls())
	}
}

// Without a name, the key's id names the owner in logs.
func TestValidKeyWithoutName(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	s.AddKey(liveKey, unkeytest.Key{KeyID: "key_2cGKbMxRyIzhCxo1Idjz8q"})
	if got := verify(t, newVerifier(t, s, unkey.Config{}), liveKey); !got.Valid || got.Name != "key_2cGKbMxRyIzhCxo1Idjz8q" {
		t.Errorf("%+v", got)
	}
}

func TestUnknownKey(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	got := verify(t, newVerifier(t, s, unkey.Config{}), "sk_live_nobody")
	if want := (core.KeyVerdict{Valid: false, Code: core.KeyNotFound}); got != want {
		t.Errorf("verdict %+v, want %+v", got, want)
	}
}

func TestRefusedVerdicts(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	v := newVerifier(t, s, unkey.Config{})
	for _, tc := range []struct {
		code string
		want core.KeyCode
	}{
		{unkeytest.Expired, core.KeyExpired},
		{unkeytest.Disabled, core.KeyDisabled},
		{unkeytest.Forbidden, core.KeyForbidden},
		{unkeytest.InsufficientPermissions, core.KeyInsufficientPermissions},
		{unkeytest.UsageExceeded, core.KeyUsageExceeded},
		{unkeytest.InsufficientCredits, core.KeyUsageExceeded},
		{unkeytest.RateLimited, core.KeyRateLimited},
		{"SOME_FUTURE_CODE", core.KeyCode("SOME_FUTURE_CODE")},
	} {
		t.Run(tc.code, func(t *testing.T) {
			key := "sk_" + strings.ToLower(tc.code)
			s.AddKey(key, unkeytest.Key{Code: tc.code, Name: "acme"})
			got := verify(t, v, key)
			if want := (core.KeyVerdict{Valid: false, Code: tc.want, Name: "acme"}); got != want {
				t.Errorf("verdict %+v, want %+v", got, want)
			}
		})
	}
}

func TestRateLimitedRetryAfter(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	v := newVerifier(t, s, unkey.Config{})
	for _, tc := range []struct {
		name   string
		limits []unkeytest.Ratelimit
		want   time.Duration
	}{
		{"reset as Unix milliseconds", []unkeytest.Ratelimit{
			{Name: "requests", Exceeded: true, Limit: 100, Duration: 60_000, Reset: now.Add(42 * time.Second).UnixMilli()},
		}, 42 * time.Second},
		{"the longest exceeded limit wins", []unkeytest.Ratelimit{
			{Name: "burst", Exceeded: true, Limit: 10, Duration: 1_000, Reset: now.Add(800 * time.Millisecond).UnixMilli()},
			{Name: "hourly", Exceeded: true, Limit: 1000, Duration: 3_600_000, Reset: now.Add(17 * time.Minute).UnixMilli()},
			{Name: "daily", Exceeded: false, Limit: 9000, Duration: 86_400_000, Reset: now.Add(20 * time.Hour).UnixMilli()},
		}, 17 * time.Minute},
		{"a reset already due is a second", []unkeytest.Ratelimit{
			{Name: "requests", Exceeded: true, Reset: now.Add(-time.Second).UnixMilli()},
		}, time.Second},
		{"reset as a duration in milliseconds (the specification's reading)", []unkeytest.Ratelimit{
			{Name: "requests", Exceeded: true, Limit: 100, Duration: 60_000, Reset: 15_000},
		}, 15 * time.Second},
		{"no limit says when", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.AddKey(liveKey, unkeytest.Key{Code: unkeytest.RateLimited, Name: "acme", Ratelimits: tc.limits})
			got := verify(t, v, liveKey)
			if got.Valid || got.Code != core.KeyRateLimited || got.RetryAfter != tc.want {
				t.Errorf("verdict %+v, want RATE_LIMITED with RetryAfter %v", got, tc.want)
			}
		})
	}
}

func TestUsageExceeded(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	s.AddKey(liveKey, unkeytest.Key{Code: unkeytest.UsageExceeded, Name: "acme", Credits: new(int64(0))})
	got := verify(t, newVerifier(t, s, unkey.Config{}), liveKey)
	// Unkey's answer says nothing of when credits refill: no RetryAfter.
	if want := (core.KeyVerdict{Valid: false, Code: core.KeyUsageExceeded, Name: "acme"}); got != want {
		t.Errorf("verdict %+v, want %+v", got, want)
	}
}

func TestServiceDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	v, err := unkey.New(unkey.Config{BaseURL: "http://" + addr, RootKey: rootKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), liveKey)
	if msg := outage(t, err, liveKey); !strings.Contains(msg, "refused") {
		t.Errorf("error %q does not say the connection was refused", msg)
	}
}

func TestServerErrors(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	s.AddKey(liveKey, unkeytest.Key{})
	v := newVerifier(t, s, unkey.Config{})
	for _, status := range []int{500, 502, 503, 429} {
		s.Fail(status)
		_, err := v.Verify(context.Background(), liveKey)
		if msg := outage(t, err, liveKey); !strings.Contains(msg, fmt.Sprint(status)) || !strings.Contains(msg, "req_stand_in_") {
			t.Errorf("HTTP %d: error %q lacks the status or the request id", status, msg)
		}
	}
	s.Fail(0)
	if got := verify(t, v, liveKey); !got.Valid {
		t.Errorf("after recovery: %+v", got)
	}
}

// A root key without the verify permission is a misconfiguration, answered
// 403 with an error envelope: an outage, never a verdict on the key.
func TestRootKeyWithoutPermission(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	s.AddKey(liveKey, unkeytest.Key{})
	const weak = "unkey_root_readonly"
	s.AddRootKey(weak, false)
	v := newVerifier(t, s, unkey.Config{RootKey: weak})
	verdict, err := v.Verify(context.Background(), liveKey)
	msg := outage(t, err, liveKey)
	if strings.Contains(msg, weak) {
		t.Errorf("error contains the root key: %s", msg)
	}
	if !strings.Contains(msg, "403") || !strings.Contains(msg, "verify_key") {
		t.Errorf("error %q does not say 403 and the missing permission", msg)
	}
	if verdict != (core.KeyVerdict{}) {
		t.Errorf("a verdict came with the error: %+v", verdict)
	}
}

func TestUnknownRootKey(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	v := newVerifier(t, s, unkey.Config{RootKey: "unkey_root_wrong"})
	_, err := v.Verify(context.Background(), liveKey)
	if msg := outage(t, err, liveKey); !strings.Contains(msg, "401") || strings.Contains(msg, "unkey_root_wrong") {
		t.Errorf("error %q", msg)
	}
}

func TestMalformedAnswers(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	v := newVerifier(t, s, unkey.Config{})
	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"not JSON", 200, "<html>Service temporarily unavailable</html>"},
		{"empty", 200, ""},
		{"truncated", 200, `{"meta":{"requestId":"req_1"},"data":{"valid":tr`},
		{"no data", 200, `{"meta":{"requestId":"req_1"}}`},
		{"no valid", 200, `{"meta":{"requestId":"req_1"},"data":{"code":"VALID"}}`},
		{"no code", 200, `{"meta":{"requestId":"req_1"},"data":{"valid":false}}`},
		{"valid with a refusal code", 200, `{"meta":{"requestId":"req_1"},"data":{"valid":true,"code":"DISABLED"}}`},
		{"invalid with VALID", 200, `{"meta":{"requestId":"req_1"},"data":{"valid":false,"code":"VALID"}}`},
		{"wrong types", 200, `{"meta":{"requestId":"req_1"},"data":{"valid":"yes","code":"VALID"}}`},
		{"an array", 200, `[]`},
		{"a verdict with another status", 201, `{"meta":{"requestId":"req_1"},"data":{"valid":true,"code":"VALID"}}`},
		{"a redirect", 302, ``},
		{"an HTML error page", 502, "<html><body>Bad gateway</body></html>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Raw(tc.status, tc.body)
			verdict, err := v.Verify(context.Background(), liveKey)
			outage(t, err, liveKey)
			if verdict.Valid {
				t.Errorf("valid verdict with the error")
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	s.AddKey(liveKey, unkeytest.Key{})
	s.Delay(10 * time.Second)
	v := newVerifier(t, s, unkey.Config{Timeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := v.Verify(context.Background(), liveKey)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v with a 100ms timeout", d)
	}
	msg := outage(t, err, liveKey)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(msg, "no answer within 100ms") {
		t.Errorf("error %q", msg)
	}
}

func TestDefaultTimeoutIsShort(t *testing.T) {
	if unkey.DefaultTimeout > 5*time.Second {
		t.Errorf("DefaultTimeout %v: the guard waits for it on every cache miss", unkey.DefaultTimeout)
	}
}

func TestCallerCancels(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	s.Delay(10 * time.Second)
	v := newVerifier(t, s, unkey.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := v.Verify(ctx, liveKey)
	outage(t, err, liveKey)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v", err)
	}
}

// Whatever the answer echoes, neither the key nor the root key reaches an
// error message.
func TestKeyNeverInErrors(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	v := newVerifier(t, s, unkey.Config{})
	for _, tc := range []struct {
		status int
		body   string
	}{
		{500, `{"meta":{"requestId":"req_1"},"error":{"title":"Internal","detail":"failed on key ` + liveKey + ` with root ` + rootKey + `","status":500,"type":"x"}}`},
		{403, `{"meta":{"requestId":"req_1"},"error":{"title":"Forbidden","detail":"` + liveKey + `","status":403,"type":"x"}}`},
		{502, "upstream said " + liveKey},
		{200, "garbage " + liveKey},
	} {
		s.Raw(tc.status, tc.body)
		_, err := v.Verify(context.Background(), liveKey)
		msg := outage(t, err, liveKey)
		if tc.status != 200 && !strings.Contains(msg, "[key]") {
			t.Errorf("HTTP %d: expected the echoed key to be redacted: %s", tc.status, msg)
		}
	}
}

func TestEmptyAndOverlongKeysAreNotAsked(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	v := newVerifier(t, s, unkey.Config{})
	for _, key := range []string{"", strings.Repeat("k", unkey.MaxKeyLen+1)} {
		if got := verify(t, v, key); got.Valid || got.Code != core.KeyNotFound {
			t.Errorf("%d-character key: %+v", len(key), got)
		}
	}
	if got := verify(t, v, strings.Repeat("å", unkey.MaxKeyLen)); got.Code != core.KeyNotFound {
		t.Errorf("512-character key: %+v", got)
	}
	if s.Calls() != 1 {
		t.Errorf("%d calls, want 1 (only the 512-character key)", s.Calls())
	}
}

// The root key is never sent to another place: redirects are not followed.
func TestRedirectIsNotFollowed(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer elsewhere.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+unkey.VerifyPath, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	v, err := unkey.New(unkey.Config{BaseURL: redirector.URL, RootKey: rootKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), liveKey)
	outage(t, err, liveKey)
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) != 0 {
		t.Errorf("the redirect was followed: %q", leaked)
	}
}

func TestNew(t *testing.T) {
	v, err := unkey.New(unkey.Config{RootKey: rootKey})
	if err != nil {
		t.Fatal(err)
	}
	if v.URL() != "https://api.unkey.com/v2/keys.verifyKey" {
		t.Errorf("default URL %s", v.URL())
	}
	v, err = unkey.New(unkey.Config{BaseURL: "http://unkey.internal:8080/", RootKey: rootKey})
	if err != nil || v.URL() != "http://unkey.internal:8080/v2/keys.verifyKey" {
		t.Errorf("URL %v %v", v, err)
	}
	for _, cfg := range []unkey.Config{
		{},
		{RootKey: "  "},
		{RootKey: "unkey root"},
		{BaseURL: "api.unkey.com", RootKey: rootKey},
		{BaseURL: "ftp://api.unkey.com", RootKey: rootKey},
		{BaseURL: "https://user:pw@api.unkey.com", RootKey: rootKey},
		{RootKey: rootKey, Timeout: -time.Second},
	} {
		_, err := unkey.New(cfg)
		if core.KindOf(err) != core.KindInvalid {
			t.Errorf("New(%+v): %v, want an invalid configuration", cfg, err)
			continue
		}
		if cfg.RootKey != "" && strings.TrimSpace(cfg.RootKey) != "" && strings.Contains(err.Error(), cfg.RootKey) {
			t.Errorf("error contains the root key: %v", err)
		}
	}
}

// Behind core/access, many requests with one key cost Unkey one call.
func TestCachedChecksCostOneCall(t *testing.T) {
	s := unkeytest.NewServer(t, rootKey)
	s.AddKey(liveKey, unkeytest.Key{Name: "acme"})
	s.Delay(100 * time.Millisecond) // the concurrent checks pile up on one call
	keys := access.New(newVerifier(t, s, unkey.Config{}), access.Config{})
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			v, err := keys.Check(context.Background(), liveKey)
			if err != nil || !v.Valid {
				t.Errorf("%+v %v", v, err)
			}
		})
	}
	wg.Wait()
	for range 100 {
		if v, err := keys.Check(context.Background(), liveKey); err != nil || !v.Valid {
			t.Fatalf("%+v %v", v, err)
		}
	}
	if s.Calls() != 1 {
		t.Errorf("%d calls to Unkey for 300 checks, want 1", s.Calls())
	}
	// An outage is not cached: the next check asks again.
	s.Delay(0)
	s.Fail(503)
	if _, err := keys.Check(context.Background(), "sk_other"); err == nil {
		t.Fatal("no error during the outage")
	}
	s.Fail(0)
	if v, err := keys.Check(context.Background(), "sk_other"); err != nil || v.Code != core.KeyNotFound {
		t.Errorf("after the outage: %+v %v", v, err)
	}
	if s.Calls() != 3 {
		t.Errorf("%d calls, want 3", s.Calls())
	}
}
