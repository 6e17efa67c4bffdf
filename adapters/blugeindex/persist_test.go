package blugeindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/perf/synth"
)

func openIndex(t *testing.T, dir string) *Index {
	t.Helper()
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// TestPersistedIndexResumesWithTheSameAnswers persists an index on disk that
// went through renames and removals, opens it again under its mark, and asks
// the dev golden set: the same hits, order and scores as a fresh index of
// the same resources, and the same lexicon. Changes after the restart read
// the resources they replace from the index on disk.
func TestPersistedIndexResumesWithTheSameAnswers(t *testing.T) {
	ctx := context.Background()
	golden := loadGolden(t)
	rs := loadCatalog(t)
	want := answers(t, newIndex(t, rs), golden)

	dir := t.TempDir()
	x := openIndex(t, dir)
	if ok, err := x.Resume(ctx, ""); ok || err != nil {
		t.Fatalf("a new index resumed: %v %v", ok, err)
	}
	renamed := slices.Clone(rs[:40])
	for i := range renamed {
		renamed[i].NameSV = "Provnamn " + renamed[i].NameSV
	}
	for _, step := range [][]core.Resource{rs[100:], renamed, rs[:100]} {
		if err := x.Upsert(ctx, step); err != nil {
			t.Fatal(err)
		}
	}
	if got := answers(t, x, golden); !slices.Equal(got, want) {
		t.Fatal("the index on disk answers differently from the one in memory")
	}
	mark, err := x.Persist(ctx)
	if err != nil || mark == "" {
		t.Fatalf("Persist: %q %v", mark, err)
	}
	if _, err := x.Search(ctx, core.TextQuery{Text: "betong"}); err != ErrClosed {
		t.Fatalf("search after Persist: %v, want ErrClosed", err)
	}

	y := openIndex(t, dir)
	if ok, err := y.Resume(ctx, mark); !ok || err != nil {
		t.Fatalf("Resume with the persisted mark: %v %v", ok, err)
	}
	if got := answers(t, y, golden); !slices.Equal(got, want) {
		t.Error("the resumed index answers differently")
	}
	sameLexicon(t, y.lex, x.lex)

	// A change after the restart: its old version comes from the disk.
	r := rs[7]
	r.NameSV = "Zebrafärgad skiva"
	if err := y.Upsert(ctx, []core.Resource{r}); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, y, core.TextQuery{Text: "zebrafärgad"}); len(hits) == 0 || hits[0].Key != r.Key() {
		t.Fatalf("the renamed resource is not found first: %v", hits)
	}
	if err := y.Remove(ctx, []core.Key{r.Key()}); err != nil {
		t.Fatal(err)
	}
	rest := slices.Concat(rs[:7], rs[8:])
	fresh := newIndex(t, rest)
	if got, want := answers(t, y, golden), answers(t, fresh, golden); !slices.Equal(got, want) {
		t.Error("after a change and a removal the resumed index answers differently from a fresh one")
	}
	sameLexicon(t, y.lex, fresh.lex)
}

// TestIndexNotResumedWithoutItsMark covers every way an index on disk may
// not match the store: the index is then emptied for a rebuild, and a
// rebuild answers as a fresh index.
func TestIndexNotResumedWithoutItsMark(t *testing.T) {
	ctx := context.Background()
	rs := loadCatalog(t)
	q := core.TextQuery{Text: "betong"}
	want := ids(search(t, newIndex(t, rs), q))

	persisted := func(t *testing.T) (string, string) {
		dir := t.TempDir()
		x := openIndex(t, dir)
		if err := x.Upsert(ctx, rs); err != nil {
			t.Fatal(err)
		}
		mark, err := x.Persist(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return dir, mark
	}
	for name, open := range map[string]func(t *testing.T) (*Index, string){
		"another mark": func(t *testing.T) (*Index, string) {
			dir, _ := persisted(t)
			return openIndex(t, dir), "0123"
		},
		"no mark from the store": func(t *testing.T) (*Index, string) {
			dir, _ := persisted(t)
			return openIndex(t, dir), ""
		},
		"closed without Persist (a crash)": func(t *testing.T) (*Index, string) {
			dir, mark := persisted(t)
			x := openIndex(t, dir)
			if err := x.Upsert(ctx, rs[:1]); err != nil {
				t.Fatal(err)
			}
			_ = x.Close()
			return openIndex(t, dir), mark // the snapshot was taken by the first open
		},
		"damaged snapshot": func(t *testing.T) (*Index, string) {
			dir, mark := persisted(t)
			path := filepath.Join(dir, snapshotFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0xff
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return openIndex(t, dir), mark
		},
		"truncated snapshot": func(t *testing.T) (*Index, string) {
			dir, mark := persisted(t)
			path := filepath.Join(dir, snapshotFile)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()-5); err != nil {
				t.Fatal(err)
			}
			return openIndex(t, dir), mark
		},
	} {
		t.Run(name, func(t *testing.T) {
			x, mark := open(t)
			if ok, err := x.Resume(ctx, mark); ok || err != nil {
				t.Fatalf("Resume: %v %v, want false", ok, err)
			}
			if hits := search(t, x, q); len(hits) != 0 {
				t.Fatalf("an index not resumed still answers %d hits", len(hits))
			}
			if err := x.Upsert(ctx, rs); err != nil {
				t.Fatal(err)
			}
			if got := ids(search(t, x, q)); !slices.Equal(got, want) {
				t.Errorf("rebuilt index answers %v, want %v", got, want)
			}
		})
	}
}

// TestInMemoryIndexPersistsNothing: the in-memory index has no mark to give.
func TestInMemoryIndexPersistsNothing(t *testing.T) {
	x := newIndex(t, loadCatalog(t)[:10])
	if mark, err := x.Persist(context.Background()); mark != "" || err != nil {
		t.Fatalf("Persist of an index in memory: %q %v", mark, err)
	}
}

// TestValidKept: a snapshot's words, names and thesaurus ids are used as
// they are read (string ids index the table, lengths cut slices), so a
// layout that does not hold is refused, packed or unpacked, and every
// document of a real index holds and unpacks to what it packed.
func TestValidKept(t *testing.T) {
	x := newIndex(t, loadCatalog(t))
	n := len(x.lex.strOf)
	withThes := 0
	for k, d := range x.lex.docs {
		if !validPacked(d.kept, n) {
			t.Fatalf("%s: %v refused", k, d.kept)
		}
		words, names, entries, heads := d.words(), d.names(), d.entries(), d.heads()
		if len(entries) > 0 {
			withThes++
			if !slices.IsSorted(entries) || len(heads) == 0 {
				t.Fatalf("%s: entries %v, heads %v", k, entries, heads)
			}
		}
		if repacked, _ := packKept(words, names, entries, heads, nil); !bytes.Equal(repacked, d.kept) {
			t.Fatalf("%s: packs again to %v, not %v", k, repacked, d.kept)
		}
	}
	if withThes == 0 {
		t.Fatal("no document of the real catalog keeps thesaurus ids")
	}
	for _, kept := range [][2][]uint32{
		{{0, 2, 5}, nil},                      // a word group longer than the words
		{{9, 1, 5}, nil},                      // a language out of range
		{{0, 1, uint32(n)}, nil},              // a word id out of the table
		{nil, {0, 3, 7, 0, 1}},                // a name unit's parts past its name
		{nil, {0, 2, uint32(n), 0}},           // a head out of the table
		{{0, 2, 5, uint32(n) - 1}, {0, 1, 8}}, // a name unit cut short
	} {
		if validKept(kept[0], kept[1], n) {
			t.Errorf("%v accepted", kept)
		}
	}
	if !validKept([]uint32{0, 1, 5}, []uint32{0, 3, 7, 1, 8}, n) {
		t.Error("a valid layout refused")
	}
	words, names := []uint32{0, 2, 5, 9}, []uint32{0, 3, 7, 1, 8}
	for _, thes := range [][2][]uint32{{nil, nil}, {{3, 9}, {0, 1, 7}}} {
		good, _ := packKept(words, names, thes[0], thes[1], nil)
		if !validPacked(good, n) {
			t.Fatalf("%v refused", good)
		}
	}
	good, _ := packKept(words, names, nil, nil, nil)
	for _, packed := range [][]byte{
		nil,
		good[:len(good)-1],                   // the names cut short
		{0x80},                               // a varint cut short
		{9, 0, 1, 5},                         // a words part past the end
		{3, 0, 5, 1, 0},                      // a group of five words in three bytes
		{0, 5, 0x80, 0x80, 0x80, 0x80, 0x10}, // a value over 32 bits
		{0, 0, 2, 7},                         // two entries, one there
		{0, 0, 1, 7, 0, 2, 5},                // a head group of one language cut short
		{0, 0, 0, 0, 1, 7},                   // heads without entries
		binary.AppendUvarint([]byte{0, 0, 1}, uint64(n)), // an entry out of the table
	} {
		if validPacked(packed, n) {
			t.Errorf("%v accepted", packed)
		}
	}
}

// BenchmarkReadSnapshot times reading the lexicon snapshot of SNAPSHOT_N
// (default 100,000) synthetic resources, the largest part of a restart's
// time to ready, and reports the snapshot's size and the CPU of a read
// (both cores decode). SNAPSHOT_FILE reads a snapshot a service kept at a
// clean stop instead (DATA_DIR/index/lexicon.snap; copy it first, a start
// removes it):
//
//	SNAPSHOT_N=300000 go test -run '^$' -bench ReadSnapshot -benchtime 5x ./adapters/blugeindex/
//	SNAPSHOT_FILE=/tmp/lexicon.snap go test -run '^$' -bench ReadSnapshot -benchtime 3x ./adapters/blugeindex/
func BenchmarkReadSnapshot(b *testing.B) {
	var snap []byte
	want := -1 // documents expected (a kept file's are not known)
	if path := os.Getenv("SNAPSHOT_FILE"); path != "" {
		var err error
		if snap, err = os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	} else {
		want = synth.Size(b, "SNAPSHOT_N", 100000)
		snap = synthSnapshot(b, want)
	}
	n := 0
	cpu := synth.CPUTime()
	for b.Loop() {
		lex, _, err := readSnapshot(snap)
		if err != nil {
			b.Fatal(err)
		}
		if n = len(lex.docs); want >= 0 && n != want {
			b.Fatalf("read %d documents of %d", n, want)
		}
	}
	b.ReportMetric(float64((synth.CPUTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(len(snap))/float64(n), "snapshot-B/resource")
}

// synthSnapshot is the snapshot of an index of n synthetic resources.
func synthSnapshot(b *testing.B, n int) []byte {
	x, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	for from := 0; from < n; from += 10000 {
		if err := x.Upsert(context.Background(), synthResources(b, from, min(10000, n-from))); err != nil {
			b.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, "mark", x.lex); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
