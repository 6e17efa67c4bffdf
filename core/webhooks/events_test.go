package webhooks

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// memStore is an in-memory WebhookStore for the service's read paths.
type memStore struct {
	mu       sync.Mutex
	dests    []core.Destination
	outbox   []core.Event                      // oldest first
	history  []core.Event                      // newest first
	logs     map[string][]core.DeliveryAttempt // newest first
	reads    map[string]int                    // Attempts calls per destination
	histLim  []int                             // History limits asked for
	queue    []core.Delivery
	finished []core.DeliveryAttempt
	fanned   map[string][]core.Delivery // by event id; nil: FanOut unused
}

var _ ports.WebhookStore = (*memStore)(nil)

func (m *memStore) Destinations(context.Context) ([]core.Destination, error) {
	return slices.Clone(m.dests), nil
}
func (m *memStore) Destination(_ context.Context, id string) (core.Destination, bool, error) {
	for _, d := range m.dests {
		if d.ID == id {
			return d, true, nil
		}
	}
	return core.Destination{}, false, nil
}
func (m *memStore) PutDestination(context.Context, core.Destination) error {
	return errors.New("unused")
}
func (m *memStore) DeleteDestination(context.Context, string) error { return errors.New("unused") }
func (m *memStore) RecordEvent(context.Context, core.Event) error   { return errors.New("unused") }
func (m *memStore) Outbox(context.Context) ([]core.Event, error)    { return slices.Clone(m.outbox), nil }
func (m *memStore) FanOut(_ context.Context, id string, ds []core.Delivery) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fanned == nil {
		return errors.New("unused")
	}
	m.fanned[id] = ds
	m.outbox = slices.DeleteFunc(m.outbox, func(ev core.Event) bool { return ev.ID == id })
	return nil
}
func (m *memStore) Queue(context.Context) ([]core.Delivery, error) { return slices.Clone(m.queue), nil }
func (m *memStore) Pending(_ context.Context, id string) (int, error) {
	n := 0
	for _, d := range m.queue {
		if id == "" || d.DestinationID == id {
			n++
		}
	}
	return n, nil
}
func (m *memStore) Claim(context.Context, string, time.Time, time.Duration, int, int) (ports.Claims, error) {
	return ports.Claims{}, errors.New("unused")
}
func (m *memStore) FinishClaim(context.Context, ports.Claimed, core.DeliveryAttempt, bool) (bool, error) {
	return false, errors.New("unused")
}
func (m *memStore) Release(context.Context, ports.Claimed) error { return errors.New("unused") }
func (m *memStore) Finish(_ context.Context, _ core.Delivery, a core.DeliveryAttempt, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finished = append(m.finished, a)
	return nil
}
func (m *memStore) Attempts(_ context.Context, id string, limit int) ([]core.DeliveryAttempt, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads[id]++
	as := m.logs[id]
	return slices.Clone(as[:min(len(as), limit)]), nil
}
func (m *memStore) History(_ context.Context, limit int) ([]core.Event, error) {
	m.histLim = append(m.histLim, limit)
	return slices.Clone(m.history[:min(len(m.history), limit)]), nil
}

func evAt(typ core.EventType, id string) core.Event {
	return core.Event{ID: id, Type: typ, Catalog: core.National, Service: core.ServiceName}
}

// Events lists the outbox and the history newest first, with each fanned-out
// event's state at every destination it was queued for.
func TestEvents(t *testing.T) {
	ctx := context.Background()
	secret := core.NewSecret()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }

	// Ids sort by time: e1 oldest ... e6 newest.
	e1, e2, e3 := evAt(core.EventCatalogChanged, "evt_1"), evAt(core.EventCatalogUnreachable, "evt_2"), evAt(core.EventCatalogChanged, "evt_3")
	e4, e5, e6 := evAt(core.EventIngestFailed, "evt_4"), evAt(core.EventCatalogChanged, "evt_5"), evAt(core.EventCatalogChanged, "evt_6")
	m := &memStore{
		dests: []core.Destination{
			{ID: "a", URL: "https://a.example", Enabled: true},
			{ID: "b", URL: "https://b.example", Enabled: true},
		},
		// e5 was fanned out after the outbox was read: it is in both.
		outbox:  []core.Event{e5, e6},
		history: []core.Event{e5, e4, e3, e2, e1},
		reads:   map[string]int{},
	}
	s := newTestService(t, Config{StaticURLs: []string{"https://static.example"}, StaticSecret: secret})
	s.store = m
	static := s.static[0].ID
	m.logs = map[string][]core.DeliveryAttempt{
		"a": {
			// The latest attempt of e3 (the queue says more).
			{At: at(40), EventID: "evt_3", EventType: e3.Type, Attempt: 2, Status: core.DeliveryRetrying, ResponseCode: 503, Error: "busy", NextAttempt: at(60)},
			// A test delivery: not an event of the list.
			{At: at(30), EventID: "evt_test", EventType: core.EventWebhookTest, Attempt: 1, Status: core.DeliveryDelivered, ResponseCode: 200},
			{At: at(20), EventID: "evt_3", EventType: e3.Type, Attempt: 1, Status: core.DeliveryRetrying, ResponseCode: 503, Error: "busy", NextAttempt: at(30)},
			{At: at(10), EventID: "evt_1", EventType: e1.Type, Attempt: 2, Status: core.DeliveryDelivered, ResponseCode: 200},
			{At: at(5), EventID: "evt_1", EventType: e1.Type, Attempt: 1, Status: core.DeliveryRetrying, ResponseCode: 500, NextAttempt: at(8)},
		},
		"b": {
			// e4's attempt was recorded after the queue was read (which
			// still says no attempt).
			{At: at(12), EventID: "evt_4", EventType: e4.Type, Attempt: 1, Status: core.DeliveryDelivered, ResponseCode: 204},
			{At: at(11), EventID: "evt_1", EventType: e1.Type, Attempt: 1, Status: core.DeliveryFailed, ResponseCode: 410, Error: "gone"},
		},
		static: {
			{At: at(13), EventID: "evt_1", EventType: e1.Type, Attempt: 1, Status: core.DeliveryDelivered, ResponseCode: 200},
		},
	}
	m.queue = []core.Delivery{
		{Event: e3, DestinationID: "a", Attempts: 2, QueuedAt: at(0), NextAttempt: at(60)},
		{Event: e5, DestinationID: "a", QueuedAt: at(50), NextAttempt: at(50)},
		{Event: e5, DestinationID: static, QueuedAt: at(50), NextAttempt: at(50)},
		{Event: e4, DestinationID: "b", QueuedAt: at(1), NextAttempt: at(1)},
	}

	recs, err := s.Events(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []core.EventRecord{
		{Event: e6, FannedOut: false, Deliveries: []core.EventDelivery{}},
		{Event: e5, FannedOut: true, Deliveries: []core.EventDelivery{
			{DestinationID: "a", State: core.DeliveryQueued, NextAttempt: at(50)},
			{DestinationID: static, State: core.DeliveryQueued, NextAttempt: at(50)},
		}},
		{Event: e4, FannedOut: true, Deliveries: []core.EventDelivery{
			{DestinationID: "b", State: "delivered", Attempts: 1, ResponseCode: 204, At: at(12)},
		}},
		{Event: e3, FannedOut: true, Deliveries: []core.EventDelivery{
			{DestinationID: "a", State: "retrying", Attempts: 2, ResponseCode: 503, Error: "busy", At: at(40), NextAttempt: at(60)},
		}},
		// Nobody wanted e2 (or their logs no longer hold it).
		{Event: e2, FannedOut: true, Deliveries: []core.EventDelivery{}},
		{Event: e1, FannedOut: true, Deliveries: []core.EventDelivery{
			{DestinationID: "a", State: "delivered", Attempts: 2, ResponseCode: 200, At: at(10)},
			{DestinationID: "b", State: "failed", Attempts: 1, ResponseCode: 410, Error: "gone", At: at(11)},
			{DestinationID: static, State: "delivered", Attempts: 1, ResponseCode: 200, At: at(13)},
		}},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("Events =\n%+v\nwant\n%+v", recs, want)
	}
	for _, id := range []string{"a", "b", static} {
		if m.reads[id] != 1 {
			t.Fatalf("the log of %s was read %d times in one call; want once", id, m.reads[id])
		}
	}

	// The limit: default 20, at most core.MaxEventHistory.
	recs, err = s.Events(ctx, 2)
	if err != nil || len(recs) != 2 || recs[0].Event.ID != "evt_6" || recs[1].Event.ID != "evt_5" || len(recs[1].Deliveries) != 2 {
		t.Fatalf("Events(2) = %+v, %v", recs, err)
	}
	if _, err := s.Events(ctx, 5000); err != nil {
		t.Fatal(err)
	}
	if got, want := m.histLim, []int{core.DefaultEventList, 2, core.MaxEventHistory}; !reflect.DeepEqual(got, want) {
		t.Fatalf("History limits asked for: %v; want %v", got, want)
	}
}

// Only outbox events: no log is read.
func TestEventsOutboxOnly(t *testing.T) {
	m := &memStore{dests: []core.Destination{{ID: "a"}}, outbox: []core.Event{evAt(core.EventCatalogChanged, "evt_1"), evAt(core.EventIngestFailed, "evt_2")}, reads: map[string]int{}}
	s := newTestService(t, Config{})
	s.store = m
	recs, err := s.Events(context.Background(), 0)
	if err != nil || len(recs) != 2 || recs[0].Event.ID != "evt_2" || recs[0].FannedOut || recs[0].Deliveries == nil {
		t.Fatalf("Events = %+v, %v", recs, err)
	}
	if len(m.reads) != 0 {
		t.Fatalf("logs read for outbox events only: %v", m.reads)
	}
}

// The receiver's answer reaches the attempt, the test delivery's included.
func TestOutcomeKeepsTheResponse(t *testing.T) {
	s := newTestService(t, Config{})
	d := core.Delivery{Event: core.Event{ID: "evt_1"}, Attempts: 1, QueuedAt: time.Now()}
	for _, res := range []core.SendResult{{Code: 200, Body: "ok"}, {Code: 503, Body: "busy"}, {Code: 410, Body: "gone"}} {
		if a := s.outcome(d, res, time.Now()); a.Response != res.Body {
			t.Fatalf("outcome of %d kept %q; want %q", res.Code, a.Response, res.Body)
		}
	}

	m := &memStore{dests: []core.Destination{{ID: "a", URL: "https://a.example"}}, reads: map[string]int{}}
	s.store = m
	s.sender = fixedSender{core.SendResult{Code: 422, Body: `{"error":"unknown event type"}`}}
	a, err := s.Test(context.Background(), "a")
	if err != nil || a.Response != `{"error":"unknown event type"}` || a.Status != core.DeliveryFailed {
		t.Fatalf("Test = %+v, %v", a, err)
	}
	if len(m.finished) != 1 || m.finished[0].Response != a.Response {
		t.Fatalf("logged: %+v", m.finished)
	}
}

type fixedSender struct{ res core.SendResult }

func (f fixedSender) Check(context.Context, string) error { return nil }
func (f fixedSender) Send(context.Context, core.Destination, core.Event) core.SendResult {
	return f.res
}

// An event reaches the destinations that existed when it occurred; a
// dispatcher woken by its timer leaves young events to the replica that
// recorded them, one woken by its own work fans out everything.
func TestFanOutWhoAndWhen(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	old, young := evAt(core.EventCatalogChanged, "evt_1"), evAt(core.EventCatalogChanged, "evt_2")
	old.OccurredAt, young.OccurredAt = ago(time.Minute), ago(time.Second)
	m := &memStore{
		dests: []core.Destination{
			{ID: "before", Enabled: true, CreatedAt: ago(time.Hour)},
			{ID: "between", Enabled: true, CreatedAt: ago(30 * time.Second)},
			{ID: "same-ms", Enabled: true, CreatedAt: ago(time.Second).Add(999 * time.Microsecond)},
			{ID: "after", Enabled: true, CreatedAt: ago(0)},
		},
		outbox: []core.Event{old, young},
		fanned: map[string][]core.Delivery{},
		reads:  map[string]int{},
	}
	s := newTestService(t, Config{StaticURLs: []string{"https://static.example"}, StaticSecret: core.NewSecret()})
	s.store, s.now = m, func() time.Time { return now }
	dests := func(id string) []string {
		out := []string{}
		for _, d := range m.fanned[id] {
			out = append(out, d.DestinationID)
		}
		return out
	}

	if err := s.fanOut(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if got, want := dests("evt_1"), []string{"before", s.static[0].ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the old event went to %v; want %v (destinations created after it get nothing)", got, want)
	}
	if _, done := m.fanned["evt_2"]; done || len(m.outbox) != 1 {
		t.Fatalf("a timer's fan-out took an event %s old; Adopt is %s", time.Second, s.cfg.Adopt)
	}
	// The outbox counts as pending where fanOut will send it.
	for id, want := range map[string]int{"between": 1, "after": 0} {
		if l, err := s.Deliveries(context.Background(), id, 0); err != nil || l.Pending != want {
			t.Fatalf("%s: %d pending (%v); want %d", id, l.Pending, err, want)
		}
	}
	if err := s.fanOut(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if got, want := dests("evt_2"), []string{"before", "between", "same-ms", s.static[0].ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the young event went to %v; want %v", got, want)
	}
}
