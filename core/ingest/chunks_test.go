package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/embedder"
	"github.com/climatesearch/climatesearch/adapters/filereader"
	"github.com/climatesearch/climatesearch/adapters/hnsw"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/core/status"
	"github.com/climatesearch/climatesearch/ports"
)

// TestLargeChangeIndexedInChunksAppearsWhole applies releases larger than
// the index chunk (7 here, so a release of 50 is indexed in 8 changes)
// while readers search: inside a read, the index finds none or all of the
// release's resources, as many as the store holds under that release, and
// once the ingest answers it finds them all.
func TestLargeChangeIndexedInChunksAppearsWhole(t *testing.T) {
	ctx := context.Background()
	store, index := storeAndIndex(t)
	vis := core.NewVisibility()
	svc := ingest.New(ingest.Config{IndexChunk: 7, BatchChunk: -1}, store, index, vis, nil, noEvents{}, ingest.Sources{},
		quiet)

	const n = 50
	word := func(k int) string { return fmt.Sprintf("q%cx%c", 'a'+k, 'a'+(k*7+3)%26) }
	release := func(k int) core.Release {
		rel := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: fmt.Sprint("R", k)}
		for i := range n {
			v := float64(k)
			rel.Resources = append(rel.Resources, core.Resource{ID: fmt.Sprintf("#P%03d", i),
				NameDA: fmt.Sprintf("Prøvesten %s model %d", word(k), i), Unit: "kg", A1A3: &v})
		}
		return rel
	}
	keys := make([]core.Key, n)
	for i := range keys {
		keys[i] = core.Key{Catalog: core.DKBR, ID: fmt.Sprintf("#P%03d", i)}
	}
	found := func(k int) int {
		hits, err := index.Search(ctx, core.TextQuery{Text: word(k), Limit: 100})
		if err != nil {
			t.Error(err)
		}
		return len(hits)
	}

	if _, err := svc.Apply(ctx, release(1)); err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 2 {
		wg.Go(func() {
			for !done.Load() {
				err := vis.Read(nil, func() error {
					srs, err := store.GetMany(ctx, keys)
					if err != nil {
						return err
					}
					stored := map[int]int{}
					for _, sr := range srs {
						stored[int(*sr.Resource.A1A3)]++
					}
					for k := 1; k <= 4; k++ {
						if got := found(k); got != stored[k] || (got != 0 && got != n) {
							return fmt.Errorf("release %d: the index finds %d, the store holds %d", k, got, stored[k])
						}
					}
					return nil
				})
				reads.Add(1)
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for k := 2; k <= 4; k++ {
		res, err := svc.Apply(ctx, release(k))
		if err != nil {
			t.Fatal(err)
		}
		if res.Upserted != n {
			t.Fatalf("release %d upserted %d", k, res.Upserted)
		}
		if got := found(k); got != n {
			t.Fatalf("release %d answered with %d of %d searchable", k, got, n)
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if found(1) != 0 || found(3) != 0 || found(4) != n {
		t.Errorf("after the last release: %d %d %d", found(1), found(3), found(4))
	}
	t.Logf("%d reads during the ingests", reads.Load())
}

// TestLargeFileAppliedAsBefore: a file whose change is indexed in several
// chunks and embedded in the background (more than syncEmbedLimit
// resources), applied through the file path (which hands its resources
// over to the apply, and lets go of each once the index has it), answers
// and stores exactly what the same release applied by Apply does (which
// copies, and leaves the caller's release as it was); every resource is
// searchable when it answers, and every one gets its vector.
func TestLargeFileAppliedAsBefore(t *testing.T) {
	ctx := context.Background()
	const n = 2100 // above syncEmbedLimit: vectors in the background
	var csv strings.Builder
	csv.WriteString("id;navn;a1a3;enhed;masse\n")
	for i := range n {
		fmt.Fprintf(&csv, "#P%04d; Prøvesten\u200b %d ;%d,5;M3;%d\n", i, i, i, 100+i%7)
	}
	mapping := map[string]string{"id": "id", "name": "navn", "a1a3": "a1a3", "unit": "enhed", "conversion_value": "masse"}
	parser := filereader.Parser{}
	rel := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: "F1"}
	problems, err := parser.Map("p.csv", []byte(csv.String()), "", core.DKBR, mapping, "F1", 500, func(rs []core.Resource) error {
		rel.Resources = append(rel.Resources, rs...)
		return nil
	})
	if err != nil || len(problems) > 0 || len(rel.Resources) != n {
		t.Fatal(err, problems, len(rel.Resources))
	}
	before := make([]core.Resource, len(rel.Resources))
	for i, r := range rel.Resources {
		before[i] = r.Clone()
	}

	type run struct {
		res    core.IngestResult
		stored []ports.StoredResource
	}
	apply := func(viaFile bool) run {
		store, index := storeAndIndex(t)
		vec := embedding.New(embedder.NewHash(), store, hnsw.NewCatalogIndex(ports.EmbeddingDim), store, quiet)
		svc := ingest.New(ingest.Config{IndexChunk: 300, BatchChunk: -1}, store, index, core.NewVisibility(), vec, noEvents{}, ingest.Sources{}, quiet)
		t.Cleanup(func() { svc.Stop(); svc.Wait() })
		var res core.IngestResult
		if viaFile {
			files := ingest.NewFiles(svc, parser, nil)
			res, err = files.IngestFile(ctx, core.FileRequest{Catalog: core.DKBR, Filename: "p.csv", Data: []byte(csv.String()), Mapping: mapping, Version: "F1"})
		} else {
			res, err = svc.Apply(ctx, rel)
		}
		if err != nil {
			t.Fatal(err)
		}
		hits, err := index.Search(ctx, core.TextQuery{Text: "prøvesten", Limit: 2 * n})
		if err != nil || len(hits) != n {
			t.Fatalf("searchable when it answered: %d of %d (%v)", len(hits), n, err)
		}
		keys := make([]core.Key, n)
		for i := range keys {
			keys[i] = core.Key{Catalog: core.DKBR, ID: fmt.Sprintf("#P%04d", i)}
		}
		stored, err := store.GetMany(ctx, keys)
		if err != nil || len(stored) != n {
			t.Fatalf("stored %d of %d (%v)", len(stored), n, err)
		}
		// The backlog is counted before the answer and falls when the
		// queue has embedded the change.
		for deadline := time.Now().Add(time.Minute); vec.Backlog() > 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) { // a deadlock guard, not a measure
				t.Fatalf("vectors: backlog %d after a minute", vec.Backlog())
			}
		}
		if vec.Index().Len() != n {
			t.Fatalf("vectors: %d of %d", vec.Index().Len(), n)
		}
		res.StartedAt, res.FinishedAt = time.Time{}, time.Time{}
		return run{res, stored}
	}
	copied, moved := apply(false), apply(true)
	if !reflect.DeepEqual(copied.res, moved.res) {
		t.Errorf("answers differ:\nApply %+v\nfile  %+v", copied.res, moved.res)
	}
	if copied.res.Upserted != n {
		t.Errorf("upserted %d of %d", copied.res.Upserted, n)
	}
	if !reflect.DeepEqual(copied.stored, moved.stored) {
		t.Error("the file path stored other resources than Apply")
	}
	if got := moved.stored[7].Resource; got.NameDA != "Prøvesten 7" || got.Unit != "m³" || got.Conversions["kg/m³"] != 100+7%7 || *got.A1A3 != 7.5 {
		t.Errorf("stored %+v", got)
	}
	if !reflect.DeepEqual(before, rel.Resources) {
		t.Error("Apply changed the caller's release")
	}
}

// feedOf is a change feed that announces one change: srs, at counter 1.
type feedOf struct{ srs []ports.StoredResource }

func (f feedOf) Since(_ context.Context, _ core.CatalogID, after uint64, fn func(ports.StoredResource) error) (uint64, error) {
	if after >= 1 {
		return after, nil
	}
	for _, sr := range f.srs {
		if err := fn(sr); err != nil {
			return after, err
		}
	}
	return 1, nil
}

func (feedOf) Watch(ctx context.Context, _ func(core.CatalogID, uint64)) error {
	<-ctx.Done()
	return ctx.Err()
}

type freeLocks struct{}

func (freeLocks) TryLock(context.Context, string) (ports.HeldLock, bool, error) {
	return ports.HeldLock{Unlock: func() {}}, true, nil
}

// TestCatchUpOfALargeChangeIndexesItWhole: another replica's write larger
// than syncEmbedLimit and the index chunk, caught up before this replica's
// own write (which lets go of the change's records once the index has its
// chunks), is searchable whole when the write answers, and every resource
// gets its vector.
func TestCatchUpOfALargeChangeIndexesItWhole(t *testing.T) {
	ctx := context.Background()
	const n = 2100
	store, index := storeAndIndex(t)
	var srs []ports.StoredResource
	for i := range n {
		v := float64(i)
		r := core.Resource{ID: fmt.Sprintf("#O%04d", i), Catalog: core.DKBR, NameDA: fmt.Sprintf("Fjernsten %d", i), Unit: "kg", A1A3: &v,
			Source: core.CatalogInfo(core.DKBR).Source, Version: "O1"}
		srs = append(srs, ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
	}
	vec := embedding.New(embedder.NewHash(), store, hnsw.NewCatalogIndex(ports.EmbeddingDim), store, quiet)
	svc := ingest.New(ingest.Config{IndexChunk: 300, BatchChunk: -1, Feed: feedOf{srs}, Locks: freeLocks{}, FollowVectorWait: 200 * time.Millisecond}, store, index, core.NewVisibility(), vec,
		noEvents{}, ingest.Sources{}, quiet)
	t.Cleanup(func() { svc.Stop(); svc.Wait() })
	if _, err := svc.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	// The other replica's write, then this one's.
	if err := store.Apply(ctx, core.DKBR, ports.Changes{Put: srs}); err != nil {
		t.Fatal(err)
	}
	v := 1.0
	if _, err := svc.Apply(ctx, core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: "L1",
		Resources: []core.Resource{{ID: "#L1", NameDA: "Lokalsten", Unit: "kg", A1A3: &v}}}); err != nil {
		t.Fatal(err)
	}
	hits, err := index.Search(ctx, core.TextQuery{Text: "fjernsten", Limit: 2 * n})
	if err != nil || len(hits) != n {
		t.Fatalf("the other replica's change searchable: %d of %d (%v)", len(hits), n, err)
	}
	for deadline := time.Now().Add(time.Minute); vec.Backlog() > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) { // a deadlock guard, not a measure
			t.Fatalf("vectors: backlog %d after a minute", vec.Backlog())
		}
	}
	if vec.Index().Len() != n+1 {
		t.Fatalf("vectors: %d of %d", vec.Index().Len(), n+1)
	}
}

// countingReads counts the store's GetMany calls: the diff of a partial
// release reads each chunk's stored twins. Put fails from its failAt-th
// call of a chunked change on (0: never).
type countingReads struct {
	*badgerstore.Store
	reads  atomic.Int64
	failAt int
}

func (c *countingReads) GetMany(ctx context.Context, keys []core.Key) ([]ports.StoredResource, error) {
	c.reads.Add(1)
	return c.Store.GetMany(ctx, keys)
}

func (c *countingReads) BeginApply(ctx context.Context, catalog core.CatalogID) (ports.ChunkedApply, error) {
	tx, err := c.Store.BeginApply(ctx, catalog)
	return &failingPuts{ChunkedApply: tx, failAt: c.failAt}, err
}

type failingPuts struct {
	ports.ChunkedApply
	failAt, puts int
}

func (f *failingPuts) Put(ctx context.Context, put []ports.StoredResource) error {
	if f.puts++; f.failAt > 0 && f.puts >= f.failAt {
		return errors.New("disk full")
	}
	return f.ChunkedApply.Put(ctx, put)
}

// handing is the file reader, noting each chunk it hands over.
type handing struct {
	filereader.Parser
	handed func()
}

func (h handing) Map(filename string, data []byte, sheet string, catalog core.CatalogID, mapping map[string]string, version string, n int, each func([]core.Resource) error) ([]core.FileProblem, error) {
	return h.Parser.Map(filename, data, sheet, catalog, mapping, version, n, func(rs []core.Resource) error {
		h.handed()
		return each(rs)
	})
}

// TestFileDiffedAsItIsMapped: a problem on a file's last row refuses it
// whole before any chunk reaches the diff: nothing stored, nothing
// searchable. Without the problem the rows are mapped a chunk at a time as
// the diff takes them (each chunk's stored twins are read before the next
// chunk is mapped), so a large file is never held as all its resources,
// and the file applies whole, written and indexed a chunk at a time. A
// store that fails part way through leaves the store and the index as
// they were.
func TestFileDiffedAsItIsMapped(t *testing.T) {
	ctx := context.Background()
	store, index := storeAndIndex(t)
	counted := &countingReads{Store: store}
	svc := ingest.New(ingest.Config{IndexChunk: 50, BatchChunk: -1}, counted, index, core.NewVisibility(), nil, noEvents{}, ingest.Sources{}, quiet)
	var handed []int64 // the store reads done when each chunk was handed over
	files := ingest.NewFiles(svc, handing{handed: func() { handed = append(handed, counted.reads.Load()) }}, nil)
	const n = 500
	var good strings.Builder
	good.WriteString("id;navn;a1a3\n")
	for i := range n {
		fmt.Fprintf(&good, "#F%04d;Prøvesten %d;%d,5\n", i, i, i)
	}
	mapping := map[string]string{"id": "id", "name": "navn", "a1a3": "a1a3"}
	file := func(text string, dry bool) (core.IngestResult, error) {
		return files.IngestFile(ctx, core.FileRequest{Catalog: core.DKBR, Filename: "f.csv", Data: []byte(text), Mapping: mapping, Version: "F1", DryRun: dry})
	}
	searchable := func() int {
		hits, err := index.Search(ctx, core.TextQuery{Text: "prøvesten", Limit: 2 * n})
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}

	_, err := file(good.String()+"#F9999;Prøvesten sidst;ikke et tal\n", false)
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Kind != core.KindInvalid || len(ce.Problems) != 1 || ce.Problems[0].Row != n+2 {
		t.Fatalf("a file with a bad last row: %v", err)
	}
	if len(handed) != 0 {
		t.Errorf("the refused file handed %d chunks to the diff", len(handed))
	}
	if c, err := store.Count(ctx, core.DKBR); err != nil || c != 0 || searchable() != 0 {
		t.Fatalf("the refused file left %d stored, %d searchable (%v)", c, searchable(), err)
	}

	res, err := file(good.String(), true)
	if err != nil || !res.DryRun || res.Upserted != n || len(res.Changes) != n {
		t.Fatalf("dry run: %+v, %v", res, err)
	}
	handed = nil
	res, err = file(good.String(), false)
	if err != nil || res.Upserted != n || res.Version != "F1" || len(handed) != n/50 {
		t.Fatalf("apply: %+v, %v, %d chunks", res, err, len(handed))
	}
	for i := range handed {
		if handed[i] != handed[0]+int64(i) {
			t.Fatalf("store reads when each chunk was handed over: %v, want %d chunks, one read more for each (one chunk diffed before the next is mapped)", handed, n/50)
		}
	}
	if c, err := store.Count(ctx, core.DKBR); err != nil || c != n || searchable() != n {
		t.Fatalf("applied: %d stored, %d searchable (%v)", c, searchable(), err)
	}
	res, err = file(good.String(), false)
	if err != nil || res.Unchanged != n || res.Upserted != 0 {
		t.Fatalf("the same file again: %+v, %v", res, err)
	}

	// The store fails on the fourth chunk of a file that renames every
	// resource and adds 100: the answer says so, and the store and the
	// index hold the last file, nothing of this one.
	var renamed strings.Builder
	renamed.WriteString("id;navn;a1a3\n")
	for i := range n + 100 {
		fmt.Fprintf(&renamed, "#F%04d;Granitsten %d;%d,5\n", i, i, i)
	}
	counted.failAt = 4
	if _, err := file(renamed.String(), false); core.KindOf(err) != core.KindUnavailable || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("a write failing part way: %v", err)
	}
	stored, err := store.GetMany(ctx, []core.Key{{Catalog: core.DKBR, ID: "#F0000"}, {Catalog: core.DKBR, ID: "#F0549"}})
	if err != nil || len(stored) != 1 || stored[0].Resource.NameDA != "Prøvesten 0" {
		t.Fatalf("after the failed write the store holds %+v (%v)", stored, err)
	}
	hits, err := index.Search(ctx, core.TextQuery{Text: "granitsten", Limit: 2 * n})
	if err != nil || len(hits) != 0 || searchable() != n {
		t.Fatalf("after the failed write the index finds %d renamed and %d of the last file (%v)", len(hits), searchable(), err)
	}
	counted.failAt = 0
	if res, err := file(renamed.String(), false); err != nil || res.Upserted != n+100 {
		t.Fatalf("the renaming file once the store works: %+v, %v", res, err)
	}
	if hits, _ := index.Search(ctx, core.TextQuery{Text: "granitsten", Limit: 2 * n}); len(hits) != n+100 || searchable() != 0 {
		t.Fatalf("renamed: %d found, %d under the old name", len(hits), searchable())
	}
}

// TestFileAppliedBesideReaders: a file is read, diffed, written and
// indexed beside readers. While its last chunk is mapped, a reader gets
// through and finds the last file whole (before, every chunk after the
// first was mapped, diffed, written and indexed inside the publication,
// so readers waited for the whole file; later, a file whose change
// outgrew one index chunk still held them for its index work): a file
// sent again with a few rows changed, one in each of its chunks; the same
// file again; one whose change outgrows one index chunk only in its last
// chunks; the same rows under a new version, written a chunk at a time
// (every record changes, none of the index); one that renames every row
// (the index takes it in parts). Each one's changes are searchable once it
// answers, and whole.
func TestFileAppliedBesideReaders(t *testing.T) {
	ctx := context.Background()
	store, index := storeAndIndex(t)
	vis := core.NewVisibility()
	svc := ingest.New(ingest.Config{IndexChunk: 50, BatchChunk: -1}, store, index, vis, nil, noEvents{}, ingest.Sources{}, quiet)
	var readers sync.WaitGroup
	defer readers.Wait()
	var handed int
	probeAt := 0 // the chunk whose mapping a reader probes (0: none)
	var probed, held bool
	var seen string            // what the probing reader found (peek)
	renamed := func() string { // how many resources are found under the new name
		hits, err := index.Search(ctx, core.TextQuery{Text: "kalksten", Limit: 1000})
		if err != nil {
			t.Error(err)
		}
		return strconv.Itoa(len(hits))
	}
	peek := renamed
	probe := func() {
		if handed++; handed != probeAt {
			return
		}
		probed = true
		done := make(chan struct{})
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer close(done)
			_ = vis.Read(nil, func() error {
				seen = peek()
				return nil
			})
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second): // the reader waits for the publication, which waits for this chunk
			held = true
		}
	}
	files := ingest.NewFiles(svc, handing{handed: probe}, nil)
	mapping := map[string]string{"id": "id", "name": "navn", "a1a3": "a1a3"}
	version := "K1"
	file := func(rows int, name func(i int) string) core.IngestResult {
		t.Helper()
		var b strings.Builder
		b.WriteString("id;navn;a1a3\n")
		for i := range rows {
			fmt.Fprintf(&b, "#K%04d;%s;%d,5\n", i, name(i), i)
		}
		handed, probed, held, seen = 0, false, false, ""
		res, err := files.IngestFile(ctx, core.FileRequest{Catalog: core.DKBR, Filename: "k.csv", Data: []byte(b.String()), Mapping: mapping, Version: version})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	found := func(q string) int {
		hits, err := index.Search(ctx, core.TextQuery{Text: q, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}
	plain := func(i int) string { return fmt.Sprintf("Teglsten %d", i) }
	// One row in each chunk of 50 renamed.
	someRenamed := func(i int) string {
		if i%50 == 7 {
			return fmt.Sprintf("Kalksten %d", i)
		}
		return plain(i)
	}
	// And 100 rows more.
	grown := func(i int) string {
		if i >= 500 {
			return fmt.Sprintf("Marmor %d", i)
		}
		return someRenamed(i)
	}
	if res := file(500, plain); res.Upserted != 500 {
		t.Fatalf("first file: %+v", res)
	}

	// One row in each chunk renamed; a reader probes while the last chunk
	// is mapped.
	probeAt = 10
	res := file(500, someRenamed)
	if !probed || held {
		t.Fatalf("a reader was held back while the file's last chunk was mapped (probed %v): the diff ran inside the publication", probed)
	}
	if seen != "0" {
		t.Errorf("the reader during the diff found %s renamed resources, want the last file whole (0)", seen)
	}
	if res.Upserted != 10 || res.Unchanged != 490 || found("kalksten") != 10 || found("teglsten") != 490 {
		t.Fatalf("the file with a few changes: %+v; %d found under the new name, %d under the old", res, found("kalksten"), found("teglsten"))
	}

	// Sent again unchanged: nothing written, no reader held.
	probeAt = 10
	res = file(500, someRenamed)
	if !probed || held || seen != "10" || res.Unchanged != 500 || res.Upserted != 0 {
		t.Fatalf("the same file again: %+v, reader probed %v, held %v, found %s", res, probed, held, seen)
	}

	// 100 new rows at the end: the change outgrows one chunk (50) only
	// once the file is read, and is written whole.
	probeAt = 0
	res = file(600, grown)
	if res.Upserted != 100 || res.Unchanged != 500 || found("marmor") != 100 {
		t.Fatalf("a file that adds 100 rows at its end: %+v, %d of them found", res, found("marmor"))
	}
	if c, err := store.Count(ctx, core.DKBR); err != nil || c != 600 {
		t.Fatalf("stored %d (%v), want 600", c, err)
	}

	// The same rows under a new version: every record is written again, a
	// chunk at a time, while readers read the last file.
	versionOf := func(id string) string {
		r, _, err := store.Get(ctx, core.Key{Catalog: core.DKBR, ID: id})
		if err != nil {
			t.Error(err)
		}
		return r.Resource.Version
	}
	peek = func() string { return versionOf("#K0000") } // written in the first chunk
	version, probeAt = "K22", 12
	res = file(600, grown)
	if !probed || held {
		t.Fatalf("a reader was held back while a new version's last chunk was mapped (probed %v)", probed)
	}
	if seen != "K1" {
		t.Errorf("the reader during the new version read version %q, want the last file's K1", seen)
	}
	if res.Unchanged != 600 || versionOf("#K0000") != "K22" || versionOf("#K0599") != "K22" || found("marmor") != 100 {
		t.Fatalf("the new version: %+v, versions %s and %s", res, versionOf("#K0000"), versionOf("#K0599"))
	}

	// Every row renamed: the change outgrows one index chunk from the
	// file's second chunk on, and the index takes it a part at a time,
	// still beside readers, who find the last file whole while the last
	// chunk is mapped.
	peek, probeAt = renamed, 12
	res = file(600, func(i int) string { return fmt.Sprintf("Kalksten %d", i) })
	if !probed || held {
		t.Fatalf("a reader was held back while a renaming file's last chunk was mapped (probed %v): the index took it inside the publication", probed)
	}
	if seen != "10" {
		t.Errorf("the reader during the renaming file found %s renamed resources, want the last file's 10", seen)
	}
	if res.Upserted != 590 || found("kalksten") != 600 || found("teglsten")+found("marmor") != 0 {
		t.Fatalf("the renaming file: %+v; %d found under the new name, %d under the old ones", res, found("kalksten"), found("teglsten")+found("marmor"))
	}
}

// scans counts the store's Scan calls of dkbr.
type scans struct {
	*badgerstore.Store
	n atomic.Int64
}

func (s *scans) Scan(ctx context.Context, c core.CatalogID, fn func(ports.StoredResource) error) error {
	if c == core.DKBR {
		s.n.Add(1)
	}
	return s.Store.Scan(ctx, c, fn)
}

// TestCountsKeptByEveryIngest: the catalog's live and withdrawn counts,
// kept in its meta by every ingest (a batch that adds, changes and revives,
// a file written a chunk at a time, a complete release that withdraws),
// equal a scan of the store; a store written before they were kept is
// counted once by its next ingest; a dry run changes nothing; and the
// catalogs' overview (the console, the metrics) reads them without
// scanning the catalog.
func TestCountsKeptByEveryIngest(t *testing.T) {
	ctx := context.Background()
	store, index := storeAndIndex(t)
	counted := &scans{Store: store}
	svc := ingest.New(ingest.Config{IndexChunk: 50, BatchChunk: -1}, counted, index, core.NewVisibility(), nil, noEvents{}, ingest.Sources{}, quiet)
	files := ingest.NewFiles(svc, filereader.Parser{}, nil)
	resource := func(id, name string, withdrawn bool) core.Resource {
		v := 1.0
		return core.Resource{ID: id, Catalog: core.DKBR, NameDA: name, Unit: "kg", A1A3: &v, Withdrawn: withdrawn, Source: core.CatalogInfo(core.DKBR).Source}
	}
	// A store written before the counts were kept: 10 live, 2 withdrawn.
	var old []ports.StoredResource
	for i := range 12 {
		r := resource(fmt.Sprintf("#O%02d", i), fmt.Sprint("Gammel ", i), i >= 10)
		old = append(old, ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)})
	}
	if err := store.Apply(ctx, core.DKBR, ports.Changes{Put: old}); err != nil {
		t.Fatal(err)
	}
	check := func(step string) core.CatalogCounts {
		t.Helper()
		var want core.CatalogCounts
		if err := store.Scan(ctx, core.DKBR, func(sr ports.StoredResource) error {
			if sr.Resource.Withdrawn {
				want.Withdrawn++
			} else {
				want.Live++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		meta, err := store.Meta(ctx, core.DKBR)
		if err != nil || meta.Counts == nil || *meta.Counts != want {
			t.Fatalf("%s: meta counts %+v, the store holds %+v (%v)", step, meta.Counts, want, err)
		}
		return want
	}

	batch := core.Release{Catalog: core.DKBR, Origin: core.OriginFile, Version: "B1", Resources: []core.Resource{
		resource("#N1", "Ny", false), resource("#O01", "Gammel 1 ændret", false), resource("#O10", "Gammel 10 tilbage", false)}}
	if _, err := svc.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if c := check("a batch on a store without counts"); c != (core.CatalogCounts{Live: 12, Withdrawn: 1}) {
		t.Fatalf("counts %+v", c)
	}
	var csv strings.Builder
	csv.WriteString("id;navn;a1a3\n")
	for i := range 600 {
		fmt.Fprintf(&csv, "#F%04d;Fil %d;%d\n", i, i, i)
	}
	req := core.FileRequest{Catalog: core.DKBR, Filename: "f.csv", Data: []byte(csv.String()), Version: "F1",
		Mapping: map[string]string{"id": "id", "name": "navn", "a1a3": "a1a3"}}
	dry := req
	dry.DryRun = true
	if _, err := files.IngestFile(ctx, dry); err != nil {
		t.Fatal(err)
	}
	check("a dry run")
	if _, err := files.IngestFile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if c := check("a file of 12 chunks"); c.Live != 612 {
		t.Fatalf("counts %+v", c)
	}
	keep := core.Release{Catalog: core.DKBR, Origin: core.OriginJSON, Version: "U1", Complete: true,
		Resources: []core.Resource{resource("#O02", "Gammel 2", false), resource("#O11", "Gammel 11 tilbage", false)}}
	if _, err := svc.Apply(ctx, keep); err != nil {
		t.Fatal(err)
	}
	if c := check("a complete release"); c != (core.CatalogCounts{Live: 2, Withdrawn: 611}) {
		t.Fatalf("counts %+v", c)
	}

	before := counted.n.Load()
	cs, err := status.New(counted, nil, "").Overview(ctx) // the console's and the metrics'

	if err != nil {
		t.Fatal(err)
	}
	if d := cs[1]; d.Catalog.ID != core.DKBR || d.Live != 2 || d.Withdrawn != 611 || counted.n.Load() != before {
		t.Fatalf("status: %s live %d withdrawn %d after %d scans", d.Catalog.ID, d.Live, d.Withdrawn, counted.n.Load()-before)
	}
}
