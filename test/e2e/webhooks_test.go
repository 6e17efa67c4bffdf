package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.uber.org/fx"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/webhooks"
	"github.com/climatesearch/climatesearch/ports"
)

// receiver is a real HTTP endpoint that records every delivery and answers
// what respond says (200 by default).
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     []delivery
	respond func(n int, w http.ResponseWriter) // n counts requests from 1
}

type delivery struct {
	Header http.Header
	Body   []byte
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{Header: req.Header.Clone(), Body: body})
		n, respond := len(r.got), r.respond
		r.mu.Unlock()
		if respond != nil {
			respond(n, w)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) setRespond(f func(n int, w http.ResponseWriter)) {
	r.mu.Lock()
	r.respond = f
	r.mu.Unlock()
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// events decodes the generic deliveries received so far.
func (r *receiver) events(t *testing.T) []core.Event {
	t.Helper()
	var out []core.Event
	for _, d := range r.deliveries() {
		var ev core.Event
		if err := json.Unmarshal(d.Body, &ev); err != nil {
			t.Fatalf("a delivery is not a JSON Event: %v: %s", err, d.Body)
		}
		out = append(out, ev)
	}
	return out
}

// eventually polls cond until it holds; the deadline only bounds a broken run.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// webhookSettings let deliveries reach the local receivers and retry fast.
func webhookSettings(extra map[string]string) map[string]string {
	s := map[string]string{
		"SERVICE_WEBHOOK_ALLOW_PRIVATE": "true",
		"SERVICE_WEBHOOK_BACKOFF":       "20ms",
	}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// createDestination posts a destination and returns it with its secret.
func (e *env) createDestination(body map[string]any) core.Destination {
	e.t.Helper()
	b, _ := json.Marshal(body)
	r := e.do(http.MethodPost, "/admin/webhooks", b, map[string]string{"Content-Type": "application/json"})
	if r.Status != http.StatusCreated {
		e.t.Fatalf("create destination: %d %s", r.Status, r.Body)
	}
	var d core.Destination
	r.json(e.t, &d)
	return d
}

func (e *env) deliveryLog(id string) core.DeliveryLog {
	e.t.Helper()
	var l core.DeliveryLog
	r := e.get("/admin/webhooks/" + id + "/deliveries?limit=200")
	if r.Status != http.StatusOK {
		e.t.Fatalf("deliveries of %s: %d %s", id, r.Status, r.Body)
	}
	r.json(e.t, &l)
	return l
}

// settled waits until no delivery is queued for any destination.
func (e *env) settled(ids ...string) {
	e.t.Helper()
	eventually(e.t, "the webhook queue to drain", func() bool {
		for _, id := range ids {
			if e.deliveryLog(id).Pending > 0 {
				return false
			}
		}
		return true
	})
}

// fannedOut waits until every recorded event has left the outbox.
func (e *env) fannedOut() {
	e.t.Helper()
	eventually(e.t, "the outbox to empty", func() bool {
		var evs struct{ Events []core.EventRecord }
		e.get("/admin/events?limit=100").json(e.t, &evs)
		for _, ev := range evs.Events {
			if !ev.FannedOut {
				return false
			}
		}
		return len(evs.Events) > 0
	})
}

func TestWebhookChangedReleaseReachesEveryDestinationOnceSigned(t *testing.T) {
	static := newReceiver(t)
	secret := core.NewSecret()
	e := newEnv(t, webhookSettings(map[string]string{"SERVICE_WEBHOOK_URL": static.URL, "SERVICE_WEBHOOK_SECRET": secret}))
	a, b := newReceiver(t), newReceiver(t)
	da := e.createDestination(map[string]any{"url": a.URL, "events": []string{"catalog.changed"}})
	db := e.createDestination(map[string]any{"url": b.URL})
	var list struct{ Destinations []core.Destination }
	e.get("/admin/webhooks").json(t, &list)
	if len(list.Destinations) != 3 || !list.Destinations[2].Static || list.Destinations[2].URL != static.URL {
		t.Fatalf("destinations: %+v", list.Destinations)
	}
	envID := list.Destinations[2].ID
	secrets := map[*receiver]string{a: da.Secret, b: db.Secret, static: secret}

	// The first ingest fills the empty catalog: 235 new resources.
	e.mustIngest()
	for r := range secrets {
		eventually(t, "the first catalog.changed", func() bool { return len(r.deliveries()) == 1 })
	}
	// An unchanged release, then one that changes one value.
	e.mustIngest()
	e.serveChangedRelease()
	e.mustIngest()
	e.settled(da.ID, db.ID, envID)

	for r, sec := range secrets {
		got := r.deliveries()
		if len(got) != 2 {
			t.Fatalf("%s received %d deliveries, want 2 (the unchanged release sends none)", r.URL, len(got))
		}
		for _, d := range got {
			verifyStandardWebhook(t, sec, d)
		}
		evs := r.events(t)
		first, second := evs[0], evs[1]
		if first.Type != core.EventCatalogChanged || first.Catalog != core.National || first.Counts == nil ||
			first.Counts.Upserted != 235 || len(first.Changes) != core.MaxEventChanges || first.ChangesOmitted != 235-core.MaxEventChanges ||
			!first.Changes[0].New || first.IngestOrigin != core.OriginJSON || first.Service != core.ServiceName ||
			!strings.Contains(first.Source, "Boverket") || first.ID == "" || first.ID == second.ID {
			t.Fatalf("first event: %+v", first)
		}
		if second.Version != "02.07.001" || second.Counts.Upserted != 1 || second.Counts.Unchanged != 234 ||
			len(second.Changes) != 1 || second.Changes[0].Ref != "national:6000000024" || second.Changes[0].New ||
			!containsString(second.Changes[0].Fields, "a1a3") {
			t.Fatalf("second event: %+v", second)
		}
		if got[1].Header.Get("webhook-id") != second.ID || got[1].Header.Get("X-Service-Signature") != got[1].Header.Get("webhook-signature") {
			t.Fatalf("headers: %v", got[1].Header)
		}
	}
	l := e.deliveryLog(da.ID)
	if l.Pending != 0 || len(l.Attempts) != 2 || l.Attempts[0].Status != core.DeliveryDelivered || l.Attempts[0].ResponseCode != 200 ||
		l.Attempts[0].EventType != core.EventCatalogChanged || l.Attempts[0].Attempt != 1 {
		t.Fatalf("delivery log: %+v", l)
	}
}

func containsString(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

func TestWebhookUnreachableHonoursFiltersAndDisabled(t *testing.T) {
	e := newEnv(t, webhookSettings(nil))
	e.mustIngest()
	// The ingest's catalog.changed goes to the destinations that exist when
	// it is fanned out: wait for that (to none), or dAll would get it too.
	e.fannedOut()
	all, changedOnly, disabled := newReceiver(t), newReceiver(t), newReceiver(t)
	dAll := e.createDestination(map[string]any{"url": all.URL, "events": []string{"*"}})
	dChanged := e.createDestination(map[string]any{"url": changedOnly.URL, "events": []string{"catalog.changed"}})
	dOff := e.createDestination(map[string]any{"url": disabled.URL, "enabled": false})

	e.Up.FailJSON(http.StatusServiceUnavailable)
	e.Up.FailExcel(http.StatusServiceUnavailable)
	if _, r := e.ingest(); r.Status != http.StatusBadGateway {
		t.Fatalf("ingest with the publisher down: %d %s", r.Status, r.Body)
	}
	eventually(t, "catalog.unreachable", func() bool { return len(all.deliveries()) == 1 })
	e.settled(dAll.ID, dChanged.ID, dOff.ID)
	ev := all.events(t)[0]
	if ev.Type != core.EventCatalogUnreachable || ev.Catalog != core.National || !contains(ev.Error, "503") || ev.Source == "" {
		t.Fatalf("unreachable event: %+v", ev)
	}
	if n, m := len(changedOnly.deliveries()), len(disabled.deliveries()); n != 0 || m != 0 {
		t.Fatalf("filtered destination got %d, disabled got %d", n, m)
	}
	if l := e.deliveryLog(dOff.ID); len(l.Attempts) != 0 {
		t.Fatalf("disabled destination log: %+v", l)
	}
}

func TestWebhookRetriesUntilTheReceiverComesBack(t *testing.T) {
	e := newEnv(t, webhookSettings(nil))
	r := newReceiver(t)
	// Down for three attempts (a 503, a 429 asking for a second, a 500), then up.
	r.setRespond(func(n int, w http.ResponseWriter) {
		switch n {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case 3:
			w.WriteHeader(http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	d := e.createDestination(map[string]any{"url": r.URL})
	e.mustIngest()
	eventually(t, "the fourth attempt", func() bool { return len(r.deliveries()) == 4 })
	e.settled(d.ID)
	got := r.deliveries()
	id := got[0].Header.Get("webhook-id")
	for i, g := range got {
		if g.Header.Get("webhook-id") != id || string(g.Body) != string(got[0].Body) {
			t.Fatalf("attempt %d changed the id or body", i+1)
		}
		verifyStandardWebhook(t, d.Secret, g)
	}
	l := e.deliveryLog(d.ID)
	if len(l.Attempts) != 4 {
		t.Fatalf("log: %+v", l.Attempts)
	}
	// Newest first.
	want := []struct {
		status core.DeliveryStatus
		code   int
	}{{core.DeliveryDelivered, 204}, {core.DeliveryRetrying, 500}, {core.DeliveryRetrying, 429}, {core.DeliveryRetrying, 503}}
	for i, w := range want {
		a := l.Attempts[i]
		if a.Status != w.status || a.ResponseCode != w.code || a.Attempt != 4-i || a.EventID != id {
			t.Fatalf("attempt %d: %+v", 4-i, a)
		}
	}
	if a := l.Attempts[2]; a.NextAttempt.Sub(a.At) < time.Second {
		t.Fatalf("the 429's Retry-After of 1s was not honoured: %+v", a)
	}
}

func TestWebhookClientErrorStopsAndRetryWindowEnds(t *testing.T) {
	e := newEnv(t, webhookSettings(map[string]string{"SERVICE_WEBHOOK_RETRY_FOR": "2s"}))
	gone, broken := newReceiver(t), newReceiver(t)
	gone.setRespond(func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	broken.setRespond(func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) })
	dGone := e.createDestination(map[string]any{"url": gone.URL})
	dBroken := e.createDestination(map[string]any{"url": broken.URL})
	e.mustIngest()
	e.settled(dGone.ID, dBroken.ID)

	if n := len(gone.deliveries()); n != 1 {
		t.Fatalf("a 410 was retried: %d attempts", n)
	}
	l := e.deliveryLog(dGone.ID)
	if len(l.Attempts) != 1 || l.Attempts[0].Status != core.DeliveryFailed || !contains(l.Attempts[0].Error, "not retried") {
		t.Fatalf("410 log: %+v", l.Attempts)
	}
	lb := e.deliveryLog(dBroken.ID)
	last := lb.Attempts[0]
	if len(lb.Attempts) < 2 || last.Status != core.DeliveryFailed || !contains(last.Error, "gave up") || len(broken.deliveries()) != len(lb.Attempts) {
		t.Fatalf("502 log: %+v", lb.Attempts)
	}
	for _, a := range lb.Attempts[1:] {
		if a.Status != core.DeliveryRetrying {
			t.Fatalf("before giving up: %+v", a)
		}
	}
}

func TestWebhookSlowDestinationDelaysNobody(t *testing.T) {
	e := newEnv(t, webhookSettings(nil))
	release := make(chan struct{})
	slow, fast := newReceiver(t), newReceiver(t)
	slow.setRespond(func(_ int, w http.ResponseWriter) {
		<-release
		w.WriteHeader(http.StatusOK)
	})
	t.Cleanup(func() { close(release) })
	dSlow := e.createDestination(map[string]any{"url": slow.URL})
	e.createDestination(map[string]any{"url": fast.URL})
	// The ingest answers and the fast destination is served while the slow
	// one still holds its first request.
	e.mustIngest()
	eventually(t, "the fast delivery", func() bool { return len(fast.deliveries()) == 1 })
	eventually(t, "the slow request to arrive", func() bool { return len(slow.deliveries()) == 1 })
	if l := e.deliveryLog(dSlow.ID); l.Pending != 1 || len(l.Attempts) != 0 {
		t.Fatalf("slow destination: %+v", l)
	}
}

func TestWebhookPendingDeliveriesSurviveARestart(t *testing.T) {
	e := newEnv(t, webhookSettings(nil))
	r := newReceiver(t)
	hold := make(chan struct{})
	r.setRespond(func(n int, w http.ResponseWriter) {
		if n == 1 {
			<-hold // the service stops while this attempt is in flight
		}
		w.WriteHeader(http.StatusOK)
	})
	d := e.createDestination(map[string]any{"url": r.URL})
	e.mustIngest()
	eventually(t, "the first attempt", func() bool { return len(r.deliveries()) == 1 })
	e.stop() // abandons the attempt: nothing recorded, the delivery stays queued
	close(hold)
	e.start()
	eventually(t, "the delivery after the restart", func() bool { return len(r.deliveries()) == 2 })
	e.settled(d.ID)
	got := r.deliveries()
	if got[0].Header.Get("webhook-id") != got[1].Header.Get("webhook-id") || string(got[0].Body) != string(got[1].Body) {
		t.Fatalf("the resumed delivery is another message: %v vs %v", got[0].Header, got[1].Header)
	}
	verifyStandardWebhook(t, d.Secret, got[1])
	if l := e.deliveryLog(d.ID); len(l.Attempts) != 1 || l.Attempts[0].Status != core.DeliveryDelivered || l.Attempts[0].Attempt != 1 {
		t.Fatalf("log after restart: %+v", l)
	}
}

func TestWebhookPrivateAddressesAreRefusedByDefault(t *testing.T) {
	r := newReceiver(t)
	secret := core.NewSecret()
	e := newEnv(t, map[string]string{"SERVICE_WEBHOOK_URL": r.URL, "SERVICE_WEBHOOK_SECRET": secret, "SERVICE_WEBHOOK_BACKOFF": "20ms"})
	for _, u := range []string{r.URL, "http://localhost:9/x", "http://169.254.169.254/latest/meta-data", "http://10.0.0.1/hook", "http://[::1]:8080/"} {
		b, _ := json.Marshal(map[string]any{"url": u})
		resp := e.do(http.MethodPost, "/admin/webhooks", b, map[string]string{"Content-Type": "application/json"})
		if resp.Status != http.StatusBadRequest || !contains(resp.errMsg(t), "SERVICE_WEBHOOK_ALLOW_PRIVATE") {
			t.Fatalf("%s: %d %s", u, resp.Status, resp.Body)
		}
	}
	var list struct{ Destinations []core.Destination }
	e.get("/admin/webhooks").json(t, &list)
	if len(list.Destinations) != 1 || !list.Destinations[0].Static {
		t.Fatalf("nothing but the static destination may exist: %+v", list.Destinations)
	}
	// The static destination points at loopback: refused when connecting.
	e.mustIngest()
	id := list.Destinations[0].ID
	e.settled(id)
	l := e.deliveryLog(id)
	if len(l.Attempts) != 1 || l.Attempts[0].Status != core.DeliveryFailed || len(r.deliveries()) != 0 {
		t.Fatalf("loopback delivery: %+v, receiver saw %d", l.Attempts, len(r.deliveries()))
	}
}

func TestWebhookAdminAPI(t *testing.T) {
	r := newReceiver(t)
	e := newEnv(t, webhookSettings(map[string]string{
		"SERVICE_ADMIN_TOKEN": "tok", "SERVICE_WEBHOOK_URL": r.URL, "SERVICE_WEBHOOK_SECRET": core.NewSecret(),
	}))
	h := map[string]string{"X-Admin-Token": "tok", "Content-Type": "application/json"}
	call := func(method, path string, body any) response {
		var b []byte
		if body != nil {
			b, _ = json.Marshal(body)
		}
		return e.do(method, path, b, h)
	}
	if resp := e.get("/admin/webhooks"); resp.Status != http.StatusUnauthorized {
		t.Fatalf("without the token: %d", resp.Status)
	}
	resp := call(http.MethodPost, "/admin/webhooks", map[string]any{"url": r.URL, "description": "LCA tool cache"})
	var d core.Destination
	resp.json(t, &d)
	if resp.Status != http.StatusCreated || !strings.HasPrefix(d.Secret, "whsec_") || len(d.Secret) < 30 || d.Kind != core.WebhookGeneric ||
		!d.Enabled || resp.Header.Get("Location") != "/admin/webhooks/"+d.ID {
		t.Fatalf("create: %d %+v", resp.Status, d)
	}
	if _, err := core.ParseSecret(d.Secret); err != nil {
		t.Fatal(err)
	}
	var got core.Destination
	call(http.MethodGet, "/admin/webhooks/"+d.ID, nil).json(t, &got)
	if got.Secret == d.Secret || !strings.HasPrefix(got.Secret, "whsec_…") || got.Description != "LCA tool cache" {
		t.Fatalf("the secret must be masked after creation: %+v", got)
	}
	var list struct{ Destinations []core.Destination }
	call(http.MethodGet, "/admin/webhooks", nil).json(t, &list)
	for _, x := range list.Destinations {
		if strings.Contains(string(mustJSON(t, list)), d.Secret) || !strings.HasPrefix(x.Secret, "whsec_…") {
			t.Fatalf("list leaks a secret: %+v", x)
		}
	}

	// Kinds: detected from chat hosts, always overridable.
	for u, k := range map[string]core.WebhookKind{
		"https://hooks.slack.com/services/T0/B0/x":  core.WebhookText,
		"https://discord.com/api/webhooks/1/abc":    core.WebhookContent,
		"https://chat.googleapis.com/v1/spaces/x":   core.WebhookText,
		"https://tools.example.org/climate-webhook": core.WebhookGeneric,
	} {
		var c core.Destination
		call(http.MethodPost, "/admin/webhooks", map[string]any{"url": u}).json(t, &c)
		if c.Kind != k {
			t.Fatalf("%s detected as %q, want %q", u, c.Kind, k)
		}
		var p core.Destination
		call(http.MethodPatch, "/admin/webhooks/"+c.ID, map[string]any{"kind": "generic"}).json(t, &p)
		if p.Kind != core.WebhookGeneric {
			t.Fatalf("override: %+v", p)
		}
		if resp := call(http.MethodDelete, "/admin/webhooks/"+c.ID, nil); resp.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", resp.Status, resp.Body)
		}
	}

	// Bad input is refused and changes nothing.
	for _, bad := range []map[string]any{
		{"url": "ftp://example.org/x"}, {"url": "not a url"}, {"url": r.URL, "events": []string{"catalog.exploded"}},
		{"url": r.URL, "secret": "hunter2"}, {"url": r.URL, "kind": "pager"}, {}, {"url": r.URL, "surprise": true},
	} {
		if resp := call(http.MethodPost, "/admin/webhooks", bad); resp.Status != http.StatusBadRequest || resp.errMsg(t) == "" {
			t.Fatalf("%v: %d %s", bad, resp.Status, resp.Body)
		}
	}
	if resp := call(http.MethodPatch, "/admin/webhooks/"+d.ID, map[string]any{"events": []string{"nope"}}); resp.Status != http.StatusBadRequest {
		t.Fatalf("bad patch: %d", resp.Status)
	}
	call(http.MethodGet, "/admin/webhooks/"+d.ID, nil).json(t, &got)
	if len(got.Events) != 0 || got.Description != "LCA tool cache" {
		t.Fatalf("a refused patch changed the destination: %+v", got)
	}

	// PATCH changes only what it names; rotating reveals the new secret once.
	var p core.Destination
	call(http.MethodPatch, "/admin/webhooks/"+d.ID, map[string]any{"events": []string{"ingest.failed", "catalog.unreachable"}, "enabled": false}).json(t, &p)
	if p.Enabled || len(p.Events) != 2 || p.Description != "LCA tool cache" || p.URL != r.URL || !strings.HasPrefix(p.Secret, "whsec_…") {
		t.Fatalf("patch: %+v", p)
	}
	call(http.MethodPatch, "/admin/webhooks/"+d.ID, map[string]any{"rotate_secret": true}).json(t, &p)
	if p.Secret == d.Secret || strings.Contains(p.Secret, "…") {
		t.Fatalf("rotation must reveal a new secret: %+v", p)
	}

	// The test event reaches the destination, signed with the new secret,
	// even though it is disabled and filters other events.
	resp = call(http.MethodPost, "/admin/webhooks/"+d.ID+"/test", nil)
	var a core.DeliveryAttempt
	resp.json(t, &a)
	if resp.Status != http.StatusOK || a.Status != core.DeliveryDelivered || a.ResponseCode != 200 || a.EventType != core.EventWebhookTest {
		t.Fatalf("test: %d %+v", resp.Status, a)
	}
	got2 := r.deliveries()
	verifyStandardWebhook(t, p.Secret, got2[len(got2)-1])
	var l core.DeliveryLog
	call(http.MethodGet, "/admin/webhooks/"+d.ID+"/deliveries", nil).json(t, &l)
	if len(l.Attempts) != 1 || l.Attempts[0].EventID != a.EventID {
		t.Fatalf("the test is logged: %+v", l)
	}

	// The static destination can be tested but not edited.
	var static core.Destination
	for _, x := range list.Destinations {
		if x.Static {
			static = x
		}
	}
	if resp := call(http.MethodPatch, "/admin/webhooks/"+static.ID, map[string]any{"enabled": false}); resp.Status != http.StatusConflict {
		t.Fatalf("patch static: %d", resp.Status)
	}
	if resp := call(http.MethodDelete, "/admin/webhooks/"+static.ID, nil); resp.Status != http.StatusConflict {
		t.Fatalf("delete static: %d", resp.Status)
	}
	if resp := call(http.MethodPost, "/admin/webhooks/"+static.ID+"/test", nil); resp.Status != http.StatusOK {
		t.Fatalf("test static: %d %s", resp.Status, resp.Body)
	}

	// Deleting removes it and its log.
	if resp := call(http.MethodDelete, "/admin/webhooks/"+d.ID, nil); resp.Status != http.StatusNoContent {
		t.Fatalf("delete: %d", resp.Status)
	}
	for _, path := range []string{"/admin/webhooks/" + d.ID, "/admin/webhooks/" + d.ID + "/deliveries"} {
		if resp := call(http.MethodGet, path, nil); resp.Status != http.StatusNotFound {
			t.Fatalf("%s after delete: %d", path, resp.Status)
		}
	}
}

func TestWebhookChatKindsGetTheirBodies(t *testing.T) {
	e := newEnv(t, webhookSettings(nil))
	text, content := newReceiver(t), newReceiver(t)
	e.createDestination(map[string]any{"url": text.URL, "kind": "text"})
	e.createDestination(map[string]any{"url": content.URL, "kind": "content"})
	e.mustIngest()
	eventually(t, "chat deliveries", func() bool { return len(text.deliveries()) == 1 && len(content.deliveries()) == 1 })
	var tb map[string]string
	if err := json.Unmarshal(text.deliveries()[0].Body, &tb); err != nil || len(tb) != 1 ||
		!strings.HasPrefix(tb["text"], "climatesearch catalog.changed: catalog national") || !contains(tb["text"], "235 new or changed") || !contains(tb["text"], "Boverket") {
		t.Fatalf("text body: %s", text.deliveries()[0].Body)
	}
	var cb map[string]string
	if err := json.Unmarshal(content.deliveries()[0].Body, &cb); err != nil || len(cb) != 1 || cb["content"] != tb["text"] {
		t.Fatalf("content body: %s", content.deliveries()[0].Body)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verifyStandardWebhook checks a delivery with the Standard Webhooks
// reference library, as a receiver would.
func verifyStandardWebhook(t *testing.T, secret string, d delivery) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(d.Body, d.Header); err != nil {
		t.Fatalf("the delivery %s does not verify: %v", d.Header.Get("webhook-id"), err)
	}
}

// A boot ingest that fails (the publisher is down, the store holds data)
// sends catalog.unreachable and ingest.failed to a destination stored
// before the restart, both naming the version still served.
func TestWebhookBootIngestFailure(t *testing.T) {
	e := newEnv(t, webhookSettings(nil))
	e.mustIngest()
	r := newReceiver(t)
	d := e.createDestination(map[string]any{"url": r.URL, "events": []string{"ingest.failed", "catalog.unreachable"}})
	e.Up.FailJSON(http.StatusServiceUnavailable)
	e.Up.FailExcel(http.StatusServiceUnavailable)
	e.settings["SERVICE_BOOT_INGEST"] = "true"
	e.restart()
	eventually(t, "two failure events", func() bool { return len(r.deliveries()) == 2 })
	e.settled(d.ID)
	byType := map[core.EventType]core.Event{}
	for _, ev := range r.events(t) {
		byType[ev.Type] = ev
	}
	u, f := byType[core.EventCatalogUnreachable], byType[core.EventIngestFailed]
	if u.ID == "" || !contains(u.Error, "503") || u.Version != "02.07.000" || u.Catalog != core.National {
		t.Fatalf("catalog.unreachable: %+v", u)
	}
	if f.ID == "" || !strings.HasPrefix(f.Error, "boot ingest: ") || f.Version != "02.07.000" || f.Source == "" {
		t.Fatalf("ingest.failed: %+v", f)
	}
	for _, dl := range r.deliveries() {
		verifyStandardWebhook(t, d.Secret, dl)
	}
}

// Deleting a destination while an attempt to it is in flight leaves
// nothing behind once the attempt ends: no queued delivery, no log.
func TestWebhookDeleteWhileInFlightLeavesNothing(t *testing.T) {
	var st ports.WebhookStore
	var svc *webhooks.Service
	e := newEnv(t, webhookSettings(nil), fx.Populate(&st, &svc))
	release := make(chan struct{})
	r := newReceiver(t)
	r.setRespond(func(_ int, w http.ResponseWriter) {
		<-release
		w.WriteHeader(http.StatusServiceUnavailable) // would be retried
	})
	d := e.createDestination(map[string]any{"url": r.URL})
	e.mustIngest()
	eventually(t, "the attempt in flight", func() bool { return len(r.deliveries()) == 1 })
	if resp := e.do(http.MethodDelete, "/admin/webhooks/"+d.ID, nil, nil); resp.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", resp.Status, resp.Body)
	}
	close(release)
	ctx := context.Background()
	eventually(t, "the deleted destination's traces to go", func() bool {
		if svc.InFlight() > 0 {
			return false
		}
		q, err := st.Queue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		as, err := st.Attempts(ctx, d.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(q) == 0 && len(as) == 0
	})
	if n := len(r.deliveries()); n != 1 {
		t.Fatalf("a deleted destination got %d requests", n)
	}
}

func (e *env) events(query string) []core.EventRecord {
	e.t.Helper()
	r := e.get("/admin/events" + query)
	if r.Status != http.StatusOK {
		e.t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	var l struct{ Events []core.EventRecord }
	r.json(e.t, &l)
	return l.Events
}

// GET /admin/events follows an ingest's catalog.changed from retrying to
// delivered at the destination that wants it, and the attempts keep what
// the receiver answered, the test delivery's included.
func TestWebhookEventsShowDeliveryStateAndResponse(t *testing.T) {
	e := newEnv(t, webhookSettings(nil))
	r := newReceiver(t)
	r.setRespond(func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.Header().Set("Retry-After", "1") // long enough to see it retrying
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "busy\x00, try later")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"received":true,"note":"tack så mycket"}`)
	})
	d := e.createDestination(map[string]any{"url": r.URL})
	other := e.createDestination(map[string]any{"url": newReceiver(t).URL, "events": []string{"ingest.failed"}})
	if evs := e.events(""); len(evs) != 0 {
		t.Fatalf("events before any ingest: %+v", evs)
	}

	e.mustIngest()
	var ev core.EventRecord
	state := func() core.EventDelivery {
		evs := e.events("?limit=5")
		if len(evs) != 1 {
			t.Fatalf("events after one ingest: %+v", evs)
		}
		ev = evs[0]
		if len(ev.Deliveries) == 0 {
			return core.EventDelivery{}
		}
		if len(ev.Deliveries) != 1 || ev.Deliveries[0].DestinationID != d.ID {
			t.Fatalf("deliveries of %s: %+v; want only %s's (%s wants ingest.failed)", ev.Event.ID, ev.Deliveries, d.ID, other.ID)
		}
		return ev.Deliveries[0]
	}
	eventually(t, "the delivery to retry", func() bool { return state().State == string(core.DeliveryRetrying) })
	if s := state(); s.Attempts != 1 || s.ResponseCode != 503 || s.At.IsZero() || s.NextAttempt.Sub(s.At) < time.Second {
		t.Fatalf("retrying: %+v", s)
	}
	eventually(t, "the delivery to succeed", func() bool { return state().State == string(core.DeliveryDelivered) })
	if s := state(); s.Attempts != 2 || s.ResponseCode != 200 || s.Error != "" || !s.NextAttempt.IsZero() {
		t.Fatalf("delivered: %+v", s)
	}
	if ev.Event.Type != core.EventCatalogChanged || !ev.FannedOut || ev.Event.Counts == nil || ev.Event.Counts.Upserted != 235 ||
		ev.Event.ID != r.deliveries()[0].Header.Get("webhook-id") {
		t.Fatalf("event: %+v", ev)
	}
	l := e.deliveryLog(d.ID)
	if len(l.Attempts) != 2 || l.Attempts[0].Response != `{"received":true,"note":"tack så mycket"}` || l.Attempts[1].Response != "busy, try later" {
		t.Fatalf("the log does not keep the receiver's answers: %+v", l.Attempts)
	}

	var a core.DeliveryAttempt
	resp := e.do(http.MethodPost, "/admin/webhooks/"+d.ID+"/test", nil, nil)
	resp.json(t, &a)
	if resp.Status != http.StatusOK || a.Status != core.DeliveryDelivered || a.Response != `{"received":true,"note":"tack så mycket"}` {
		t.Fatalf("test delivery: %d %+v", resp.Status, a)
	}
	if l := e.deliveryLog(d.ID); l.Attempts[0].EventType != core.EventWebhookTest || l.Attempts[0].Response != a.Response {
		t.Fatalf("the logged test attempt: %+v", l.Attempts[0])
	}
	// The test delivery is not an event of the list.
	if evs := e.events(""); len(evs) != 1 || evs[0].Event.ID != ev.Event.ID {
		t.Fatalf("events after a test delivery: %+v", evs)
	}

	// A second, changed release: newest first, limit honoured.
	e.serveChangedRelease()
	e.mustIngest()
	e.settled(d.ID)
	evs := e.events("")
	if len(evs) != 2 || evs[1].Event.ID != ev.Event.ID || evs[0].Event.ID <= ev.Event.ID || evs[0].Event.Version != "02.07.001" {
		t.Fatalf("events after a second ingest: %+v", evs)
	}
	if evs := e.events("?limit=1"); len(evs) != 1 || evs[0].Event.Version != "02.07.001" {
		t.Fatalf("limit=1: %+v", evs)
	}
	for _, q := range []string{"?limit=0", "?limit=101", "?since=1"} {
		if r := e.get("/admin/events" + q); r.Status != http.StatusBadRequest {
			t.Fatalf("%s: %d, want 400", q, r.Status)
		}
	}
}
