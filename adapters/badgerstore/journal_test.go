package badgerstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/storetest"
)

// TestLargeApplyIsWhole: a change of 150,000 resources, more entries than
// one Badger transaction takes, applies whole with its meta and event over
// a store holding some of them (undo entries with old records and without).
func TestLargeApplyIsWhole(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()
	const n = 150000
	for _, m := range []int{n, storetest.LargeChange} {
		if int64(m) <= s.db.MaxBatchCount() {
			t.Fatalf("%d resources fit in one transaction (limit %d): the test proves nothing", m, s.db.MaxBatchCount())
		}
	}
	gen := func(g, n int) []ports.StoredResource {
		puts := make([]ports.StoredResource, n)
		for i := range puts {
			puts[i].Resource = core.Resource{ID: fmt.Sprintf("r%06d", i), Catalog: core.National,
				NameSV: fmt.Sprintf("%d/%d", g, i)}
			puts[i].Hash = strconv.Itoa(g)
		}
		return puts
	}
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: gen(1, 5000)}))
	ev := core.Event{ID: "ev-large", Type: core.EventCatalogChanged, Catalog: core.National}
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: gen(2, n), Events: []core.Event{ev},
		Meta: &core.CatalogMeta{Catalog: core.National, Version: "2"}}))
	if c, err := s.Count(ctx, core.National); err != nil || c != n {
		t.Fatalf("Count = %d, %v; want %d", c, err, n)
	}
	for _, i := range []int{0, 4999, 5000, 77777, 104857, 104858, n - 1} {
		k := core.Key{Catalog: core.National, ID: fmt.Sprintf("r%06d", i)}
		got, found, err := s.Get(ctx, k)
		if err != nil || !found || got.Resource.NameSV != fmt.Sprintf("2/%d", i) || got.Hash != "2" {
			t.Fatalf("Get(%s) = %+v, %v, %v", k, got, found, err)
		}
	}
	if m, _ := s.Meta(ctx, core.National); m.Version != "2" {
		t.Fatalf("meta %+v", m)
	}
	if evs, err := s.Outbox(ctx); err != nil || len(evs) != 1 || evs[0].ID != ev.ID {
		t.Fatalf("outbox %+v, %v", evs, err)
	}
	if k := journalKeys(t, s); k != 0 {
		t.Fatalf("%d journal keys left", k)
	}
}

// journalKeys counts the keys under jnl/.
func journalKeys(t *testing.T, s *Store) int {
	t.Helper()
	// A chunked change drops its undo entries after its commit, holding
	// the catalogs' applyLocks until they are gone.
	for _, l := range s.applyLocks {
		l.Lock()
		l.Unlock() // empty on purpose: it waits
	}
	n, err := s.countKeys("", []byte(jnlPrefix))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// smallJournal makes every Apply of the test journaled, in transactions of
// 50 entries, so a few hundred resources take several of each step.
func smallJournal(t *testing.T) {
	oneTxn, chunk := oneTxnMax, journalChunk
	oneTxnMax, journalChunk = 0, 50
	if t != nil {
		t.Cleanup(func() { oneTxnMax, journalChunk, journalPoint = oneTxn, chunk, nil })
	}
}

// journalStore opens a store in a temporary directory with the small
// journal (smallJournal), closed at the test's end, holding generation 1
// of national.
func journalStore(t *testing.T) *Store {
	t.Helper()
	smallJournal(t)
	s := openT(t, t.TempDir())
	t.Cleanup(func() { _ = s.Close() })
	must(t, s.Apply(context.Background(), core.National, jgen(1)))
	return s
}

// jgen is the change of generation g of the journal tests: 100 + 100*g
// resources (each generation adds some, which a rollback must delete),
// every one's content depending on g, some records inline and some in the
// value log; its meta and one event.
func jgen(g int) ports.Changes {
	puts := make([]ports.StoredResource, 100+100*g)
	for i := range puts {
		r := core.Resource{ID: fmt.Sprintf("%05d", i), Catalog: core.National,
			NameSV:        fmt.Sprintf("resource %d generation %d", i, g),
			DescriptionSV: strings.Repeat("x", i%3*200),
			A1A3:          core.F(float64(g*1000 + i)), Version: strconv.Itoa(g)}
		puts[i] = ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)}
	}
	return ports.Changes{Put: puts, Meta: &core.CatalogMeta{Catalog: core.National, Version: strconv.Itoa(g)},
		Events: []core.Event{{ID: fmt.Sprintf("ev-%03d", g), Type: core.EventCatalogChanged, Catalog: core.National}}}
}

// checkGen fails unless s holds exactly generation g: its resources, its
// meta, the events of generations 1 to g, no journal key.
func checkGen(t *testing.T, s *Store, g int) {
	t.Helper()
	ctx := context.Background()
	if m, err := s.Meta(ctx, core.National); err != nil || m.Version != strconv.Itoa(g) {
		t.Fatalf("meta %+v, %v; want generation %d", m, err, g)
	}
	want := jgen(g).Put
	i := 0
	err := s.Scan(ctx, core.National, func(r ports.StoredResource) error {
		if i >= len(want) {
			return fmt.Errorf("resource %s beyond the %d of generation %d", r.Resource.ID, len(want), g)
		}
		if w := want[i]; r.Resource.ID != w.Resource.ID || r.Hash != w.Hash || r.Resource.NameSV != w.Resource.NameSV {
			return fmt.Errorf("resource %d: %s %q, want %s %q (generation %d)", i, r.Resource.ID, r.Resource.NameSV, w.Resource.ID, w.Resource.NameSV, g)
		}
		i++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i != len(want) {
		t.Fatalf("%d resources, want %d of generation %d", i, len(want), g)
	}
	evs, err := s.Outbox(ctx)
	if err != nil || len(evs) != g {
		t.Fatalf("outbox holds %d events (%v), want %d", len(evs), err, g)
	}
	for j, ev := range evs {
		if ev.ID != fmt.Sprintf("ev-%03d", j+1) {
			t.Fatalf("outbox event %d is %s", j, ev.ID)
		}
	}
	if k := journalKeys(t, s); k != 0 {
		t.Fatalf("%d journal keys left", k)
	}
}

// TestJournalErrorRollsBack: a journaled Apply that fails midway (its
// context cancelled between transactions, a record that cannot be encoded)
// leaves the old state, readable at once in the same process (the decoded
// cache included), and the next Apply works.
func TestJournalErrorRollsBack(t *testing.T) {
	s := journalStore(t)
	ctx := context.Background()
	checkGen(t, s, 1)
	for _, point := range []string{"undo 2", "marked", "new 1", "new 3", "commit"} {
		t.Run(point, func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			journalPoint = func(p string) {
				if p != point {
					return
				}
				// Read what the journal wrote so far: the decoded cache
				// must not serve it after the rollback.
				if _, _, err := s.Get(ctx, core.Key{Catalog: core.National, ID: "00000"}); err != nil {
					t.Error(err)
				}
				cancel()
			}
			err := s.Apply(cctx, core.National, jgen(2))
			journalPoint = nil
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Apply cancelled at %q = %v", point, err)
			}
			checkGen(t, s, 1)
		})
	}
	bad := jgen(2)
	bad.Put[len(bad.Put)-1].Resource.A1A3 = core.F(math.NaN()) // json refuses NaN
	if err := s.Apply(ctx, core.National, bad); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("Apply of an unencodable record = %v", err)
	}
	checkGen(t, s, 1)
	must(t, s.Apply(ctx, core.National, jgen(2)))
	checkGen(t, s, 2)
}

// TestTooBigForOneTransactionIsJournaled: a change under oneTxnMax that
// Badger still finds too big for one transaction is journaled instead of
// refused.
func TestTooBigForOneTransactionIsJournaled(t *testing.T) {
	old := oneTxnMax
	t.Cleanup(func() { oneTxnMax = old })
	oneTxnMax = math.MaxInt
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()
	huge := make([]ports.StoredResource, s.db.MaxBatchCount()+1)
	for i := range huge {
		huge[i].Resource = core.Resource{ID: fmt.Sprintf("huge%06d", i), Catalog: core.National}
	}
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: huge, Meta: &core.CatalogMeta{Catalog: core.National, Version: "huge"}}))
	if n, _ := s.Count(ctx, core.National); n != len(huge) {
		t.Fatalf("Count = %d, want %d", n, len(huge))
	}
	if m, _ := s.Meta(ctx, core.National); m.Version != "huge" {
		t.Fatalf("meta %+v", m)
	}
}

// TestBackupMidJournalRestoresWhole: a backup taken while a change is
// being journaled restores to the state before it.
func TestBackupMidJournalRestoresWhole(t *testing.T) {
	s := journalStore(t)
	ctx := context.Background()
	var backup bytes.Buffer
	journalPoint = func(p string) {
		if p == "new 2" {
			must(t, s.Backup(ctx, &backup))
		}
	}
	must(t, s.Apply(ctx, core.National, jgen(2)))
	journalPoint = nil
	checkGen(t, s, 2)

	dir := t.TempDir()
	must(t, Restore(dir, &backup, zap.NewNop()))
	// The restore rolled the change back itself: no journal in the files.
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	must(t, err)
	err = db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte(jnlPrefix)
		it := txn.NewIterator(opts)
		defer it.Close()
		if it.Rewind(); it.Valid() {
			return fmt.Errorf("journal key %q in the restored store", it.Item().Key())
		}
		return nil
	})
	must(t, errors.Join(err, db.Close()))
	r := openT(t, dir)
	defer r.Close()
	checkGen(t, r, 1)
}

// Environment of the journal crash child (TestJournalCrashHelper).
const (
	journalDirEnv   = "BADGERSTORE_JOURNAL_DIR"
	journalPointEnv = "BADGERSTORE_JOURNAL_POINT"
	journalGenEnv   = "BADGERSTORE_JOURNAL_GEN"     // absent: only open the store
	journalChunkEnv = "BADGERSTORE_JOURNAL_CHUNKED" // set: the generation goes through BeginApply
)

// TestJournalCrashHelper is the child of TestJournalCrash: it opens the
// store and applies one generation, journaled in small transactions, and
// stops dead (waiting for its SIGKILL) at the named point of the journal or
// of Open's recovery.
func TestJournalCrashHelper(t *testing.T) {
	dir := os.Getenv(journalDirEnv)
	if dir == "" {
		return
	}
	smallJournal(nil)
	point := os.Getenv(journalPointEnv)
	journalPoint = func(p string) {
		if p == point {
			fmt.Printf("at %s\n", p) // os.Stdout is unbuffered
			time.Sleep(time.Hour)
		}
	}
	s, err := Open(dir, zap.NewNop())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if g, err := strconv.Atoi(os.Getenv(journalGenEnv)); err == nil {
		apply := s.Apply
		if os.Getenv(journalChunkEnv) != "" {
			apply = s.applyInChunks
		}
		if err := apply(context.Background(), core.National, jgen(g)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	// Closing waits for a chunked change's cleanup, which runs after its
	// commit returns.
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("done")
	os.Exit(0)
}

// crashAt runs the child on dir (applying generation gen, or only opening
// the store when gen is 0) and kills it with SIGKILL once it stands at
// point.
func crashAt(t *testing.T, dir, point string, gen int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestJournalCrashHelper$")
	cmd.Env = append(os.Environ(), journalDirEnv+"="+dir, journalPointEnv+"="+point)
	if gen > 0 {
		cmd.Env = append(cmd.Env, journalGenEnv+"="+strconv.Itoa(gen))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	select {
	case l := <-lines:
		if l != "at "+point {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("child said %q before reaching %q: %s", l, point, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child never reached %q: %s", point, stderr.String())
	}
	must(t, cmd.Process.Kill()) // SIGKILL: nothing of the process runs on
	for range lines {
	}
	_ = cmd.Wait()
}

// TestJournalCrash kills a process at points of a journaled Apply and of
// the rollback at the next Open: the store reopens holding exactly the old
// generation (the new one once the commit point is passed), and the next
// Apply works.
func TestJournalCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	smallJournal(t)
	crashCases(t, []crashCase{
		{point: "undo 1", want: 1},
		{point: "undo 3", want: 1},
		{point: "marked", want: 1},
		{point: "new 1", want: 1},
		{point: "new 4", want: 1},
		{point: "commit", want: 1},
		{point: "committed", want: 2},
		{point: "cleanup 2", want: 2},
		{point: "new 3", want: 1, reopen: "restore 1"},
		{point: "new 3", want: 1, reopen: "restored"},
		{point: "new 3", want: 1, reopen: "cleanup 1"},
	})
}

// crashCase kills the child applying generation 2 over generation 1 at
// point, and then, when reopen is set, the next Open at reopen; the store
// must then hold generation want.
type crashCase struct {
	point  string
	want   int
	reopen string // a point to crash the recovery at, at the next Open
}

// crashCases runs each case on a store of its own and checks that the
// store holds generation want and that the next Apply works.
func crashCases(t *testing.T, cases []crashCase) {
	for _, tc := range cases {
		name := tc.point
		if tc.reopen != "" {
			name += ", then " + tc.reopen
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openT(t, dir)
			must(t, s.Apply(context.Background(), core.National, jgen(1)))
			must(t, s.Close())
			crashAt(t, dir, tc.point, 2)
			if tc.reopen != "" {
				crashAt(t, dir, tc.reopen, 0)
			}
			s = openT(t, dir)
			defer s.Close()
			checkGen(t, s, tc.want)
			must(t, s.Apply(context.Background(), core.National, jgen(3)))
			if tc.want == 1 {
				// Generation 2's event was rolled back with it: record
				// it, so the outbox reads as checkGen expects (in id order).
				must(t, s.RecordEvent(context.Background(), jgen(2).Events[0]))
			}
			checkGen(t, s, 3)
		})
	}
}

// TestTornCatalogRollsBackBeforeASmallApply: when a journaled Apply failed
// and so did its rollback, the catalog is torn: the next Apply, however
// small, rolls the journal back first instead of writing over the half of
// the failed change (which a later rollback would then undo with it).
func TestTornCatalogRollsBackBeforeASmallApply(t *testing.T) {
	smallJournal(t)
	dir := t.TempDir()
	s := openT(t, dir)
	ctx := context.Background()
	must(t, s.Apply(ctx, core.National, jgen(1)))
	// A failed change whose rollback failed too: stopped midway (the
	// journal left as a crash leaves it), and marked as the failed
	// rollback marks it.
	stop := errors.New("stopped midway")
	func() {
		defer func() {
			if r := recover(); r != stop {
				t.Fatalf("recovered %v", r)
			}
		}()
		journalPoint = func(p string) {
			if p == "new 1" {
				panic(stop)
			}
		}
		_ = s.Apply(ctx, core.National, jgen(3))
	}()
	journalPoint = nil
	if journalKeys(t, s) == 0 {
		t.Fatal("no journal left to roll back")
	}
	s.torn[core.National] = true
	oneTxnMax = 100000 // generation 2 would be one transaction
	must(t, s.Apply(ctx, core.National, jgen(2)))
	checkGen(t, s, 2)
	must(t, s.Close())
	s = openT(t, dir)
	defer s.Close()
	checkGen(t, s, 2)
}
