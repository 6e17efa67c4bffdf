package webhooksender_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/climatesearch/climatesearch/adapters/webhooksender"
	"github.com/climatesearch/climatesearch/core"
)

// received is one request a test server saw.
type received struct {
	header http.Header
	body   []byte
}

// receiver starts a server that records each request and answers with
// answer (204 when nil).
func receiver(t *testing.T, answer http.HandlerFunc) (*httptest.Server, <-chan received) {
	t.Helper()
	got := make(chan received, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{header: r.Header.Clone(), body: body}
		if answer != nil {
			answer(w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func one(t *testing.T, got <-chan received) received {
	t.Helper()
	select {
	case r := <-got:
		return r
	default:
		t.Fatal("the receiver saw no request")
		return received{}
	}
}

func testEvent() core.Event {
	ev := core.NewEvent(core.EventWebhookTest, "", time.Now())
	ev.Message = "hello from the sender — åäö"
	return ev
}

var local = webhooksender.New(webhooksender.Config{AllowPrivate: true})

func TestGenericDeliveryVerifiesWithStandardWebhooks(t *testing.T) {
	for _, kind := range []core.WebhookKind{core.WebhookGeneric, ""} {
		t.Run("kind="+string(kind), func(t *testing.T) {
			srv, got := receiver(t, nil)
			secret := core.NewSecret()
			ev := testEvent()

			res := local.Send(context.Background(), core.Destination{URL: srv.URL + "/hook", Secret: secret, Kind: kind}, ev)
			if res.Err != nil || res.Code != http.StatusNoContent || res.Refused {
				t.Fatalf("Send = %+v, want code 204 and no error", res)
			}
			r := one(t, got)

			wh, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				t.Fatal(err)
			}
			if err := wh.Verify(r.body, r.header); err != nil {
				t.Errorf("the Standard Webhooks library rejects the delivery: %v", err)
			}
			tampered := append([]byte(nil), r.body...)
			tampered[len(tampered)-2] ^= 1
			if err := wh.Verify(tampered, r.header); err == nil {
				t.Error("a tampered body still verifies")
			}
			other, _ := standardwebhooks.NewWebhook(core.NewSecret())
			if err := other.Verify(r.body, r.header); err == nil {
				t.Error("the delivery verifies with another secret")
			}

			if sig := r.header.Get("webhook-signature"); !strings.HasPrefix(sig, "v1,") || r.header.Get("X-Service-Signature") != sig {
				t.Errorf("webhook-signature %q, X-Service-Signature %q: want the same v1 signature", sig, r.header.Get("X-Service-Signature"))
			}
			if id := r.header.Get("webhook-id"); id != ev.ID {
				t.Errorf("webhook-id = %q, want the event id %q", id, ev.ID)
			}
			if ct, ua := r.header.Get("Content-Type"), r.header.Get("User-Agent"); ct != "application/json" || ua != "climatesearch-webhooks/1" {
				t.Errorf("Content-Type %q, User-Agent %q", ct, ua)
			}
			var back core.Event
			if err := json.Unmarshal(r.body, &back); err != nil || back.ID != ev.ID || back.Message != ev.Message || back.Type != ev.Type {
				t.Errorf("the body is not the event: %s (%v)", r.body, err)
			}
		})
	}
}

func TestUnusableSecretIsRefused(t *testing.T) {
	srv, got := receiver(t, nil)
	res := local.Send(context.Background(), core.Destination{URL: srv.URL, Secret: "not-a-secret", Kind: core.WebhookGeneric}, testEvent())
	if res.Err == nil || !res.Refused || res.Code != 0 {
		t.Fatalf("Send = %+v, want a refusal", res)
	}
	if !strings.Contains(res.Err.Error(), "whsec_") {
		t.Errorf("the error %q does not say what a secret looks like", res.Err)
	}
	if len(got) != 0 {
		t.Error("an unsigned delivery went out")
	}
}

func TestChatBodies(t *testing.T) {
	ev := testEvent()
	long := testEvent()
	long.Message = strings.Repeat("é", 3000)

	for _, tc := range []struct {
		name string
		kind core.WebhookKind
		ev   core.Event
		want map[string]string
	}{
		{"text", core.WebhookText, ev, map[string]string{"text": ev.Summary()}},
		{"content", core.WebhookContent, ev, map[string]string{"content": ev.Summary()}},
		{"content truncated", core.WebhookContent, long, map[string]string{"content": string([]rune(long.Summary())[:1999]) + "…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, got := receiver(t, nil)
			res := local.Send(context.Background(), core.Destination{URL: srv.URL, Kind: tc.kind}, tc.ev)
			if res.Err != nil || res.Code != http.StatusNoContent {
				t.Fatalf("Send = %+v", res)
			}
			r := one(t, got)
			var body map[string]string
			if err := json.Unmarshal(r.body, &body); err != nil {
				t.Fatalf("body %s: %v", r.body, err)
			}
			if len(body) != 1 {
				t.Fatalf("body %s, want exactly one field", r.body)
			}
			for k, v := range tc.want {
				if body[k] != v {
					t.Errorf("%s = %q, want %q", k, body[k], v)
				}
				if n := utf8.RuneCountInString(body[k]); n > 2000 {
					t.Errorf("%s holds %d runes, more than Discord's 2000", k, n)
				}
			}
			if r.header.Get("webhook-signature") != "" || r.header.Get("X-Service-Signature") != "" {
				t.Error("a chat delivery carries a signature")
			}
		})
	}
	if got := utf8.RuneCountInString(string([]rune(long.Summary())[:1999]) + "…"); got != 2000 {
		t.Fatalf("test setup: %d runes", got)
	}
}

func TestCheckRefusesPrivateAddresses(t *testing.T) {
	s := webhooksender.New(webhooksender.Config{})
	ctx := context.Background()
	for _, tc := range []struct{ url, want string }{
		{"http://127.0.0.1/hook", "loopback"},
		{"http://localhost:8080/hook", "loopback"},
		{"https://10.1.2.3/hook", "private"},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"http://[::1]/hook", "loopback"},
		{"http://[fd00:ec2::254]/", "cloud metadata"},
		{"http://[::ffff:127.0.0.1]/hook", "loopback"},
		{"http://[::ffff:a01:203]/hook", "private"},
		{"http://100.64.0.1/hook", "carrier-grade NAT"},
		{"http://100.100.100.200/", "cloud metadata"},
		{"http://192.168.1.1/", "private"},
		{"http://172.16.0.1/", "private"},
		{"http://[fe80::1]/", "link-local"},
		{"http://0.0.0.0/", "unspecified"},
		{"http://0.1.2.3/", "0.0.0.0/8"},
		{"http://224.0.0.1/", "multicast"},
		{"http://255.255.255.255/", "broadcast"},
		{"http://198.18.0.1/", "reserved 198.18.0.0/15"},
		{"http://240.1.2.3/", "reserved 240.0.0.0/4"},
		{"http://192.0.2.10/", "reserved 192.0.2.0/24"},
		{"http://[2001:db8::1]/", "reserved 2001:db8::/32"},
		{"http://[64:ff9b::a9fe:a9fe]/", "cloud metadata via 169.254.169.254"},
		{"http://[64:ff9b::7f00:1]/", "loopback via 127.0.0.1"},
		{"http://[2002:c0a8:101::1]/", "private via 192.168.1.1"},
	} {
		err := s.Check(ctx, tc.url)
		if core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "SERVICE_WEBHOOK_ALLOW_PRIVATE=true") {
			t.Errorf("Check(%s) = %v, want an invalid-request error naming %q and the setting", tc.url, err, tc.want)
		}
	}
	for _, tc := range []struct{ url, want string }{
		{"ftp://example.com/hook", "https://"},
		{"file:///etc/passwd", "https://"},
		{"example.com/hook", "https://"},
		{"https:///hook", "no host"},
		{"http://%zz", "cannot be parsed"},
		{"https://example.com/" + strings.Repeat("a", core.MaxWebhookURL), "limit"},
		{"https://nonexistent.invalid/hook", "cannot resolve host"},
	} {
		err := s.Check(ctx, tc.url)
		if core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%.60s) = %v, want an invalid-request error saying %q", tc.url, err, tc.want)
		}
	}
	for _, public := range []string{"https://93.184.215.14/hook", "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook", "https://[64:ff9b::5db8:d70e]/hook"} {
		if err := s.Check(ctx, public); err != nil {
			t.Errorf("a public address is refused: %v", err)
		}
	}
	if err := local.Check(ctx, "http://127.0.0.1:8080/hook"); err != nil {
		t.Errorf("with AllowPrivate, loopback is refused: %v", err)
	}
	if err := local.Check(ctx, "ftp://127.0.0.1/hook"); err == nil {
		t.Error("with AllowPrivate, ftp:// is accepted")
	}
}

// TestSendRefusesPrivateAtDialTime proves the check at connection time,
// which holds even when DNS changes after Check (DNS rebinding).
func TestSendRefusesPrivateAtDialTime(t *testing.T) {
	srv, got := receiver(t, nil)
	s := webhooksender.New(webhooksender.Config{})
	res := s.Send(context.Background(), core.Destination{URL: srv.URL, Secret: core.NewSecret()}, testEvent())
	if !res.Refused || res.Err == nil || res.Code != 0 {
		t.Fatalf("Send = %+v, want a refusal", res)
	}
	if msg := res.Err.Error(); !strings.Contains(msg, "loopback") || !strings.Contains(msg, "SERVICE_WEBHOOK_ALLOW_PRIVATE=true") {
		t.Errorf("the error %q does not name the class and the setting", msg)
	}
	if len(got) != 0 {
		t.Error("the server saw a request")
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	target, hit := receiver(t, nil)
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusFound)
	})
	res := local.Send(context.Background(), core.Destination{URL: srv.URL, Secret: core.NewSecret()}, testEvent())
	if res.Err != nil || res.Code != http.StatusFound {
		t.Fatalf("Send = %+v, want code 302", res)
	}
	if len(hit) != 0 {
		t.Error("the redirect was followed")
	}
}

func TestTimeout(t *testing.T) {
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	s := webhooksender.New(webhooksender.Config{AllowPrivate: true, Timeout: 200 * time.Millisecond})
	res := s.Send(context.Background(), core.Destination{URL: srv.URL, Secret: core.NewSecret()}, testEvent())
	if res.Err == nil || !strings.Contains(res.Err.Error(), "timed out after 200ms") || res.Code != 0 || res.Refused {
		t.Fatalf("Send = %+v, want a timeout", res)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	res := local.Send(context.Background(), core.Destination{URL: url, Secret: core.NewSecret()}, testEvent())
	if res.Err == nil || res.Err.Error() != "connection refused" || res.Refused || res.Code != 0 {
		t.Fatalf("Send = %+v, want connection refused", res)
	}
}

func TestNon2xxIsNotAnError(t *testing.T) {
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, strings.Repeat("x", 200<<10)) // more than is drained
	})
	res := local.Send(context.Background(), core.Destination{URL: srv.URL, Secret: core.NewSecret()}, testEvent())
	if res.Err != nil || res.Code != http.StatusInternalServerError || res.RetryAfter != 0 {
		t.Fatalf("Send = %+v, want code 500 and no error", res)
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name, header string
		min, max     time.Duration
	}{
		{"seconds", "120", 120 * time.Second, 120 * time.Second},
		{"http date", time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat), 60 * time.Second, 91 * time.Second},
		{"date in the past", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 0, 0},
		{"negative", "-5", 0, 0},
		{"garbage", "soon", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", tc.header)
				w.WriteHeader(http.StatusTooManyRequests)
			})
			res := local.Send(context.Background(), core.Destination{URL: srv.URL, Kind: core.WebhookText}, testEvent())
			if res.Err != nil || res.Code != http.StatusTooManyRequests {
				t.Fatalf("Send = %+v, want code 429", res)
			}
			if res.RetryAfter < tc.min || res.RetryAfter > tc.max {
				t.Errorf("RetryAfter = %s for %q, want %s to %s", res.RetryAfter, tc.header, tc.min, tc.max)
			}
		})
	}
}

// The start of the receiver's answer comes back in Body: at most
// core.MaxResponseExcerpt bytes of valid UTF-8, without control characters
// other than newline and tab.
func TestResponseExcerpt(t *testing.T) {
	long := "x" + strings.Repeat("é", 1000) // byte 512 falls inside an é
	for _, tc := range []struct {
		name, body, want string
		code             int
	}{
		{"json", `{"ok":true,"id":"abc"}`, `{"ok":true,"id":"abc"}`, http.StatusOK},
		{"empty", "", "", http.StatusOK},
		{"error page", "<h1>Service Unavailable</h1>\n\tTry later", "<h1>Service Unavailable</h1>\n\tTry later", http.StatusServiceUnavailable},
		{"cut inside a character", long, long[:core.MaxResponseExcerpt-1], http.StatusOK},
		{"control characters", "a\x00b\r\nc\td\x1b[31m\u0085e\u007f", "ab\nc\td[31me", http.StatusBadRequest},
		{"invalid utf-8", "\xff\xfeok \xc3(å\uFFFD", "ok (å\uFFFD", http.StatusOK},
		{"more than is drained", strings.Repeat("y", 200<<10), strings.Repeat("y", core.MaxResponseExcerpt), http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.code)
				_, _ = io.WriteString(w, tc.body)
			})
			res := local.Send(context.Background(), core.Destination{URL: srv.URL, Secret: core.NewSecret()}, testEvent())
			if res.Err != nil || res.Code != tc.code {
				t.Fatalf("Send = %+v, want code %d", res, tc.code)
			}
			if res.Body != tc.want {
				t.Fatalf("Body = %q\nwant %q", res.Body, tc.want)
			}
			if len(res.Body) > core.MaxResponseExcerpt || !utf8.ValidString(res.Body) {
				t.Fatalf("Body of %d bytes, valid UTF-8 %v", len(res.Body), utf8.ValidString(res.Body))
			}
		})
	}
}

// A receiver that stalls in the middle of its answer costs the attempt's
// timeout, not more; what it sent is kept.
func TestStalledAnswerBody(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "accepted, ")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	s := webhooksender.New(webhooksender.Config{AllowPrivate: true, Timeout: 300 * time.Millisecond})
	start := time.Now()
	res := s.Send(context.Background(), core.Destination{URL: srv.URL, Secret: core.NewSecret()}, testEvent())
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Send took %s with a 300ms timeout", took)
	}
	if res.Err != nil || res.Code != http.StatusAccepted || res.Body != "accepted, " {
		t.Fatalf("Send = %+v, want code 202 and the part of the body that came", res)
	}
}
