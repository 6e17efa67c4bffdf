package badgerstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/storetest"
)

// TestWebhookClaims runs the shared queue's tests: badger is a store of
// one process, so its replicas are several webhooks.Service over one open
// store.
func TestWebhookClaims(t *testing.T) {
	storetest.RunClaims(t, func(t *testing.T) storetest.Replicas {
		s := openT(t, t.TempDir())
		t.Cleanup(func() { _ = s.Close() })
		return func(*testing.T) ports.WebhookStore { return s }
	})
}

var claimT0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func queueOne(t *testing.T, s *Store, dest string) core.Event {
	t.Helper()
	ctx := context.Background()
	ev := core.NewEvent(core.EventCatalogChanged, core.National, claimT0)
	if err := s.RecordEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	d := core.Delivery{Event: ev, DestinationID: dest, QueuedAt: claimT0, NextAttempt: claimT0}
	if err := s.FanOut(ctx, ev.ID, []core.Delivery{d}); err != nil {
		t.Fatal(err)
	}
	return ev
}

func claimOne(t *testing.T, s *Store, owner string, now time.Time) []ports.Claimed {
	t.Helper()
	c, err := s.Claim(context.Background(), owner, now, time.Hour, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	return c.Deliveries
}

// A lease does not outlive the process that took it: badger's directory
// lock makes that process the store's only user, so after a reopen (a
// crash, kill -9, a restart) the delivery is due at once, not when the
// lease would end.
func TestWebhookLeasesEndWithTheProcess(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	ev := queueOne(t, s, "x")
	if got := claimOne(t, s, "before", claimT0); len(got) != 1 {
		t.Fatalf("claimed %d", len(got))
	}
	if got := claimOne(t, s, "other", claimT0); len(got) != 0 {
		t.Fatal("a live lease was claimed again")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir)
	defer s.Close()
	got := claimOne(t, s, "after", claimT0)
	if len(got) != 1 || got[0].Event.ID != ev.ID || got[0].Lease.Owner != "after" {
		t.Fatalf("after a reopen, claimed %+v; want the delivery the earlier process held", got)
	}
}

// A queue written before due keys existed is claimed all the same, and
// due keys left without their delivery go.
func TestWebhookClaimsAnOlderQueue(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	ev := queueOne(t, s, "x")
	orphan := whDueKey("y", claimT0, "evt_gone")
	err := s.db.Update(func(txn *badger.Txn) error {
		if err := txn.Delete(whDueKey("x", claimT0, ev.ID)); err != nil {
			return err
		}
		return txn.Set(orphan, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir)
	defer s.Close()
	got := claimOne(t, s, "a", claimT0)
	if len(got) != 1 || got[0].Event.ID != ev.ID || got[0].DestinationID != "x" {
		t.Fatalf("claimed %+v; want the delivery without a due key", got)
	}
	err = s.db.View(func(txn *badger.Txn) error {
		found, err := exists(txn, orphan)
		if err == nil && found {
			t.Error("an orphan due key was kept")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Finish, the test delivery's write, keeps the schedule in step with the
// queue: a requeue moves the due key, a removal drops it.
func TestWebhookFinishKeepsTheSchedule(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()
	ev := queueOne(t, s, "x")
	d := core.Delivery{Event: ev, DestinationID: "x", Attempts: 1, QueuedAt: claimT0, NextAttempt: claimT0.Add(time.Minute)}
	a := core.DeliveryAttempt{At: claimT0, EventID: ev.ID, Attempt: 1, Status: core.DeliveryRetrying, NextAttempt: d.NextAttempt}
	if err := s.Finish(ctx, d, a, true); err != nil {
		t.Fatal(err)
	}
	c, err := s.Claim(ctx, "a", claimT0.Add(time.Second), time.Hour, 4, 10)
	if err != nil || len(c.Deliveries) != 0 || !c.Next.Equal(d.NextAttempt) {
		t.Fatalf("after a requeue to %v: %+v, %v", d.NextAttempt, c, err)
	}
	a.Status, a.At = core.DeliveryDelivered, claimT0.Add(2*time.Second)
	if err := s.Finish(ctx, d, a, false); err != nil {
		t.Fatal(err)
	}
	c, err = s.Claim(ctx, "a", claimT0.Add(time.Hour), time.Hour, 4, 10)
	if err != nil || len(c.Deliveries) != 0 || !c.Next.IsZero() {
		t.Fatalf("after the removal: %+v, %v", c, err)
	}
	err = s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(whDuePrefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			t.Errorf("due key left: %q", it.Item().Key())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkWebhookReplicas: deliveries/s of 1, 2 and 3 webhooks.Service
// over one store, to 1 and 4 destinations.
//
//	go test -run '^$' -bench WebhookReplicas -benchtime 2000x ./adapters/badgerstore/
func BenchmarkWebhookReplicas(b *testing.B) {
	for _, dests := range []int{1, 4} {
		for _, n := range []int{1, 2, 3} {
			b.Run(fmt.Sprintf("destinations-%d/replicas-%d", dests, n), func(b *testing.B) {
				s, err := Open(b.TempDir(), zap.NewNop())
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = s.Close() })
				storetest.BenchReplicas(b, func(*testing.B) ports.WebhookStore { return s }, n, dests)
			})
		}
	}
}
