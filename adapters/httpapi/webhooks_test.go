package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
)

// fakeWebhooks is an in-memory ports.Webhooks: enough behaviour to check
// that the handlers parse requests and map the service's errors.
type fakeWebhooks struct {
	mu        sync.Mutex
	ds        map[string]core.Destination
	max       int
	lastInput core.DestinationInput
	lastLimit int
	events    []core.EventRecord
	eventsErr error
}

func newFakeWebhooks() *fakeWebhooks {
	return &fakeWebhooks{max: 2, ds: map[string]core.Destination{
		"static": {ID: "static", URL: "https://env.example/hook", Secret: "whsec_…abcd", Enabled: true, Kind: core.WebhookGeneric, Static: true},
	}}
}

var errStatic = &core.Error{Kind: core.KindConflict, Msg: "destination static comes from SERVICE_WEBHOOK_URL and cannot be changed"}

func (f *fakeWebhooks) List(context.Context) ([]core.Destination, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []core.Destination
	for _, d := range f.ds {
		out = append(out, d.Masked())
	}
	return out, nil
}

func (f *fakeWebhooks) Create(_ context.Context, in core.DestinationInput) (core.Destination, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastInput = in
	if in.URL == nil || *in.URL == "" {
		return core.Destination{}, core.Invalidf("url is required")
	}
	if len(f.ds) >= f.max {
		return core.Destination{}, &core.Error{Kind: core.KindConflict, Msg: "too many destinations"}
	}
	d := core.Destination{ID: "wh_1", URL: *in.URL, Secret: core.NewSecret(), Enabled: true, Kind: core.WebhookGeneric, CreatedAt: time.Now()}
	f.ds[d.ID] = d
	return d, nil
}

func (f *fakeWebhooks) Get(_ context.Context, id string) (core.Destination, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.ds[id]
	if !ok {
		return core.Destination{}, core.NotFoundf("no webhook destination %q", id)
	}
	return d.Masked(), nil
}

func (f *fakeWebhooks) Update(ctx context.Context, id string, in core.DestinationInput) (core.Destination, error) {
	f.mu.Lock()
	f.lastInput = in
	f.mu.Unlock()
	d, err := f.Get(ctx, id)
	if err == nil && d.Static {
		err = errStatic
	}
	return d, err
}

func (f *fakeWebhooks) Delete(ctx context.Context, id string) error {
	d, err := f.Get(ctx, id)
	if err == nil && d.Static {
		err = errStatic
	}
	return err
}

func (f *fakeWebhooks) Test(ctx context.Context, id string) (core.DeliveryAttempt, error) {
	if _, err := f.Get(ctx, id); err != nil {
		return core.DeliveryAttempt{}, err
	}
	return core.DeliveryAttempt{At: time.Now(), EventID: "evt_1", EventType: core.EventWebhookTest, Attempt: 1, Status: core.DeliveryFailed, ResponseCode: 410}, nil
}

func (f *fakeWebhooks) Deliveries(ctx context.Context, id string, limit int) (core.DeliveryLog, error) {
	f.mu.Lock()
	f.lastLimit = limit
	f.mu.Unlock()
	if _, err := f.Get(ctx, id); err != nil {
		return core.DeliveryLog{}, err
	}
	return core.DeliveryLog{DestinationID: id}, nil
}

func (f *fakeWebhooks) Events(_ context.Context, limit int) ([]core.EventRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastLimit = limit
	if f.eventsErr != nil {
		return nil, f.eventsErr
	}
	return f.events, nil
}

func newWebhookAPI(token string) (*API, *fakeWebhooks) {
	f := newFakeWebhooks()
	return New(Deps{Webhooks: f, AdminToken: token, Log: zap.NewNop()}), f
}

func do(t *testing.T, a *API, method, target, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	a.ServeHTTP(w, req)
	return w
}

func TestCreateWebhook(t *testing.T) {
	a, f := newWebhookAPI("")
	w := do(t, a, "POST", "/admin/webhooks", `{"url":"https://example.com/hook","events":["catalog.changed"],"description":"ops"}`)
	if w.Code != http.StatusCreated {
		t.Fatalf("status %d, body %s", w.Code, w.Body)
	}
	if loc := w.Header().Get("Location"); loc != "/admin/webhooks/wh_1" {
		t.Errorf("Location = %q", loc)
	}
	var d core.Destination
	if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Secret, core.SecretPrefix) || strings.Contains(d.Secret, "…") {
		t.Errorf("the creation answer must show the full secret, got %q", d.Secret)
	}
	// Empty events mean "every event": written as [], never null.
	if !strings.Contains(w.Body.String(), `"events":[]`) {
		t.Errorf("events not an empty array: %s", w.Body)
	}
	if in := f.lastInput; in.Events == nil || len(*in.Events) != 1 || in.Description == nil || *in.Description != "ops" {
		t.Errorf("input not passed on: %+v", in)
	}
}

func TestWebhookBodyErrors(t *testing.T) {
	a, _ := newWebhookAPI("")
	tests := []struct {
		name, method, target, body string
		want                       int
	}{
		{"unknown field", "POST", "/admin/webhooks", `{"url":"https://example.com","secrett":"x"}`, 400},
		{"bad json", "POST", "/admin/webhooks", `{"url":`, 400},
		{"wrong type", "POST", "/admin/webhooks", `{"url":42}`, 400},
		{"empty body", "POST", "/admin/webhooks", ``, 400},
		{"two values", "POST", "/admin/webhooks", `{"url":"https://example.com"} {}`, 400},
		{"oversized", "POST", "/admin/webhooks", `{"description":"` + strings.Repeat("x", MaxWebhookBody) + `"}`, 413},
		{"service invalid", "POST", "/admin/webhooks", `{}`, 400},
		{"unknown query parameter", "POST", "/admin/webhooks?dry_run=true", `{"url":"https://example.com"}`, 400},
		{"patch unknown field", "PATCH", "/admin/webhooks/static", `{"rotate":true}`, 400},
		{"patch oversized", "PATCH", "/admin/webhooks/static", `{"description":"` + strings.Repeat("x", MaxWebhookBody) + `"}`, 413},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(t, a, tc.method, tc.target, tc.body)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d; body %s", w.Code, tc.want, w.Body)
			}
			var e errorBody
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Errorf("not an Error body: %s", w.Body)
			}
		})
	}
}

func TestWebhookStatusMapping(t *testing.T) {
	a, f := newWebhookAPI("")
	f.max = 1 // the static destination fills the limit
	tests := []struct {
		name, method, target, body string
		want                       int
	}{
		{"list", "GET", "/admin/webhooks", "", 200},
		{"get", "GET", "/admin/webhooks/static", "", 200},
		{"get unknown", "GET", "/admin/webhooks/nope", "", 404},
		{"create over the limit", "POST", "/admin/webhooks", `{"url":"https://example.com"}`, 409},
		{"patch unknown", "PATCH", "/admin/webhooks/nope", `{"enabled":false}`, 404},
		{"patch static", "PATCH", "/admin/webhooks/static", `{"rotate_secret":true}`, 409},
		{"delete unknown", "DELETE", "/admin/webhooks/nope", "", 404},
		{"delete static", "DELETE", "/admin/webhooks/static", "", 409},
		{"test", "POST", "/admin/webhooks/static/test", "", 200},
		{"test unknown", "POST", "/admin/webhooks/nope/test", "", 404},
		{"deliveries", "GET", "/admin/webhooks/static/deliveries", "", 200},
		{"deliveries unknown", "GET", "/admin/webhooks/nope/deliveries", "", 404},
		{"get with a query parameter", "GET", "/admin/webhooks/static?x=1", "", 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(t, a, tc.method, tc.target, tc.body)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d; body %s", w.Code, tc.want, w.Body)
			}
		})
	}
	if !f.lastInput.RotateSecret {
		t.Error("rotate_secret not passed on")
	}
}

func TestWebhookAnswers(t *testing.T) {
	a, f := newWebhookAPI("")
	f.ds = map[string]core.Destination{"wh_2": {ID: "wh_2", URL: "https://example.com", Secret: core.NewSecret(), Enabled: true, Kind: core.WebhookText}}

	if w := do(t, a, "DELETE", "/admin/webhooks/wh_2", ""); w.Code != http.StatusNoContent || w.Body.Len() != 0 {
		t.Errorf("delete: status %d body %q, want 204 and no body", w.Code, w.Body)
	}
	// A failed test delivery is still a 200: the attempt happened.
	w := do(t, a, "POST", "/admin/webhooks/wh_2/test", "")
	var at core.DeliveryAttempt
	if err := json.Unmarshal(w.Body.Bytes(), &at); err != nil || w.Code != 200 || at.Status != core.DeliveryFailed || at.ResponseCode != 410 {
		t.Errorf("test: status %d body %s", w.Code, w.Body)
	}
	w = do(t, a, "GET", "/admin/webhooks/wh_2/deliveries", "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"attempts":[]`) {
		t.Errorf("deliveries: status %d body %s, want attempts []", w.Code, w.Body)
	}
	if f.lastLimit != core.DefaultDeliveryList {
		t.Errorf("default limit = %d, want %d", f.lastLimit, core.DefaultDeliveryList)
	}

	f.ds = nil
	w = do(t, a, "GET", "/admin/webhooks", "")
	if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"destinations":[]}` {
		t.Errorf("empty list: status %d body %s", w.Code, w.Body)
	}
}

func TestWebhookDeliveriesLimit(t *testing.T) {
	a, f := newWebhookAPI("")
	for _, v := range []string{"0", "abc", "-1", "1.5", "999", "201"} {
		if w := do(t, a, "GET", "/admin/webhooks/static/deliveries?limit="+v, ""); w.Code != http.StatusBadRequest {
			t.Errorf("limit=%s: status %d, want 400", v, w.Code)
		}
	}
	for _, v := range []int{1, core.MaxDeliveryLog} {
		w := do(t, a, "GET", "/admin/webhooks/static/deliveries?limit="+strconv.Itoa(v), "")
		if w.Code != 200 || f.lastLimit != v {
			t.Errorf("limit=%d: status %d, service got %d", v, w.Code, f.lastLimit)
		}
	}
}

func TestWebhooksNeedAdminToken(t *testing.T) {
	a, _ := newWebhookAPI("s3cret")
	routes := [][2]string{
		{"GET", "/admin/webhooks"}, {"POST", "/admin/webhooks"}, {"GET", "/admin/webhooks/static"},
		{"PATCH", "/admin/webhooks/static"}, {"DELETE", "/admin/webhooks/static"},
		{"POST", "/admin/webhooks/static/test"}, {"GET", "/admin/webhooks/static/deliveries"},
		{"GET", "/admin/events"},
	}
	for _, r := range routes {
		if w := do(t, a, r[0], r[1], `{}`); w.Code != http.StatusUnauthorized {
			t.Errorf("%s %s without token: status %d, want 401", r[0], r[1], w.Code)
		}
		if w := do(t, a, r[0], r[1], `{}`, "X-Admin-Token", "wrong"); w.Code != http.StatusUnauthorized {
			t.Errorf("%s %s with a wrong token: status %d, want 401", r[0], r[1], w.Code)
		}
	}
	if w := do(t, a, "GET", "/admin/webhooks", "", "X-Admin-Token", "s3cret"); w.Code != http.StatusOK {
		t.Errorf("with token: status %d, want 200", w.Code)
	}
}

func TestWebhookEvents(t *testing.T) {
	a, f := newWebhookAPI("")
	w := do(t, a, "GET", "/admin/events", "")
	if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"events":[]}` {
		t.Errorf("no events: status %d body %s, want events []", w.Code, w.Body)
	}
	if f.lastLimit != core.DefaultEventList {
		t.Errorf("default limit = %d, want %d", f.lastLimit, core.DefaultEventList)
	}

	at := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	f.events = []core.EventRecord{
		{Event: core.Event{ID: "evt_2", Type: core.EventIngestFailed, OccurredAt: at, Service: core.ServiceName}}, // nil deliveries
		{Event: core.Event{ID: "evt_1", Type: core.EventCatalogChanged, OccurredAt: at, Service: core.ServiceName}, FannedOut: true,
			Deliveries: []core.EventDelivery{{DestinationID: "wh_1", State: "retrying", Attempts: 2, ResponseCode: 503, At: at, NextAttempt: at.Add(time.Minute)}}},
	}
	w = do(t, a, "GET", "/admin/events?limit=100", "")
	var got struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 || len(got.Events) != 2 || f.lastLimit != core.MaxEventHistory {
		t.Fatalf("events: status %d body %s, limit %d", w.Code, w.Body, f.lastLimit)
	}
	if d, ok := got.Events[0]["deliveries"].([]any); !ok || len(d) != 0 || got.Events[0]["fanned_out"] != false {
		t.Errorf("an outbox event: %v, want fanned_out false and deliveries []", got.Events[0])
	}
	d := got.Events[1]["deliveries"].([]any)[0].(map[string]any)
	if d["state"] != "retrying" || d["attempts"] != 2.0 || d["next_attempt"] != "2026-11-22T09:31:00Z" || d["destination_id"] != "wh_1" {
		t.Errorf("delivery: %v", d)
	}

	for _, v := range []string{"0", "abc", "-1", "101", "1.5"} {
		if w := do(t, a, "GET", "/admin/events?limit="+v, ""); w.Code != http.StatusBadRequest {
			t.Errorf("limit=%s: status %d, want 400", v, w.Code)
		}
	}
	if w := do(t, a, "GET", "/admin/events?limt=5", ""); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "limt") {
		t.Errorf("unknown parameter: status %d body %s, want 400", w.Code, w.Body)
	}
	if w := do(t, a, "GET", "/admin/events?limit=1", ""); w.Code != 200 || f.lastLimit != 1 {
		t.Errorf("limit=1: status %d, service got %d", w.Code, f.lastLimit)
	}
	f.eventsErr = core.Unavailablef(nil, "reading the event history failed")
	if w := do(t, a, "GET", "/admin/events", ""); w.Code != http.StatusServiceUnavailable {
		t.Errorf("store down: status %d, want 503", w.Code)
	}
}
