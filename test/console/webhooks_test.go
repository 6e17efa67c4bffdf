package consoletest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// receiver is a webhook receiver on loopback that answers 200 with a
// small body of its own and counts what it got.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

const receiverAnswer = "thanks from the test receiver"

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, receiverAnswer)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) got() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

// addDestination adds a destination on /webhooks and returns its id and
// the secret the page shows once.
func (b *browser) addDestination(hookURL string) (id, secret string) {
	b.t.Helper()
	if st := b.open("/webhooks"); st != http.StatusOK {
		b.t.Fatalf("/webhooks answered %d", st)
	}
	b.do(chromedp.SendKeys(chromedp.CSS("#url"), hookURL),
		chromedp.SendKeys(chromedp.CSS("#description"), "browser test receiver"))
	if st := b.submit("#add"); st != http.StatusOK {
		b.t.Fatalf("adding %s: status %d: %s", hookURL, st, b.text("main"))
	}
	p := b.path()
	if !strings.HasPrefix(p, "/webhooks/wh_") {
		b.t.Fatalf("after adding, the browser is at %s: %s", p, b.text("main"))
	}
	id = strings.TrimPrefix(strings.SplitN(p, "?", 2)[0], "/webhooks/")
	if n := b.text("p.notice"); n != "Destination added." {
		b.t.Errorf("after adding the page says %q", n)
	}
	secret = b.text("#secret")
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < len("whsec_")+32 {
		b.t.Fatalf("the secret shown once is %q", secret)
	}
	return id, secret
}

// TestWebhooksAddTestRotate: add a destination pointing at a local
// receiver, see its secret once (masked after a reload), send a test and
// see the receiver's answer and the attempt in the delivery log, rotate
// the secret and see a new one.
func TestWebhooksAddTestRotate(t *testing.T) {
	rcv := newReceiver(t)
	svc := startService(t, map[string]string{"SERVICE_WEBHOOK_ALLOW_PRIVATE": "true"})
	b := newBrowser(t, svc)

	hook := rcv.URL + "/hook"
	id, secret := b.addDestination(hook)
	if u := b.text("dl.kv2 dd.url"); u != hook {
		t.Errorf("the destination's URL reads %q, not %q", u, hook)
	}

	// A reload shows the secret no more, only masked.
	b.do(chromedp.Reload())
	if n := b.count("#secret"); n != 0 {
		t.Error("the secret is shown again after a reload")
	}
	if body := b.text("body"); strings.Contains(body, secret) {
		t.Error("the full secret is still on the page after a reload")
	}
	masked := b.texts("dl.kv2 dd.mono")
	if len(masked) == 0 || !strings.HasPrefix(masked[len(masked)-1], "whsec_") || masked[len(masked)-1] == secret {
		t.Errorf("the secret row reads %q, not a masked secret", masked)
	}

	// Send a test: the page shows the receiver's answer and logs the attempt.
	if st := b.submit("#send-test"); st != http.StatusOK {
		t.Fatalf("send a test: %d %s", st, b.text("main"))
	}
	if c := b.text("#test-result #test-code"); c != "HTTP 200" {
		t.Errorf("the test result reads %q: %s", c, b.text("#test-result"))
	}
	if body := b.text("#test-body"); body != receiverAnswer {
		t.Errorf("the receiver's answer reads %q, it sent %q", body, receiverAnswer)
	}
	if n := b.text("p.notice"); n != "Test delivered." {
		t.Errorf("after the test the page says %q", n)
	}
	if rcv.got() == 0 {
		t.Error("the receiver got nothing")
	}
	logRows := b.texts("#delivery-log tbody tr")
	found := false
	for _, r := range logRows {
		if strings.Contains(r, "HTTP 200") && strings.Contains(r, receiverAnswer) {
			found = true
		}
	}
	if !found {
		t.Errorf("the delivery log has no attempt answered HTTP 200 %q: %q", receiverAnswer, logRows)
	}

	// Rotate the secret: a new one, shown once.
	if st := b.submit("#rotate"); st != http.StatusOK {
		t.Fatalf("rotate: %d %s", st, b.text("main"))
	}
	if p := b.path(); !strings.HasPrefix(p, "/webhooks/"+id) {
		t.Errorf("after rotating the browser is at %s", p)
	}
	rotated := b.text("#secret")
	if !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
		t.Errorf("the rotated secret is %q (the first was %q)", rotated, secret)
	}
	if n := b.text("p.notice"); !strings.HasPrefix(n, "Secret rotated") {
		t.Errorf("after rotating the page says %q", n)
	}
	b.checkClean()
}

// TestWebhooksRefuseLoopbackByDefault: without
// SERVICE_WEBHOOK_ALLOW_PRIVATE a loopback URL is refused with the API's
// own status and message, and nothing is added.
func TestWebhooksRefuseLoopbackByDefault(t *testing.T) {
	rcv := newReceiver(t)
	svc := startService(t, nil)
	b := newBrowser(t, svc)
	hook := rcv.URL + "/hook"

	// What REST answers for the same URL (then nothing is stored either).
	status, body := svc.api(http.MethodPost, "/admin/webhooks", `{"url":"`+hook+`"}`, nil)
	var apiErr struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &apiErr); err != nil || status != http.StatusBadRequest || apiErr.Error == "" {
		t.Fatalf("REST answers %d %s for a loopback destination", status, body)
	}

	if st := b.open("/webhooks"); st != http.StatusOK {
		t.Fatalf("/webhooks answered %d", st)
	}
	b.do(chromedp.SendKeys(chromedp.CSS("#url"), hook))
	if st := b.submit("#add"); st != int64(status) {
		t.Errorf("the console answers %d, REST %d", st, status)
	}
	if msg := b.text("p.error"); msg != "400: "+apiErr.Error {
		t.Errorf("the page says %q; REST says %q", msg, apiErr.Error)
	}
	if v := b.value("#url"); v != hook {
		t.Errorf("the refused URL is not kept in the form: %q", v)
	}
	if n := b.count("table.dests tbody tr"); n != 0 {
		t.Errorf("the page lists %d destinations after the refusal", n)
	}
	if rcv.got() != 0 {
		t.Error("the receiver was called")
	}
	b.checkClean()
}
