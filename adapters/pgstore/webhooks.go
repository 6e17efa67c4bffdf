package pgstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/climatesearch/climatesearch/core"
)

// Webhook tables (migrations/00001_init.sql):
//
//	webhook_destinations  id -> created_at, body (JSON core.Destination)
//	webhook_events        event_id -> body (JSON core.Event), seen_until
//	webhook_deliveries    (destination_id, event_id) -> next_attempt, body (JSON core.Delivery), lease_owner, lease_until
//	webhook_attempts      (destination_id, at_ns, event_id) -> body (JSON core.DeliveryAttempt)
//	webhook_history       event_id -> body (JSON core.Event)
//
// The outbox is the events whose seen_until is null. FanOut sets it in the
// statement that claims the event (UPDATE … WHERE seen_until IS NULL), and
// queues the deliveries in the same transaction only when that statement
// claimed the row: when two replicas fan out one event at once, the second
// UPDATE waits for the first transaction, then finds the event no longer in
// the outbox and writes nothing, so deliveries are never queued twice and
// the history never holds an event twice. The row then stays, as badger's
// seen marker, so a re-recorded event is not recorded again, until
// seen_until (seenTTL) has passed.
//
// Event ids start with their time in hex, so id order is time order; the
// attempts order by their time in nanoseconds, then event id.

// The claim methods of ports.WebhookStore (Claim, FinishClaim, Release,
// Pending) are in claims.go, on lease_owner and lease_until.

const seenTTL = 7 * 24 * time.Hour

// histTrimEvery is how often FanOut trims the event history: the first
// fan-out of each process and every histTrimEvery-th after it, so the
// history holds at most histTrimEvery-1 events beyond core.MaxEventHistory
// per replica between trims, which History never returns.
const histTrimEvery = 16

// checkDestID refuses ids badger refuses, so both stores accept the same.
func checkDestID(id string) error {
	if id == "" || strings.Contains(id, "/") {
		return core.Invalidf("store: webhook destination id %q: must be non-empty and without '/'", id)
	}
	return nil
}

// queryJSON decodes the first column of every row into a T.
func queryJSON[T any](ctx context.Context, s *Store, op, sql string, args ...any) ([]T, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, s.dbErr(ctx, op, err)
	}
	var out []T
	var body []byte
	_, err = pgx.ForEachRow(rows, []any{&body}, func() error {
		var v T
		if err := json.Unmarshal(body, &v); err != nil {
			return fmt.Errorf("pgstore: %s: decode: %w", op, err)
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, s.dbErr(ctx, op, err)
	}
	return out, nil
}

// Destinations returns the stored destinations by creation time, then id.
func (s *Store) Destinations(ctx context.Context) ([]core.Destination, error) {
	ds, err := queryJSON[core.Destination](ctx, s, "webhook destinations", `SELECT body FROM webhook_destinations ORDER BY id`)
	if err != nil {
		return nil, err
	}
	// Sorted here, on the exact times (the column keeps microseconds).
	slices.SortFunc(ds, func(a, b core.Destination) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return ds, nil
}

// Destination returns one stored destination.
func (s *Store) Destination(ctx context.Context, id string) (core.Destination, bool, error) {
	if checkDestID(id) != nil {
		return core.Destination{}, false, nil
	}
	ds, err := queryJSON[core.Destination](ctx, s, "webhook destination "+id, `SELECT body FROM webhook_destinations WHERE id = $1`, id)
	if err != nil || len(ds) == 0 {
		return core.Destination{}, false, err
	}
	return ds[0], true, nil
}

// PutDestination creates or replaces a destination.
func (s *Store) PutDestination(ctx context.Context, d core.Destination) error {
	if err := checkDestID(d.ID); err != nil {
		return err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("pgstore: encode destination %s: %w", d.ID, err)
	}
	return s.tx(ctx, "put webhook destination "+d.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			INSERT INTO webhook_destinations (id, created_at, body) VALUES ($1, $2, $3::json)
			ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, body = EXCLUDED.body`,
			d.ID, d.CreatedAt, string(b))
		return err
	})
}

// DeleteDestination removes the destination with its queue and its log in
// one transaction.
func (s *Store) DeleteDestination(ctx context.Context, id string) error {
	if checkDestID(id) != nil {
		return nil
	}
	return s.tx(ctx, "delete webhook destination "+id, func(tx pgx.Tx) error {
		for _, q := range []string{
			`DELETE FROM webhook_destinations WHERE id = $1`,
			`DELETE FROM webhook_deliveries WHERE destination_id = $1`,
			`DELETE FROM webhook_attempts WHERE destination_id = $1`,
		} {
			if _, err := tx.Exec(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// encodedEvents are events ready for recordEvents: the first of each id.
type encodedEvents struct{ ids, bodies []string }

func encodeEvents(evs []core.Event) (encodedEvents, error) {
	var out encodedEvents
	seen := make(map[string]bool, len(evs))
	for _, ev := range evs {
		if seen[ev.ID] {
			continue // recorded by its first occurrence
		}
		seen[ev.ID] = true
		b, err := json.Marshal(ev)
		if err != nil {
			return out, fmt.Errorf("pgstore: encode event %s: %w", ev.ID, err)
		}
		out.ids, out.bodies = append(out.ids, ev.ID), append(out.bodies, string(b))
	}
	return out, nil
}

// recordEvents puts events in the outbox unless their id is in it or was
// fanned out less than seenTTL ago.
func recordEvents(ctx context.Context, tx pgx.Tx, evs encodedEvents) error {
	if len(evs.ids) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO webhook_events (event_id, body)
		SELECT u.id, u.body::json FROM unnest($1::text[], $2::text[]) AS u(id, body)
		ON CONFLICT (event_id) DO UPDATE SET body = EXCLUDED.body, seen_until = NULL
		WHERE webhook_events.seen_until IS NOT NULL AND webhook_events.seen_until <= now()`,
		evs.ids, evs.bodies)
	return err
}

// RecordEvent puts an event in the outbox, once per event id.
func (s *Store) RecordEvent(ctx context.Context, ev core.Event) error {
	if ev.ID == "" {
		return core.Invalidf("store: record event: event without id")
	}
	evs, err := encodeEvents([]core.Event{ev})
	if err != nil {
		return err
	}
	return s.tx(ctx, "record event "+ev.ID, func(tx pgx.Tx) error { return recordEvents(ctx, tx, evs) })
}

// Outbox returns the events not yet fanned out, oldest first.
func (s *Store) Outbox(ctx context.Context) ([]core.Event, error) {
	return queryJSON[core.Event](ctx, s, "webhook outbox",
		`SELECT body FROM webhook_events WHERE seen_until IS NULL ORDER BY event_id`)
}

// FanOut takes the event out of the outbox, copies it as recorded to the
// history and queues ds, in one transaction; when the event is no longer
// in the outbox (another fan-out, maybe of another replica, won) it
// writes nothing.
func (s *Store) FanOut(ctx context.Context, eventID string, ds []core.Delivery) error {
	if eventID == "" {
		return core.Invalidf("store: fan out: event without id")
	}
	for _, d := range ds {
		if err := checkDestID(d.DestinationID); err != nil {
			return err
		}
		if d.Event.ID != eventID {
			return core.Invalidf("store: fan out %s: delivery to %s carries event %q", eventID, d.DestinationID, d.Event.ID)
		}
	}
	// A destination named twice keeps its last delivery, as in badger.
	last := make(map[string]int, len(ds))
	for i, d := range ds {
		last[d.DestinationID] = i
	}
	var dests, bodies []string
	var next []time.Time
	for i, d := range ds {
		if last[d.DestinationID] != i {
			continue
		}
		b, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("pgstore: encode delivery of %s to %s: %w", eventID, d.DestinationID, err)
		}
		dests, bodies, next = append(dests, d.DestinationID), append(bodies, string(b)), append(next, d.NextAttempt)
	}
	trim := s.fanOuts.Add(1)%histTrimEvery == 1
	return s.tx(ctx, fmt.Sprintf("fan out %s to %d destinations", eventID, len(ds)), func(tx pgx.Tx) error {
		var claimed string
		err := tx.QueryRow(ctx, `
			WITH ev AS (
				UPDATE webhook_events SET seen_until = now() + $2::bigint * interval '1 microsecond'
				WHERE event_id = $1 AND seen_until IS NULL
				RETURNING event_id, body)
			INSERT INTO webhook_history (event_id, body) SELECT event_id, body FROM ev
			ON CONFLICT (event_id) DO UPDATE SET body = EXCLUDED.body
			RETURNING event_id`, eventID, seenTTL.Microseconds()).Scan(&claimed)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // not in the outbox: fanned out already
		}
		if err != nil {
			return err
		}
		if len(dests) > 0 {
			_, err = tx.Exec(ctx, `
				INSERT INTO webhook_deliveries (destination_id, event_id, next_attempt, body)
				SELECT u.dest, $1, u.next, u.body::json
				FROM unnest($2::text[], $3::timestamptz[], $4::text[]) AS u(dest, next, body)
				ON CONFLICT (destination_id, event_id) DO UPDATE
				SET next_attempt = EXCLUDED.next_attempt, body = EXCLUDED.body, lease_owner = NULL, lease_until = NULL`,
				eventID, dests, next, bodies)
			if err != nil {
				return err
			}
		}
		if !trim {
			return nil
		}
		if _, err := tx.Exec(ctx, `
			DELETE FROM webhook_history WHERE event_id <= (
				SELECT event_id FROM webhook_history ORDER BY event_id DESC OFFSET $1 LIMIT 1)`,
			core.MaxEventHistory); err != nil {
			return err
		}
		// Seen markers past their time are forgotten (RecordEvent already
		// ignores them).
		_, err = tx.Exec(ctx, `DELETE FROM webhook_events WHERE seen_until < now()`)
		return err
	})
}

// History returns the latest fanned-out events, newest first, at most
// core.MaxEventHistory; limit <= 0 means core.MaxEventHistory.
func (s *Store) History(ctx context.Context, limit int) ([]core.Event, error) {
	if limit <= 0 || limit > core.MaxEventHistory {
		limit = core.MaxEventHistory
	}
	return queryJSON[core.Event](ctx, s, "webhook history",
		`SELECT body FROM webhook_history ORDER BY event_id DESC LIMIT $1`, limit)
}

// Queue returns every queued delivery, by destination id then event id.
func (s *Store) Queue(ctx context.Context) ([]core.Delivery, error) {
	return queryJSON[core.Delivery](ctx, s, "webhook queue",
		`SELECT body FROM webhook_deliveries ORDER BY destination_id, event_id`)
}

// Finish logs a, requeues d (its lease, if any, ends) or dequeues it, and
// trims the destination's log to the newest core.MaxDeliveryLog attempts,
// in one transaction.
func (s *Store) Finish(ctx context.Context, d core.Delivery, a core.DeliveryAttempt, requeue bool) error {
	if err := checkDestID(d.DestinationID); err != nil {
		return err
	}
	if d.Event.ID == "" {
		return core.Invalidf("store: finish delivery to %s: event without id", d.DestinationID)
	}
	if a.At.Before(time.Unix(0, 1)) {
		return core.Invalidf("store: finish delivery of %s to %s: attempt without a time", d.Event.ID, d.DestinationID)
	}
	ab, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("pgstore: encode attempt: %w", err)
	}
	db, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("pgstore: encode delivery: %w", err)
	}
	return s.tx(ctx, fmt.Sprintf("finish delivery of %s to %s", d.Event.ID, d.DestinationID), func(tx pgx.Tx) error {
		if requeue {
			_, err = tx.Exec(ctx, `
				INSERT INTO webhook_deliveries (destination_id, event_id, next_attempt, body) VALUES ($1, $2, $3, $4::json)
				ON CONFLICT (destination_id, event_id) DO UPDATE
				SET next_attempt = EXCLUDED.next_attempt, body = EXCLUDED.body, lease_owner = NULL, lease_until = NULL`,
				d.DestinationID, d.Event.ID, d.NextAttempt, string(db))
		} else {
			_, err = tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE destination_id = $1 AND event_id = $2`,
				d.DestinationID, d.Event.ID)
		}
		if err != nil {
			return err
		}
		return logAttempt(ctx, tx, d.DestinationID, d.Event.ID, a.At, ab)
	})
}

// logAttempt adds an attempt to the destination's delivery log and keeps
// its newest core.MaxDeliveryLog, inside the transaction of the delivery's
// own change (Finish, FinishClaim).
func logAttempt(ctx context.Context, tx pgx.Tx, destID, eventID string, at time.Time, body []byte) error {
	if _, err := tx.Exec(ctx, `
		INSERT INTO webhook_attempts (destination_id, at_ns, event_id, body) VALUES ($1, $2, $3, $4::json)
		ON CONFLICT (destination_id, at_ns, event_id) DO UPDATE SET body = EXCLUDED.body`,
		destID, at.UnixNano(), eventID, string(body)); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `
		DELETE FROM webhook_attempts WHERE destination_id = $1 AND (at_ns, event_id) <= (
			SELECT at_ns, event_id FROM webhook_attempts WHERE destination_id = $1
			ORDER BY at_ns DESC, event_id DESC OFFSET $2 LIMIT 1)`,
		destID, core.MaxDeliveryLog)
	return err
}

// Attempts returns a destination's latest attempts, newest first, at most
// core.MaxDeliveryLog; limit <= 0 means core.MaxDeliveryLog.
func (s *Store) Attempts(ctx context.Context, destinationID string, limit int) ([]core.DeliveryAttempt, error) {
	if checkDestID(destinationID) != nil {
		return nil, nil
	}
	if limit <= 0 || limit > core.MaxDeliveryLog {
		limit = core.MaxDeliveryLog
	}
	return queryJSON[core.DeliveryAttempt](ctx, s, "webhook attempts of "+destinationID, `
		SELECT body FROM webhook_attempts WHERE destination_id = $1
		ORDER BY at_ns DESC, event_id DESC LIMIT $2`, destinationID, limit)
}
