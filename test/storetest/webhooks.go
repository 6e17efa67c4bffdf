package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func testDest(id string, created time.Time) core.Destination {
	return core.Destination{
		ID: id, URL: "https://hooks.example.org/" + id, Events: []core.EventType{core.EventCatalogChanged},
		Secret: "whsec_" + id, Enabled: true, Kind: core.WebhookGeneric, Description: "dest " + id,
		CreatedAt: created, UpdatedAt: created.Add(time.Minute),
	}
}

// testEvent returns a fully populated event, so a field the store drops
// shows up in a DeepEqual.
func testEvent(at time.Time) core.Event {
	ev := core.NewEvent(core.EventCatalogChanged, core.National, at)
	ev.Version = "2025-03"
	ev.IngestOrigin = core.OriginJSON
	ev.Counts = &core.EventCounts{Seen: 3, Upserted: 2, Unchanged: 1}
	ev.Changes = []core.ResourceChange{{Ref: "national:a", New: true}, {Ref: "national:b", Fields: []string{"a1_a3"}}}
	ev.ChangesOmitted = 4
	return ev
}

func testDelivery(ev core.Event, destID string) core.Delivery {
	return core.Delivery{Event: ev, DestinationID: destID, QueuedAt: ev.OccurredAt, NextAttempt: ev.OccurredAt}
}

func testAttempt(ev core.Event, at time.Time, n int) core.DeliveryAttempt {
	return core.DeliveryAttempt{At: at, EventID: ev.ID, EventType: ev.Type, Attempt: n, Status: core.DeliveryRetrying,
		DurationMS: 12.5, ResponseCode: 503, Error: "busy", NextAttempt: at.Add(time.Minute)}
}

func outboxIDs(t *testing.T, s Store) []string {
	t.Helper()
	evs, err := s.Outbox(context.Background())
	must(t, err)
	ids := []string{}
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	return ids
}

func queueKeys(t *testing.T, s Store) []string {
	t.Helper()
	q, err := s.Queue(context.Background())
	must(t, err)
	keys := []string{}
	for _, d := range q {
		keys = append(keys, d.DestinationID+"/"+d.Event.ID)
	}
	return keys
}

func attemptsT(t *testing.T, s Store, destID string, limit int) []core.DeliveryAttempt {
	t.Helper()
	as, err := s.Attempts(context.Background(), destID, limit)
	must(t, err)
	return as
}

func testWebhookDestinations(t *testing.T, be Backend) {
	ctx := context.Background()
	s := open(t, be)

	// Stored out of creation order; b and c share a creation time.
	a, b, c := testDest("a", t0.Add(time.Hour)), testDest("c", t0), testDest("b", t0)
	for _, d := range []core.Destination{a, b, c} {
		must(t, s.PutDestination(ctx, d))
	}
	ds, err := s.Destinations(ctx)
	must(t, err)
	if want := []core.Destination{c, b, a}; !reflect.DeepEqual(ds, want) {
		t.Fatalf("Destinations = %+v\nwant %+v", ds, want)
	}

	a.Enabled, a.URL = false, "https://hooks.example.org/moved"
	must(t, s.PutDestination(ctx, a))
	if got, found, err := s.Destination(ctx, "a"); err != nil || !found || !reflect.DeepEqual(got, a) {
		t.Fatalf("Destination(a) after replace = %+v, %v, %v", got, found, err)
	}
	if _, found, err := s.Destination(ctx, "nope"); err != nil || found {
		t.Fatalf("Destination(nope) = %v, %v", found, err)
	}
	for _, bad := range []string{"", "x/y"} {
		if err := s.PutDestination(ctx, testDest(bad, t0)); core.KindOf(err) != core.KindInvalid {
			t.Fatalf("PutDestination(%q) = %v; want an invalid error", bad, err)
		}
	}

	// Both a and b get a queued delivery and a logged attempt.
	ev := testEvent(t0)
	must(t, s.RecordEvent(ctx, ev))
	must(t, s.FanOut(ctx, ev.ID, []core.Delivery{testDelivery(ev, "a"), testDelivery(ev, "b")}))
	for _, id := range []string{"a", "b"} {
		must(t, s.Finish(ctx, testDelivery(ev, id), testAttempt(ev, t0.Add(time.Second), 1), true))
	}

	must(t, s.DeleteDestination(ctx, "a"))
	must(t, s.DeleteDestination(ctx, "a")) // unknown ids are not an error
	if _, found, _ := s.Destination(ctx, "a"); found {
		t.Fatal("deleted destination still there")
	}
	if got, want := queueKeys(t, s), []string{"b/" + ev.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("queue after delete = %v; want %v", got, want)
	}
	if n := len(attemptsT(t, s, "a", 0)); n != 0 {
		t.Fatalf("deleted destination kept %d attempts", n)
	}
	if n := len(attemptsT(t, s, "b", 0)); n != 1 {
		t.Fatalf("other destination has %d attempts; want 1", n)
	}
	if ds, _ := s.Destinations(ctx); len(ds) != 2 {
		t.Fatalf("Destinations after delete = %+v", ds)
	}
}

func testWebhookOutboxIdempotent(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)

	older, newer := testEvent(t0), testEvent(t0.Add(time.Millisecond))
	must(t, s.RecordEvent(ctx, newer))
	must(t, s.RecordEvent(ctx, older))
	again := older
	again.Message = "recorded twice"
	must(t, s.RecordEvent(ctx, again))
	evs, err := s.Outbox(ctx)
	must(t, err)
	if want := []core.Event{older, newer}; !reflect.DeepEqual(evs, want) {
		t.Fatalf("Outbox = %+v\nwant oldest first, recorded once: %+v", evs, want)
	}
	if err := s.RecordEvent(ctx, core.Event{Type: core.EventIngestFailed}); core.KindOf(err) != core.KindInvalid {
		t.Fatalf("RecordEvent without id = %v; want an invalid error", err)
	}

	ds := []core.Delivery{testDelivery(older, "a"), testDelivery(older, "b")}
	must(t, s.FanOut(ctx, older.ID, ds))
	// A second fan-out (another worker, a restart) must not queue again.
	redo := testDelivery(older, "a")
	redo.Attempts = 7
	must(t, s.FanOut(ctx, older.ID, []core.Delivery{redo, testDelivery(older, "c")}))
	q, err := s.Queue(ctx)
	must(t, err)
	if !reflect.DeepEqual(q, ds) {
		t.Fatalf("Queue after two fan-outs = %+v\nwant %+v", q, ds)
	}
	// Publishing the fanned-out event again does not bring it back.
	must(t, s.RecordEvent(ctx, older))
	if got, want := outboxIDs(t, s), []string{newer.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Outbox after fan-out and re-record = %v; want %v", got, want)
	}

	must(t, s.FanOut(ctx, newer.ID, nil)) // nobody wants it
	if got := outboxIDs(t, s); len(got) != 0 {
		t.Fatalf("Outbox after fanning out everything = %v", got)
	}
	if err := s.FanOut(ctx, older.ID, []core.Delivery{testDelivery(newer, "a")}); core.KindOf(err) != core.KindInvalid {
		t.Fatalf("FanOut of another event's delivery = %v; want an invalid error", err)
	}
}

func testWebhookFanOutRace(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)

	ev := testEvent(t0)
	must(t, s.RecordEvent(ctx, ev))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			d := testDelivery(ev, "a")
			d.Attempts = i // tells the winner apart
			errs <- s.FanOut(ctx, ev.ID, []core.Delivery{d})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	if got := queueKeys(t, s); len(got) != 1 || len(outboxIDs(t, s)) != 0 {
		t.Fatalf("after 8 concurrent fan-outs: queue %v, outbox %v", got, outboxIDs(t, s))
	}
	if got := historyIDs(t, s, 0); !reflect.DeepEqual(got, []string{ev.ID}) {
		t.Fatalf("after 8 concurrent fan-outs: history %v", got)
	}
}

func testApplyWithEvents(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)

	ok := Full(core.National, "a")
	ev1, ev2 := testEvent(t0), testEvent(t0.Add(time.Millisecond))
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{ok}, Events: []core.Event{ev1, ev2, ev1}}))
	if _, found, err := s.Get(ctx, ok.Resource.Key()); err != nil || !found {
		t.Fatalf("resource after Apply: %v, %v", found, err)
	}
	if got, want := outboxIDs(t, s), []string{ev1.ID, ev2.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Outbox after Apply = %v; want %v", got, want)
	}
	must(t, s.FanOut(ctx, ev1.ID, nil))
	must(t, s.FanOut(ctx, ev2.ID, nil))

	// Failed Applies write neither their resources nor their events.
	fresh := testEvent(t0.Add(time.Second))
	bad := []ports.Changes{
		{Put: []ports.StoredResource{Full(core.National, "b"), Full(core.DKBR, "b")}, Events: []core.Event{fresh}},
		{Put: []ports.StoredResource{Full(core.National, "b")}, Events: []core.Event{fresh, {Type: core.EventCatalogChanged}}},
	}
	for i, ch := range bad {
		if err := s.Apply(ctx, core.National, ch); core.KindOf(err) != core.KindInvalid {
			t.Fatalf("bad Apply %d = %v; want an invalid error", i, err)
		}
		if _, found, _ := s.Get(ctx, core.Key{Catalog: core.National, ID: "b"}); found {
			t.Fatalf("bad Apply %d wrote its resource", i)
		}
		if got := outboxIDs(t, s); len(got) != 0 {
			t.Fatalf("bad Apply %d wrote events %v", i, got)
		}
	}

	// An event fanned out before is skipped; the resources still land.
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{Full(core.National, "b")}, Events: []core.Event{ev1}}))
	if _, found, _ := s.Get(ctx, core.Key{Catalog: core.National, ID: "b"}); !found {
		t.Fatal("Apply with a seen event did not write its resource")
	}
	if got := outboxIDs(t, s); len(got) != 0 {
		t.Fatalf("Apply re-recorded a fanned-out event: %v", got)
	}
}

func testWebhookFinish(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)

	ev := testEvent(t0)
	must(t, s.RecordEvent(ctx, ev))
	must(t, s.FanOut(ctx, ev.ID, []core.Delivery{testDelivery(ev, "a"), testDelivery(ev, "b")}))

	retry := testDelivery(ev, "a")
	retry.Attempts, retry.NextAttempt = 1, t0.Add(30*time.Second)
	must(t, s.Finish(ctx, retry, testAttempt(ev, t0.Add(time.Second), 1), true))
	q, err := s.Queue(ctx)
	must(t, err)
	if want := []core.Delivery{retry, testDelivery(ev, "b")}; !reflect.DeepEqual(q, want) {
		t.Fatalf("Queue after requeue = %+v\nwant %+v", q, want)
	}
	done := testAttempt(ev, t0.Add(time.Minute), 2)
	done.Status, done.ResponseCode, done.Error, done.NextAttempt = core.DeliveryDelivered, 204, "", time.Time{}
	must(t, s.Finish(ctx, retry, done, false))
	if got, want := queueKeys(t, s), []string{"b/" + ev.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Queue after delivery = %v; want %v", got, want)
	}
	if got := attemptsT(t, s, "a", 0); len(got) != 2 || !reflect.DeepEqual(got[0], done) {
		t.Fatalf("Attempts(a) = %+v; want 2, newest %+v", got, done)
	}
	if err := s.Finish(ctx, retry, core.DeliveryAttempt{EventID: ev.ID}, false); core.KindOf(err) != core.KindInvalid {
		t.Fatalf("Finish with an attempt without time = %v; want an invalid error", err)
	}
}

func testWebhookLogTrim(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)

	// More attempts than the log keeps, finished in random time order.
	const total = core.MaxDeliveryLog + 25
	ev := testEvent(t0)
	order := rand.Perm(total)
	for _, i := range order {
		must(t, s.Finish(ctx, testDelivery(ev, "a"), testAttempt(ev, t0.Add(time.Duration(i)*time.Second), i), false))
	}
	must(t, s.Finish(ctx, testDelivery(ev, "b"), testAttempt(ev, t0, 0), false))

	got := attemptsT(t, s, "a", 0)
	if len(got) != core.MaxDeliveryLog {
		t.Fatalf("log holds %d attempts; want %d", len(got), core.MaxDeliveryLog)
	}
	for k, a := range got {
		if want := total - 1 - k; a.Attempt != want {
			t.Fatalf("attempt %d of the log is #%d; want #%d (newest first)", k, a.Attempt, want)
		}
	}
	if got := attemptsT(t, s, "a", 3); len(got) != 3 || got[0].Attempt != total-1 {
		t.Fatalf("Attempts(a, 3) = %+v", got)
	}
	if got := attemptsT(t, s, "b", 0); len(got) != 1 {
		t.Fatalf("Attempts(b) = %+v; another destination's trim touched it", got)
	}
}

func testWebhookDurable(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t)

	d := testDest("a", t0)
	ev, pending := testEvent(t0), testEvent(t0.Add(time.Millisecond))
	must(t, s.PutDestination(ctx, d))
	must(t, s.RecordEvent(ctx, ev))
	must(t, s.RecordEvent(ctx, pending))
	must(t, s.FanOut(ctx, ev.ID, []core.Delivery{testDelivery(ev, "a")}))
	retry := testDelivery(ev, "a")
	retry.Attempts = 1
	a := testAttempt(ev, t0.Add(time.Second), 1)
	must(t, s.Finish(ctx, retry, a, true))
	must(t, s.Close())
	if _, err := s.Destinations(ctx); core.KindOf(err) != core.KindUnavailable {
		t.Fatalf("Destinations after Close = %v; want unavailable", err)
	}

	s = open(t, b)
	if ds, err := s.Destinations(ctx); err != nil || !reflect.DeepEqual(ds, []core.Destination{d}) {
		t.Fatalf("Destinations after reopen = %+v, %v", ds, err)
	}
	if evs, err := s.Outbox(ctx); err != nil || !reflect.DeepEqual(evs, []core.Event{pending}) {
		t.Fatalf("Outbox after reopen = %+v, %v", evs, err)
	}
	if q, err := s.Queue(ctx); err != nil || !reflect.DeepEqual(q, []core.Delivery{retry}) {
		t.Fatalf("Queue after reopen = %+v, %v", q, err)
	}
	if as := attemptsT(t, s, "a", 0); !reflect.DeepEqual(as, []core.DeliveryAttempt{a}) {
		t.Fatalf("Attempts after reopen = %+v", as)
	}
	// The seen marker survives too: the fanned-out event stays out.
	must(t, s.RecordEvent(ctx, ev))
	if got := outboxIDs(t, s); len(got) != 1 {
		t.Fatalf("Outbox after re-recording a fanned-out event = %v", got)
	}
}

func testWebhookFinishConcurrent(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)

	const workers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				ev := testEvent(t0.Add(time.Duration(w*each+i) * time.Millisecond))
				a := testAttempt(ev, ev.OccurredAt, 1)
				if err := s.Finish(ctx, testDelivery(ev, "a"), a, i%2 == 0); err != nil {
					errs <- fmt.Errorf("worker %d, call %d: %w", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, want := len(attemptsT(t, s, "a", core.MaxDeliveryLog+workers*each)), min(workers*each, core.MaxDeliveryLog); n != want {
		t.Fatalf("log holds %d attempts; want %d", n, want)
	}
	if n := len(queueKeys(t, s)); n != workers*each/2 {
		t.Fatalf("queue holds %d deliveries; want %d", n, workers*each/2)
	}
}

func historyIDs(t *testing.T, s Store, limit int) []string {
	t.Helper()
	evs, err := s.History(context.Background(), limit)
	must(t, err)
	ids := []string{}
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	return ids
}

// The history holds each fanned-out event once, as recorded, newest first;
// events still in the outbox are not in it.
func testWebhookHistory(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)

	if got := historyIDs(t, s, 0); len(got) != 0 {
		t.Fatalf("History of a new store = %v", got)
	}
	var evs []core.Event
	for i := range 5 {
		ev := testEvent(t0.Add(time.Duration(i) * time.Millisecond))
		ev.Message = fmt.Sprint("event ", i)
		evs = append(evs, ev)
	}
	for _, i := range []int{3, 0, 4, 1, 2} {
		must(t, s.RecordEvent(ctx, evs[i]))
	}
	// Fanned out in another order than they happened; evs[4] stays in the outbox.
	for _, i := range []int{2, 0, 3, 1} {
		must(t, s.FanOut(ctx, evs[i].ID, []core.Delivery{testDelivery(evs[i], "a")}))
	}
	got, err := s.History(ctx, 0)
	must(t, err)
	if want := []core.Event{evs[3], evs[2], evs[1], evs[0]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("History = %+v\nwant newest first, as recorded: %+v", got, want)
	}
	if got, want := historyIDs(t, s, 2), []string{evs[3].ID, evs[2].ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("History(2) = %v; want %v", got, want)
	}

	// Fanning out an event again, after a re-record or not, adds nothing.
	must(t, s.FanOut(ctx, evs[1].ID, []core.Delivery{testDelivery(evs[1], "b")}))
	must(t, s.RecordEvent(ctx, evs[1]))
	must(t, s.FanOut(ctx, evs[1].ID, nil))
	must(t, s.FanOut(ctx, evs[4].ID, nil)) // nobody wants it: still history
	if got, want := historyIDs(t, s, 0), []string{evs[4].ID, evs[3].ID, evs[2].ID, evs[1].ID, evs[0].ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("History after repeated fan-outs = %v; want %v", got, want)
	}
	if n := b.StoredHistory(t, s); n != 5 {
		t.Fatalf("%d history entries stored; want 5", n)
	}
}

// The history keeps the newest core.MaxEventHistory events (a few more on
// disk between trims, never more in an answer), across a reopen.
func testWebhookHistoryCapAndReopen(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t)

	const total = core.MaxEventHistory + 40
	var ids []string
	fanOut := func(s Store, i int) {
		ev := testEvent(t0.Add(time.Duration(i) * time.Millisecond))
		must(t, s.RecordEvent(ctx, ev))
		must(t, s.FanOut(ctx, ev.ID, []core.Delivery{testDelivery(ev, "a")}))
		ids = append(ids, ev.ID)
	}
	newest := func(n int) []string {
		out := []string{}
		for i := len(ids) - 1; i >= len(ids)-n; i-- {
			out = append(out, ids[i])
		}
		return out
	}
	for i := range total {
		fanOut(s, i)
		if n := b.StoredHistory(t, s); n > core.MaxEventHistory+b.HistorySlack {
			t.Fatalf("after %d fan-outs the history stores %d events; the cap is %d (+%d between trims)", i+1, n, core.MaxEventHistory, b.HistorySlack)
		}
	}
	for _, limit := range []int{0, -1, core.MaxEventHistory, core.MaxEventHistory + 50} {
		if got := historyIDs(t, s, limit); !reflect.DeepEqual(got, newest(core.MaxEventHistory)) {
			t.Fatalf("History(%d) returned %d events; want the newest %d, newest first", limit, len(got), core.MaxEventHistory)
		}
	}
	if got := historyIDs(t, s, 7); !reflect.DeepEqual(got, newest(7)) {
		t.Fatalf("History(7) = %v; want %v", got, newest(7))
	}
	must(t, s.Close())

	s = open(t, b)
	if got := historyIDs(t, s, 0); !reflect.DeepEqual(got, newest(core.MaxEventHistory)) {
		t.Fatalf("History after reopen returned %d events, not the newest %d", len(got), core.MaxEventHistory)
	}
	// The first fan-out of a process trims, so short-lived processes do
	// not let the history grow.
	fanOut(s, total)
	if n := b.StoredHistory(t, s); n != core.MaxEventHistory {
		t.Fatalf("after the first fan-out of a process the history stores %d events; want %d", n, core.MaxEventHistory)
	}
	if got := historyIDs(t, s, 0); !reflect.DeepEqual(got, newest(core.MaxEventHistory)) {
		t.Fatal("History after a fan-out past the cap is not the newest events")
	}
}
