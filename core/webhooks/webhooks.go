// Package webhooks delivers domain events to destinations, at least once.
//
// An event travels in three durable steps: it is recorded in the outbox
// (with the ingest's own write, or by Publish), fanned out into one queued
// Delivery per destination that wants it, and delivered by the dispatcher,
// which retries failures with exponential backoff and jitter until the
// retry window ends. Every step is a store transaction, so a crash at any
// moment loses nothing; at worst a delivery is repeated with the same id,
// which receivers deduplicate by the webhook-id header.
//
// The store is the queue, shared by every replica (every Service over the
// store, in one process or many): a dispatcher attempts only deliveries it
// claimed, each under a lease (ports.WebhookStore.Claim) that keeps the
// other replicas off it and counts against the destination's concurrency
// limit. A replica that stops gives its leases back; one that dies leaves
// them to run out, after which another replica makes the attempt again.
// Nothing about the queue is kept in memory.
package webhooks

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Config tunes delivery.
type Config struct {
	// Static destinations come from SERVICE_WEBHOOK_URL: every event, never
	// stored, never editable.
	StaticURLs   []string
	StaticSecret string
	// Backoff is the delay before the first retry; it doubles per attempt
	// up to MaxBackoff, with jitter.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// RetryFor is how long a delivery is retried before it is marked failed.
	RetryFor time.Duration
	// PerDestination bounds the attempts in flight to one destination, so a
	// slow one holds only its own slots. It holds across replicas: it
	// bounds the live leases of the destination, whoever holds them.
	PerDestination int
	// Metrics records each delivery attempt by outcome; nil records nothing.
	Metrics ports.Metrics

	// Owner names this replica in the leases it takes; it must differ
	// between replicas (and between Services over one store). Default: the
	// host name, the process id and random digits.
	Owner string
	// Lease is how long a claimed delivery stays this replica's. An attempt
	// is cut off at three quarters of it, leaving the rest to record the
	// outcome, so it should exceed the sender's own timeout by a third.
	// A replica that dies holding a lease delays that delivery by up to
	// Lease. Default 1 minute.
	Lease time.Duration
	// Poll is how often the dispatcher looks in the store for work it was
	// not told about: events recorded, deliveries retried or leases given
	// back by other replicas. Its own work wakes it at once. Default 1 s.
	Poll time.Duration
	// Adopt is how old an event waiting in the outbox must be before a
	// replica that was not told of it fans it out. The replica that
	// records an event fans it out when it publishes it (after the
	// ingest's write, as the ingest answers); the others take it over only
	// when that replica is gone. Default 10 s.
	Adopt time.Duration
}

// claimBatch bounds the deliveries one claim takes.
const claimBatch = 256

func (c *Config) defaults() {
	if c.Backoff <= 0 {
		c.Backoff = 5 * time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = time.Hour
	}
	if c.MaxBackoff < c.Backoff {
		c.MaxBackoff = c.Backoff
	}
	if c.RetryFor <= 0 {
		c.RetryFor = 24 * time.Hour
	}
	if c.PerDestination <= 0 {
		c.PerDestination = 4
	}
	if c.Lease <= 0 {
		c.Lease = time.Minute
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.Adopt <= 0 {
		c.Adopt = 10 * time.Second
	}
	if c.Owner == "" {
		host, _ := os.Hostname()
		b := make([]byte, 4)
		_, _ = crand.Read(b)
		c.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
	}
}

// Service implements ports.EventPublisher (the ingest's events),
// ports.Webhooks (the admin API) and runs the dispatcher.
type Service struct {
	cfg    Config
	store  ports.WebhookStore
	sender ports.WebhookSender
	log    *slog.Logger
	now    func() time.Time
	static []core.Destination

	// editMu serialises destination edits (the count limit, read-modify-write).
	editMu sync.Mutex

	mu       sync.Mutex
	inflight int // attempts under way in this replica
	wake     chan struct{}
	running  bool
	// deletions counts destination deletions, so an attempt can tell
	// cheaply whether its destination may have gone while it ran.
	deletions atomic.Int64
}

var (
	_ ports.EventPublisher = (*Service)(nil)
	_ ports.Webhooks       = (*Service)(nil)
)

// New returns the service; Run starts delivering.
func New(cfg Config, store ports.WebhookStore, sender ports.WebhookSender, log *slog.Logger) (*Service, error) {
	cfg.defaults()
	cfg.Metrics = ports.MetricsOrNone(cfg.Metrics)
	s := &Service{
		cfg: cfg, store: store, sender: sender, log: log, now: time.Now,
		wake: make(chan struct{}, 1),
	}
	for _, u := range cfg.StaticURLs {
		if _, err := core.ParseSecret(cfg.StaticSecret); err != nil {
			return nil, fmt.Errorf("SERVICE_WEBHOOK_SECRET: %w", err)
		}
		sum := sha256.Sum256([]byte(u))
		s.static = append(s.static, core.Destination{
			ID: "env_" + hex.EncodeToString(sum[:6]), URL: u, Secret: cfg.StaticSecret,
			Enabled: true, Kind: core.DetectWebhookKind(u), Static: true,
		})
	}
	return s, nil
}

// Publish records an event durably, then wakes the dispatcher. Recording is
// idempotent by id, so an event the ingest already wrote with its changes
// is not recorded twice.
func (s *Service) Publish(ctx context.Context, ev core.Event) error {
	if ev.ID == "" {
		ev.ID = core.NewEventID(s.now())
	}
	if ev.Service == "" {
		ev.Service = core.ServiceName
	}
	if ev.OccurredAt.IsZero() {
		ev.OccurredAt = s.now().UTC()
	}
	attrs := []any{"id", ev.ID, "type", ev.Type, "catalog", ev.Catalog}
	if ev.Counts != nil {
		attrs = append(attrs, "upserted", ev.Counts.Upserted, "withdrawn", ev.Counts.Withdrawn)
	}
	if ev.Error != "" {
		attrs = append(attrs, "error", ev.Error)
	}
	if ev.Type == core.EventCatalogChanged {
		s.log.InfoContext(ctx, "event", attrs...)
	} else {
		s.log.WarnContext(ctx, "event", attrs...)
	}
	if err := s.store.RecordEvent(ctx, ev); err != nil {
		return fmt.Errorf("recording event %s: %w", ev.ID, err)
	}
	s.poke()
	return nil
}

func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx is done: it fans out recorded events and claims
// the deliveries that fall due, at once when this replica made them due
// (Publish, an attempt's end), otherwise when the store says the next one
// falls due or at the poll interval, whichever comes first. Attempts in
// flight when ctx ends are abandoned unrecorded and their leases given
// back, so another replica (or the next process) makes them again
// (at-least-once).
func (s *Service) Run(ctx context.Context) {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return
	}
	s.running = true
	s.mu.Unlock()

	var wg sync.WaitGroup
	defer wg.Wait()
	failing := false // log a failing store once per outage, not every poll
	woken := true    // the start fans out every event, as a wake does
	for ctx.Err() == nil {
		// Reading an empty outbox is one cheap prefix scan; skipping it
		// unless Publish flagged an event measured slower (docs/PERFORMANCE.md).
		err := s.fanOut(ctx, woken)
		next, cerr := s.claim(ctx, &wg)
		if err = cmp.Or(err, cerr); err != nil && ctx.Err() == nil {
			if !failing {
				s.log.Error("webhook delivery cannot reach the store; retrying", "error", err)
			}
			failing = true
		} else if failing && ctx.Err() == nil {
			s.log.Info("webhook delivery reaches the store again")
			failing = false
		}
		wait := s.cfg.Poll
		if !next.IsZero() {
			wait = min(wait, max(time.Until(next), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-s.wake:
			woken = true
		case <-t.C:
			woken = false
		}
		t.Stop()
	}
}

// fanOut turns outbox events into deliveries for the destinations that
// want them at this moment and existed when they occurred (a destination
// added since gets what happens from then on). When a timer, not this
// replica's own work, woke the dispatcher (all is false), it leaves the
// events younger than Adopt to the replica that recorded them. Replicas
// racing on one event are safe: the store queues the deliveries of the
// first FanOut only.
func (s *Service) fanOut(ctx context.Context, all bool) error {
	evs, err := s.store.Outbox(ctx)
	if err != nil || len(evs) == 0 {
		return err
	}
	dests, err := s.destinations(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	for _, ev := range evs {
		if !all && now.Sub(ev.OccurredAt) < s.cfg.Adopt {
			continue
		}
		var ds []core.Delivery
		for _, d := range dests {
			if d.Wants(ev.Type) && existed(d, ev) {
				ds = append(ds, core.Delivery{Event: ev, DestinationID: d.ID, QueuedAt: now, NextAttempt: now})
			}
		}
		if err := s.store.FanOut(ctx, ev.ID, ds); err != nil {
			return err
		}
	}
	return nil
}

// existed tells whether d existed when ev occurred, to the millisecond
// that events keep (a destination created in the event's millisecond gets
// it). Static destinations always existed.
func existed(d core.Destination, ev core.Event) bool {
	return !d.CreatedAt.Truncate(time.Millisecond).After(ev.OccurredAt)
}

// claim starts an attempt for every delivery the store leases to this
// replica and returns when the store expects the next one to fall due
// (zero when it expects none).
func (s *Service) claim(ctx context.Context, wg *sync.WaitGroup) (time.Time, error) {
	c, err := s.store.Claim(ctx, s.cfg.Owner, s.now(), s.cfg.Lease, s.cfg.PerDestination, claimBatch)
	if err != nil {
		return time.Time{}, err
	}
	s.mu.Lock()
	s.inflight += len(c.Deliveries)
	s.mu.Unlock()
	for _, d := range c.Deliveries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.attempt(ctx, d)
		}()
	}
	return c.Next, nil
}

// attempt makes one delivery attempt of a claimed delivery and records its
// outcome, which ends the lease. When the store cannot be read or written,
// nothing is recorded and the lease runs out: the delivery is attempted
// again after it (a success may be repeated, never lost).
func (s *Service) attempt(ctx context.Context, c ports.Claimed) {
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
		s.poke()
	}()
	deletions := s.deletions.Load()
	dest, found, err := s.destination(ctx, c.DestinationID)
	if err != nil {
		s.log.Error("reading a webhook destination failed", "destination", c.DestinationID, "error", err)
		return
	}
	if !found {
		// Deleted (or a SERVICE_WEBHOOK_URL entry removed from the
		// environment): nothing to deliver to, nothing to log.
		s.forget(ctx, c.DestinationID)
		return
	}
	start := s.now()
	var res core.SendResult
	switch {
	case !dest.Enabled:
		res = core.SendResult{Err: errors.New("the destination was disabled before delivery"), Refused: true}
	default:
		// The attempt ends before its lease does, leaving a quarter of the
		// lease to record it: no other replica takes the delivery while
		// this one may still be sending it.
		actx, cancel := context.WithDeadline(ctx, c.Lease.Until.Add(-s.cfg.Lease/4))
		res = s.sender.Send(actx, dest, c.Event)
		cancel()
	}
	if ctx.Err() != nil {
		// Stopping: the attempt counts as not made. Give the lease back so
		// another replica, or the next process, makes it at once.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.store.Release(rctx, c); err != nil {
			s.log.Warn("giving back a webhook lease failed; the delivery waits for the lease to run out", "destination", c.DestinationID, "event", c.Event.ID, "error", err)
		}
		return
	}
	d := c.Delivery
	d.Attempts++
	a := s.outcome(d, res, start)
	held, err := s.store.FinishClaim(ctx, c, a, a.Status == core.DeliveryRetrying)
	if err != nil {
		s.log.Error("recording a webhook attempt failed", "destination", d.DestinationID, "event", d.Event.ID, "error", err)
		return
	}
	if !held {
		// The lease ran out (or the destination went) before the outcome
		// was recorded; another replica owns the delivery now.
		s.log.Warn("a webhook attempt ended after its lease; not recorded", "destination", d.DestinationID, "event", d.Event.ID, "status", a.Status)
		return
	}
	s.cfg.Metrics.ObserveWebhookAttempt(string(a.Status))
	if s.deletions.Load() != deletions {
		if _, still, err := s.destination(ctx, d.DestinationID); err == nil && !still {
			// Deleted while this attempt was in flight: Finish wrote to it again.
			s.forget(ctx, d.DestinationID)
		}
	}
	if a.Status == core.DeliveryFailed {
		s.log.Warn("webhook delivery failed for good", "destination", d.DestinationID, "event", d.Event.ID, "attempts", d.Attempts, "error", a.Error, "code", a.ResponseCode)
	}
}

// forget drops what remains of a destination that no longer exists: its
// queued deliveries and its log.
func (s *Service) forget(ctx context.Context, id string) {
	if err := s.store.DeleteDestination(ctx, id); err != nil {
		s.log.Error("removing the deliveries of a deleted destination failed", "destination", id, "error", err)
	}
}

// outcome classifies an attempt: 2xx delivered; a refused address, a
// redirect or a 4xx other than 408 and 429 failed for good; anything else
// retried after an exponential, jittered delay (at least the receiver's
// Retry-After) until an attempt past the retry window fails.
func (s *Service) outcome(d core.Delivery, res core.SendResult, start time.Time) core.DeliveryAttempt {
	a := core.DeliveryAttempt{
		At: start.UTC(), EventID: d.Event.ID, EventType: d.Event.Type, Attempt: d.Attempts,
		DurationMS: float64(res.Duration.Microseconds()) / 1000, ResponseCode: res.Code,
		Response: res.Body,
	}
	if res.Err != nil {
		a.Error = res.Err.Error()
	}
	code := res.Code
	switch {
	case res.Err == nil && code >= 200 && code < 300:
		a.Status = core.DeliveryDelivered
		return a
	case res.Refused:
		a.Status = core.DeliveryFailed
		return a
	case res.Err == nil && code >= 300 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests:
		a.Status = core.DeliveryFailed
		a.Error = fmt.Sprintf("the receiver answered %d %s; not retried", code, http.StatusText(code))
		if code < 400 {
			a.Error = fmt.Sprintf("the receiver answered %d (a redirect); redirects are not followed", code)
		}
		return a
	}
	if a.Error == "" {
		a.Error = fmt.Sprintf("the receiver answered %d %s", code, http.StatusText(code))
	}
	// The window is a minimum: attempts go on until one made at least
	// RetryFor after queueing has failed too.
	if s.now().Sub(d.QueuedAt) >= s.cfg.RetryFor {
		a.Status = core.DeliveryFailed
		a.Error += fmt.Sprintf("; gave up after %d attempts over %s", d.Attempts, s.cfg.RetryFor)
		return a
	}
	a.Status = core.DeliveryRetrying
	a.NextAttempt = s.now().Add(max(s.backoff(d.Attempts), res.RetryAfter)).UTC()
	return a
}

// backoff is Backoff·2^(n-1), capped at MaxBackoff, with "equal jitter":
// between half and all of it, so receivers that come back are not hit by
// every sender at once.
func (s *Service) backoff(attempts int) time.Duration {
	d := s.cfg.Backoff
	for i := 1; i < attempts && d < s.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, s.cfg.MaxBackoff)
	half := d / 2
	return half + rand.N(half+1)
}

// destinations returns the stored destinations followed by the static ones.
func (s *Service) destinations(ctx context.Context) ([]core.Destination, error) {
	ds, err := s.store.Destinations(ctx)
	if err != nil {
		return nil, err
	}
	return append(ds, s.static...), nil
}

func (s *Service) destination(ctx context.Context, id string) (core.Destination, bool, error) {
	for _, d := range s.static {
		if d.ID == id {
			return d, true, nil
		}
	}
	return s.store.Destination(ctx, id)
}

// InFlight counts the attempts under way in this replica.
func (s *Service) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inflight
}

// QueueStats returns the deliveries pending in the store (queued or
// waiting for a retry, in every replica) and when the oldest of them was
// queued (zero when none), for the metrics; both zero when the store
// cannot be read.
func (s *Service) QueueStats() (pending int, oldest time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ds, err := s.store.Queue(ctx)
	if err != nil {
		s.log.Warn("reading the webhook queue for the metrics failed", "error", err)
		return 0, time.Time{}
	}
	for _, d := range ds {
		if oldest.IsZero() || d.QueuedAt.Before(oldest) {
			oldest = d.QueuedAt
		}
	}
	return len(ds), oldest
}

// Pending counts the deliveries queued in the store, for every replica
// (for tests and benchmarks); 0 when the store cannot be read.
func (s *Service) Pending() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := s.store.Pending(ctx, "")
	if err != nil {
		s.log.Warn("counting the webhook queue failed", "error", err)
		return 0
	}
	return n
}
