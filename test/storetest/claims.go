package storetest

// The shared delivery queue: the claim methods of ports.WebhookStore
// (Claim, FinishClaim, Release, Pending), and webhooks.Service replicas
// over one store delivering through them. Self-contained: it uses none of
// the contract's helpers, so it can run on its own (RunClaims).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/webhooks"
	"github.com/climatesearch/climatesearch/ports"
)

// Replicas opens stores on one body of data, fresh for the test: every
// store it returns sees what the others wrote (PostgreSQL: a pool per call
// on one database; badger, a store of one process: the same open store).
// The stores are closed when the test ends.
type Replicas func(t *testing.T) ports.WebhookStore

// RunClaims runs the tests of the shared delivery queue, each on data of
// its own from fresh.
func RunClaims(t *testing.T, fresh func(t *testing.T) Replicas) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, open Replicas)
	}{
		{"ClaimLeases", testClaimLeases},
		{"ClaimPerDestination", testClaimPerDestination},
		{"ClaimNotYetDue", testClaimNotYetDue},
		{"ClaimDeletedDestination", testClaimDeletedDestination},
		{"ClaimConcurrent", testClaimConcurrent},
		{"ReplicasDeliverOnce", testReplicasDeliverOnce},
		{"ReplicasRaceToFanOut", testReplicasRaceToFanOut},
		{"ReplicaDiesMidAttempt", testReplicaDiesMidAttempt},
		{"ReplicasShareTheDestinationLimit", testReplicasShareTheDestinationLimit},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, fresh(t)) })
	}
}

var ct0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func clMust(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// clQueue fans out one event per entry of at (its time) to dests; it
// returns the events.
func clQueue(t *testing.T, s ports.WebhookStore, dests []string, at ...time.Time) []core.Event {
	t.Helper()
	ctx := context.Background()
	var evs []core.Event
	for _, a := range at {
		ev := core.NewEvent(core.EventCatalogChanged, core.National, a)
		clMust(t, s.RecordEvent(ctx, ev))
		var ds []core.Delivery
		for _, d := range dests {
			ds = append(ds, core.Delivery{Event: ev, DestinationID: d, QueuedAt: a, NextAttempt: a})
		}
		clMust(t, s.FanOut(ctx, ev.ID, ds))
		evs = append(evs, ev)
	}
	return evs
}

func claimT(t *testing.T, s ports.WebhookStore, owner string, now time.Time, perDest, limit int) ports.Claims {
	t.Helper()
	c, err := s.Claim(context.Background(), owner, now, time.Minute, perDest, limit)
	clMust(t, err)
	return c
}

func claimedKeys(cs []ports.Claimed) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.DestinationID+"/"+c.Event.ID)
	}
	return out
}

// sameTime compares times to the microsecond a store may keep.
func sameTime(a, b time.Time) bool {
	d := a.Sub(b)
	return d > -time.Microsecond && d < time.Microsecond
}

func clAttempt(c ports.Claimed, status core.DeliveryStatus, at, next time.Time) core.DeliveryAttempt {
	return core.DeliveryAttempt{At: at, EventID: c.Event.ID, EventType: c.Event.Type, Attempt: c.Attempts + 1,
		Status: status, ResponseCode: 200, NextAttempt: next}
}

func pendingT(t *testing.T, s ports.WebhookStore, dest string) int {
	t.Helper()
	n, err := s.Pending(context.Background(), dest)
	clMust(t, err)
	return n
}

// A claim leases due deliveries, oldest first, to one claimer; nobody else
// gets them until the lease ends; only the holder of the lease records an
// attempt or gives it back.
func testClaimLeases(t *testing.T, open Replicas) {
	ctx := context.Background()
	a, b := open(t), open(t)
	evs := clQueue(t, a, []string{"x", "y"}, ct0)
	evs = append(evs, clQueue(t, a, []string{"x"}, ct0.Add(time.Millisecond))...)
	if _, err := a.Claim(ctx, "", ct0, time.Minute, 1, 1); core.KindOf(err) != core.KindInvalid {
		t.Fatalf("Claim without an owner = %v; want an invalid error", err)
	}

	now := ct0.Add(time.Second)
	c := claimT(t, a, "A", now, 10, 10)
	want := []string{"x/" + evs[0].ID, "y/" + evs[0].ID, "x/" + evs[1].ID}
	if got := claimedKeys(c.Deliveries); !slices.Equal(got, want) {
		t.Fatalf("A claimed %v; want %v, oldest first", got, want)
	}
	for _, d := range c.Deliveries {
		if d.Lease.Owner != "A" || !sameTime(d.Lease.Until, now.Add(time.Minute)) || d.Event.Type != core.EventCatalogChanged || d.Event.Catalog != core.National {
			t.Fatalf("claimed %+v", d)
		}
	}
	if !c.Next.IsZero() {
		t.Fatalf("after claiming everything, Next = %v; want zero", c.Next)
	}
	if n := pendingT(t, b, ""); n != 3 {
		t.Fatalf("Pending = %d while claimed; want 3 (a claim stays queued)", n)
	}

	// Leased: B gets nothing before the lease ends, and learns when it does.
	cb := claimT(t, b, "B", now.Add(59*time.Second), 10, 10)
	if len(cb.Deliveries) != 0 || !sameTime(cb.Next, now.Add(time.Minute)) {
		t.Fatalf("B during A's lease: %v, next %v; want nothing until %v", claimedKeys(cb.Deliveries), cb.Next, now.Add(time.Minute))
	}
	// At its end, B takes everything over.
	end := now.Add(time.Minute)
	cb = claimT(t, b, "B", end, 10, 10)
	if got := claimedKeys(cb.Deliveries); !slices.Equal(got, want) {
		t.Fatalf("B after A's lease claimed %v; want %v", got, want)
	}

	// A's lease is gone: its outcome and its release change nothing.
	held, err := a.FinishClaim(ctx, c.Deliveries[0], clAttempt(c.Deliveries[0], core.DeliveryDelivered, end, time.Time{}), false)
	if err != nil || held {
		t.Fatalf("FinishClaim with a lost lease = %v, %v; want not held", held, err)
	}
	clMust(t, a.Release(ctx, c.Deliveries[1]))
	if as, _ := a.Attempts(ctx, "x", 0); len(as) != 0 {
		t.Fatalf("a lost lease logged %+v", as)
	}
	if got := claimT(t, a, "C", end.Add(time.Second), 10, 10); len(got.Deliveries) != 0 {
		t.Fatalf("after a lost lease's release, C claimed %v", claimedKeys(got.Deliveries))
	}

	// B delivers the first, retries the second later, gives the third back.
	d0, d1, d2 := cb.Deliveries[0], cb.Deliveries[1], cb.Deliveries[2]
	if held, err := b.FinishClaim(ctx, d0, clAttempt(d0, core.DeliveryDelivered, end, time.Time{}), false); err != nil || !held {
		t.Fatalf("FinishClaim delivered = %v, %v", held, err)
	}
	if held, err := b.FinishClaim(ctx, d0, clAttempt(d0, core.DeliveryDelivered, end.Add(time.Millisecond), time.Time{}), false); err != nil || held {
		t.Fatalf("a second FinishClaim of one lease = %v, %v; want not held", held, err)
	}
	retryAt := end.Add(30 * time.Second) // before C's lease below ends
	if held, err := b.FinishClaim(ctx, d1, clAttempt(d1, core.DeliveryRetrying, end, retryAt), true); err != nil || !held {
		t.Fatalf("FinishClaim retrying = %v, %v", held, err)
	}
	clMust(t, b.Release(ctx, d2))
	if as, _ := a.Attempts(ctx, "x", 0); len(as) != 1 || as[0].EventID != evs[0].ID || as[0].Status != core.DeliveryDelivered {
		t.Fatalf("log of x: %+v; want the one delivery", as)
	}
	if as, _ := a.Attempts(ctx, "y", 0); len(as) != 1 || as[0].Status != core.DeliveryRetrying {
		t.Fatalf("log of y: %+v; want the retry", as)
	}
	if x, y, all := pendingT(t, a, "x"), pendingT(t, a, "y"), pendingT(t, a, ""); x != 1 || y != 1 || all != 2 {
		t.Fatalf("Pending x %d, y %d, all %d; want 1, 1, 2", x, y, all)
	}
	q, err := a.Queue(ctx)
	clMust(t, err)
	for _, d := range q {
		if d.DestinationID == "y" && (d.Attempts != 1 || !sameTime(d.NextAttempt, retryAt)) {
			t.Fatalf("requeued delivery %+v; want attempt 1, next %v", d, retryAt)
		}
	}

	// The released one is due at once, to anyone; the retry at its time.
	cc := claimT(t, a, "C", end.Add(time.Second), 10, 10)
	if got := claimedKeys(cc.Deliveries); !slices.Equal(got, []string{"x/" + evs[1].ID}) || !sameTime(cc.Next, retryAt) {
		t.Fatalf("C claimed %v, next %v; want the released delivery, next %v", got, cc.Next, retryAt)
	}
	cc = claimT(t, a, "C", retryAt, 10, 10)
	if got := claimedKeys(cc.Deliveries); !slices.Equal(got, []string{"y/" + evs[0].ID}) || cc.Deliveries[0].Attempts != 1 {
		t.Fatalf("at the retry C claimed %+v", cc.Deliveries)
	}
}

// No destination has more live leases than the limit, whoever holds them;
// a claim cut short by its limit says more is due now.
func testClaimPerDestination(t *testing.T, open Replicas) {
	ctx := context.Background()
	a, b := open(t), open(t)
	var at []time.Time
	for i := range 5 {
		at = append(at, ct0.Add(time.Duration(i)*time.Second))
	}
	xs := clQueue(t, a, []string{"x"}, at...)
	ys := clQueue(t, a, []string{"y"}, at[:2]...)
	now := ct0.Add(time.Minute)

	c := claimT(t, a, "A", now, 2, 10)
	want := []string{"x/" + xs[0].ID, "x/" + xs[1].ID, "y/" + ys[0].ID, "y/" + ys[1].ID}
	if got := claimedKeys(c.Deliveries); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Fatalf("A claimed %v; want the two oldest of each destination %v", got, want)
	}
	cb := claimT(t, b, "B", now, 2, 10)
	if len(cb.Deliveries) != 0 || !sameTime(cb.Next, now.Add(time.Minute)) {
		t.Fatalf("B with x and y full: %v, next %v; want nothing until A's leases end", claimedKeys(cb.Deliveries), cb.Next)
	}
	// One of x's slots frees: B takes x's next delivery, one only.
	i := slices.IndexFunc(c.Deliveries, func(d ports.Claimed) bool { return d.DestinationID == "x" })
	x0 := c.Deliveries[i]
	if held, err := a.FinishClaim(ctx, x0, clAttempt(x0, core.DeliveryDelivered, now, time.Time{}), false); err != nil || !held {
		t.Fatalf("FinishClaim = %v, %v", held, err)
	}
	cb = claimT(t, b, "B", now, 2, 10)
	if got := claimedKeys(cb.Deliveries); !slices.Equal(got, []string{"x/" + xs[2].ID}) {
		t.Fatalf("B after a slot freed claimed %v; want %v", got, "x/"+xs[2].ID)
	}
	// A limit of one, with more due: Next is now.
	cc := claimT(t, b, "C", now, 10, 1)
	if got := claimedKeys(cc.Deliveries); !slices.Equal(got, []string{"x/" + xs[3].ID}) || !sameTime(cc.Next, now) {
		t.Fatalf("C with limit 1 claimed %v, next %v; want %s, next now", got, cc.Next, "x/"+xs[3].ID)
	}
}

// A delivery is claimable from its NextAttempt on.
func testClaimNotYetDue(t *testing.T, open Replicas) {
	s := open(t)
	later := ct0.Add(10 * time.Second)
	evs := clQueue(t, s, []string{"x"}, later)
	if c := claimT(t, s, "A", ct0, 4, 10); len(c.Deliveries) != 0 || !sameTime(c.Next, later) {
		t.Fatalf("before it is due: %v, next %v; want nothing, next %v", claimedKeys(c.Deliveries), c.Next, later)
	}
	c := claimT(t, s, "A", later, 4, 10)
	if !slices.Equal(claimedKeys(c.Deliveries), []string{"x/" + evs[0].ID}) {
		t.Fatalf("when due: %v", claimedKeys(c.Deliveries))
	}
	d := c.Deliveries[0]
	if held, err := s.FinishClaim(context.Background(), d, clAttempt(d, core.DeliveryDelivered, later, time.Time{}), false); err != nil || !held {
		t.Fatalf("FinishClaim = %v, %v", held, err)
	}
	if c := claimT(t, s, "A", ct0.Add(time.Hour), 4, 10); len(c.Deliveries) != 0 || !c.Next.IsZero() {
		t.Fatalf("an empty queue: %v, next %v", claimedKeys(c.Deliveries), c.Next)
	}
}

// A destination deleted while its delivery is claimed leaves nothing: the
// attempt is not recorded.
func testClaimDeletedDestination(t *testing.T, open Replicas) {
	ctx := context.Background()
	s := open(t)
	clMust(t, s.PutDestination(ctx, core.Destination{ID: "x", URL: "https://x.example", Enabled: true, Kind: core.WebhookGeneric, CreatedAt: ct0}))
	clQueue(t, s, []string{"x"}, ct0)
	c := claimT(t, s, "A", ct0, 4, 10)
	if len(c.Deliveries) != 1 {
		t.Fatalf("claimed %v", claimedKeys(c.Deliveries))
	}
	clMust(t, s.DeleteDestination(ctx, "x"))
	d := c.Deliveries[0]
	if held, err := s.FinishClaim(ctx, d, clAttempt(d, core.DeliveryRetrying, ct0, ct0.Add(time.Minute)), true); err != nil || held {
		t.Fatalf("FinishClaim after the deletion = %v, %v; want not held", held, err)
	}
	clMust(t, s.Release(ctx, d))
	if n := pendingT(t, s, "x"); n != 0 {
		t.Fatalf("%d deliveries pending for a deleted destination", n)
	}
	if as, _ := s.Attempts(ctx, "x", 0); len(as) != 0 {
		t.Fatalf("a deleted destination's log: %+v", as)
	}
}

// Claimers racing each take distinct deliveries; together, all of them.
func testClaimConcurrent(t *testing.T, open Replicas) {
	const dests, events, claimers = 3, 20, 6
	s := open(t)
	var at []time.Time
	for i := range events {
		at = append(at, ct0.Add(time.Duration(i)*time.Millisecond))
	}
	for d := range dests {
		clQueue(t, s, []string{fmt.Sprint("d", d)}, at...)
	}
	stores := make([]ports.WebhookStore, claimers)
	for i := range stores {
		stores[i] = open(t)
	}
	var mu sync.Mutex
	got := map[string]string{} // delivery -> owner
	var wg sync.WaitGroup
	errs := make(chan error, claimers)
	for i, st := range stores {
		wg.Go(func() {
			owner := fmt.Sprint("owner", i)
			for {
				c, err := st.Claim(context.Background(), owner, ct0.Add(time.Second), time.Minute, events, 7)
				if err != nil {
					errs <- err
					return
				}
				if len(c.Deliveries) == 0 {
					return
				}
				mu.Lock()
				for _, k := range claimedKeys(c.Deliveries) {
					if prev, dup := got[k]; dup {
						errs <- fmt.Errorf("%s claimed by %s and %s", k, prev, owner)
					}
					got[k] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(got) != dests*events {
		t.Fatalf("%d deliveries claimed in all; want %d", len(got), dests*events)
	}
}

// --- Replicas: webhooks.Service over one store. ---

// recorder is a receiver that counts each webhook-id it gets; serve, when
// set, answers instead of 200 (and may block).
type recorder struct {
	*httptest.Server
	mu    sync.Mutex
	ids   map[string]int
	total int
	serve func(w http.ResponseWriter, r *http.Request)
}

func newRecorder(t testing.TB, serve func(w http.ResponseWriter, r *http.Request)) *recorder {
	rec := &recorder{ids: map[string]int{}, serve: serve}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rec.mu.Lock()
		rec.ids[r.Header.Get("webhook-id")]++
		rec.total++
		rec.mu.Unlock()
		if rec.serve != nil {
			rec.serve(w, r)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *recorder) counts() (map[string]int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.ids), r.total
}

// plainSender posts the event as JSON with its id in webhook-id: what the
// replicas need of a sender (the real one is adapters/webhooksender).
type plainSender struct{}

func (plainSender) Check(context.Context, string) error { return nil }

func (plainSender) Send(ctx context.Context, d core.Destination, ev core.Event) core.SendResult {
	body, err := json.Marshal(ev)
	if err != nil {
		return core.SendResult{Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return core.SendResult{Err: err, Refused: true}
	}
	req.Header.Set("webhook-id", ev.ID)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return core.SendResult{Err: err, Duration: time.Since(start)}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return core.SendResult{Code: resp.StatusCode, Duration: time.Since(start)}
}

type replica struct {
	*webhooks.Service
	cancel context.CancelFunc
	done   chan struct{}
}

// startReplica runs a webhooks.Service over st until stop (or the test's
// end).
func startReplica(t testing.TB, st ports.WebhookStore, cfg webhooks.Config) *replica {
	t.Helper()
	if cfg.Poll == 0 {
		cfg.Poll = 10 * time.Millisecond
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 20 * time.Millisecond
	}
	svc, err := webhooks.New(cfg, st, plainSender{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	clMust(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{Service: svc, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		svc.Run(ctx)
	}()
	t.Cleanup(r.stop)
	return r
}

func (r *replica) stop() {
	r.cancel()
	<-r.done
}

// waitUntil polls cond; the deadline only bounds a broken run.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func createDest(t testing.TB, svc *webhooks.Service, url string) core.Destination {
	t.Helper()
	d, err := svc.Create(context.Background(), core.DestinationInput{URL: &url})
	clMust(t, err)
	return d
}

// settledOnce waits until every receiver got every event and nothing is
// pending or in flight, then requires each event exactly once at each.
func settledOnce(t *testing.T, st ports.WebhookStore, rs []*replica, recs []*recorder, evs []core.Event) {
	t.Helper()
	waitUntil(t, "every event at every receiver, nothing pending", func() bool {
		for _, rec := range recs {
			ids, _ := rec.counts()
			for _, ev := range evs {
				if ids[ev.ID] == 0 {
					return false
				}
			}
		}
		n, err := st.Pending(context.Background(), "")
		clMust(t, err)
		for _, r := range rs {
			if r.InFlight() > 0 {
				return false
			}
		}
		return n == 0
	})
	for i, rec := range recs {
		ids, total := rec.counts()
		if total != len(evs) {
			t.Errorf("receiver %d got %d requests for %d events: %v", i, total, len(evs), ids)
		}
		for _, ev := range evs {
			if ids[ev.ID] != 1 {
				t.Errorf("receiver %d got %s %d times", i, ev.ID, ids[ev.ID])
			}
		}
	}
}

// Three replicas, events published through each: every destination gets
// every event once.
func testReplicasDeliverOnce(t *testing.T, open Replicas) {
	st := open(t)
	recs := []*recorder{newRecorder(t, nil), newRecorder(t, nil)}
	var rs []*replica
	for i := range 3 {
		rs = append(rs, startReplica(t, open(t), webhooks.Config{Owner: fmt.Sprint("replica", i)}))
	}
	for _, rec := range recs {
		createDest(t, rs[0].Service, rec.URL)
	}
	var evs []core.Event
	for i := range 30 {
		ev := core.NewEvent(core.EventCatalogChanged, core.National, time.Now())
		clMust(t, rs[i%3].Publish(context.Background(), ev))
		evs = append(evs, ev)
	}
	settledOnce(t, st, rs, recs, evs)
	ds, err := rs[1].List(context.Background())
	clMust(t, err)
	for _, d := range ds {
		l, err := rs[2].Deliveries(context.Background(), d.ID, 200)
		clMust(t, err)
		if l.Pending != 0 || len(l.Attempts) != len(evs) {
			t.Fatalf("delivery log of %s: pending %d, %d attempts; want 0, %d", d.ID, l.Pending, len(l.Attempts), len(evs))
		}
	}
}

// Events waiting in the outbox when three replicas start at once are
// fanned out by all three at the same moment: each reaches each
// destination once, and is in the history once.
func testReplicasRaceToFanOut(t *testing.T, open Replicas) {
	ctx := context.Background()
	st := open(t)
	recs := []*recorder{newRecorder(t, nil), newRecorder(t, nil)}
	for i, rec := range recs {
		clMust(t, st.PutDestination(ctx, core.Destination{ID: fmt.Sprint("wh_", i), URL: rec.URL, Enabled: true,
			Kind: core.WebhookGeneric, Secret: core.NewSecret(), CreatedAt: time.Now()}))
	}
	var evs []core.Event
	for range 20 {
		ev := core.NewEvent(core.EventCatalogChanged, core.National, time.Now())
		clMust(t, st.RecordEvent(ctx, ev))
		evs = append(evs, ev)
	}
	var rs []*replica
	stores := []ports.WebhookStore{open(t), open(t), open(t)}
	for i, s := range stores {
		rs = append(rs, startReplica(t, s, webhooks.Config{Owner: fmt.Sprint("replica", i)}))
	}
	settledOnce(t, st, rs, recs, evs)
	hist, err := st.History(ctx, 0)
	clMust(t, err)
	seen := map[string]int{}
	for _, ev := range hist {
		seen[ev.ID]++
	}
	for _, ev := range evs {
		if seen[ev.ID] != 1 {
			t.Fatalf("event %s is %d times in the history", ev.ID, seen[ev.ID])
		}
	}
}

// noRelease is the store as a replica that dies sees it: it never gives a
// lease back.
type noRelease struct{ ports.WebhookStore }

func (noRelease) Release(context.Context, ports.Claimed) error { return nil }

// A replica dies while its receiver holds the attempt: another replica
// makes the attempt again once the lease has run out, with the same
// webhook-id, and records it.
func testReplicaDiesMidAttempt(t *testing.T, open Replicas) {
	ctx := context.Background()
	st := open(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var mu sync.Mutex
	calls := 0
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			select { // held until the dying replica hangs up
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	// The dying replica's attempt would end by itself at three quarters
	// of the lease; the test stops it long before.
	const lease = 3 * time.Second
	dying := startReplica(t, noRelease{open(t)}, webhooks.Config{Owner: "dying", Lease: lease})
	d := createDest(t, dying.Service, rec.URL)
	ev := core.NewEvent(core.EventCatalogChanged, core.National, time.Now())
	clMust(t, dying.Publish(ctx, ev))
	waitUntil(t, "the first attempt", func() bool { _, n := rec.counts(); return n == 1 })

	heir := startReplica(t, open(t), webhooks.Config{Owner: "heir", Lease: lease})
	dying.stop() // its attempt is abandoned, its lease kept
	waitUntil(t, "the attempt of the other replica", func() bool { _, n := rec.counts(); return n == 2 })
	waitUntil(t, "the queue to drain", func() bool { return pendingT(t, st, "") == 0 && heir.InFlight() == 0 })
	ids, total := rec.counts()
	if total != 2 || ids[ev.ID] != 2 {
		t.Fatalf("the receiver got %v; want %s twice", ids, ev.ID)
	}
	as, err := st.Attempts(ctx, d.ID, 0)
	clMust(t, err)
	if len(as) != 1 || as[0].Status != core.DeliveryDelivered || as[0].Attempt != 1 {
		t.Fatalf("log: %+v; want the heir's delivery only (the dead replica's attempt was never recorded)", as)
	}
}

// Three replicas with a limit of two attempts per destination never have
// more than two requests at the receiver at once, though each could take
// two by itself.
func testReplicasShareTheDestinationLimit(t *testing.T, open Replicas) {
	ctx := context.Background()
	st := open(t)
	const limit, events = 2, 8
	gate := make(chan struct{})
	var mu sync.Mutex
	cur, peak := 0, 0
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur++
		peak = max(peak, cur)
		mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
		}
		mu.Lock()
		cur--
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	var rs []*replica
	for i := range 3 {
		rs = append(rs, startReplica(t, open(t), webhooks.Config{Owner: fmt.Sprint("replica", i), PerDestination: limit}))
	}
	createDest(t, rs[0].Service, rec.URL)
	var evs []core.Event
	for i := range events {
		ev := core.NewEvent(core.EventCatalogChanged, core.National, time.Now())
		clMust(t, rs[i%3].Publish(ctx, ev))
		evs = append(evs, ev)
	}
	// Let the requests through one at a time, each time the receiver holds
	// as many as the limit allows.
	for done := 0; done < events; done++ {
		want := min(limit, events-done)
		waitUntil(t, fmt.Sprintf("%d requests held at the receiver", want), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return cur == want
		})
		gate <- struct{}{}
	}
	settledOnce(t, st, rs, []*recorder{rec}, evs)
	mu.Lock()
	defer mu.Unlock()
	if peak > limit {
		t.Fatalf("%d requests at once at the receiver; the limit is %d", peak, limit)
	}
}

// BenchReplicas measures what n replicas over one store deliver: b.N
// events published through the replicas in turn (each one store write, as
// an ingest's), to dests receivers that answer 204 at once; the clock
// stops when every destination has every event and nothing is pending.
// open is called once per replica, as Replicas is. Poll is the default
// (1 s): a replica learns of work another fanned out at its poll or when
// an attempt of its own ends.
func BenchReplicas(b *testing.B, open func(b *testing.B) ports.WebhookStore, n, dests int) {
	var got atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(recv.Close)
	st := open(b)
	var rs []*replica
	for i := range n {
		rs = append(rs, startReplica(b, open(b), webhooks.Config{Owner: fmt.Sprint("replica", i), Poll: time.Second}))
	}
	for i := range dests {
		createDest(b, rs[0].Service, fmt.Sprintf("%s/%d", recv.URL, i))
	}
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		ev := core.NewEvent(core.EventCatalogChanged, core.National, time.Now())
		ev.Counts = &core.EventCounts{Upserted: 1}
		ev.Changes = []core.ResourceChange{{Ref: "national:6000000000", Fields: []string{"a1a3"}}}
		clMust(b, rs[i%n].Publish(ctx, ev))
	}
	want := int64(b.N * dests)
	waitUntil(b, "every delivery", func() bool {
		if got.Load() < want {
			return false
		}
		p, err := st.Pending(ctx, "")
		clMust(b, err)
		return p == 0
	})
	el := time.Since(start)
	b.StopTimer()
	if got.Load() != want {
		b.Fatalf("received %d deliveries, want %d", got.Load(), want)
	}
	b.ReportMetric(float64(want)/el.Seconds(), "deliveries/s")
}
