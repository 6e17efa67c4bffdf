package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/pgtest"
	"github.com/climatesearch/climatesearch/test/storetest"
)

// What only a store shared by several processes shows: the change counter,
// the change feed, run locks, concurrent migration, and a write cut by
// the death of its backend.

// patience bounds every wait of these tests: a bound on failure, never a
// measured duration.
const patience = 60 * time.Second

// query runs sql on the database at url and returns the first column of
// each row as text.
func query(t *testing.T, url, sql string, args ...any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vs, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vs[0]))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// eventually polls cond until it holds, failing the test after patience.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after %v", what, patience)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func puts(c core.CatalogID, ids ...string) []ports.StoredResource {
	out := make([]ports.StoredResource, len(ids))
	for i, id := range ids {
		out[i] = storetest.Full(c, id)
	}
	return out
}

func counterOf(t *testing.T, s *Store, c core.CatalogID) uint64 {
	t.Helper()
	m, err := s.Meta(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return m.Counter
}

func TestCounterAndIfCounter(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).NewDB(t)
	a, b := openT(t, url), openT(t, url) // two replicas

	if c := counterOf(t, a, core.National); c != 0 {
		t.Fatalf("counter of a new catalog = %d", c)
	}
	zero := uint64(0)
	must(t, a.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, "a", "b"), IfCounter: &zero}))
	if c := counterOf(t, b, core.National); c != 1 {
		t.Fatalf("counter after a write = %d; want 1", c)
	}
	// A write without resources (the meta alone) does not move it, nor
	// does PutMeta, whatever its meta says.
	must(t, b.Apply(ctx, core.National, ports.Changes{Meta: &core.CatalogMeta{Catalog: core.National, Version: "v1"}}))
	must(t, b.PutMeta(ctx, core.CatalogMeta{Catalog: core.National, Version: "v2", Counter: 77}))
	if m, _ := a.Meta(ctx, core.National); m.Counter != 1 || m.Version != "v2" {
		t.Fatalf("meta after meta-only writes = %+v; want counter 1, version v2", m)
	}
	// Another catalog has its own counter.
	if c := counterOf(t, a, core.DKBR); c != 0 {
		t.Fatalf("dkbr counter = %d", c)
	}

	// B read counter 1; A writes; B's stale write is refused whole.
	one := uint64(1)
	must(t, a.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, "c"), IfCounter: &one}))
	stale := puts(core.National, "a", "d")
	stale[0].Resource.NameSV = "stale"
	err := b.Apply(ctx, core.National, ports.Changes{Put: stale, IfCounter: &one,
		Meta:   &core.CatalogMeta{Catalog: core.National, Version: "stale"},
		Events: []core.Event{core.NewEvent(core.EventCatalogChanged, core.National, time.Now())}})
	if core.KindOf(err) != core.KindConflict {
		t.Fatalf("stale write = %v; want a conflict", err)
	}
	if got, _, _ := a.Get(ctx, core.Key{Catalog: core.National, ID: "a"}); got.Resource.NameSV == "stale" {
		t.Fatal("the refused write changed a resource")
	}
	if _, found, _ := a.Get(ctx, core.Key{Catalog: core.National, ID: "d"}); found {
		t.Fatal("the refused write added a resource")
	}
	if m, _ := a.Meta(ctx, core.National); m.Counter != 2 || m.Version != "v2" {
		t.Fatalf("meta after the refused write = %+v", m)
	}
	if evs, _ := a.Outbox(ctx); len(evs) != 0 {
		t.Fatalf("the refused write queued %d events", len(evs))
	}
	two := uint64(2)
	must(t, b.Apply(ctx, core.National, ports.Changes{Put: stale, IfCounter: &two}))
	// Without IfCounter nothing is checked.
	must(t, b.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, "e")}))
	if c := counterOf(t, a, core.National); c != 4 {
		t.Fatalf("counter = %d; want 4", c)
	}
	stamps := query(t, url, `SELECT id || '=' || stamp FROM resources WHERE catalog = 'national' ORDER BY id`)
	if want := []string{"a=3", "b=1", "c=2", "d=3", "e=4"}; fmt.Sprint(stamps) != fmt.Sprint(want) {
		t.Fatalf("stamps = %v; want %v", stamps, want)
	}
}

// Concurrent writers of one catalog, each checking the counter it read:
// every write either lands on the counter it read or is refused, and the
// counter counts the writes that landed.
func TestIfCounterUnderContention(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).NewDB(t)
	stores := []*Store{openT(t, url), openT(t, url), openT(t, url)}
	var landed, refused sync.Map
	var wg sync.WaitGroup
	for w, s := range stores {
		wg.Go(func() {
			for i := range 20 {
				m, err := s.Meta(ctx, core.National)
				if err != nil {
					t.Error(err)
					return
				}
				c := m.Counter
				err = s.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, fmt.Sprint(w, "-", i)), IfCounter: &c})
				switch core.KindOf(err) {
				case core.KindConflict:
					refused.Store(fmt.Sprint(w, "-", i), c)
				default:
					if err != nil {
						t.Error(err)
						return
					}
					if _, dup := landed.LoadOrStore(c, w); dup {
						t.Errorf("two writes landed on counter %d", c)
					}
				}
			}
		})
	}
	wg.Wait()
	n := 0
	landed.Range(func(any, any) bool { n++; return true })
	if c := counterOf(t, stores[0], core.National); c != uint64(n) {
		t.Fatalf("counter %d after %d writes landed", c, n)
	}
	count, _ := stores[0].Count(ctx, core.National)
	if count != n {
		t.Fatalf("%d resources after %d writes landed", count, n)
	}
}

func TestChangeFeedSince(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).NewDB(t)
	s := openT(t, url)
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, "b", "a")}))
	second := puts(core.National, "c", "b")
	second[1].Resource.Withdrawn = true
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: second}))
	must(t, s.Apply(ctx, core.DKBR, ports.Changes{Put: puts(core.DKBR, "x")}))

	since := func(after uint64) ([]string, uint64) {
		t.Helper()
		var got []string
		last, err := s.Since(ctx, core.National, after, func(r ports.StoredResource) error {
			got = append(got, r.Resource.ID)
			return nil
		})
		must(t, err)
		return got, last
	}
	for _, c := range []struct {
		after uint64
		ids   string
		last  uint64
	}{
		{0, "[a b c]", 2}, // a at 1; b (withdrawn, still reported) and c at 2
		{1, "[b c]", 2},
		{2, "[]", 2},
		{9, "[]", 9},
	} {
		if ids, last := since(c.after); fmt.Sprint(ids) != c.ids || last != c.last {
			t.Errorf("Since(%d) = %v, %d; want %s, %d", c.after, ids, last, c.ids, c.last)
		}
	}
	// An error from fn stops it; the counter returned is the last read.
	stop := errors.New("stop")
	last, err := s.Since(ctx, core.National, 0, func(ports.StoredResource) error { return stop })
	if !errors.Is(err, stop) || last != 0 {
		t.Fatalf("Since with a failing fn = %d, %v", last, err)
	}
}

// watcher records what Watch reports.
type watcher struct {
	mu   sync.Mutex
	seen map[core.CatalogID]uint64 // highest counter reported
	n    int                       // calls
}

func (w *watcher) fn(c core.CatalogID, counter uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	if w.seen == nil {
		w.seen = map[core.CatalogID]uint64{}
	}
	w.seen[c] = max(w.seen[c], counter)
}

func (w *watcher) at(c core.CatalogID) (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	v, ok := w.seen[c]
	return v, ok
}

func listenerPIDs(t *testing.T, url string) []string {
	return query(t, url, `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, listenerName)
}

func TestWatch(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).NewDB(t)
	a, b := openT(t, url), openT(t, url)
	must(t, b.Apply(ctx, core.DKBR, ports.Changes{Put: puts(core.DKBR, "x")}))

	var w watcher
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Watch(wctx, w.fn) }()

	// At connection, every catalog's counter.
	eventually(t, "told every catalog's counter", func() bool {
		n, okN := w.at(core.National)
		d, okD := w.at(core.DKBR)
		return okN && okD && n == 0 && d == 1
	})
	// A write of another replica is announced.
	must(t, b.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, "a")}))
	eventually(t, "told of national:1", func() bool { n, _ := w.at(core.National); return n == 1 })
	// Meta-only writes announce nothing, and nothing breaks.
	must(t, b.PutMeta(ctx, core.CatalogMeta{Catalog: core.National, Version: "v"}))

	// The listener's connection is killed; a write lands meanwhile; the
	// watcher reconnects on a new connection and reports it.
	old := listenerPIDs(t, url)
	if len(old) != 1 {
		t.Fatalf("listeners: %v", old)
	}
	query(t, url, `SELECT pg_terminate_backend($1::int)`, old[0])
	must(t, b.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, "b")}))
	eventually(t, "told of national:2 after the reconnection", func() bool { n, _ := w.at(core.National); return n == 2 })
	eventually(t, "listening on a new connection", func() bool {
		pids := listenerPIDs(t, url)
		return len(pids) == 1 && pids[0] != old[0]
	})
	must(t, b.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, "c")}))
	eventually(t, "told of national:3", func() bool { n, _ := w.at(core.National); return n == 3 })

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Watch = %v; want context.Canceled", err)
	}
	eventually(t, "the listener gone", func() bool { return len(listenerPIDs(t, url)) == 0 })

	// Close ends a running Watch too.
	done2 := make(chan error, 1)
	go func() { done2 <- a.Watch(ctx, func(core.CatalogID, uint64) {}) }()
	eventually(t, "listening again", func() bool { return len(listenerPIDs(t, url)) == 1 })
	must(t, a.Close())
	if err := <-done2; core.KindOf(err) != core.KindUnavailable {
		t.Fatalf("Watch after Close = %v; want unavailable", err)
	}
}

func TestRunLocks(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).NewDB(t)
	a, b := openT(t, url), openT(t, url)
	defer func(d time.Duration) { lockCheck = d }(lockCheck)
	lockCheck = 20 * time.Millisecond

	held, ok, err := a.TryLock(ctx, "ingest:national")
	if err != nil || !ok {
		t.Fatalf("first TryLock = %v, %v", ok, err)
	}
	for name, s := range map[string]*Store{"another replica": b, "the same replica": a} {
		if _, ok, err := s.TryLock(ctx, "ingest:national"); err != nil || ok {
			t.Fatalf("TryLock of a held lock by %s = %v, %v", name, ok, err)
		}
	}
	h2, ok, err := b.TryLock(ctx, "ingest:dkbr")
	if err != nil || !ok {
		t.Fatalf("TryLock of another name = %v, %v", ok, err)
	}
	h2.Unlock()
	held.Unlock()
	held.Unlock() // a second unlock is a no-op
	time.Sleep(5 * lockCheck)
	for _, h := range []ports.HeldLock{held, h2} {
		select {
		case <-h.Lost:
			t.Fatal("a lock given back counts as lost")
		default:
		}
	}

	held, ok, err = b.TryLock(ctx, "ingest:national")
	if err != nil || !ok {
		t.Fatalf("TryLock after unlock = %v, %v", ok, err)
	}
	// The holder's session ends (its connection broke): the lock is free
	// again, and the holder learns it has lost it.
	holders := query(t, url, `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	if len(holders) != 1 {
		t.Fatalf("advisory lock holders: %v", holders)
	}
	query(t, url, `SELECT pg_terminate_backend($1::int)`, holders[0])
	select {
	case <-held.Lost:
	case <-time.After(30 * time.Second):
		t.Fatal("the holder was not told its lock was lost")
	}
	eventually(t, "the dead holder's lock free", func() bool {
		h, ok, err := a.TryLock(ctx, "ingest:national")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			h.Unlock()
		}
		return ok
	})
	held.Unlock() // on a dead connection: no error, no lock left behind
	if n := query(t, url, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'`); n[0] != "0" {
		t.Fatalf("%s advisory locks left", n[0])
	}

	// Close gives back the locks still held.
	if _, ok, _ := a.TryLock(ctx, "ingest:national"); !ok {
		t.Fatal("TryLock before Close")
	}
	must(t, a.Close())
	if _, ok, err := b.TryLock(ctx, "ingest:national"); err != nil || !ok {
		t.Fatalf("TryLock after the holder closed = %v, %v", ok, err)
	}
}

// Replicas opening one empty database at once migrate it once, and all
// open.
func TestConcurrentMigration(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			s, err := Open(context.Background(), url, nil)
			if err == nil {
				err = s.Ping(context.Background())
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	if got := query(t, url, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`); got[0] != "1" {
		t.Fatalf("%s migrations recorded; want 1 (applied once)", got[0])
	}
	// And again, on a migrated database: nothing to do.
	s := openT(t, url)
	must(t, s.Ping(context.Background()))
	if got := query(t, url, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`); got[0] != "1" {
		t.Fatalf("%s migrations recorded after a reopen", got[0])
	}
}

// PostgreSQL stops: Ping and reads fail as unavailable; it comes back: the
// same Store works again by itself, and Watch reconnects.
func TestRecoversWhenPostgresComesBack(t *testing.T) {
	ctx := context.Background()
	cl := pgtest.Start(t)
	url := cl.NewDB(t)
	s := openT(t, url)
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, "a")}))
	var w watcher
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = s.Watch(wctx, w.fn) }()
	eventually(t, "watching", func() bool { _, ok := w.at(core.National); return ok })

	must(t, cl.Stop())
	if err := s.Ping(ctx); core.KindOf(err) != core.KindUnavailable {
		t.Fatalf("Ping with PostgreSQL stopped = %v; want unavailable", err)
	}
	if _, _, err := s.Get(ctx, core.Key{Catalog: core.National, ID: "a"}); core.KindOf(err) != core.KindUnavailable {
		t.Fatalf("Get with PostgreSQL stopped = %v; want unavailable", err)
	}
	if err := s.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, "b")}); core.KindOf(err) != core.KindUnavailable {
		t.Fatalf("Apply with PostgreSQL stopped = %v; want unavailable", err)
	}
	must(t, cl.Start())
	eventually(t, "Ping working again", func() bool { return s.Ping(ctx) == nil })
	other := openT(t, url)
	must(t, other.Apply(ctx, core.National, ports.Changes{Put: puts(core.National, "c")}))
	eventually(t, "Watch reporting national:2", func() bool { n, _ := w.at(core.National); return n == 2 })
	if _, found, err := s.Get(ctx, core.Key{Catalog: core.National, ID: "c"}); err != nil || !found {
		t.Fatalf("Get after the restart = %v, %v", found, err)
	}
}

// generation is the Apply of generation g: every resource's content and
// the meta's version depend on g.
func generation(g, n int) ports.Changes {
	ps := make([]ports.StoredResource, n)
	for i := range ps {
		r := storetest.Full(core.National, fmt.Sprintf("%05d", i)).Resource
		r.NameSV = fmt.Sprintf("resource %d generation %d", i, g)
		r.A1A3 = core.F(float64(g*100000 + i))
		r.Version = strconv.Itoa(g)
		ps[i] = ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)}
	}
	return ports.Changes{Put: ps, Meta: &core.CatalogMeta{Catalog: core.National, Version: strconv.Itoa(g)}}
}

// checkGeneration fails the test unless the store holds exactly one whole
// generation of n resources, the meta matching it, and returns it.
func checkGeneration(t *testing.T, s *Store, n int) int {
	t.Helper()
	g, err := readGeneration(t, s, n)
	must(t, err)
	return g
}

// readGeneration is checkGeneration for a store that may not answer yet
// (PostgreSQL recovering from a killed backend): a store that cannot be
// read is returned as an error; what it reads must be one whole
// generation, or the test fails.
func readGeneration(t *testing.T, s *Store, n int) (int, error) {
	t.Helper()
	ctx := context.Background()
	m, err := s.Meta(ctx, core.National)
	if err != nil {
		return 0, err
	}
	g, err := strconv.Atoi(m.Version)
	if err != nil {
		t.Fatalf("meta version %q", m.Version)
	}
	i := 0
	var bad error
	err = s.Scan(ctx, core.National, func(r ports.StoredResource) error {
		switch h := core.ContentHash(&r.Resource); {
		case r.Hash != h:
			bad = fmt.Errorf("%s: stored hash %s, content hash %s", r.Resource.ID, r.Hash, h)
		case r.Resource.Version != m.Version || *r.Resource.A1A3 != float64(g*100000+i):
			bad = fmt.Errorf("%s: generation %s, meta says %s", r.Resource.ID, r.Resource.Version, m.Version)
		}
		i++
		return bad
	})
	if bad != nil {
		t.Fatal(bad)
	}
	if err != nil {
		return 0, err
	}
	if i != n {
		t.Fatalf("store holds %d resources, want %d", i, n)
	}
	m2, err := s.Meta(ctx, core.National)
	if err != nil {
		return 0, err
	}
	if m2.Counter != uint64(g) {
		t.Fatalf("counter %d for generation %d", m2.Counter, g)
	}
	return g, nil
}

// TestApplyCutByKill kills the backend of a running Apply, with
// pg_terminate_backend and with SIGKILL (PostgreSQL then restarts every
// backend and recovers from its log), and checks that the store holds one
// whole generation every time.
func TestApplyCutByKill(t *testing.T) {
	const n = 4000
	ctx := context.Background()
	cl := pgtest.Start(t)
	url := cl.NewDB(t)
	s := openT(t, url)
	must(t, s.Apply(ctx, core.National, generation(1, n)))
	next := 2
	cuts := map[string]int{}
	for round := 0; (cuts["terminate"] < 2 || cuts["SIGKILL"] < 2) && round < 40; round++ {
		how := "terminate"
		if cuts["terminate"] >= 2 {
			how = "SIGKILL"
		}
		done := make(chan error, 1)
		g := next
		go func() { done <- s.Apply(ctx, core.National, generation(g, n)) }()
		// The Apply's backend, once it is inside the transaction.
		var pid string
		for pid == "" {
			select {
			case err := <-done:
				done <- err
				pid = "-"
				continue
			default:
			}
			pids := query(t, url, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()
				AND application_name = 'climatesearch' AND pid <> pg_backend_pid()
				AND (state = 'idle in transaction' OR (state = 'active' AND query LIKE '%INSERT INTO resources%'))`)
			if len(pids) > 0 {
				pid = pids[0]
			}
		}
		if pid != "-" {
			if how == "terminate" {
				query(t, url, `SELECT pg_terminate_backend($1::int)`, pid)
			} else {
				p, _ := strconv.Atoi(pid)
				if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
		err := <-done
		if err != nil {
			cuts[how]++
			t.Logf("round %d: generation %d cut (%s): %v", round, g, how, err)
		}
		// After a SIGKILL PostgreSQL ends every backend and recovers: a
		// connection that answered a moment ago may still be cut.
		var got int
		eventually(t, "the store answering", func() bool {
			var err error
			got, err = readGeneration(t, s, n)
			return err == nil
		})
		switch {
		case got == g:
			// Committed: before the kill, or as the kill landed (the
			// commit was sent, its answer lost).
			next++
		case err == nil || got != g-1:
			t.Fatalf("round %d: store holds generation %d after the Apply of %d returned %v", round, got, g, err)
		}
	}
	if cuts["terminate"] < 2 || cuts["SIGKILL"] < 2 {
		t.Fatalf("cut Applies: %v; the kills never landed inside a transaction", cuts)
	}
}

// Two replicas fan out the same outbox events at once: every event is
// queued once per destination.
func TestFanOutAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).NewDB(t)
	stores := []*Store{openT(t, url), openT(t, url)}
	const events = 30
	var evs []core.Event
	for i := range events {
		ev := core.NewEvent(core.EventCatalogChanged, core.National, time.Now().Add(time.Duration(i)*time.Millisecond))
		must(t, stores[i%2].RecordEvent(ctx, ev))
		evs = append(evs, ev)
	}
	var wg sync.WaitGroup
	for _, s := range stores {
		for range 2 {
			wg.Go(func() {
				for _, ev := range evs {
					ds := []core.Delivery{
						{Event: ev, DestinationID: "a", QueuedAt: ev.OccurredAt, NextAttempt: ev.OccurredAt},
						{Event: ev, DestinationID: "b", QueuedAt: ev.OccurredAt, NextAttempt: ev.OccurredAt},
					}
					if err := s.FanOut(ctx, ev.ID, ds); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
	wg.Wait()
	q, err := stores[0].Queue(ctx)
	must(t, err)
	if len(q) != 2*events {
		t.Fatalf("%d deliveries queued for %d events to 2 destinations", len(q), events)
	}
	h, err := stores[1].History(ctx, 0)
	must(t, err)
	if len(h) != events {
		t.Fatalf("history holds %d events; want %d", len(h), events)
	}
	if ob, _ := stores[0].Outbox(ctx); len(ob) != 0 {
		t.Fatalf("outbox still holds %d events", len(ob))
	}
}

// A replica's decoded copies never hide another replica's write, and the
// cache stays within its bound.
func TestDecodedCacheAcrossReplicas(t *testing.T) {
	defer func(n int64) { maxDecoded = n }(maxDecoded)
	maxDecoded = 3
	ctx := context.Background()
	url := pgtest.Shared(t).NewDB(t)
	a, b := openT(t, url), openT(t, url)
	var keys []core.Key
	for i := range 5 {
		keys = append(keys, core.Key{Catalog: core.National, ID: fmt.Sprint(i)})
	}
	for round := range 3 {
		var ps []ports.StoredResource
		for _, k := range keys {
			p := storetest.Full(core.National, k.ID)
			p.Resource.NameSV = fmt.Sprint("round ", round)
			ps = append(ps, p)
		}
		must(t, b.Apply(ctx, core.National, ports.Changes{Put: ps}))
		for range 2 { // the second read is served from the decoded copies
			rs, err := a.GetMany(ctx, keys)
			must(t, err)
			if len(rs) != len(keys) {
				t.Fatalf("round %d: %d resources", round, len(rs))
			}
			for _, r := range rs {
				if r.Resource.NameSV != fmt.Sprint("round ", round) {
					t.Fatalf("round %d: %s reads %q", round, r.Resource.ID, r.Resource.NameSV)
				}
			}
		}
	}
	n := 0
	a.decoded.Range(func(any, any) bool { n++; return true })
	if n > 3 || a.cachedN.Load() != int64(n) {
		t.Fatalf("%d decoded copies (counted %d); the bound is 3", n, a.cachedN.Load())
	}
}

// Replicas spending one challenge at once: exactly one is fresh; entries
// are kept until the challenge's expiry plus the margin.
func TestLedgerAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).NewDB(t)
	stores := []*Store{openT(t, url), openT(t, url), openT(t, url)}
	until := time.Now().Add(5 * time.Minute).Truncate(time.Microsecond)
	var fresh sync.Map
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			ok, err := stores[i%3].Spend(ctx, "same", fmt.Sprintf("0x%d", i), until)
			if err != nil {
				t.Error(err)
			}
			if ok {
				fresh.Store(i, true)
			}
		})
	}
	wg.Wait()
	n := 0
	fresh.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Fatalf("%d fresh spends of one challenge across replicas, want 1", n)
	}
	// The winner's reference is spent too, and nothing of the losers'.
	refs := query(t, url, `SELECT key FROM payments_spent WHERE kind = 'ref'`)
	if len(refs) != 1 {
		t.Fatalf("references recorded: %v", refs)
	}
	exp := query(t, url, `SELECT (extract(epoch FROM expires_at) * 1000000)::bigint FROM payments_spent`)
	for _, e := range exp {
		us, _ := strconv.ParseInt(e, 10, 64)
		if got := time.UnixMicro(us); !got.Equal(until.Add(ledgerMargin)) {
			t.Errorf("an entry expires at %v, want %v", got, until.Add(ledgerMargin))
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
