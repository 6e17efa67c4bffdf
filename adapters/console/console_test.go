package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

func TestSessionsExpire(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := newSessions(nil, func() time.Time { return now })
	valid := func(id string) bool {
		t.Helper()
		ok, err := s.valid(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	id, exp, err := s.create(ctx)
	if err != nil || !valid(id) || !exp.Equal(now.Add(sessionTTL)) || valid("") || valid("other") || valid(randomID()) {
		t.Fatal("a fresh session is not valid alone")
	}
	now = now.Add(sessionTTL - time.Second)
	if !valid(id) {
		t.Fatal("expired early")
	}
	now = now.Add(time.Second)
	if valid(id) {
		t.Fatal("valid after its expiry")
	}
	id, _, _ = s.create(ctx)
	if err := s.end(ctx, id); err != nil || valid(id) {
		t.Fatal("valid after sign-out", err)
	}
}

// The store keeps the hash of a session id, never the id: a leaked row
// signs nobody in.
func TestSessionsKeepNoIDInTheStore(t *testing.T) {
	ctx := context.Background()
	kv := &memKV{now: time.Now, m: map[string]memValue{}}
	s := newSessions(kv, time.Now)
	id, _, err := s.create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(kv.m) != 1 {
		t.Fatalf("%d values stored", len(kv.m))
	}
	for k, v := range kv.m {
		if strings.Contains(k, id) || strings.Contains(string(v.v), id) || !strings.HasPrefix(k, sessionPrefix) {
			t.Fatalf("stored %q = %q for session %s", k, v.v, id)
		}
		if ok, _ := s.valid(ctx, strings.TrimPrefix(k, sessionPrefix)); ok {
			t.Fatal("the stored key is itself a session id")
		}
	}
}

func TestFlashWithASecretIsShownOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	f := newFlashes(nil, func() time.Time { return now })
	const session = ""
	put := func(fl flash) string {
		t.Helper()
		id, err := f.put(ctx, session, fl)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	get := func(id string) (flash, bool) {
		t.Helper()
		fl, ok, err := f.get(ctx, session, id, "", true)
		if err != nil {
			t.Fatal(err)
		}
		return fl, ok
	}
	plain := put(flash{Notice: "saved"})
	secret := put(flash{Secret: "whsec_x"})
	for i := 0; i < 2; i++ {
		if fl, ok := get(plain); !ok || fl.Notice != "saved" {
			t.Fatalf("read %d of a plain flash: %v", i, ok)
		}
	}
	if fl, ok := get(secret); !ok || fl.Secret != "whsec_x" {
		t.Fatal("the secret flash is missing")
	}
	if _, ok := get(secret); ok {
		t.Fatal("the secret was shown twice")
	}
	now = now.Add(flashTTL)
	if _, ok := get(plain); ok {
		t.Fatal("a flash outlived its TTL")
	}
	typed := put(flash{Data: core.IngestResult{Seen: 1}})
	if _, ok, err := getFor[core.DeliveryAttempt](ctx, f, session, typed, true); ok || err != nil {
		t.Fatal("a flash reached a page that cannot show its data", err)
	}
	if fl, ok, err := getFor[core.IngestResult](ctx, f, session, typed, false); !ok || err != nil || fl.Data.(core.IngestResult).Seen != 1 {
		t.Fatal("a flash did not reach the page of its data", ok, err)
	}
}

func TestLocalPathRefusesOtherHosts(t *testing.T) {
	for in, want := range map[string]string{
		"/ingest?preview=pv_1": "/ingest?preview=pv_1", "": "/", "//evil.example/x": "/",
		"https://evil.example/": "/", "/\\evil.example": "/", "javascript:alert(1)": "/", "ingest": "/",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNum(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 0.39: "0.39", 0.0629: "0.0629", 1234.5678: "1235", 700: "700", -0.284: "-0.284", 1.5e-5: "1.5e-05", 12345678: "1.235e+07"} {
		if got := num(in); got != want {
			t.Errorf("num(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestCompareWordsStateTheSignConvention(t *testing.T) {
	a := core.Resource{ID: "1", Catalog: core.National}
	b := core.Resource{ID: "2", Catalog: core.National}
	got := compareWords(core.Comparison{A: a, B: b, Unit: "kg", ValueA: 0.39, ValueB: 0.106, DeltaA1A3: 0.284, LowerImpactID: "2", Impact: core.ImpactTypical})
	want := "B (national:2) has the lower typical A1-A3: 0.284 kg CO2e per kg less than A (national:1), 72.8% lower. The delta is A minus B: negative when A is lower, positive when B is lower."
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := compareWords(core.Comparison{A: a, B: b, Incomparable: true}); got[:len("national:1 and national:2 cannot")] != "national:1 and national:2 cannot" {
		t.Fatal(got)
	}
}
