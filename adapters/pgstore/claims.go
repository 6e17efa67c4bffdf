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
	"github.com/climatesearch/climatesearch/ports"
)

// Claims: the delivery queue shared by replicas (ports.WebhookStore).
//
// A claim is one read-committed transaction of two statements:
//
//  1. It takes, without waiting, a transaction advisory lock per
//     destination that has due, unleased deliveries
//     (pg_try_advisory_xact_lock(claimLockClass, hashtext(destination)));
//     a destination another replica is claiming for right now is skipped,
//     since that replica fills its free slots. The same statement reads when
//     the next delivery falls due and when the next live lease ends.
//  2. For each destination it locked, it counts the live leases (every
//     owner's), picks the oldest due, unleased deliveries up to the free
//     slots with SELECT … FOR UPDATE SKIP LOCKED (rows a concurrent
//     FinishClaim, Release, FanOut or deletion holds are skipped, not
//     waited for), and leases them (lease_owner, lease_until).
//
// The per-destination limit holds across replicas because the count of
// statement 2 is read after the destination's lock was taken, so it sees
// every claim committed for that destination (a claim holds the lock
// until it commits), and leases only end meanwhile, never begin. The two
// int4 keys keep these locks apart from the single-bigint keys of the
// migration and run locks.
//
// FinishClaim and Release change a delivery only while its row still
// carries the lease they were given (owner and end, to the microsecond
// that timestamptz keeps: Claim returns the end as stored).

// claimLockClass is the first key of the destinations' claim locks.
const claimLockClass = 0x77680001

// Claim leases due deliveries; see ports.WebhookStore.
func (s *Store) Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, perDestination, limit int) (ports.Claims, error) {
	if owner == "" || lease <= 0 || perDestination < 1 || limit < 1 {
		return ports.Claims{}, core.Invalidf("store: claim: owner %q, lease %s, per destination %d, limit %d: need an owner and positive values", owner, lease, perDestination, limit)
	}
	now = now.Truncate(time.Microsecond)
	until := now.Add(lease).Truncate(time.Microsecond).UTC()
	var out ports.Claims
	err := s.tx(ctx, "claim webhook deliveries", func(tx pgx.Tx) error {
		out = ports.Claims{}
		var dests []string
		var nextDue, leaseEnd *time.Time
		err := tx.QueryRow(ctx, `
			SELECT
				array(SELECT dest FROM (
					SELECT DISTINCT destination_id AS dest FROM webhook_deliveries
					WHERE next_attempt <= $1 AND (lease_until IS NULL OR lease_until <= $1)) d
					WHERE pg_try_advisory_xact_lock($2, hashtext(dest))),
				(SELECT min(next_attempt) FROM webhook_deliveries
					WHERE next_attempt > $1 AND (lease_until IS NULL OR lease_until <= $1)),
				(SELECT min(lease_until) FROM webhook_deliveries WHERE lease_until > $1)`,
			now, claimLockClass).Scan(&dests, &nextDue, &leaseEnd)
		if err != nil {
			return err
		}
		for _, t := range []*time.Time{nextDue, leaseEnd} {
			if t != nil && (out.Next.IsZero() || t.Before(out.Next)) {
				out.Next = t.UTC()
			}
		}
		if len(dests) == 0 {
			return nil
		}
		// limit+1 tells whether limit cut the claim short; the extra row
		// stays locked, unleased, until this transaction ends.
		rows, err := tx.Query(ctx, `
			WITH room AS (
				SELECT q.dest, $3::int - (SELECT count(*) FROM webhook_deliveries w
					WHERE w.destination_id = q.dest AND w.lease_until > $2)::int AS n
				FROM unnest($1::text[]) AS q(dest)
			), picked AS (
				SELECT p.destination_id, p.event_id, p.next_attempt FROM room
				CROSS JOIN LATERAL (
					SELECT w.destination_id, w.event_id, w.next_attempt FROM webhook_deliveries w
					WHERE w.destination_id = room.dest AND w.next_attempt <= $2
						AND (w.lease_until IS NULL OR w.lease_until <= $2)
					ORDER BY w.next_attempt, w.event_id
					LIMIT greatest(room.n, 0)
					FOR UPDATE SKIP LOCKED) p
				ORDER BY p.next_attempt, p.event_id, p.destination_id
				LIMIT $4
			), leased AS (
				UPDATE webhook_deliveries w SET lease_owner = $5, lease_until = $6
				FROM (SELECT * FROM picked ORDER BY next_attempt, event_id, destination_id LIMIT $7) c
				WHERE w.destination_id = c.destination_id AND w.event_id = c.event_id
				RETURNING w.body, w.next_attempt, w.event_id, w.destination_id
			)
			SELECT body, true FROM leased
			UNION ALL
			SELECT NULL, false FROM (SELECT count(*) AS n FROM picked) k WHERE k.n > $7`,
			dests, now, perDestination, limit+1, owner, until, limit)
		if err != nil {
			return err
		}
		var body []byte
		var claimed bool
		_, err = pgx.ForEachRow(rows, []any{&body, &claimed}, func() error {
			if !claimed {
				out.Next = now.UTC() // cut short by limit: more is due now
				return nil
			}
			var d core.Delivery
			if err := json.Unmarshal(body, &d); err != nil {
				return fmt.Errorf("pgstore: claim: decode delivery: %w", err)
			}
			out.Deliveries = append(out.Deliveries, ports.Claimed{Delivery: d, Lease: ports.Lease{Owner: owner, Until: until}})
			return nil
		})
		return err
	})
	if err != nil {
		return ports.Claims{}, err
	}
	sortClaimed(out.Deliveries)
	return out, nil
}

// sortClaimed puts claimed deliveries oldest first (RETURNING has no order).
func sortClaimed(cs []ports.Claimed) {
	slices.SortFunc(cs, func(a, b ports.Claimed) int {
		return cmp.Or(a.NextAttempt.Compare(b.NextAttempt), strings.Compare(a.Event.ID, b.Event.ID),
			strings.Compare(a.DestinationID, b.DestinationID))
	})
}

// holdLease locks c's row when it still carries c's lease.
func holdLease(ctx context.Context, tx pgx.Tx, c ports.Claimed) (bool, error) {
	var one int
	err := tx.QueryRow(ctx, `
		SELECT 1 FROM webhook_deliveries
		WHERE destination_id = $1 AND event_id = $2 AND lease_owner = $3 AND lease_until = $4
		FOR UPDATE`, c.DestinationID, c.Event.ID, c.Lease.Owner, c.Lease.Until).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// FinishClaim records the attempt of a claimed delivery and ends its
// lease, or writes nothing when the lease is no longer held.
func (s *Store) FinishClaim(ctx context.Context, c ports.Claimed, a core.DeliveryAttempt, requeue bool) (bool, error) {
	if err := checkDestID(c.DestinationID); err != nil {
		return false, err
	}
	if c.Event.ID == "" {
		return false, core.Invalidf("store: finish delivery to %s: event without id", c.DestinationID)
	}
	if a.At.Before(time.Unix(0, 1)) {
		return false, core.Invalidf("store: finish delivery of %s to %s: attempt without a time", c.Event.ID, c.DestinationID)
	}
	ab, err := json.Marshal(a)
	if err != nil {
		return false, fmt.Errorf("pgstore: encode attempt: %w", err)
	}
	d := c.Delivery
	d.Attempts, d.NextAttempt = a.Attempt, a.NextAttempt
	db, err := json.Marshal(d)
	if err != nil {
		return false, fmt.Errorf("pgstore: encode delivery: %w", err)
	}
	var held bool
	err = s.tx(ctx, fmt.Sprintf("finish delivery of %s to %s", c.Event.ID, c.DestinationID), func(tx pgx.Tx) error {
		var err error
		if held, err = holdLease(ctx, tx, c); err != nil || !held {
			return err
		}
		if requeue {
			_, err = tx.Exec(ctx, `
				UPDATE webhook_deliveries SET next_attempt = $3, body = $4::json, lease_owner = NULL, lease_until = NULL
				WHERE destination_id = $1 AND event_id = $2`,
				c.DestinationID, c.Event.ID, d.NextAttempt, string(db))
		} else {
			_, err = tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE destination_id = $1 AND event_id = $2`,
				c.DestinationID, c.Event.ID)
		}
		if err != nil {
			return err
		}
		return logAttempt(ctx, tx, c.DestinationID, c.Event.ID, a.At, ab)
	})
	if err != nil {
		return false, err
	}
	return held, nil
}

// Release ends a lease without an attempt.
func (s *Store) Release(ctx context.Context, c ports.Claimed) error {
	if checkDestID(c.DestinationID) != nil {
		return nil
	}
	return s.tx(ctx, fmt.Sprintf("release delivery of %s to %s", c.Event.ID, c.DestinationID), func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL
			WHERE destination_id = $1 AND event_id = $2 AND lease_owner = $3 AND lease_until = $4`,
			c.DestinationID, c.Event.ID, c.Lease.Owner, c.Lease.Until)
		return err
	})
}

// Pending counts queued deliveries.
func (s *Store) Pending(ctx context.Context, destinationID string) (int, error) {
	if destinationID != "" && checkDestID(destinationID) != nil {
		return 0, nil
	}
	if err := s.enter(ctx); err != nil {
		return 0, err
	}
	var n int
	err := s.pool.QueryRow(ctx, `
		SELECT count(*) FROM webhook_deliveries WHERE $1 = '' OR destination_id = $1`, destinationID).Scan(&n)
	if err != nil {
		return 0, s.dbErr(ctx, "count webhook deliveries", err)
	}
	return n, nil
}
