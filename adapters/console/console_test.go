package console

import (
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

func TestSessionsExpire(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := newSessions(func() time.Time { return now })
	id, exp := s.create()
	if !s.valid(id) || !exp.Equal(now.Add(sessionTTL)) || s.valid("") || s.valid("other") {
		t.Fatal("a fresh session is not valid alone")
	}
	now = now.Add(sessionTTL - time.Second)
	if !s.valid(id) {
		t.Fatal("expired early")
	}
	now = now.Add(time.Second)
	if s.valid(id) {
		t.Fatal("valid after its expiry")
	}
	id, _ = s.create()
	s.end(id)
	if s.valid(id) {
		t.Fatal("valid after sign-out")
	}
}

func TestFlashWithASecretIsShownOnce(t *testing.T) {
	now := time.Now()
	f := newFlashes(func() time.Time { return now })
	plain := f.put(flash{Notice: "saved"})
	secret := f.put(flash{Secret: "whsec_x"})
	for i := 0; i < 2; i++ {
		if fl, ok := f.get(plain); !ok || fl.Notice != "saved" {
			t.Fatalf("read %d of a plain flash: %v", i, ok)
		}
	}
	if fl, ok := f.get(secret); !ok || fl.Secret != "whsec_x" {
		t.Fatal("the secret flash is missing")
	}
	if _, ok := f.get(secret); ok {
		t.Fatal("the secret was shown twice")
	}
	now = now.Add(flashTTL)
	if _, ok := f.get(plain); ok {
		t.Fatal("a flash outlived its TTL")
	}
	typed := f.put(flash{Data: core.IngestResult{Seen: 1}})
	if _, ok := getFor[core.DeliveryAttempt](f, typed); ok {
		t.Fatal("a flash reached a page that cannot show its data")
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
