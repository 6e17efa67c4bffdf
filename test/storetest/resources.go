package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// meta returns the catalog's meta without its change counter (the
// store's: a shared store advances it, badger keeps none).
// waitExpired waits until key, put with a 1 s TTL, reads as absent.
func waitExpired(t *testing.T, s Store, key string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ok, err := s.GetKV(context.Background(), key)
		must(t, err)
		if !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s, put with a 1s TTL, still readable after 10s", key)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func meta(t *testing.T, s Store, c core.CatalogID) core.CatalogMeta {
	t.Helper()
	m, err := s.Meta(context.Background(), c)
	if err != nil {
		t.Fatalf("Meta(%s): %v", c, err)
	}
	m.Counter = 0
	return m
}

func testRoundTrip(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)

	// Same id "b" in both catalogs for FindByID; ids out of order for Scan.
	nat := []ports.StoredResource{Full(core.National, "c"), Full(core.National, "a"), Full(core.National, "b")}
	dk := []ports.StoredResource{Full(core.DKBR, "b")}
	want := core.CatalogMeta{
		Catalog: core.National, Version: "2024-06",
		LastResult: &core.IngestResult{Catalog: core.National, Origin: core.OriginJSON, Version: "2024-06",
			Seen: 3, Upserted: 3, Changed: []string{"national:a"},
			StartedAt: time.Date(2024, 6, 1, 3, 0, 0, 0, time.UTC), FinishedAt: time.Date(2024, 6, 1, 3, 0, 1, 5, time.UTC)},
		LastIngest: time.Date(2024, 6, 1, 3, 0, 1, 5, time.UTC),
		NextIngest: time.Date(2024, 6, 2, 3, 0, 0, 0, time.UTC),
		LastError:  "json api down",
	}
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: nat, Meta: &want}))
	must(t, s.Apply(ctx, core.DKBR, ports.Changes{Put: dk}))

	check := func(s Store) {
		t.Helper()
		got, found, err := s.Get(ctx, core.Key{Catalog: core.National, ID: "a"})
		if err != nil || !found || !reflect.DeepEqual(got, nat[1]) {
			t.Fatalf("Get = %+v, %v, %v; want %+v", got, found, err, nat[1])
		}
		if _, found, err := s.Get(ctx, core.Key{Catalog: core.DKBR, ID: "a"}); err != nil || found {
			t.Fatalf("Get missing = %v, %v", found, err)
		}

		many, err := s.GetMany(ctx, []core.Key{
			{Catalog: core.National, ID: "c"}, {Catalog: core.National, ID: "zz"},
			{Catalog: core.DKBR, ID: "b"}, {Catalog: core.National, ID: "a"},
		})
		if err != nil || !reflect.DeepEqual(many, []ports.StoredResource{nat[0], dk[0], nat[1]}) {
			t.Fatalf("GetMany = %+v, %v", many, err)
		}

		var ids []string
		err = s.Scan(ctx, core.National, func(r ports.StoredResource) error {
			if want := Full(core.National, r.Resource.ID); !reflect.DeepEqual(r, want) {
				t.Errorf("Scan %s = %+v", r.Resource.ID, r)
			}
			ids = append(ids, r.Resource.ID)
			return nil
		})
		if err != nil || !reflect.DeepEqual(ids, []string{"a", "b", "c"}) {
			t.Fatalf("Scan ids = %v, %v", ids, err)
		}

		byID, err := s.FindByID(ctx, "b")
		if err != nil || !reflect.DeepEqual(byID, []ports.StoredResource{nat[2], dk[0]}) {
			t.Fatalf("FindByID = %+v, %v", byID, err)
		}

		for c, want := range map[core.CatalogID]int{core.National: 3, core.DKBR: 1} {
			if n, err := s.Count(ctx, c); err != nil || n != want {
				t.Fatalf("Count(%s) = %d, %v; want %d", c, n, err, want)
			}
		}

		if m := meta(t, s, core.National); !reflect.DeepEqual(m, want) {
			t.Fatalf("Meta = %+v; want %+v", m, want)
		}
		if m := meta(t, s, core.DKBR); !reflect.DeepEqual(m, core.CatalogMeta{Catalog: core.DKBR}) {
			t.Fatalf("empty Meta = %+v", m)
		}
	}
	check(s)
	must(t, s.Close())
	s = open(t, b)
	check(s)

	// PutMeta replaces the meta alone, and keeps the store's counter.
	// (That it keeps it whatever meta.Counter says is tested in pgstore:
	// badger, which keeps no counter, stores what it is given.)
	before, err := s.Meta(ctx, core.DKBR)
	must(t, err)
	dm := core.CatalogMeta{Catalog: core.DKBR, Version: "br25", Counter: before.Counter}
	must(t, s.PutMeta(ctx, dm))
	after, err := s.Meta(ctx, core.DKBR)
	must(t, err)
	if after.Counter != before.Counter {
		t.Fatalf("PutMeta moved the counter from %d to %d", before.Counter, after.Counter)
	}
	if dm.Counter = 0; !reflect.DeepEqual(meta(t, s, core.DKBR), dm) {
		t.Fatalf("Meta after PutMeta = %+v", meta(t, s, core.DKBR))
	}
	if _, found, _ := s.Get(ctx, dk[0].Resource.Key()); !found {
		t.Fatal("PutMeta lost a resource")
	}
}

func testScanStopsOnError(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{Full(core.National, "a"), Full(core.National, "b")}}))
	stop := errors.New("stop")
	n := 0
	err := s.Scan(ctx, core.National, func(ports.StoredResource) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Scan = %v after %d calls", err, n)
	}
}

func testApplyAtomic(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)

	old := Full(core.National, "a")
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{old}, Meta: &core.CatalogMeta{Catalog: core.National, Version: "1"}}))

	changed := Full(core.National, "a")
	changed.Resource.NameSV = "changed"
	bad := []ports.Changes{
		{Put: []ports.StoredResource{changed, Full(core.National, "new"), Full(core.DKBR, "x")}, Meta: &core.CatalogMeta{Catalog: core.National, Version: "2"}},
		{Put: []ports.StoredResource{changed}, Meta: &core.CatalogMeta{Catalog: core.DKBR, Version: "2"}},
		{Put: []ports.StoredResource{changed, {Resource: core.Resource{Catalog: core.National}}}},
	}
	for i, ch := range bad {
		if err := s.Apply(ctx, core.National, ch); core.KindOf(err) != core.KindInvalid {
			t.Fatalf("bad Apply %d = %v; want an invalid error", i, err)
		}
	}
	if err := s.Apply(ctx, "br25", ports.Changes{}); core.KindOf(err) != core.KindInvalid {
		t.Fatalf("Apply to alias = %v; want an invalid error", err)
	}

	got, _, err := s.Get(ctx, old.Resource.Key())
	if err != nil || !reflect.DeepEqual(got, old) {
		t.Fatalf("after failed Apply: %+v, %v", got, err)
	}
	if n, _ := s.Count(ctx, core.National); n != 1 {
		t.Fatalf("Count after failed Apply = %d", n)
	}
	if n, _ := s.Count(ctx, core.DKBR); n != 0 {
		t.Fatalf("Count(dkbr) after failed Apply = %d", n)
	}
	if m := meta(t, s, core.National); m.Version != "1" {
		t.Fatalf("meta after failed Apply = %+v", m)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Apply(cctx, core.National, ports.Changes{Put: []ports.StoredResource{changed}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply with canceled ctx = %v", err)
	}
	if got, _, _ := s.Get(ctx, old.Resource.Key()); got.Resource.NameSV != old.Resource.NameSV {
		t.Fatal("canceled Apply wrote")
	}
}

// A release of core.MaxBatchResources resources applies in one Apply.
func testApplyMaxBatch(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)
	base := Full(core.National, "")
	puts := make([]ports.StoredResource, core.MaxBatchResources)
	for i := range puts {
		puts[i] = base
		puts[i].Resource.ID = fmt.Sprintf("r%06d", i)
	}
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: puts, Meta: &core.CatalogMeta{Catalog: core.National, Version: "big"}}))
	if n, err := s.Count(ctx, core.National); err != nil || n != core.MaxBatchResources {
		t.Fatalf("Count = %d, %v; want %d", n, err, core.MaxBatchResources)
	}
	last := core.Key{Catalog: core.National, ID: fmt.Sprintf("r%06d", core.MaxBatchResources-1)}
	if got, found, err := s.Get(ctx, last); err != nil || !found || got.Resource.NameSV != base.Resource.NameSV {
		t.Fatalf("Get(%s) = %v, %v", last, found, err)
	}
}

// LargeChange is how many resources testApplyLarge puts in one Apply: more
// entries than one badger transaction takes with badgerstore's 16 MiB
// memtable (26,214; badgerstore's tests check that it stays more).
const LargeChange = 110000

// A change larger than one badger transaction applies whole: every
// resource (some rewritten, most new), the meta and the event. Resources
// are small, so the size is cheap for every store.
func testApplyLarge(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)
	gen := func(g, n int) []ports.StoredResource {
		puts := make([]ports.StoredResource, n)
		for i := range puts {
			puts[i] = ports.StoredResource{Hash: fmt.Sprint(g), Resource: core.Resource{
				ID: fmt.Sprintf("r%06d", i), Catalog: core.National, NameSV: fmt.Sprintf("%d/%d", g, i)}}
		}
		return puts
	}
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: gen(1, 1000), Meta: &core.CatalogMeta{Catalog: core.National, Version: "1"}}))
	ev := core.Event{ID: "large", Type: core.EventCatalogChanged, Catalog: core.National}
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: gen(2, LargeChange), Events: []core.Event{ev},
		Meta: &core.CatalogMeta{Catalog: core.National, Version: "2"}}))
	if n, err := s.Count(ctx, core.National); err != nil || n != LargeChange {
		t.Fatalf("Count = %d, %v; want %d", n, err, LargeChange)
	}
	sample := []int{0, 999, 1000, 54321, 104856, 104857, LargeChange - 1}
	var keys []core.Key
	for _, i := range sample {
		keys = append(keys, core.Key{Catalog: core.National, ID: fmt.Sprintf("r%06d", i)})
	}
	got, err := s.GetMany(ctx, keys)
	must(t, err)
	if len(got) != len(keys) {
		t.Fatalf("GetMany found %d of %d", len(got), len(keys))
	}
	for j, r := range got {
		if r.Resource.ID != keys[j].ID || r.Hash != "2" || r.Resource.NameSV != fmt.Sprintf("2/%d", sample[j]) {
			t.Fatalf("%s = %+v", keys[j].ID, r)
		}
	}
	if m := meta(t, s, core.National); m.Version != "2" {
		t.Fatalf("meta %+v", m)
	}
	evs, err := s.Outbox(ctx)
	must(t, err)
	if len(evs) != 1 || evs[0].ID != ev.ID {
		t.Fatalf("outbox %+v", evs)
	}
}

// Of an id put twice in one Apply, the last Put wins.
func testApplyRepeatedID(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)
	first, second := Full(core.National, "a"), Full(core.National, "a")
	second.Resource.NameSV = "second"
	must(t, s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{first, Full(core.National, "b"), second}}))
	if got, _, err := s.Get(ctx, first.Resource.Key()); err != nil || got.Resource.NameSV != "second" {
		t.Fatalf("Get = %+v, %v; want the last Put", got.Resource, err)
	}
	if n, _ := s.Count(ctx, core.National); n != 2 {
		t.Fatalf("Count = %d; want 2", n)
	}
}

// After Close every method fails as unavailable (503), without reaching
// the closed database; a second Close is a no-op.
func testClosed(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t)
	must(t, s.Ping(ctx))
	must(t, s.Close())
	must(t, s.Close())
	unavailable := func(what string, err error) {
		t.Helper()
		if core.KindOf(err) != core.KindUnavailable {
			t.Fatalf("%s after Close = %v; want an unavailable error", what, err)
		}
	}
	unavailable("Ping", s.Ping(ctx))
	unavailable("Scan", s.Scan(ctx, core.National, func(ports.StoredResource) error { return nil }))
	_, err := s.Count(ctx, core.National)
	unavailable("Count", err)
	unavailable("Apply", s.Apply(ctx, core.National, ports.Changes{}))
	_, _, err = s.Get(ctx, core.Key{Catalog: core.National, ID: "a"})
	unavailable("Get", err)
	_, err = s.Destinations(ctx)
	unavailable("Destinations", err)
	_, err = s.Spend(ctx, "ch", "ref", time.Now())
	unavailable("Spend", err)
}

func testKVTTL(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)

	must(t, s.PutTTL(ctx, "forever", []byte("v0"), 0))
	must(t, s.PutTTL(ctx, "short", []byte("v1"), time.Second))
	if v, ok, err := s.GetKV(ctx, "short"); err != nil || !ok || string(v) != "v1" {
		t.Fatalf("GetKV fresh = %q, %v, %v", v, ok, err)
	}
	if _, ok, err := s.GetKV(ctx, "absent"); err != nil || ok {
		t.Fatalf("GetKV absent = %v, %v", ok, err)
	}
	waitExpired(t, s, "short")
	if v, ok, err := s.GetKV(ctx, "forever"); err != nil || !ok || string(v) != "v0" {
		t.Fatalf("GetKV without TTL = %q, %v, %v", v, ok, err)
	}
	// Rewritten without a TTL, a value stays.
	must(t, s.PutTTL(ctx, "short", []byte("v2"), 0))
	if v, ok, err := s.GetKV(ctx, "short"); err != nil || !ok || string(v) != "v2" {
		t.Fatalf("GetKV rewritten = %q, %v, %v", v, ok, err)
	}
	// KV keys live apart from resources and metas.
	if n, _ := s.Count(ctx, core.National); n != 0 {
		t.Fatalf("Count = %d", n)
	}
}

// Reads follow commits (never a stale version) and hand out copies the
// caller may change.
func testReadsFollowCommits(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b)
	key := core.Key{Catalog: core.National, ID: "1"}
	for i, name := range []string{"första", "andra", "tredje"} {
		r := core.Resource{ID: "1", Catalog: core.National, NameSV: name, Conversions: map[string]float64{"kg/m³": float64(i)}}
		must(t, s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{{Resource: r, Hash: name}}}))
		for j := 0; j < 2; j++ {
			got, found, err := s.Get(ctx, key)
			if err != nil || !found || got.Resource.NameSV != name || got.Hash != name || got.Resource.Conversions["kg/m³"] != float64(i) {
				t.Fatalf("after write %d read %d: %+v %v", i, j, got, err)
			}
			got.Resource.Conversions["kg/m³"] = 99 // must not leak into what the store keeps
		}
		many, err := s.GetMany(ctx, []core.Key{key, key})
		if err != nil || len(many) != 2 {
			t.Fatalf("GetMany of a key twice = %d, %v", len(many), err)
		}
		many[0].Resource.Conversions["kg/m³"] = 98
		if many[1].Resource.Conversions["kg/m³"] != float64(i) {
			t.Fatal("GetMany returned two results sharing a map")
		}
	}
}
