package badgerstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/test/storetest"
)

func openT(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// full returns a resource with every field set (storetest.Full).
func full(c core.CatalogID, id string) ports.StoredResource { return storetest.Full(c, id) }

// TestApplyLimit checks that a batch of the largest size the API takes
// applies in one transaction (larger changes: journal_test.go).
func TestApplyLimit(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()

	// Copies of one full resource (about 1 KB of JSON, so its record goes
	// to the value log) under different ids; hashes do not matter here.
	base := full(core.National, "")
	puts := make([]ports.StoredResource, core.MaxBatchResources)
	for i := range puts {
		puts[i] = base
		puts[i].Resource.ID = fmt.Sprintf("r%06d", i)
	}
	if core.MaxBatchResources > oneTxnMax {
		t.Fatalf("a batch of %d resources is journaled (oneTxnMax %d)", core.MaxBatchResources, oneTxnMax)
	}
	if err := s.Apply(ctx, core.National, ports.Changes{Put: puts}); err != nil {
		t.Fatalf("Apply of %d resources: %v", core.MaxBatchResources, err)
	}
	if n, _ := s.Count(ctx, core.National); n != core.MaxBatchResources {
		t.Fatalf("Count = %d", n)
	}
}

func TestPingAfterClose(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ping after Close = %v", err)
	}
	// Every method fails the same way instead of reaching Badger, whose
	// iterators panic on a closed DB.
	if err := s.Scan(ctx, core.National, func(ports.StoredResource) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Scan after Close = %v", err)
	}
	if _, err := s.Count(ctx, core.National); !errors.Is(err, ErrClosed) {
		t.Fatalf("Count after Close = %v", err)
	}
	if err := s.Apply(ctx, core.National, ports.Changes{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Apply after Close = %v", err)
	}
}

// TestCloseWhileBusy closes the store under concurrent readers and writers:
// nothing may panic, and every call either works or reports ErrClosed.
func TestCloseWhileBusy(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	if err := s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{full(core.National, "a")}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 4)
	for i := range 4 {
		go func() {
			for {
				var err error
				if i%2 == 0 {
					_, err = s.Count(ctx, core.National)
				} else {
					err = s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{full(core.National, "a")}})
				}
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						done <- err
						return
					}
					done <- nil
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// A crash right after badger created a memtable file leaves it empty (seen
// once in CI: a child killed while rolling a journal back), and badger's
// open then fails on it after writing its header. Open tries once more,
// and the store opens with its data.
func TestOpenAfterACrashLeftAnEmptyMemtable(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	r := full(core.National, "kept")
	if err := s.Apply(context.Background(), core.National, ports.Changes{Put: []ports.StoredResource{r}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "00099.mem")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir)
	defer s.Close()
	got, found, err := s.Get(context.Background(), r.Resource.Key())
	if err != nil || !found || got.Hash != r.Hash {
		t.Fatalf("after reopening: found %v, hash %q (want %q), %v", found, got.Hash, r.Hash, err)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Fatalf("the empty memtable file is still there: %v", err)
	}
}

// TestFloat32VectorRecordsAreRead: vectors written before the half-precision
// records (float32s, no flag) are read as they were written.
func TestFloat32VectorRecordsAreRead(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	k := core.Key{Catalog: core.National, ID: "6000000001"}
	want := []float32{0.6, -0.8, 1e-9}
	old := []byte{2, 'h', '1'}
	for _, f := range want {
		old = binary.LittleEndian.AppendUint32(old, math.Float32bits(f))
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(vecKey("e", k), old) }); err != nil {
		t.Fatal(err)
	}
	if err := s.PutVectors(context.Background(), "e", []ports.StoredVector{{Key: core.Key{Catalog: core.DKBR, ID: "#G1"}, Hash: "h2", Vec: want}}); err != nil {
		t.Fatal(err)
	}
	got := map[core.Key]ports.StoredVector{}
	if err := s.ScanVectors(context.Background(), "e", func(v ports.StoredVector) error { got[v.Key] = v; return nil }); err != nil {
		t.Fatal(err)
	}
	if v := got[k]; v.Hash != "h1" || !slices.Equal(v.Vec, want) {
		t.Fatalf("the float32 record reads %+v, want %v", v, want)
	}
	half := got[core.Key{Catalog: core.DKBR, ID: "#G1"}]
	if half.Hash != "h2" || len(half.Vec) != 3 || half.Vec[0] == want[0] || math.Abs(float64(half.Vec[0]-want[0])) > 0.6/2048 {
		t.Fatalf("the half-precision record reads %+v, want %v to 2^-11", half, want)
	}
}

// TestLargeChangeEncodedOnEveryCore applies a change large enough to be
// encoded on several cores (encodeRecords): every record reads back under
// its own id; a record that cannot be encoded fails the change, which
// writes nothing.
func TestLargeChangeEncodedOnEveryCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()
	const n = 3*parallelEncodeMin + 7
	puts := make([]ports.StoredResource, n)
	keys := make([]core.Key, n)
	for i := range puts {
		puts[i] = full(core.National, fmt.Sprintf("r%05d", i))
		puts[i].Resource.NameSV = fmt.Sprintf("Skiva nummer %d", i)
		v := float64(i)
		puts[i].Resource.A1A3 = &v
		puts[i].Hash = core.ContentHash(&puts[i].Resource)
		keys[i] = puts[i].Resource.Key()
	}
	bad := slices.Clone(puts)
	nan := math.NaN()
	bad[n-3].Resource.A1A3 = &nan // the last worker's share
	if err := s.Apply(ctx, core.National, ports.Changes{Put: bad}); err == nil {
		t.Fatal("Apply of a change with a NaN value succeeded")
	}
	if c, _ := s.Count(ctx, core.National); c != 0 {
		t.Fatalf("the failed change left %d records", c)
	}
	if err := s.Apply(ctx, core.National, ports.Changes{Put: puts}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMany(ctx, keys)
	if err != nil || len(got) != n {
		t.Fatalf("GetMany: %d records, %v", len(got), err)
	}
	for _, g := range got {
		var i int
		if _, err := fmt.Sscanf(g.Resource.ID, "r%05d", &i); err != nil {
			t.Fatal(err)
		}
		if g.Resource.NameSV != puts[i].Resource.NameSV || *g.Resource.A1A3 != float64(i) || g.Hash != puts[i].Hash {
			t.Fatalf("%s reads back as %q, %v, %s", g.Resource.ID, g.Resource.NameSV, *g.Resource.A1A3, g.Hash)
		}
	}
}
