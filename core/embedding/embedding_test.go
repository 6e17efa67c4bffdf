package embedding

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// fakeEmbedder derives a vector from the text's hash; an empty text gets the
// zero vector (as the hash embedder gives a text without letters), and a
// batch with a text containing "fail" fails. With pair set, a call waits up
// to a second for a second call to be under way, to show batches overlap.
type fakeEmbedder struct {
	pair     bool
	inFlight atomic.Int32
	maxIn    atomic.Int32
	calls    atomic.Int32
}

func (f *fakeEmbedder) ID() string { return "fake" }
func (f *fakeEmbedder) Dim() int   { return ports.EmbeddingDim }
func (f *fakeEmbedder) EmbedQuery(ctx context.Context, t string) ([]float32, error) {
	return vecOf(t), nil
}

func (f *fakeEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	f.calls.Add(1)
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxIn.Load()
		if n <= m || f.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	if f.pair {
		for deadline := time.Now().Add(time.Second); f.maxIn.Load() < 2 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if strings.Contains(t, "fail") {
			return nil, errors.New("embedder down")
		}
		out[i] = vecOf(t)
	}
	return out, nil
}

func vecOf(t string) []float32 {
	v := make([]float32, ports.EmbeddingDim)
	if t == "" {
		return v
	}
	h := fnv.New64a()
	h.Write([]byte(t))
	x := h.Sum64()
	for i := range v {
		x = x*6364136223846793005 + 1442695040888963407
		v[i] = float32(int32(x>>32)) / (1 << 31)
	}
	return v
}

type fakeVectors struct {
	mu   sync.Mutex
	rows map[core.Key]ports.StoredVector
	puts int
}

func (f *fakeVectors) PutVectors(_ context.Context, _ string, vs []ports.StoredVector) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.puts++
	for _, v := range vs {
		f.rows[v.Key] = v
	}
	return nil
}

func (f *fakeVectors) ScanVectors(_ context.Context, _ string, fn func(ports.StoredVector) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range f.rows {
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeVectors) DropVectorsExcept(context.Context, string) (int, error) { return 0, nil }

// fakeIndex records what reaches the index and how (one by one or many).
type fakeIndex struct {
	mu    sync.Mutex
	vecs  map[core.Key][]float32
	one   int // Upsert calls
	many  int // UpsertMany calls
	fails map[core.Key]bool
}

func (f *fakeIndex) Upsert(_ context.Context, k core.Key, v []float32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.one++
	f.vecs[k] = v
	return nil
}

func (f *fakeIndex) UpsertMany(_ context.Context, vs []ports.StoredVector) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.many++
	n := 0
	var errs []error
	for _, v := range vs {
		if f.fails[v.Key] {
			errs = append(errs, fmt.Errorf("%s refused", v.Key))
			continue
		}
		f.vecs[v.Key] = v.Vec
		n++
	}
	return n, errors.Join(errs...)
}

func (f *fakeIndex) Remove(_ context.Context, keys []core.Key) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		delete(f.vecs, k)
	}
	return nil
}

func (f *fakeIndex) Search(context.Context, []float32, []core.CatalogID, int) ([]core.Scored, error) {
	return nil, nil
}

func (f *fakeIndex) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.vecs)
}

// fakeStore serves Scan from a slice; the rest of the port is not used.
type fakeStore struct {
	ports.ResourceStore
	stored []ports.StoredResource
	mark   string
	scans  atomic.Int32
}

func (f *fakeStore) IndexMark(context.Context) (string, error) { return f.mark, nil }

func (f *fakeStore) Scan(_ context.Context, cat core.CatalogID, fn func(ports.StoredResource) error) error {
	f.scans.Add(1)
	for _, sr := range f.stored {
		if sr.Resource.Catalog == cat {
			if err := fn(sr); err != nil {
				return err
			}
		}
	}
	return nil
}

func newFakes(e *fakeEmbedder) (*Syncer, *fakeVectors, *fakeIndex, *fakeStore) {
	vs := &fakeVectors{rows: map[core.Key]ports.StoredVector{}}
	ix := &fakeIndex{vecs: map[core.Key][]float32{}, fails: map[core.Key]bool{}}
	st := &fakeStore{}
	return New(e, vs, ix, st, slog.New(slog.DiscardHandler)), vs, ix, st
}

func resources(n int, name func(i int) string) []core.Resource {
	out := make([]core.Resource, n)
	for i := range out {
		cat := core.National
		if i%3 == 0 {
			cat = core.DKBR
		}
		out[i] = core.Resource{Catalog: cat, ID: fmt.Sprint(6000000000 + i), NameSV: name(i)}
	}
	return out
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestUpdate: every resource with text gets its vector stored and indexed,
// through UpsertMany; texts without letters are skipped; a failing batch
// and a vector the index refuses are reported, and the rest still lands.
func TestUpdate(t *testing.T) {
	e := &fakeEmbedder{}
	s, vs, ix, _ := newFakes(e)
	rs := resources(1000, func(i int) string {
		switch {
		case i%50 == 7:
			return "" // no text: no vector
		case i == 130:
			return "fail" // its whole batch (128..191) fails
		}
		return fmt.Sprintf("resurs %d", i)
	})
	refused := rs[500].Key()
	ix.fails[refused] = true
	ix.vecs[rs[999].Key()] = vecOf("old") // replaced
	ix.vecs[core.Key{Catalog: core.National, ID: "gone"}] = vecOf("gone")

	n, err := s.Update(context.Background(), rs, []core.Key{{Catalog: core.National, ID: "gone"}})
	if err == nil || !strings.Contains(err.Error(), "embedder down") || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Update error = %v, want the failed batch and the refused vector", err)
	}
	want := 0
	for i, r := range rs {
		_, stored := vs.rows[r.Key()]
		vec, indexed := ix.vecs[r.Key()]
		inFailed := i >= 128 && i < 192
		switch {
		case i%50 == 7 || inFailed:
			if stored || (indexed && i != 999) {
				t.Errorf("%d: stored %v, indexed %v, want neither", i, stored, indexed)
			}
		case r.Key() == refused:
			if !stored || indexed {
				t.Errorf("refused %d: stored %v, indexed %v", i, stored, indexed)
			}
		default:
			want++
			if !stored || !indexed || !equal(vec, vecOf(r.NameSV)) {
				t.Errorf("%d: stored %v, indexed %v", i, stored, indexed)
			}
			if vs.rows[r.Key()].Hash != core.ContentHash(&rs[i]) {
				t.Errorf("%d: stored with another hash", i)
			}
		}
	}
	if n != want {
		t.Errorf("Update = %d, want %d", n, want)
	}
	if _, ok := ix.vecs[core.Key{Catalog: core.National, ID: "gone"}]; ok {
		t.Error("a removed key is still indexed")
	}
	if ix.one != 0 || ix.many == 0 {
		t.Errorf("%d Upsert and %d UpsertMany calls, want batches only", ix.one, ix.many)
	}
}

// TestUpdateRepeatedKey: when a key comes twice, the later resource's
// vector is the one stored and indexed, as one by one.
func TestUpdateRepeatedKey(t *testing.T) {
	s, vs, ix, _ := newFakes(&fakeEmbedder{})
	rs := resources(300, func(i int) string { return fmt.Sprintf("resurs %d", i) })
	later := rs[5]
	later.NameSV = "senare"
	rs = append(rs, later)
	if _, err := s.Update(context.Background(), rs, nil); err != nil {
		t.Fatal(err)
	}
	if !equal(ix.vecs[later.Key()], vecOf("senare")) || !equal(vs.rows[later.Key()].Vec, vecOf("senare")) {
		t.Error("the earlier of two resources with one key won")
	}
}

// TestUpdateBatchesOverlap: with two cores, two batches are embedded at
// once.
func TestUpdateBatchesOverlap(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core")
	}
	e := &fakeEmbedder{pair: true}
	s, _, ix, _ := newFakes(e)
	rs := resources(4*batchSize, func(i int) string { return fmt.Sprintf("resurs %d", i) })
	n, err := s.Update(context.Background(), rs, nil)
	if err != nil || n != len(rs) || ix.Len() != len(rs) {
		t.Fatalf("Update = %d, %v; %d indexed", n, err, ix.Len())
	}
	if e.maxIn.Load() < 2 {
		t.Errorf("at most %d embedding calls at once, want 2", e.maxIn.Load())
	}
}

// getMany serves GetMany from the fake store's slice.
func (f *fakeStore) GetMany(_ context.Context, keys []core.Key) ([]ports.StoredResource, error) {
	var out []ports.StoredResource
	for _, k := range keys {
		for _, sr := range f.stored {
			if sr.Resource.Key() == k {
				out = append(out, sr)
			}
		}
	}
	return out, nil
}

// TestUpdateKeys: the resources are read from the store as they are
// embedded: the stored version gets its vector (with the stored content's
// hash), a withdrawn or missing one none.
func TestUpdateKeys(t *testing.T) {
	s, vs, ix, st := newFakes(&fakeEmbedder{})
	rs := resources(200, func(i int) string { return fmt.Sprintf("resurs %d", i) })
	keys := make([]core.Key, 0, len(rs)+1)
	for i, r := range rs {
		r.NameSV = fmt.Sprintf("lagrad %d", i) // what the store holds now
		r.Withdrawn = i == 17
		st.stored = append(st.stored, ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
		keys = append(keys, r.Key())
	}
	keys = append(keys, core.Key{Catalog: core.National, ID: "missing"})
	n, err := s.UpdateKeys(context.Background(), keys, nil)
	if err != nil || n != len(rs)-1 {
		t.Fatalf("UpdateKeys = %d, %v; want %d", n, err, len(rs)-1)
	}
	for i, sr := range st.stored {
		vec, indexed := ix.vecs[sr.Resource.Key()]
		if i == 17 {
			if indexed {
				t.Error("a withdrawn resource got a vector")
			}
			continue
		}
		if !indexed || !equal(vec, vecOf(sr.Resource.NameSV)) || vs.rows[sr.Resource.Key()].Hash != sr.Hash {
			t.Errorf("%d: indexed %v, or not from the stored version", i, indexed)
		}
	}
}

// TestWritingHoldsBatchesBack: while an ingest is being applied, no batch
// starts; once it is done, the update finishes.
func TestWritingHoldsBatchesBack(t *testing.T) {
	s, _, ix, _ := newFakes(&fakeEmbedder{})
	rs := resources(3*batchSize, func(i int) string { return fmt.Sprintf("resurs %d", i) })
	done := s.Writing()
	finished := make(chan int)
	go func() {
		n, _ := s.Update(context.Background(), rs, nil)
		finished <- n
	}()
	time.Sleep(50 * time.Millisecond)
	if got := ix.Len(); got != 0 {
		t.Errorf("%d vectors indexed while an ingest was being applied, want 0", got)
	}
	done()
	done() // a second call changes nothing
	select {
	case n := <-finished:
		if n != len(rs) {
			t.Errorf("Update = %d, want %d", n, len(rs))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Update still held back after the ingest was done")
	}
	if s.writes.Load() != 0 {
		t.Errorf("writes = %d after done", s.writes.Load())
	}
}

// TestBackgroundWaitsOutAWritesSettle: after a write, the background
// vectors (UpdateKeys) stay out for half as long as it took, at most
// maxSettle, so a bulk load's next batch finds the cores free (a short write
// ending just after does not cut it short); an ingest's own vectors (Update)
// do not wait, and the background ones go on after.
func TestBackgroundWaitsOutAWritesSettle(t *testing.T) {
	for took, want := range map[time.Duration]time.Duration{
		10 * time.Millisecond: 5 * time.Millisecond,
		time.Second:           500 * time.Millisecond,
		10 * time.Second:      maxSettle,
	} {
		if got := settleAfter(took); got != want {
			t.Errorf("settle after a write of %v = %v, want %v", took, got, want)
		}
	}
	s, _, ix, st := newFakes(&fakeEmbedder{})
	if s.held(true) || s.held(false) {
		t.Fatal("held before any write")
	}
	rs := resources(2*batchSize, func(i int) string { return fmt.Sprintf("resurs %d", i) })
	keys := make([]core.Key, len(rs))
	for i, r := range rs {
		st.stored = append(st.stored, ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
		keys[i] = r.Key()
	}
	done := s.Writing()
	time.Sleep(time.Second) // a settle of half a second
	done()
	s.Writing()()                     // a short write ending after the long one
	time.Sleep(50 * time.Millisecond) // past the short one's settle, not the long one's
	if !s.held(true) {
		t.Error("the background vectors go on right after a write of a second")
	}
	if s.held(false) {
		t.Error("an ingest's own vectors wait for a write that is done")
	}
	if n, err := s.UpdateKeys(context.Background(), keys, nil); err != nil || n != len(rs) || ix.Len() != len(rs) {
		t.Fatalf("UpdateKeys after the settle = %d, %v, %d indexed; want %d", n, err, ix.Len(), len(rs))
	}
	if s.held(true) {
		t.Error("still held after the settle")
	}
}

// TestBoot loads the stored vectors of unchanged live resources in one
// UpsertMany, embeds the changed and the missing, and skips the withdrawn.
func TestBoot(t *testing.T) {
	s, vs, ix, st := newFakes(&fakeEmbedder{})
	rs := resources(500, func(i int) string { return fmt.Sprintf("resurs %d", i) })
	for i := range rs {
		r := rs[i]
		if i%10 == 3 {
			r.Withdrawn = true
		}
		st.stored = append(st.stored, ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
		switch {
		case i < 400 && i%10 != 3:
			hash := core.ContentHash(&r)
			if i%7 == 0 {
				hash = "stale"
			}
			vs.rows[r.Key()] = ports.StoredVector{Key: r.Key(), Hash: hash, Vec: vecOf("stored " + r.NameSV)}
		}
	}
	loaded, computed, err := s.Boot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var wantLoaded, wantComputed int
	for i, r := range rs {
		vec, ok := ix.vecs[r.Key()]
		switch {
		case i%10 == 3:
			if ok {
				t.Errorf("withdrawn %d indexed", i)
			}
		case i < 400 && i%7 != 0:
			wantLoaded++
			if !equal(vec, vecOf("stored "+r.NameSV)) {
				t.Errorf("%d: the stored vector was not loaded", i)
			}
		default:
			wantComputed++
			if !equal(vec, vecOf(r.NameSV)) {
				t.Errorf("%d: not re-embedded", i)
			}
		}
	}
	if loaded != wantLoaded || computed != wantComputed {
		t.Errorf("Boot = %d loaded, %d computed; want %d, %d", loaded, computed, wantLoaded, wantComputed)
	}
	if ix.one != 0 {
		t.Errorf("%d vectors indexed one by one", ix.one)
	}
}
