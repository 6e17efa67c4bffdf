package badgerstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Webhook keys, all under whPrefix (destination ids never contain '/', so a
// destination's prefix never covers another's):
//
//	wh/dest/<id>                              -> JSON core.Destination
//	wh/ob/<eventID>                           -> JSON core.Event: the outbox
//	wh/seen/<eventID>                         -> empty, TTL seenTTL: fanned out
//	wh/q/<destID>/<eventID>                   -> JSON core.Delivery: the queue
//	wh/due/<destID>/<16 hex next ns><eventID> -> lease or empty: the schedule
//	wh/log/<destID>/<16 hex At ns><eventID>   -> JSON core.DeliveryAttempt
//	wh/hist/<eventID>                         -> JSON core.Event: fanned out
//
// Event ids start with their time in hex, so the outbox prefix scans oldest
// first; the log key starts with the attempt time, so a destination's log
// scans oldest first and its reverse newest first. The seen marker keeps
// RecordEvent idempotent once an event has left the outbox; it outlives any
// plausible re-publication of an event and then expires on its own. The
// history keeps the latest fanned-out events for operators, written with
// the fan-out and trimmed to about core.MaxEventHistory (see histTrimEvery).
// Every queued delivery has one due key, written and removed with it, whose
// key orders a destination's deliveries by NextAttempt and whose value is
// the lease of the replica that claimed it (claims.go in spirit; see Claim).
const (
	whDestPrefix   = whPrefix + "dest/"
	whOutboxPrefix = whPrefix + "ob/"
	whSeenPrefix   = whPrefix + "seen/"
	whQueuePrefix  = whPrefix + "q/"
	whDuePrefix    = whPrefix + "due/"
	whLogPrefix    = whPrefix + "log/"
	whHistPrefix   = whPrefix + "hist/"

	seenTTL = 7 * 24 * time.Hour

	// conflictRetries bounds how often a write is retried after Badger
	// reports a conflict with a concurrent transaction.
	conflictRetries = 5
)

var _ ports.WebhookStore = (*Store)(nil)

// trimEvery is how often Finish trims a destination's log: it may hold up
// to trimEvery-1 attempts beyond core.MaxDeliveryLog, which Attempts never
// returns.
const trimEvery = 32

// countFinish counts Finish calls per destination (from 1).
func (s *Store) countFinish(destID string) int {
	s.finishMu.Lock()
	defer s.finishMu.Unlock()
	if s.finishes == nil {
		s.finishes = map[string]int{}
	}
	s.finishes[destID]++
	return s.finishes[destID]
}

// finishLock serialises the trimming Finish calls per destination (striped by id).
// Concurrent calls for one destination all trim the same oldest log entries,
// so Badger would fail all but one of them with a conflict, round after
// round, and a few retries would not be enough. Badger's directory lock
// makes this process the only writer, so a local lock removes the
// contention; updateRetry still covers the rare conflict with another method.
func (s *Store) finishLock(destID string) *sync.Mutex {
	return &s.finishLocks[maphash.String(finishSeed, destID)%uint64(len(s.finishLocks))]
}

var finishSeed = maphash.MakeSeed()

func whDestKey(id string) []byte        { return []byte(whDestPrefix + id) }
func whOutboxKey(eventID string) []byte { return []byte(whOutboxPrefix + eventID) }
func whSeenKey(eventID string) []byte   { return []byte(whSeenPrefix + eventID) }
func whHistKey(eventID string) []byte   { return []byte(whHistPrefix + eventID) }
func whQueueKey(destID, eventID string) []byte {
	return []byte(whQueuePrefix + destID + "/" + eventID)
}
func whQueueDestPrefix(destID string) []byte { return []byte(whQueuePrefix + destID + "/") }
func whLogDestPrefix(destID string) []byte   { return []byte(whLogPrefix + destID + "/") }

// whLogKey orders a destination's attempts by time; the event id keeps two
// attempts in the same nanosecond apart.
func whLogKey(destID string, at time.Time, eventID string) []byte {
	var ns [8]byte
	binary.BigEndian.PutUint64(ns[:], uint64(at.UnixNano()))
	return []byte(whLogPrefix + destID + "/" + hex.EncodeToString(ns[:]) + eventID)
}

// checkDestID refuses ids that would break the key layout.
func checkDestID(id string) error {
	if id == "" || strings.Contains(id, "/") {
		return core.Invalidf("store: webhook destination id %q: must be non-empty and without '/'", id)
	}
	return nil
}

// updateRetry runs fn in a read-write transaction, again (from scratch) when
// Badger reports a conflict with a concurrent transaction: two FanOuts of
// one event, say, where the loser's retry finds the event gone.
func (s *Store) updateRetry(ctx context.Context, fn func(txn *badger.Txn) error) error {
	for attempt := 0; ; attempt++ {
		err := s.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) || attempt == conflictRetries {
			return err
		}
		// A random pause, growing with each conflict, so the contenders do
		// not meet again in lockstep.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(time.Millisecond << attempt)):
		}
	}
}

// getJSON decodes the value of key into v; found is false when it is absent.
func getJSON(txn *badger.Txn, key []byte, v any) (found bool, err error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, storeErr(fmt.Sprintf("get %q", key), err)
	}
	return true, decodeJSON(item, v)
}

func decodeJSON(item *badger.Item, v any) error {
	err := item.Value(func(b []byte) error { return json.Unmarshal(b, v) })
	if err != nil {
		return fmt.Errorf("badgerstore: decode %q: %w", item.Key(), err)
	}
	return nil
}

func exists(txn *badger.Txn, key []byte) (bool, error) {
	_, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, storeErr(fmt.Sprintf("get %q", key), err)
	}
	return true, nil
}

func setJSON(txn *badger.Txn, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("badgerstore: encode %q: %w", key, err)
	}
	return txn.Set(key, b)
}

// scanJSON decodes every value under prefix, in key order, newest first
// when reverse, stopping after limit values when limit > 0.
func scanJSON[T any](ctx context.Context, s *Store, prefix []byte, reverse bool, limit int) ([]T, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	var out []T
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.Reverse = reverse
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(seekStart(prefix, reverse)); it.Valid(); it.Next() {
			if limit > 0 && len(out) == limit {
				break
			}
			var v T
			if err := decodeJSON(it.Item(), &v); err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// seekStart is where a prefix iteration starts: a reverse one just past the
// last key with the prefix (keys continue with hex digits or UTF-8 text,
// never a 0xff byte).
func seekStart(prefix []byte, reverse bool) []byte {
	if !reverse {
		return prefix
	}
	return append(bytes.Clone(prefix), 0xff)
}

// Destinations returns the stored destinations by creation time, then id.
func (s *Store) Destinations(ctx context.Context) ([]core.Destination, error) {
	ds, err := scanJSON[core.Destination](ctx, s, []byte(whDestPrefix), false, 0)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ds, func(a, b core.Destination) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return ds, nil
}

// Destination returns one stored destination.
func (s *Store) Destination(ctx context.Context, id string) (d core.Destination, found bool, err error) {
	if checkDestID(id) != nil {
		return d, false, nil // such an id is never stored
	}
	if err := s.enter(ctx); err != nil {
		return d, false, err
	}
	defer s.leave()
	err = s.db.View(func(txn *badger.Txn) error {
		found, err = getJSON(txn, whDestKey(id), &d)
		return err
	})
	return d, found, err
}

// PutDestination creates or replaces a destination.
func (s *Store) PutDestination(ctx context.Context, d core.Destination) error {
	if err := checkDestID(d.ID); err != nil {
		return err
	}
	if err := s.enterWrite(ctx); err != nil {
		return err
	}
	defer s.leaveWrite()
	err := s.updateRetry(ctx, func(txn *badger.Txn) error { return setJSON(txn, whDestKey(d.ID), d) })
	return s.writeErr("put webhook destination "+d.ID, err)
}

// DeleteDestination removes the destination first, so no fan-out picks it
// up again, then its queue and log in write batches: a destination may have
// more queued deliveries than one transaction holds.
func (s *Store) DeleteDestination(ctx context.Context, id string) error {
	if checkDestID(id) != nil {
		return nil // never stored, so nothing to delete
	}
	if err := s.enterWrite(ctx); err != nil {
		return err
	}
	defer s.leaveWrite()
	op := "delete webhook destination " + id
	err := s.updateRetry(ctx, func(txn *badger.Txn) error { return txn.Delete(whDestKey(id)) })
	if err != nil {
		return s.writeErr(op, err)
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	err = s.db.View(func(txn *badger.Txn) error {
		for _, prefix := range [][]byte{whQueueDestPrefix(id), whDueDestPrefix(id), whLogDestPrefix(id)} {
			opts := badger.DefaultIteratorOptions
			opts.Prefix = prefix
			opts.PrefetchValues = false
			it := txn.NewIterator(opts)
			for it.Rewind(); it.Valid(); it.Next() {
				// The batch keeps the key until it flushes; the iterator reuses it.
				if err := wb.Delete(it.Item().KeyCopy(nil)); err != nil {
					it.Close()
					return err
				}
			}
			it.Close()
		}
		return nil
	})
	if err == nil {
		err = wb.Flush()
	}
	return s.writeErr(op, err)
}

// recordEvent puts ev in the outbox inside txn unless its id is already in
// the outbox or was fanned out.
func recordEvent(txn *badger.Txn, ev core.Event) error {
	for _, key := range [][]byte{whOutboxKey(ev.ID), whSeenKey(ev.ID)} {
		if found, err := exists(txn, key); err != nil || found {
			return err
		}
	}
	return setJSON(txn, whOutboxKey(ev.ID), ev)
}

// RecordEvent puts an event in the outbox, once per event id.
func (s *Store) RecordEvent(ctx context.Context, ev core.Event) error {
	if ev.ID == "" {
		return core.Invalidf("store: record event: event without id")
	}
	if err := s.enterWrite(ctx); err != nil {
		return err
	}
	defer s.leaveWrite()
	err := s.updateRetry(ctx, func(txn *badger.Txn) error { return recordEvent(txn, ev) })
	return s.writeErr("record event "+ev.ID, err)
}

// Outbox returns the events not yet fanned out, oldest first.
func (s *Store) Outbox(ctx context.Context) ([]core.Event, error) {
	return scanJSON[core.Event](ctx, s, []byte(whOutboxPrefix), false, 0)
}

// histTrimEvery is how often FanOut trims the event history: the first
// fan-out of each process and every histTrimEvery-th after it, so the
// history holds at most histTrimEvery-1 events beyond core.MaxEventHistory,
// which History never returns.
const histTrimEvery = 16

// FanOut queues ds and moves the event from the outbox to the seen markers
// and the history in one transaction. When the event has already left the
// outbox (another fan-out won), it writes nothing, so deliveries are never
// queued twice and the history never holds an event twice.
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
	if err := s.enterWrite(ctx); err != nil {
		return err
	}
	defer s.leaveWrite()
	trim := s.fanOuts.Add(1)%histTrimEvery == 1
	err := s.updateRetry(ctx, func(txn *badger.Txn) error {
		// Read inside the transaction: a concurrent FanOut of the same
		// event then conflicts, and its retry sees the event gone.
		item, err := txn.Get(whOutboxKey(eventID))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return storeErr(fmt.Sprintf("get %q", whOutboxKey(eventID)), err)
		}
		// The outbox holds the event as recorded: copied as is to the history.
		ev, err := item.ValueCopy(nil)
		if err != nil {
			return storeErr(fmt.Sprintf("read %q", whOutboxKey(eventID)), err)
		}
		if err := txn.Delete(whOutboxKey(eventID)); err != nil {
			return err
		}
		if err := txn.Set(whHistKey(eventID), ev); err != nil {
			return err
		}
		seen := badger.NewEntry(whSeenKey(eventID), nil)
		seen.ExpiresAt = expiry(seenTTL)
		if err := txn.SetEntry(seen); err != nil {
			return err
		}
		for _, d := range ds {
			if err := setJSON(txn, whQueueKey(d.DestinationID, eventID), d); err != nil {
				return err
			}
			if err := txn.Set(whDueKey(d.DestinationID, d.NextAttempt, eventID), nil); err != nil {
				return err
			}
		}
		if !trim {
			return nil
		}
		return trimNewest(txn, []byte(whHistPrefix), core.MaxEventHistory)
	})
	return s.writeErr(fmt.Sprintf("fan out %s to %d destinations", eventID, len(ds)), err)
}

// History returns the latest fanned-out events, newest first, at most
// core.MaxEventHistory; limit <= 0 means core.MaxEventHistory.
func (s *Store) History(ctx context.Context, limit int) ([]core.Event, error) {
	if limit <= 0 || limit > core.MaxEventHistory {
		limit = core.MaxEventHistory // the history may hold a few more until the next trim
	}
	return scanJSON[core.Event](ctx, s, []byte(whHistPrefix), true, limit)
}

// Queue returns every queued delivery, by destination id then event id.
func (s *Store) Queue(ctx context.Context) ([]core.Delivery, error) {
	return scanJSON[core.Delivery](ctx, s, []byte(whQueuePrefix), false, 0)
}

// Finish logs a, requeues or dequeues d, and trims the destination's log to
// the newest core.MaxDeliveryLog attempts, all in one transaction. A
// requeued delivery is due at d.NextAttempt under no lease.
func (s *Store) Finish(ctx context.Context, d core.Delivery, a core.DeliveryAttempt, requeue bool) error {
	_, err := s.finish(ctx, d, a, func(txn *badger.Txn) (bool, error) {
		q := whQueueKey(d.DestinationID, d.Event.ID)
		var old core.Delivery
		found, err := getJSON(txn, q, &old)
		if err != nil {
			return false, err
		}
		if found {
			if err := txn.Delete(whDueKey(d.DestinationID, old.NextAttempt, d.Event.ID)); err != nil {
				return false, err
			}
		}
		switch {
		case requeue:
			if err := setJSON(txn, q, d); err != nil {
				return false, err
			}
			return true, txn.Set(whDueKey(d.DestinationID, d.NextAttempt, d.Event.ID), nil)
		case found:
			return true, txn.Delete(q)
		}
		return true, nil
	})
	return err
}

// finish checks d and a, then, in one transaction, runs queue (which
// changes the queue and reports whether the attempt is to be recorded),
// logs a, and every trimEvery-th call per destination trims the log.
func (s *Store) finish(ctx context.Context, d core.Delivery, a core.DeliveryAttempt, queue func(txn *badger.Txn) (bool, error)) (recorded bool, err error) {
	if err := checkDestID(d.DestinationID); err != nil {
		return false, err
	}
	if d.Event.ID == "" {
		return false, core.Invalidf("store: finish delivery to %s: event without id", d.DestinationID)
	}
	// UnixNano is undefined for the zero time, and pre-1970 times would
	// sort after every other attempt.
	if a.At.Before(time.Unix(0, 1)) {
		return false, core.Invalidf("store: finish delivery of %s to %s: attempt without a time", d.Event.ID, d.DestinationID)
	}
	if err := s.enterWrite(ctx); err != nil {
		return false, err
	}
	defer s.leaveWrite()
	// Only every trimEvery-th call trims (under the lock); the others write
	// disjoint keys, so Badger commits concurrent ones with one fsync.
	trim := s.countFinish(d.DestinationID)%trimEvery == 0
	if trim {
		mu := s.finishLock(d.DestinationID)
		mu.Lock()
		defer mu.Unlock()
	}
	err = s.updateRetry(ctx, func(txn *badger.Txn) error {
		ok, err := queue(txn)
		if recorded = ok; err != nil || !ok {
			return err
		}
		if err := setJSON(txn, whLogKey(d.DestinationID, a.At, d.Event.ID), a); err != nil {
			return err
		}
		if !trim {
			return nil
		}
		return trimLog(txn, d.DestinationID)
	})
	if err != nil {
		recorded = false
	}
	return recorded, s.writeErr(fmt.Sprintf("finish delivery of %s to %s", d.Event.ID, d.DestinationID), err)
}

// trimLog deletes a destination's attempts past the newest
// core.MaxDeliveryLog, the pending write of txn included.
func trimLog(txn *badger.Txn, destID string) error {
	return trimNewest(txn, whLogDestPrefix(destID), core.MaxDeliveryLog)
}

// trimNewest deletes the keys under prefix past the keep last ones in key
// order, the pending writes of txn included. Only the deleted keys count
// as read (Item), so the transaction conflicts only with another that
// trims or deletes the same entries.
func trimNewest(txn *badger.Txn, prefix []byte, keep int) error {
	opts := badger.DefaultIteratorOptions
	opts.Prefix = prefix
	opts.Reverse = true
	opts.PrefetchValues = false
	it := txn.NewIterator(opts)
	var drop [][]byte
	n := 0
	for it.Seek(seekStart(prefix, true)); it.Valid(); it.Next() {
		if n++; n > keep {
			drop = append(drop, it.Item().KeyCopy(nil))
		}
	}
	// Deleting while the iterator is open would show it the deletions.
	it.Close()
	for _, k := range drop {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Attempts returns a destination's latest attempts, newest first, at most
// core.MaxDeliveryLog; limit <= 0 means core.MaxDeliveryLog.
func (s *Store) Attempts(ctx context.Context, destinationID string, limit int) ([]core.DeliveryAttempt, error) {
	if checkDestID(destinationID) != nil {
		return nil, nil
	}
	if limit <= 0 || limit > core.MaxDeliveryLog {
		limit = core.MaxDeliveryLog // the log may hold a few more until the next trim
	}
	return scanJSON[core.DeliveryAttempt](ctx, s, whLogDestPrefix(destinationID), true, limit)
}

// --- Claims: the queue shared by several webhooks.Service (replicas). ---
//
// Badger's directory lock makes this process the store's only user, so the
// replicas are services in this process: a process-local lock serialises
// their claims, and the first claim of an opening clears the leases an
// earlier process left (it ended, perhaps by kill -9, so its attempts will
// never be recorded: their deliveries are due again at once, as they were
// before leases).

func whDueDestPrefix(destID string) []byte { return []byte(whDuePrefix + destID + "/") }

// whDueKey orders a destination's deliveries by NextAttempt (times before
// 1970 count as 1970).
func whDueKey(destID string, next time.Time, eventID string) []byte {
	var ns [8]byte
	binary.BigEndian.PutUint64(ns[:], uint64(max(next.UnixNano(), 0)))
	return []byte(whDuePrefix + destID + "/" + hex.EncodeToString(ns[:]) + eventID)
}

// parseDueKey splits a due key; ok is false for a key of another layout.
func parseDueKey(key []byte) (destID string, next int64, eventID string, ok bool) {
	rest, found := bytes.CutPrefix(key, []byte(whDuePrefix))
	if !found {
		return "", 0, "", false
	}
	i := bytes.IndexByte(rest, '/')
	if i <= 0 || len(rest) < i+1+16 {
		return "", 0, "", false
	}
	var ns [8]byte
	if _, err := hex.Decode(ns[:], rest[i+1:i+1+16]); err != nil {
		return "", 0, "", false
	}
	return string(rest[:i]), int64(binary.BigEndian.Uint64(ns[:])), string(rest[i+1+16:]), true
}

// dueLease is the value of a due key: empty, or a lease as the 8-byte end
// (Unix ns) followed by the owner.
type dueLease struct {
	owner string
	until int64
}

func (l dueLease) live(now int64) bool { return l.owner != "" && l.until > now }

func (l dueLease) encode() []byte {
	b := make([]byte, 8, 8+len(l.owner))
	binary.BigEndian.PutUint64(b, uint64(l.until))
	return append(b, l.owner...)
}

func leaseOf(item *badger.Item) (dueLease, error) {
	var l dueLease
	err := item.Value(func(b []byte) error {
		if len(b) == 0 {
			return nil
		}
		if len(b) < 8 {
			return fmt.Errorf("badgerstore: lease %q: %d bytes", item.Key(), len(b))
		}
		l.until, l.owner = int64(binary.BigEndian.Uint64(b)), string(b[8:])
		return nil
	})
	return l, err
}

// claimState is what the claims of one opened Store share.
type claimState struct {
	mu    sync.Mutex // serialises Claim across the services over the store
	ready bool       // prepareQueue ran for this opening
}

// claimStates holds each open Store's claimState, dropped with the Store.
var claimStates sync.Map // weak.Pointer[Store] -> *claimState

func (s *Store) claimState() *claimState {
	k := weak.Make(s)
	if v, ok := claimStates.Load(k); ok {
		return v.(*claimState)
	}
	v, loaded := claimStates.LoadOrStore(k, &claimState{})
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[Store]) { claimStates.Delete(k) }, k)
	}
	return v.(*claimState)
}

// prepareQueue makes the schedule match the queue at the first claim of an
// opening: a queued delivery without its due key (a store written before
// due keys existed) gets one, a due key without its delivery goes, and
// every lease ends (see the section comment). It writes in batches: the
// queue may be larger than one transaction.
func (s *Store) prepareQueue() error {
	want := map[string]bool{}
	var set, del [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte(whQueuePrefix)
		it := txn.NewIterator(opts)
		for it.Rewind(); it.Valid(); it.Next() {
			var d core.Delivery
			if err := decodeJSON(it.Item(), &d); err != nil {
				it.Close()
				return err
			}
			want[string(whDueKey(d.DestinationID, d.NextAttempt, d.Event.ID))] = true
		}
		it.Close()
		opts.Prefix = []byte(whDuePrefix)
		it = txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().KeyCopy(nil)
			l, err := leaseOf(it.Item())
			if err != nil {
				return err
			}
			switch {
			case !want[string(k)]:
				del = append(del, k)
			case l.owner != "":
				set = append(set, k) // a lease of an earlier process
			}
			delete(want, string(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k := range want {
		set = append(set, []byte(k))
	}
	if len(set)+len(del) == 0 {
		return nil
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range set {
		if err := wb.Set(k, nil); err != nil {
			return err
		}
	}
	for _, k := range del {
		if err := wb.Delete(k); err != nil {
			return err
		}
	}
	if err := wb.Flush(); err != nil {
		return err
	}
	s.log.Info("webhook queue prepared for claims", zap.Int("scheduled_or_released", len(set)), zap.Int("orphans_removed", len(del)))
	return nil
}

// Claim leases due deliveries (see ports.WebhookStore). One read
// transaction walks each destination's due keys, oldest first, counting
// its live leases and stopping at its first delivery not yet due; a write
// transaction then takes the chosen ones, reading each again (a delivery
// finished or deleted meanwhile is skipped).
func (s *Store) Claim(ctx context.Context, owner string, now time.Time, lease time.Duration, perDestination, limit int) (ports.Claims, error) {
	if owner == "" || lease <= 0 || perDestination < 1 || limit < 1 {
		return ports.Claims{}, core.Invalidf("store: claim: owner %q, lease %s, per destination %d, limit %d: need an owner and positive values", owner, lease, perDestination, limit)
	}
	if err := s.enterWrite(ctx); err != nil {
		return ports.Claims{}, err
	}
	defer s.leaveWrite()
	cs := s.claimState()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.ready {
		if err := s.prepareQueue(); err != nil {
			return ports.Claims{}, s.writeErr("prepare the webhook queue", err)
		}
		cs.ready = true
	}

	type pick struct {
		key         []byte
		dest, event string
		next        int64
	}
	nowNs := now.UnixNano()
	var picks []pick
	var next int64 // 0: nothing else queued
	later := func(t int64) {
		if next == 0 || t < next {
			next = t
		}
	}
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte(whDuePrefix)
		it := txn.NewIterator(opts)
		defer it.Close()
		it.Rewind()
		for it.Valid() {
			dest, _, _, ok := parseDueKey(it.Item().Key())
			if !ok {
				it.Next()
				continue
			}
			active := 0
			var free []pick
			for ; it.Valid(); it.Next() {
				item := it.Item()
				d, at, ev, ok := parseDueKey(item.Key())
				if !ok || d != dest {
					break
				}
				l, err := leaseOf(item)
				if err != nil {
					return err
				}
				if l.live(nowNs) {
					active++
					later(l.until) // frees a slot, or the delivery itself
					continue
				}
				if at > nowNs {
					later(at) // the rest of the destination is later still
					break
				}
				if len(free) < perDestination {
					free = append(free, pick{item.KeyCopy(nil), dest, ev, at})
				}
			}
			picks = append(picks, free[:min(len(free), max(perDestination-active, 0))]...)
			it.Seek(append(whDueDestPrefix(dest), 0xff))
		}
		return nil
	})
	if err != nil {
		return ports.Claims{}, storeErr("claim webhook deliveries", err)
	}
	// Oldest first across destinations, so a backlog drains in event order
	// as far as the slots allow.
	slices.SortFunc(picks, func(a, b pick) int {
		return cmp.Or(cmp.Compare(a.next, b.next), strings.Compare(a.event, b.event), strings.Compare(a.dest, b.dest))
	})
	if len(picks) > limit {
		picks, next = picks[:limit], nowNs
	}
	until := time.Unix(0, nowNs+int64(lease)).UTC()
	val := dueLease{owner: owner, until: until.UnixNano()}.encode()
	var claimed []ports.Claimed
	if len(picks) > 0 {
		err = s.updateRetry(ctx, func(txn *badger.Txn) error {
			claimed = claimed[:0]
			for _, p := range picks {
				item, err := txn.Get(p.key)
				if errors.Is(err, badger.ErrKeyNotFound) {
					continue // finished or deleted meanwhile
				}
				if err != nil {
					return err
				}
				l, err := leaseOf(item)
				if err != nil {
					return err
				}
				if l.live(nowNs) {
					continue // cannot happen while claims are serialised
				}
				var d core.Delivery
				found, err := getJSON(txn, whQueueKey(p.dest, p.event), &d)
				if err != nil {
					return err
				}
				if !found || d.NextAttempt.UnixNano() != p.next {
					// A due key its delivery no longer names (left by a
					// race with a deletion): drop it.
					if err := txn.Delete(p.key); err != nil {
						return err
					}
					continue
				}
				if err := txn.Set(p.key, val); err != nil {
					return err
				}
				claimed = append(claimed, ports.Claimed{Delivery: d, Lease: ports.Lease{Owner: owner, Until: until}})
			}
			return nil
		})
		if err != nil {
			return ports.Claims{}, s.writeErr("claim webhook deliveries", err)
		}
	}
	out := ports.Claims{Deliveries: claimed}
	if next != 0 {
		out.Next = time.Unix(0, next).UTC()
	}
	return out, nil
}

// heldLease reads c's due key in txn and tells whether c's lease is still
// the one it holds.
func heldLease(txn *badger.Txn, c ports.Claimed) (key []byte, held bool, err error) {
	key = whDueKey(c.DestinationID, c.NextAttempt, c.Event.ID)
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return key, false, nil
	}
	if err != nil {
		return key, false, err
	}
	l, err := leaseOf(item)
	if err != nil {
		return key, false, err
	}
	return key, l.owner == c.Lease.Owner && l.until == c.Lease.Until.UnixNano(), nil
}

// FinishClaim records the attempt of a claimed delivery and ends its lease
// (see ports.WebhookStore); it writes nothing when the lease is lost.
func (s *Store) FinishClaim(ctx context.Context, c ports.Claimed, a core.DeliveryAttempt, requeue bool) (bool, error) {
	return s.finish(ctx, c.Delivery, a, func(txn *badger.Txn) (bool, error) {
		key, held, err := heldLease(txn, c)
		if err != nil || !held {
			return false, err
		}
		if err := txn.Delete(key); err != nil {
			return false, err
		}
		q := whQueueKey(c.DestinationID, c.Event.ID)
		if !requeue {
			return true, txn.Delete(q)
		}
		d := c.Delivery
		d.Attempts, d.NextAttempt = a.Attempt, a.NextAttempt
		if err := setJSON(txn, q, d); err != nil {
			return false, err
		}
		return true, txn.Set(whDueKey(d.DestinationID, d.NextAttempt, d.Event.ID), nil)
	})
}

// Release ends a lease without an attempt.
func (s *Store) Release(ctx context.Context, c ports.Claimed) error {
	if checkDestID(c.DestinationID) != nil {
		return nil
	}
	if err := s.enterWrite(ctx); err != nil {
		return err
	}
	defer s.leaveWrite()
	err := s.updateRetry(ctx, func(txn *badger.Txn) error {
		key, held, err := heldLease(txn, c)
		if err != nil || !held {
			return err
		}
		return txn.Set(key, nil)
	})
	return s.writeErr(fmt.Sprintf("release delivery of %s to %s", c.Event.ID, c.DestinationID), err)
}

// Pending counts queued deliveries by their keys alone.
func (s *Store) Pending(ctx context.Context, destinationID string) (int, error) {
	prefix := []byte(whQueuePrefix)
	if destinationID != "" {
		if checkDestID(destinationID) != nil {
			return 0, nil
		}
		prefix = whQueueDestPrefix(destinationID)
	}
	if err := s.enter(ctx); err != nil {
		return 0, err
	}
	defer s.leave()
	n, err := s.countKeys("", prefix)
	if err != nil {
		return 0, storeErr("count webhook deliveries", err)
	}
	return n, nil
}
