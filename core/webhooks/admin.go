package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/climatesearch/climatesearch/core"
)

// List returns every destination, stored ones first, secrets masked.
func (s *Service) List(ctx context.Context) ([]core.Destination, error) {
	ds, err := s.destinations(ctx)
	if err != nil {
		return nil, core.Unavailablef(err, "reading webhook destinations failed")
	}
	out := make([]core.Destination, len(ds))
	for i, d := range ds {
		out[i] = d.Masked()
	}
	return out, nil
}

// Get returns one destination, secret masked.
func (s *Service) Get(ctx context.Context, id string) (core.Destination, error) {
	d, err := s.find(ctx, id)
	return d.Masked(), err
}

func (s *Service) find(ctx context.Context, id string) (core.Destination, error) {
	d, found, err := s.destination(ctx, id)
	if err != nil {
		return core.Destination{}, core.Unavailablef(err, "reading webhook destination %s failed", id)
	}
	if !found {
		return core.Destination{}, core.NotFoundf("no webhook destination %q; GET /admin/webhooks lists them", id)
	}
	return d, nil
}

// Create stores a new destination. Its secret is generated unless given,
// and shown in full only in this answer.
func (s *Service) Create(ctx context.Context, in core.DestinationInput) (core.Destination, error) {
	if in.URL == nil || strings.TrimSpace(*in.URL) == "" {
		return core.Destination{}, core.Invalidf("url is required: the http or https address that receives the events")
	}
	if in.RotateSecret {
		return core.Destination{}, core.Invalidf("rotate_secret applies to PATCH; a new destination gets a fresh secret unless secret is given")
	}
	now := s.now().UTC()
	d := core.Destination{ID: newDestinationID(), Enabled: true, CreatedAt: now, UpdatedAt: now}
	if err := s.apply(ctx, &d, in); err != nil {
		return core.Destination{}, err
	}
	if d.Secret == "" {
		d.Secret = core.NewSecret()
	}

	s.editMu.Lock()
	defer s.editMu.Unlock()
	stored, err := s.store.Destinations(ctx)
	if err != nil {
		return core.Destination{}, core.Unavailablef(err, "reading webhook destinations failed")
	}
	if len(stored) >= core.MaxDestinations {
		return core.Destination{}, &core.Error{Kind: core.KindConflict, Msg: fmt.Sprintf("there are already %d destinations (the limit); delete one first", core.MaxDestinations)}
	}
	if err := s.store.PutDestination(ctx, d); err != nil {
		return core.Destination{}, core.Unavailablef(err, "storing the webhook destination failed; nothing was changed")
	}
	s.log.InfoContext(ctx, "webhook destination created", "id", d.ID, "kind", d.Kind, "events", d.Events)
	return d, nil
}

// Update changes the given fields. The answer shows the secret in full
// only when it was set or rotated.
func (s *Service) Update(ctx context.Context, id string, in core.DestinationInput) (core.Destination, error) {
	s.editMu.Lock()
	defer s.editMu.Unlock()
	d, err := s.find(ctx, id)
	if err != nil {
		return core.Destination{}, err
	}
	if d.Static {
		return core.Destination{}, staticErr(d)
	}
	if in.RotateSecret && in.Secret != nil {
		return core.Destination{}, core.Invalidf("give either secret or rotate_secret, not both")
	}
	if err := s.apply(ctx, &d, in); err != nil {
		return core.Destination{}, err
	}
	reveal := in.Secret != nil || in.RotateSecret
	if in.RotateSecret {
		d.Secret = core.NewSecret()
	}
	d.UpdatedAt = s.now().UTC()
	if err := s.store.PutDestination(ctx, d); err != nil {
		return core.Destination{}, core.Unavailablef(err, "storing the webhook destination failed; nothing was changed")
	}
	s.log.InfoContext(ctx, "webhook destination updated", "id", d.ID, "enabled", d.Enabled, "kind", d.Kind, "secret_changed", reveal)
	if !reveal {
		d = d.Masked()
	}
	return d, nil
}

// Delete removes a destination with its queued deliveries and its log.
func (s *Service) Delete(ctx context.Context, id string) error {
	s.editMu.Lock()
	defer s.editMu.Unlock()
	d, err := s.find(ctx, id)
	if err != nil {
		return err
	}
	if d.Static {
		return staticErr(d)
	}
	s.deletions.Add(1)
	if err := s.store.DeleteDestination(ctx, id); err != nil {
		return core.Unavailablef(err, "deleting the webhook destination failed")
	}
	s.log.InfoContext(ctx, "webhook destination deleted", "id", id)
	return nil
}

func staticErr(d core.Destination) error {
	return &core.Error{Kind: core.KindConflict, Msg: fmt.Sprintf("destination %s comes from SERVICE_WEBHOOK_URL; change the environment and restart to edit or remove it", d.ID)}
}

// Test sends a webhook.test event to one destination now, whatever its
// filter and even when disabled (the operator asked for it): one attempt,
// logged, not retried, so the answer says what the receiver did.
func (s *Service) Test(ctx context.Context, id string) (core.DeliveryAttempt, error) {
	d, err := s.find(ctx, id)
	if err != nil {
		return core.DeliveryAttempt{}, err
	}
	ev := core.NewEvent(core.EventWebhookTest, "", s.now())
	ev.Message = "a test delivery requested by an operator for destination " + d.ID
	start := s.now()
	res := s.sender.Send(ctx, d, ev)
	job := core.Delivery{Event: ev, DestinationID: d.ID, Attempts: 1, QueuedAt: start}
	a := s.outcome(job, res, start)
	if a.Status == core.DeliveryRetrying {
		a.Status, a.NextAttempt = core.DeliveryFailed, time.Time{}
		a.Error += "; test deliveries are not retried"
	}
	s.cfg.Metrics.ObserveWebhookAttempt(string(a.Status))
	if err := s.store.Finish(ctx, job, a, false); err != nil {
		return a, core.Unavailablef(err, "the test was sent but logging it failed")
	}
	return a, nil
}

// Deliveries returns the latest attempts of a destination and how many
// deliveries it still has coming: queued ones (in the store, whichever
// replica will make them), and recorded events it wants that no replica
// has fanned out yet. The outbox is read before the queue, so an event
// fanned out in between is counted twice for a moment, never missed.
func (s *Service) Deliveries(ctx context.Context, id string, limit int) (core.DeliveryLog, error) {
	d, err := s.find(ctx, id)
	if err != nil {
		return core.DeliveryLog{}, err
	}
	outbox, err := s.store.Outbox(ctx)
	if err != nil {
		return core.DeliveryLog{}, core.Unavailablef(err, "reading the event outbox failed")
	}
	if limit <= 0 {
		limit = core.DefaultDeliveryList
	}
	as, err := s.store.Attempts(ctx, id, min(limit, core.MaxDeliveryLog))
	if err != nil {
		return core.DeliveryLog{}, core.Unavailablef(err, "reading the delivery log failed")
	}
	if as == nil {
		as = []core.DeliveryAttempt{}
	}
	pending := 0
	for _, ev := range outbox {
		if d.Wants(ev.Type) && existed(d, ev) { // as fanOut decides
			pending++
		}
	}
	queued, err := s.store.Pending(ctx, id)
	if err != nil {
		return core.DeliveryLog{}, core.Unavailablef(err, "reading the delivery queue failed")
	}
	pending += queued
	return core.DeliveryLog{DestinationID: id, Pending: pending, Attempts: as}, nil
}

// apply validates the input fields and sets them on d.
func (s *Service) apply(ctx context.Context, d *core.Destination, in core.DestinationInput) error {
	if in.URL != nil {
		u := strings.TrimSpace(*in.URL)
		if len(u) > core.MaxWebhookURL {
			return core.Invalidf("url is %d characters; the limit is %d", len(u), core.MaxWebhookURL)
		}
		if err := s.sender.Check(ctx, u); err != nil {
			return err
		}
		if u != d.URL && in.Kind == nil {
			d.Kind = "" // detected again below
		}
		d.URL = u
	}
	if in.Events != nil {
		evs, err := core.ParseEventTypes(*in.Events)
		if err != nil {
			return err
		}
		d.Events = evs
	}
	if in.Secret != nil {
		if _, err := core.ParseSecret(*in.Secret); err != nil {
			return err
		}
		d.Secret = strings.TrimSpace(*in.Secret)
	}
	if in.Enabled != nil {
		d.Enabled = *in.Enabled
	}
	if in.Kind != nil {
		k, err := core.ParseWebhookKind(*in.Kind)
		if err != nil {
			return err
		}
		d.Kind = k
	}
	if d.Kind == "" {
		d.Kind = core.DetectWebhookKind(d.URL)
	}
	if in.Description != nil {
		desc := strings.TrimSpace(*in.Description)
		if utf8.RuneCountInString(desc) > core.MaxWebhookDescr {
			return core.Invalidf("description is longer than %d characters", core.MaxWebhookDescr)
		}
		d.Description = desc
	}
	return nil
}

func newDestinationID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "wh_" + hex.EncodeToString(b)
}

// Events returns the latest events, newest first: those still in the
// outbox (not fanned out, no deliveries yet) and the fanned-out history,
// each with its state at every destination it was queued for. A queued
// delivery (in the store's queue) shows as queued or retrying; one that
// left the queue shows its latest logged attempt. Destinations the event
// was not for, and those whose log no longer holds it, are left out.
func (s *Service) Events(ctx context.Context, limit int) ([]core.EventRecord, error) {
	if limit <= 0 {
		limit = core.DefaultEventList
	}
	limit = min(limit, core.MaxEventHistory)
	// The outbox before the history: an event fanned out in between is
	// then in both (and kept as fanned out), never in neither.
	outbox, err := s.store.Outbox(ctx)
	if err != nil {
		return nil, core.Unavailablef(err, "reading the event outbox failed")
	}
	hist, err := s.store.History(ctx, limit)
	if err != nil {
		return nil, core.Unavailablef(err, "reading the event history failed")
	}
	recs := make([]core.EventRecord, 0, len(outbox)+len(hist))
	fanned := make(map[string]int, len(hist)) // event id -> index in recs
	for _, ev := range hist {
		fanned[ev.ID] = len(recs)
		recs = append(recs, core.EventRecord{Event: ev, FannedOut: true, Deliveries: []core.EventDelivery{}})
	}
	for _, ev := range outbox {
		if _, done := fanned[ev.ID]; !done {
			recs = append(recs, core.EventRecord{Event: ev, Deliveries: []core.EventDelivery{}})
		}
	}
	// Event ids start with their time, so they order events by time.
	slices.SortStableFunc(recs, func(a, b core.EventRecord) int { return strings.Compare(b.Event.ID, a.Event.ID) })
	recs = recs[:min(len(recs), limit)]
	fanned = map[string]int{}
	for i, r := range recs {
		if r.FannedOut {
			fanned[r.Event.ID] = i
		}
	}
	if len(fanned) == 0 {
		return recs, nil
	}

	dests, err := s.destinations(ctx)
	if err != nil {
		return nil, core.Unavailablef(err, "reading webhook destinations failed")
	}
	// The queue before the logs: a delivery that finishes in between is
	// then found in its log, never missed.
	queue, err := s.store.Queue(ctx)
	if err != nil {
		return nil, core.Unavailablef(err, "reading the delivery queue failed")
	}
	type jobKey struct{ dest, event string }
	queued := map[jobKey]core.Delivery{}
	for _, d := range queue {
		if _, ok := fanned[d.Event.ID]; ok {
			queued[jobKey{d.DestinationID, d.Event.ID}] = d
		}
	}
	// One log read per destination; each event's deliveries follow the
	// order of the destinations.
	for _, dest := range dests {
		as, err := s.store.Attempts(ctx, dest.ID, core.MaxDeliveryLog)
		if err != nil {
			return nil, core.Unavailablef(err, "reading the delivery log of %s failed", dest.ID)
		}
		latest := map[string]core.DeliveryAttempt{} // newest first: the first per event
		for _, a := range as {
			if _, ok := fanned[a.EventID]; !ok {
				continue
			}
			if _, seen := latest[a.EventID]; !seen {
				latest[a.EventID] = a
			}
		}
		for id, i := range fanned {
			a, logged := latest[id]
			q, inQueue := queued[jobKey{dest.ID, id}]
			if !logged && !inQueue {
				continue
			}
			recs[i].Deliveries = append(recs[i].Deliveries, deliveryState(dest.ID, q, inQueue, a, logged))
		}
	}
	return recs, nil
}

// deliveryState is one event's state at one destination. The queue entry
// wins unless the log holds a later attempt (recorded after the queue was
// read).
func deliveryState(destID string, q core.Delivery, inQueue bool, a core.DeliveryAttempt, logged bool) core.EventDelivery {
	ed := core.EventDelivery{DestinationID: destID}
	if logged {
		ed.State, ed.Attempts = string(a.Status), a.Attempt
		ed.ResponseCode, ed.Error, ed.At, ed.NextAttempt = a.ResponseCode, a.Error, a.At, a.NextAttempt
	}
	if inQueue && (!logged || q.Attempts >= a.Attempt) {
		ed.State, ed.Attempts, ed.NextAttempt = core.DeliveryQueued, q.Attempts, q.NextAttempt.UTC()
		if q.Attempts > 0 {
			ed.State = string(core.DeliveryRetrying)
		}
	}
	return ed
}
