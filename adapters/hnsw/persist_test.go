package hnsw

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// keptIndex builds a CatalogIndex over two catalogs with deletions (some
// vacuumed, some still tombstones) and replaced vectors, one vector at a
// time so the graph is reproducible, and returns it with its queries.
func keptIndex(t *testing.T, path string) (*CatalogIndex, [][]float32, []core.Key) {
	t.Helper()
	c, err := OpenCatalogIndex(dim, path)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	n := 2600 // above DefaultExactBelow: graph searches, not scans
	if raceEnabled {
		n = 2100
	}
	vs := skewedVecs(r, n+300)
	ctx := context.Background()
	for i := range n {
		cat := core.National
		if i%5 == 0 {
			cat = core.DKBR
		}
		if err := c.Upsert(ctx, core.Key{Catalog: cat, ID: idOf(i)}, vs[i]); err != nil {
			t.Fatal(err)
		}
	}
	var gone []core.Key
	// A tenth and more of national: a vacuum runs and frees slots.
	for i := 1; i < n; i += 7 {
		if i%5 != 0 {
			gone = append(gone, core.Key{Catalog: core.National, ID: idOf(i)})
		}
	}
	if err := c.Remove(ctx, gone); err != nil {
		t.Fatal(err)
	}
	// Replaced vectors (reusing freed slots), then tombstones left as they are.
	for i := 0; i < 100; i++ {
		if err := c.Upsert(ctx, core.Key{Catalog: core.National, ID: idOf(2 + 7*i)}, vs[n+i]); err != nil {
			t.Fatal(err)
		}
	}
	var later []core.Key
	for i := 3; i < 400; i += 7 {
		if i%5 != 0 {
			later = append(later, core.Key{Catalog: core.National, ID: idOf(i)})
		}
	}
	if err := c.Remove(ctx, later); err != nil {
		t.Fatal(err)
	}
	if c.per[core.National].dead == 0 {
		t.Fatalf("the test wants tombstones: dead %d", c.per[core.National].dead)
	}
	return c, vs[n+100:], append(gone, later...)
}

func searchAll(t *testing.T, c *CatalogIndex, qs [][]float32) [][]core.Scored {
	t.Helper()
	var out [][]core.Scored
	for _, q := range qs {
		for _, cats := range [][]core.CatalogID{nil, {core.National}, {core.DKBR}} {
			for _, k := range []int{1, 10, 60} {
				got, err := c.Search(context.Background(), q, cats, k)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, got)
			}
		}
		for _, cat := range []core.CatalogID{core.National, core.DKBR} {
			var ex []core.Scored
			for _, r := range c.per[cat].Exact(q, 10) {
				ex = append(ex, core.Scored{Key: core.Key{Catalog: cat, ID: r.ID}, Score: float64(r.Score)})
			}
			out = append(out, ex)
		}
	}
	return out
}

// TestKeptGraphAnswersAsBefore: a graph persisted and taken up answers
// every query as before (the same neighbours, scores bit for bit), keeps
// its deletions, and goes on as the original would (the same graph after
// the same further inserts: free slots, tombstones and the level
// generator were kept).
func TestKeptGraphAnswersAsBefore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vectors.snap")
	c, qs, gone := keptIndex(t, path)
	before := searchAll(t, c, qs)
	lens := c.Lens()
	if err := c.Persist(ctx, "hash-v1", "mark-1"); err != nil {
		t.Fatal(err)
	}

	d, err := OpenCatalogIndex(dim, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the snapshot was not set aside at open: %v", err)
	}
	ok, err := d.Resume(ctx, "hash-v1", "mark-1")
	if !ok || err != nil {
		t.Fatalf("Resume: %v %v", ok, err)
	}
	if got := d.Lens(); !maps.Equal(got, lens) {
		t.Fatalf("lengths %v, before %v", got, lens)
	}
	after := searchAll(t, d, qs)
	if !slices.EqualFunc(before, after, slices.Equal) {
		t.Fatal("the graph taken up answers differently")
	}
	for _, k := range gone {
		if d.per[k.Catalog].Delete(k.ID) {
			t.Fatalf("%s was deleted before the stop but is there after", k)
		}
	}
	for _, ix := range []*Index{c.per[core.National], d.per[core.National]} {
		if ix.dead == 0 {
			t.Fatal("the tombstones were not kept")
		}
	}

	// The same further writes give the same graphs.
	r := rand.New(rand.NewPCG(9, 9))
	more := skewedVecs(r, 300)
	for _, x := range []*CatalogIndex{c, d} {
		for i, v := range more {
			if err := x.Upsert(ctx, core.Key{Catalog: core.National, ID: idOf(100000 + i)}, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := x.Remove(ctx, []core.Key{{Catalog: core.National, ID: idOf(4)}, {Catalog: core.DKBR, ID: idOf(5)}}); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.EqualFunc(searchAll(t, c, qs), searchAll(t, d, qs), slices.Equal) {
		t.Fatal("after the same writes the graph taken up answers differently")
	}

	// Taken up once: the file is gone.
	if ok, err := d.Resume(ctx, "hash-v1", "mark-1"); ok || err != nil {
		t.Fatalf("a second Resume: %v %v", ok, err)
	}
}

// TestKeptGraphRefused: another mark or embedder, an empty mark, a
// damaged or truncated file, and other parameters are not taken up; the
// index stays empty for a rebuild.
func TestKeptGraphRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "vectors.snap")
	c, _, _ := keptIndex(t, path)
	if err := c.Persist(ctx, "hash-v1", "mark-1"); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(at int) []byte {
		b := slices.Clone(good)
		b[at] ^= 0x10
		return b
	}
	cases := []struct {
		name           string
		file           []byte
		embedder, mark string
		wantErr        bool
	}{
		{"another mark", good, "hash-v1", "mark-2", false},
		{"no mark", good, "hash-v1", "", false},
		{"another embedder", good, "openai-x", "mark-1", false},
		{"a vector bit flipped", flip(len(good) / 2), "hash-v1", "mark-1", true},
		{"a link bit flipped", flip(len(good) - 4096), "hash-v1", "mark-1", true},
		{"the checksum flipped", flip(len(good) - 1), "hash-v1", "mark-1", true},
		{"the slot count flipped", flip(80), "hash-v1", "mark-1", true},
		{"truncated", good[:len(good)-1000], "hash-v1", "mark-1", true},
		{"truncated to the header", good[:40], "hash-v1", "mark-1", true},
		{"empty", nil, "hash-v1", "mark-1", true},
		{"another dimension", good, "hash-v1", "mark-1", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			d := dim
			if tc.name == "another dimension" {
				d = dim / 2
			}
			x, err := OpenCatalogIndex(d, path)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := x.Resume(ctx, tc.embedder, tc.mark)
			if ok || (err != nil) != tc.wantErr {
				t.Fatalf("Resume = %v, %v; want false and an error %v", ok, err, tc.wantErr)
			}
			if x.Len() != 0 {
				t.Fatalf("a refused snapshot left %d vectors", x.Len())
			}
			if _, err := os.Stat(path + ".taken"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a refused snapshot was kept: %v", err)
			}
		})
	}

	// Other parameters (M) than the graph was built with: refused.
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	r := newSnapReader(bytes.NewReader(good), int64(len(good)))
	h := readHeader(r)
	_ = r.str(1 << 10)
	if x := load(r, h.version, dim, Options{M: 8}); x != nil || !errors.Is(r.err, errSnapshot) {
		t.Fatalf("a graph of M 16 was loaded as M 8: %v", r.err)
	}
}

// TestInMemoryIndexKeepsNothing: NewCatalogIndex has no file.
func TestInMemoryIndexKeepsNothing(t *testing.T) {
	c := NewCatalogIndex(dim)
	if err := c.Persist(context.Background(), "e", "m"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Resume(context.Background(), "e", "m"); ok || err != nil {
		t.Fatalf("Resume %v %v", ok, err)
	}
	var _ ports.VectorSnapshots = c
}

// TestOpenClearsACutPersist: the temporary file of a Persist cut short is
// removed at the next open.
func TestOpenClearsACutPersist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vectors.snap")
	if err := os.WriteFile(path+".12345", []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCatalogIndex(dim, path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".12345"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("left: %v", err)
	}
}

// TestVersion1SnapshotIsTakenUp: a snapshot of the float32 format
// (version 1, before the int8 codes) is taken up, its vectors quantised as
// they are read, and answers as the graph it was written from. The
// version-1 file is this graph's own snapshot with each vector written
// back as float32 (its codes decoded), which is what quantises back to
// the same codes.
func TestVersion1SnapshotIsTakenUp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vectors.snap")
	c, qs, _ := keptIndex(t, path)
	before := searchAll(t, c, qs)
	if err := c.Persist(ctx, "hash-v1", "mark-1"); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := toVersion1(t, good)
	if len(old) <= len(good) {
		t.Fatalf("the version-1 file is %d bytes, the version-2 one %d", len(old), len(good))
	}
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := OpenCatalogIndex(dim, path)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := d.Resume(ctx, "hash-v1", "mark-1"); !ok || err != nil {
		t.Fatalf("Resume of version 1: %v %v", ok, err)
	}
	// Written back as float32 and rotated again, a vector comes out of
	// its quantisation with the same codes, or codes one step off where
	// float rounding crossed a half: scores may move in the last bits and
	// swap near ties, nothing more.
	after := searchAll(t, d, qs)
	for i := range before {
		if len(after[i]) != len(before[i]) {
			t.Fatalf("answer %d: %d hits, %d before", i, len(after[i]), len(before[i]))
		}
		for j, h := range after[i] {
			b := before[i][j]
			if math.Abs(h.Score-b.Score) > 1e-4 {
				t.Fatalf("answer %d hit %d: %v, before %v", i, j, h, b)
			}
		}
	}
}

// toVersion1 rewrites a version-2 snapshot in version 1's layout.
func toVersion1(t *testing.T, b []byte) []byte {
	t.Helper()
	r := newSnapReader(bytes.NewReader(b), int64(len(b)))
	var out bytes.Buffer
	w := newSnapWriter(&out)
	h := readHeader(r)
	if h.version != snapshotVersion {
		t.Fatalf("version %d", h.version)
	}
	old := h
	old.version = snapshotFloats
	writeHeader(w, old)
	words := func(n int) { s := make([]uint32, n); r.words(s); w.words(s) }
	for range h.catalogs {
		w.str(r.str(1 << 10))
		m := r.u32()
		w.u32(m)
		w.u32(r.u32())
		used := int(r.u32())
		w.u32(uint32(used))
		w.u64(r.u64())
		w.str(r.str(64))
		nfree := int(r.u32())
		w.u32(uint32(nfree))
		words(nfree)
		for range 2 { // states, levels
			s := make([]byte, used)
			r.bytes(s)
			w.bytes(s)
		}
		words(used) // id lengths
		total := r.u64()
		w.u64(total)
		ids := make([]byte, total)
		r.bytes(ids)
		w.bytes(ids)
		codes := make([]int8, used*h.dim)
		scales := make([]float32, used)
		r.bytes(codeBytes(codes))
		r.words(floatWords(scales))
		v, orig := make([]float32, h.dim), make([]float32, h.dim)
		rot := newRotation(h.dim)
		for s := range used {
			w.words(floatWords(rot.invert(decode(codes[s*h.dim:(s+1)*h.dim], scales[s], v), orig)))
		}
		words(used * (2*int(m) + 1))
		upper := r.u64()
		w.u64(upper)
		words(int(upper))
	}
	if err := r.check(); err != nil {
		t.Fatal(err)
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// invert writes to out the vector v is the rotation of (v is changed).
func (rt *rotation) invert(v, out []float32) []float32 {
	off := 0
	for _, n := range rt.blocks {
		hadamard(v[off : off+n]) // its own inverse
		off += n
	}
	for i, p := range rt.perm {
		out[p] = rt.sign[i] * v[i]
	}
	return out
}

// TestLoadRefusesAGraphThatMakesNoSense: a snapshot whose checksum holds
// but whose graph does not (a bug in the writer, or damage the checksum
// missed) is refused, not taken up with ids that repeat or links that
// point outside the graph. Each graph is damaged in memory and then saved
// as it is, so its checksum is right.
func TestLoadRefusesAGraphThatMakesNoSense(t *testing.T) {
	build := func() *Index {
		x := New(dim, Options{})
		for i, v := range skewedVecs(rand.New(rand.NewPCG(3, 4)), 60) {
			if err := x.Add("r"+strconv.Itoa(i), v); err != nil {
				t.Fatal(err)
			}
		}
		return x
	}
	upperSlot := func(x *Index) int {
		for s := range x.nodes {
			if x.nodes[s].level > 0 {
				return s
			}
		}
		t.Fatal("no node above layer 0")
		return 0
	}
	for _, tc := range []struct {
		name   string
		damage func(x *Index)
	}{
		{"as built", func(*Index) {}},
		{"a repeated id", func(x *Index) { x.nodes[7].id = x.nodes[3].id }},
		{"an empty id", func(x *Index) { x.nodes[5].id = "" }},
		{"a level past the cap", func(x *Index) { x.nodes[9].level = levelCap + 1 }},
		{"a layer-0 link past the slots", func(x *Index) { x.linkWords(4, 0)[1] = uint32(len(x.nodes) + 3) }},
		{"more layer-0 links than the list holds", func(x *Index) { x.linkWords(4, 0)[0] = uint32(x.m0 + 1) }},
		{"an upper link to a node below that layer", func(x *Index) {
			s := upperSlot(x)
			w := x.linkWords(uint32(s), 1)
			for o := range x.nodes {
				if x.nodes[o].level == 0 {
					w[0], w[1] = 1, uint32(o)
					return
				}
			}
		}},
		{"a level above its upper lists", func(x *Index) {
			s := upperSlot(x)
			x.nodes[s].level++
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := build()
			tc.damage(x)
			var buf bytes.Buffer
			w := newSnapWriter(&buf)
			x.save(w)
			if err := w.finish(); err != nil {
				t.Fatal(err)
			}
			r := newSnapReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			got := load(r, snapshotVersion, dim, Options{})
			if tc.name == "as built" {
				if got == nil || r.check() != nil || got.Len() != 60 {
					t.Fatalf("an undamaged graph was refused: %v", r.err)
				}
				return
			}
			if got != nil || !errors.Is(r.err, errSnapshot) {
				t.Fatalf("taken up (%v), error %v", got != nil, r.err)
			}
		})
	}
}
