package storetest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

func testVectors(t *testing.T, b Backend) {
	ctx := context.Background()
	st := b.Open(t)
	a := ports.StoredVector{Key: core.Key{Catalog: core.National, ID: "6000000000"}, Hash: "h1", Vec: []float32{0.6, -0.8, 0}}
	bv := ports.StoredVector{Key: core.Key{Catalog: core.DKBR, ID: "#G0164"}, Hash: "h2", Vec: []float32{1, 0, 0}}
	must(t, st.PutVectors(ctx, "openai:BAAI/bge-m3:320", []ports.StoredVector{a, bv}))
	must(t, st.PutVectors(ctx, "hash-ngram-v1-320", []ports.StoredVector{a}))
	must(t, st.PutVectors(ctx, "hash-ngram-v1-320", nil))
	must(t, st.Close())
	st = open(t, b)
	var got []ports.StoredVector
	err := st.ScanVectors(ctx, "openai:BAAI/bge-m3:320", func(v ports.StoredVector) error { got = append(got, v); return nil })
	if err != nil || len(got) != 2 {
		t.Fatalf("scan: %v %v", got, err)
	}
	for _, v := range got {
		want := a
		if v.Key.Catalog == core.DKBR {
			want = bv
		}
		if v.Key != want.Key || v.Hash != want.Hash || len(v.Vec) != 3 || !nearly(v.Vec, want.Vec) {
			t.Fatalf("vector %+v, want %+v", v, want)
		}
	}
	// A vector put again replaces the earlier one; of a key given twice in
	// one call the last wins.
	moved := a
	moved.Hash, moved.Vec = "h3", []float32{0, 1, 0}
	last := moved
	last.Hash = "h4"
	must(t, st.PutVectors(ctx, "openai:BAAI/bge-m3:320", []ports.StoredVector{moved, last}))
	got = nil
	must(t, st.ScanVectors(ctx, "openai:BAAI/bge-m3:320", func(v ports.StoredVector) error { got = append(got, v); return nil }))
	if len(got) != 2 {
		t.Fatalf("after replacing: %d vectors", len(got))
	}
	for _, v := range got {
		if v.Key == a.Key && (v.Hash != "h4" || v.Vec[1] != 1) {
			t.Fatalf("replaced vector = %+v", v)
		}
	}

	n, err := st.DropVectorsExcept(ctx, "hash-ngram-v1-320")
	if err != nil || n != 2 {
		t.Fatalf("drop: %d %v", n, err)
	}
	count := 0
	_ = st.ScanVectors(ctx, "openai:BAAI/bge-m3:320", func(ports.StoredVector) error { count++; return nil })
	_ = st.ScanVectors(ctx, "hash-ngram-v1-320", func(ports.StoredVector) error { count += 10; return nil })
	if count != 10 {
		t.Fatalf("after drop: only the hash embedder's vector remains, count code %d", count)
	}
}

// nearly reports whether a vector came back as it was put, to half
// precision (a relative error of at most 2^-11 per coordinate): what a
// VectorStore promises, so a store may keep float16s.
func nearly(got, want []float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > math.Abs(float64(want[i]))/2048 {
			return false
		}
	}
	return true
}

func testStash(t *testing.T, b Backend) {
	ctx := context.Background()
	st := b.Open(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), (5<<20)/16+3) // 5 MiB + 48 bytes
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	must(t, st.Stash(ctx, "pv_big", core.StashedFile{Filename: "tabel7.xlsx", Data: big, StashedAt: at}, time.Hour))
	must(t, st.Stash(ctx, "pv_short", core.StashedFile{Filename: "a.csv", Data: []byte("id\n1\n")}, time.Second))
	must(t, st.Close())
	st = open(t, b)
	f, found, err := st.Stashed(ctx, "pv_big")
	if err != nil || !found || f.Filename != "tabel7.xlsx" || !bytes.Equal(f.Data, big) || !f.StashedAt.Equal(at) {
		t.Fatalf("after restart: found %v, %d bytes, stashed at %v, %v", found, len(f.Data), f.StashedAt, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, found, err := st.Stashed(ctx, "pv_short")
		must(t, err)
		if !found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a stashed file outlived its TTL")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, found, _ := st.Stashed(ctx, "pv_none"); found {
		t.Fatal("unknown id found")
	}
}

func testLedgerSpendsOnce(t *testing.T, b Backend) {
	ctx := context.Background()
	st := open(t, b)
	until := time.Now().Add(5 * time.Minute)
	for _, c := range []struct {
		id, ref string
		fresh   bool
	}{
		{"ch1", "0xaaa", true},
		{"ch1", "0xaaa", false}, // the same credential again
		{"ch2", "0xaaa", false}, // the same payment for another challenge
		{"ch1", "0xbbb", false}, // the same challenge paid again
		{"ch3", "0xbbb", true},  // nothing recorded by the refused spends
		{"ch4", "", true},       // no reference: the challenge alone
		{"ch4", "0xccc", false},
	} {
		fresh, err := st.Spend(ctx, c.id, c.ref, until)
		if err != nil || fresh != c.fresh {
			t.Errorf("Spend(%s, %s) = %v, %v; want %v", c.id, c.ref, fresh, err, c.fresh)
		}
	}
	if fresh, err := st.Spend(ctx, "ch5", "0xccc", until); err != nil || !fresh {
		t.Errorf("0xccc was recorded by a refused spend: %v %v", fresh, err)
	}
	if _, err := st.Spend(ctx, "", "0xddd", until); err == nil {
		t.Error("empty challenge id accepted")
	}
}

// A restart does not reopen a replay: the ledger is durable.
func testLedgerSurvivesReopen(t *testing.T, b Backend) {
	ctx := context.Background()
	st := b.Open(t)
	until := time.Now().Add(5 * time.Minute)
	if fresh, err := st.Spend(ctx, "ch1", "0xaaa", until); err != nil || !fresh {
		t.Fatalf("first spend: %v %v", fresh, err)
	}
	must(t, st.Close())
	if _, err := st.Spend(ctx, "ch9", "0x999", until); err == nil {
		t.Error("spend on a closed store")
	}
	st = open(t, b)
	for _, c := range [][2]string{{"ch1", "0xnew"}, {"ch2", "0xaaa"}} {
		if fresh, err := st.Spend(ctx, c[0], c[1], until); err != nil || fresh {
			t.Errorf("after reopen Spend(%s, %s) = %v, %v; want not fresh", c[0], c[1], fresh, err)
		}
	}
}

// A challenge that already expired is still remembered for a while.
func testLedgerRemembersExpired(t *testing.T, b Backend) {
	ctx := context.Background()
	st := open(t, b)
	if fresh, _ := st.Spend(ctx, "old", "0xold", time.Now().Add(-time.Hour)); !fresh {
		t.Fatal("old spend not fresh")
	}
	if fresh, _ := st.Spend(ctx, "old", "0xold2", time.Now().Add(-time.Hour)); fresh {
		t.Error("an expired challenge was forgotten at once")
	}
}

// Concurrent spends of one challenge: exactly one is fresh.
func testLedgerConcurrentSpends(t *testing.T, b Backend) {
	ctx := context.Background()
	st := open(t, b)
	until := time.Now().Add(5 * time.Minute)
	var fresh atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			ok, err := st.Spend(ctx, "same", fmt.Sprintf("0x%d", i), until)
			if err != nil {
				t.Error(err)
			}
			if ok {
				fresh.Add(1)
			}
		})
	}
	wg.Wait()
	if fresh.Load() != 1 {
		t.Errorf("%d fresh spends of one challenge, want 1", fresh.Load())
	}
}

// testStates: a store that reads resource states (ports.StateScanner) and
// vector hashes (ports.VectorHashScanner) reads what Scan and ScanVectors
// read, in the same id order (bytes), which the vector coverage walks side
// by side.
func testStates(t *testing.T, b Backend) {
	ctx := context.Background()
	st := b.Open(t)
	defer st.Close()
	ss, ok := st.(ports.StateScanner)
	hs, ok2 := st.(ports.VectorHashScanner)
	if !ok || !ok2 {
		t.Fatalf("the store reads states: %v, vector hashes: %v", ok, ok2)
	}
	var puts []ports.StoredResource
	for i, id := range []string{"#G1", "#G10", "#G2", "#G1-x", "a", "B", "ø", "Z9", "10", "9"} {
		sr := Full(core.DKBR, id)
		sr.Resource.Withdrawn = i%3 == 0
		sr.Resource.NameDA = []string{`"withdrawn":true`, `x},"hash":"y`, "Sten"}[i%3]
		sr.Hash = []string{"h", `with "quote"`, ""}[i%3]
		puts = append(puts, sr)
	}
	must(t, st.Apply(ctx, core.DKBR, ports.Changes{Put: puts}))
	must(t, st.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{Full(core.National, "6000000000")}}))
	var want, got []ports.ResourceState
	must(t, st.Scan(ctx, core.DKBR, func(sr ports.StoredResource) error {
		want = append(want, ports.ResourceState{ID: sr.Resource.ID, Hash: sr.Hash, Withdrawn: sr.Resource.Withdrawn})
		return nil
	}))
	must(t, ss.ScanStates(ctx, core.DKBR, func(s ports.ResourceState) error { got = append(got, s); return nil }))
	if len(got) != len(puts) || !slices.Equal(got, want) {
		t.Fatalf("states:\n%+v\nscanned:\n%+v", got, want)
	}
	if !slices.IsSortedFunc(got, func(a, b ports.ResourceState) int { return strings.Compare(a.ID, b.ID) }) {
		t.Fatalf("states not in byte order: %+v", got)
	}

	vec := func(c core.CatalogID, id, hash string) ports.StoredVector {
		return ports.StoredVector{Key: core.Key{Catalog: c, ID: id}, Hash: hash, Vec: []float32{1, 0}}
	}
	must(t, st.PutVectors(ctx, "e1", []ports.StoredVector{vec(core.DKBR, "ø", "h1"), vec(core.DKBR, "#G10", "h2"), vec(core.DKBR, "B", "h3"),
		vec(core.DKBR, "#G1", ""), vec(core.National, "6000000000", "h5")}))
	must(t, st.PutVectors(ctx, "e2", []ports.StoredVector{vec(core.DKBR, "a", "other")}))
	var seen []string
	must(t, hs.ScanVectorHashes(ctx, "e1", core.DKBR, func(id, hash string) error { seen = append(seen, id+"="+hash); return nil }))
	if w := []string{"#G1=", "#G10=h2", "B=h3", "ø=h1"}; !slices.Equal(seen, w) {
		t.Fatalf("vector hashes %q, want %q", seen, w)
	}

	// The vectors of given keys (a replica taking another's).
	vg, ok := st.(ports.VectorGetter)
	if !ok {
		t.Fatal("the store does not read vectors by key")
	}
	keys := []core.Key{{Catalog: core.DKBR, ID: "B"}, {Catalog: core.DKBR, ID: "a"}, {Catalog: core.National, ID: "6000000000"},
		{Catalog: core.DKBR, ID: "missing"}, {Catalog: core.National, ID: "B"}}
	vs, err := vg.GetVectors(ctx, "e1", keys)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[core.Key]ports.StoredVector{}
	for _, v := range vs {
		byKey[v.Key] = v
	}
	if len(vs) != 2 || byKey[keys[0]].Hash != "h3" || byKey[keys[2]].Hash != "h5" || !nearly(byKey[keys[0]].Vec, []float32{1, 0}) {
		t.Fatalf("GetVectors = %+v", vs)
	}
	if vs, err := vg.GetVectors(ctx, "e1", nil); err != nil || len(vs) != 0 {
		t.Fatalf("GetVectors of no keys = %v, %v", vs, err)
	}
}
