// Package webhooks delivers domain events to destinations, at least once.
//
// An event travels in three durable steps: it is recorded in the outbox
// (with the ingest's own write, or by Publish), fanned out into one queued
// Delivery per destination that wants it, and delivered by the dispatcher,
// which retries failures with exponential backoff and jitter until the
// retry window ends. Every step is a store transaction, so a crash at any
// moment loses nothing; at worst a delivery is repeated with the same id,
// which receivers deduplicate by the webhook-id header.
package webhooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sort"
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
	// slow one holds only its own slots.
	PerDestination int
	// Metrics records each delivery attempt by outcome; nil records nothing.
	Metrics ports.Metrics
}

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
	queue    map[jobKey]*core.Delivery // loaded at Run, fed by fan-out
	inflight map[jobKey]bool
	wake     chan struct{}
	running  bool
	// deletions counts destination deletions, so an attempt can tell
	// cheaply whether its destination may have gone while it ran.
	deletions atomic.Int64
}

type jobKey struct{ dest, event string }

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
		queue: map[jobKey]*core.Delivery{}, inflight: map[jobKey]bool{},
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

// Run delivers until ctx is done: it loads the queue left by an earlier
// process, fans out recorded events, and starts attempts as they fall due.
// Attempts in flight when ctx ends are abandoned unrecorded and retried by
// the next process (at-least-once).
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
	loaded := false
	for ctx.Err() == nil {
		if !loaded {
			if err := s.loadQueue(ctx); err != nil {
				s.log.Error("loading the webhook queue failed; retrying", "error", err)
				s.sleep(ctx, 5*time.Second)
				continue
			}
			loaded = true
		}
		// Reading an empty outbox is one cheap prefix scan; skipping it
		// unless Publish flagged an event measured slower (docs/PERFORMANCE.md).
		if err := s.fanOut(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("fanning out events failed; retrying", "error", err)
			s.sleep(ctx, time.Second)
		}
		next := s.startDue(ctx, &wg)
		wait := time.Minute // a safety net; pokes do the real work
		if !next.IsZero() {
			wait = max(time.Until(next), 0)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

func (s *Service) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (s *Service) loadQueue(ctx context.Context) error {
	ds, err := s.store.Queue(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range ds {
		d := ds[i]
		s.queue[jobKey{d.DestinationID, d.Event.ID}] = &d
	}
	if len(ds) > 0 {
		s.log.Info("webhook deliveries resumed", "pending", len(ds))
	}
	return nil
}

// fanOut turns every outbox event into deliveries for the destinations
// that want it at this moment.
func (s *Service) fanOut(ctx context.Context) error {
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
		var ds []core.Delivery
		for _, d := range dests {
			if d.Wants(ev.Type) {
				ds = append(ds, core.Delivery{Event: ev, DestinationID: d.ID, QueuedAt: now, NextAttempt: now})
			}
		}
		// Into the in-memory queue first, so that an event is always counted
		// as pending somewhere (Deliveries reads the outbox, then the queue).
		// No attempt starts before this returns: startDue runs after it.
		s.mu.Lock()
		for i := range ds {
			s.queue[jobKey{ds[i].DestinationID, ev.ID}] = &ds[i]
		}
		s.mu.Unlock()
		if err := s.store.FanOut(ctx, ev.ID, ds); err != nil {
			s.mu.Lock()
			for i := range ds {
				delete(s.queue, jobKey{ds[i].DestinationID, ev.ID})
			}
			s.mu.Unlock()
			return err
		}
	}
	return nil
}

// startDue starts every due delivery whose destination has a free slot and
// returns when the next waiting one falls due (zero when none waits).
func (s *Service) startDue(ctx context.Context, wg *sync.WaitGroup) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var due []*core.Delivery
	var next time.Time
	for k, d := range s.queue {
		if s.inflight[k] {
			continue
		}
		if d.NextAttempt.After(now) {
			if next.IsZero() || d.NextAttempt.Before(next) {
				next = d.NextAttempt
			}
			continue
		}
		due = append(due, d)
	}
	// Oldest first, so a backlog drains in event order as far as the
	// per-destination slots allow.
	sort.Slice(due, func(i, j int) bool {
		if !due[i].NextAttempt.Equal(due[j].NextAttempt) {
			return due[i].NextAttempt.Before(due[j].NextAttempt)
		}
		return due[i].Event.ID < due[j].Event.ID
	})
	busy := map[string]int{} // attempts in flight per destination
	for k := range s.inflight {
		busy[k.dest]++
	}
	for _, d := range due {
		if busy[d.DestinationID] >= s.cfg.PerDestination {
			continue // started when a slot frees (attempt end pokes)
		}
		k := jobKey{d.DestinationID, d.Event.ID}
		s.inflight[k] = true
		busy[d.DestinationID]++
		job := *d
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.attempt(ctx, job)
		}()
	}
	return next
}

// attempt makes one delivery attempt and records its outcome.
func (s *Service) attempt(ctx context.Context, d core.Delivery) {
	k := jobKey{d.DestinationID, d.Event.ID}
	defer func() {
		s.mu.Lock()
		delete(s.inflight, k)
		s.mu.Unlock()
		s.poke()
	}()
	deletions := s.deletions.Load()
	dest, found, err := s.destination(ctx, d.DestinationID)
	if err != nil {
		s.log.Error("reading a webhook destination failed", "destination", d.DestinationID, "error", err)
		s.retryLater(d, s.cfg.Backoff)
		return
	}
	start := s.now()
	var res core.SendResult
	if !found {
		// Deleted (or a SERVICE_WEBHOOK_URL entry removed from the
		// environment): nothing to deliver to, nothing to log.
		s.forget(ctx, d.DestinationID)
		return
	}
	switch {
	case !dest.Enabled:
		res = core.SendResult{Err: errors.New("the destination was disabled before delivery"), Refused: true}
	default:
		res = s.sender.Send(ctx, dest, d.Event)
	}
	if ctx.Err() != nil {
		return // shutting down: the delivery stays queued for the next process
	}
	d.Attempts++
	a := s.outcome(d, res, start)
	requeue := a.Status == core.DeliveryRetrying
	if requeue {
		d.NextAttempt = a.NextAttempt
	}
	if err := s.store.Finish(ctx, d, a, requeue); err != nil {
		// The attempt is not recorded, so it counts as not made: the
		// delivery stays queued (a success may be repeated, never lost).
		s.log.Error("recording a webhook attempt failed", "destination", d.DestinationID, "event", d.Event.ID, "error", err)
		d.Attempts--
		s.retryLater(d, s.cfg.Backoff)
		return
	}
	s.cfg.Metrics.ObserveWebhookAttempt(string(a.Status))
	s.mu.Lock()
	if requeue {
		s.queue[k] = &d
	} else {
		delete(s.queue, k)
	}
	s.mu.Unlock()
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
// queued deliveries and its log, in the store and in memory.
func (s *Service) forget(ctx context.Context, id string) {
	if err := s.store.DeleteDestination(ctx, id); err != nil {
		s.log.Error("removing the deliveries of a deleted destination failed", "destination", id, "error", err)
		return
	}
	s.mu.Lock()
	for k := range s.queue {
		if k.dest == id {
			delete(s.queue, k)
		}
	}
	s.mu.Unlock()
}

func (s *Service) retryLater(d core.Delivery, after time.Duration) {
	d.NextAttempt = s.now().Add(after)
	s.mu.Lock()
	s.queue[jobKey{d.DestinationID, d.Event.ID}] = &d
	s.mu.Unlock()
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

// InFlight counts the attempts under way.
func (s *Service) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.inflight)
}

// QueueStats returns the deliveries pending in this process (queued or
// waiting for a retry; the store holds the same set) and when the oldest
// of them was queued (zero when none), for the metrics.
func (s *Service) QueueStats() (pending int, oldest time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.queue {
		if oldest.IsZero() || d.QueuedAt.Before(oldest) {
			oldest = d.QueuedAt
		}
	}
	return len(s.queue), oldest
}

// Pending counts the deliveries queued in this process (for tests and the
// console); the store holds the same set.
func (s *Service) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}
