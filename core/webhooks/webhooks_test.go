package webhooks

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

func newTestService(t *testing.T, cfg Config) *Service {
	t.Helper()
	s, err := New(cfg, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The retry policy: what is retried, what stops, and when.
func TestOutcome(t *testing.T) {
	s := newTestService(t, Config{Backoff: time.Second, MaxBackoff: time.Minute, RetryFor: time.Hour})
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	fresh := core.Delivery{Event: core.Event{ID: "evt_1", Type: core.EventCatalogChanged}, Attempts: 1, QueuedAt: now}
	for _, c := range []struct {
		name string
		res  core.SendResult
		want core.DeliveryStatus
	}{
		{"200", core.SendResult{Code: 200}, core.DeliveryDelivered},
		{"204", core.SendResult{Code: 204}, core.DeliveryDelivered},
		{"302 is not followed", core.SendResult{Code: 302}, core.DeliveryFailed},
		{"400", core.SendResult{Code: 400}, core.DeliveryFailed},
		{"404", core.SendResult{Code: 404}, core.DeliveryFailed},
		{"408 retried", core.SendResult{Code: 408}, core.DeliveryRetrying},
		{"429 retried", core.SendResult{Code: 429}, core.DeliveryRetrying},
		{"500", core.SendResult{Code: 500}, core.DeliveryRetrying},
		{"503", core.SendResult{Code: 503}, core.DeliveryRetrying},
		{"network error", core.SendResult{Err: errors.New("connection refused")}, core.DeliveryRetrying},
		{"refused address", core.SendResult{Err: errors.New("loopback"), Refused: true}, core.DeliveryFailed},
	} {
		a := s.outcome(fresh, c.res, now)
		if a.Status != c.want {
			t.Errorf("%s: %s, want %s (%s)", c.name, a.Status, c.want, a.Error)
		}
		if (a.Status == core.DeliveryRetrying) != !a.NextAttempt.IsZero() {
			t.Errorf("%s: next attempt %v with status %s", c.name, a.NextAttempt, a.Status)
		}
		if a.Status != core.DeliveryDelivered && a.Error == "" {
			t.Errorf("%s: no error text for the log", c.name)
		}
	}

	// Retry-After wins over a shorter backoff.
	a := s.outcome(fresh, core.SendResult{Code: 429, RetryAfter: 30 * time.Second}, now)
	if a.NextAttempt.Sub(now) != 30*time.Second {
		t.Errorf("Retry-After: next in %s", a.NextAttempt.Sub(now))
	}
	// The window ends: an attempt made an hour after queueing fails for
	// good; one a second earlier is retried.
	old := fresh
	old.QueuedAt, old.Attempts = now.Add(-time.Hour), 20
	if a := s.outcome(old, core.SendResult{Code: 500}, now); a.Status != core.DeliveryFailed || !strings.Contains(a.Error, "gave up") {
		t.Errorf("past the window: %+v", a)
	}
	old.QueuedAt = now.Add(-time.Hour + time.Second)
	if a := s.outcome(old, core.SendResult{Code: 500}, now); a.Status != core.DeliveryRetrying {
		t.Errorf("inside the window: %+v", a)
	}
}

// Backoff doubles from Backoff up to MaxBackoff, between half and all of
// the step (equal jitter).
func TestBackoff(t *testing.T) {
	s := newTestService(t, Config{Backoff: time.Second, MaxBackoff: time.Minute})
	for n, step := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 7: time.Minute, 30: time.Minute} {
		for range 200 {
			d := s.backoff(n)
			if d < step/2 || d > step {
				t.Fatalf("attempt %d: %s outside [%s, %s]", n, d, step/2, step)
			}
		}
	}
}

// A default configuration retries for at least 24 hours, in about 40 attempts.
func TestDefaultsRetryADay(t *testing.T) {
	s := newTestService(t, Config{})
	if s.cfg.RetryFor < 24*time.Hour || s.cfg.Backoff <= 0 || s.cfg.PerDestination < 1 {
		t.Fatalf("defaults: %+v", s.cfg)
	}
	queued := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	now := queued
	s.now = func() time.Time { return now }
	d := core.Delivery{Event: core.Event{ID: "evt_1"}, QueuedAt: queued}
	for {
		d.Attempts++
		a := s.outcome(d, core.SendResult{Code: 503}, now)
		if a.Status == core.DeliveryFailed {
			break
		}
		now = a.NextAttempt
	}
	// The window is a minimum: the last attempt comes after a full day,
	// at most one step (1 h) later.
	if span := now.Sub(queued); span < 24*time.Hour || span > 25*time.Hour {
		t.Fatalf("the last attempt came %s after queueing", span)
	}
	if d.Attempts < 30 || d.Attempts > 50 {
		t.Fatalf("%d attempts in a day", d.Attempts)
	}
	t.Logf("%d attempts over %s", d.Attempts, now.Sub(queued))
}

func TestStaticDestinations(t *testing.T) {
	secret := core.NewSecret()
	s := newTestService(t, Config{StaticURLs: []string{"https://hooks.slack.com/services/x", "https://lca.example.org/hook"}, StaticSecret: secret})
	if len(s.static) != 2 || s.static[0].Kind != core.WebhookText || s.static[1].Kind != core.WebhookGeneric ||
		!s.static[0].Static || s.static[1].Secret != secret || s.static[0].ID == s.static[1].ID {
		t.Fatalf("static: %+v", s.static)
	}
	again := newTestService(t, Config{StaticURLs: []string{"https://lca.example.org/hook"}, StaticSecret: secret})
	if again.static[0].ID != s.static[1].ID {
		t.Fatal("a static destination's id must survive a restart (its queued deliveries refer to it)")
	}
	if _, err := New(Config{StaticURLs: []string{"https://x.example"}, StaticSecret: "plain"}, nil, nil, slog.Default()); err == nil {
		t.Fatal("a bad static secret must fail")
	}
}
