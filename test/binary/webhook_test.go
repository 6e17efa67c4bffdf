package binary

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/climatesearch/climatesearch/core"
)

// hook is a receiver: it records deliveries and holds the first one open
// until release is closed, so the service can be killed mid-delivery.
type hook struct {
	*httptest.Server
	mu      sync.Mutex
	got     []hookDelivery
	release chan struct{}
}

type hookDelivery struct {
	id, sig string
	header  http.Header
	body    []byte
}

func newHook(t *testing.T) *hook {
	h := &hook{release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, hookDelivery{id: r.Header.Get("webhook-id"), sig: r.Header.Get("webhook-signature"), header: r.Header.Clone(), body: body})
		n := len(h.got)
		h.mu.Unlock()
		if n == 1 {
			<-h.release
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		h.Close()
	})
	return h
}

func (h *hook) deliveries() []hookDelivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookDelivery(nil), h.got...)
}

func (h *hook) waitFor(t *testing.T, n int) []hookDelivery {
	t.Helper()
	deadline := time.Now().Add(patience)
	for len(h.deliveries()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d deliveries, waiting for %d", len(h.deliveries()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return h.deliveries()
}

// A service killed with deliveries pending delivers them after a restart,
// as the same message (same webhook-id), signed: once while an attempt was
// in flight, once right after an ingest answered.
func TestKill9WithPendingDeliveries(t *testing.T) {
	t.Parallel()
	up := publisher(t)
	h := newHook(t)
	secret := core.NewSecret()
	dir := t.TempDir()
	env := baseEnv(dir)
	for k, v := range publisherEnv(up) {
		env[k] = v
	}
	env["SERVICE_BOOT_INGEST"] = "false"
	env["SERVICE_WEBHOOK_URL"] = h.URL
	env["SERVICE_WEBHOOK_SECRET"] = secret
	env["SERVICE_WEBHOOK_ALLOW_PRIVATE"] = "true"
	env["SERVICE_WEBHOOK_BACKOFF"] = "50ms"
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}

	// 1. Killed while the first delivery is in flight.
	p := start(t, env)
	if status, body, err := post(t.Context(), p.URL+"/admin/ingest/run?catalog=national"); err != nil || status != http.StatusOK {
		t.Fatalf("ingest: %d %s %v", status, truncate(body), err)
	}
	first := h.waitFor(t, 1)[0]
	p.kill9()
	close(h.release)
	p = start(t, env)
	got := h.waitFor(t, 2)
	if got[1].id != first.id || string(got[1].body) != string(first.body) {
		t.Fatalf("after the restart the receiver got another message: %s, want %s", got[1].id, first.id)
	}
	if err := wh.Verify(got[1].body, got[1].header); err != nil {
		t.Fatalf("signature after restart: %v", err)
	}

	// 2. Killed right after an ingest answered (the event may or may not
	// have left): a JSON batch changes one resource.
	batch := `{"catalog":"national","resources":[{"id":"9900000001","name":"Provskiva","unit":"kg","a1a3":1.5}]}`
	status, body, err := postJSON(p.URL+"/admin/resources", batch)
	if err != nil || status != http.StatusOK {
		t.Fatalf("batch: %d %s %v", status, truncate(body), err)
	}
	p.kill9()
	p = start(t, env)
	deadline := time.Now().Add(patience)
	for {
		var ev core.Event
		found := false
		for _, d := range h.deliveries() {
			if json.Unmarshal(d.body, &ev) == nil && len(ev.Changes) == 1 && ev.Changes[0].Ref == "national:9900000001" {
				if err := wh.Verify(d.body, d.header); err != nil {
					t.Fatalf("signature: %v", err)
				}
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the batch's catalog.changed never arrived after the kill; got %d deliveries", len(h.deliveries()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.stop()
}

func postJSON(url, body string) (int, []byte, error) {
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
