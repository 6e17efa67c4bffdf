package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

func openT(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// full returns a resource with every field set, so a field the store drops
// or mangles shows up in a DeepEqual.
func full(c core.CatalogID, id string) ports.StoredResource {
	r := core.Resource{
		ID: id, Catalog: c,
		Name: "Betong", Description: "Betong C30/37",
		NameSV: "Betong", NameEN: "Concrete", NameDA: "Beton",
		DescriptionSV: "Betong C30/37, husbyggnad", DescriptionEN: "Concrete C30/37, buildings", DescriptionDA: "Beton C30/37",
		ApplicabilitySV: "Gjuten på plats", ApplicabilityEN: "Cast in place",
		Synonyms: "cement;gjutning", SynonymsEN: "cement;casting",
		A1A3: core.F(0.123456789), A1A3Conservative: core.F(0.16), A4: core.F(1e-3), A51: core.F(-2.5),
		GWPUnit:            "kg CO2e/kg",
		ConservativeFactor: core.F(1.3), WasteFactor: core.F(0.05), BiogenicCarbon: core.F(0),
		ServiceLife: "50",
		Transports: []core.Transport{
			{Name: "Lastbil", DistanceKm: 50, Type: "truck", Fuel: "diesel", FuelResourceID: "fuel-1"},
			{Name: "Fartyg", DistanceKm: 1200.5, Type: "ship"},
		},
		Unit:         "kg",
		Conversions:  map[string]float64{"m3": 2400, "m2": 480.25},
		Category:     "Betong",
		CategoryEN:   "Concrete",
		CategoryCode: "0d3b",
		BK04:         "1234 Betong",
		Version:      "2024-06",
		Source:       core.SourceNational,
		Origin:       "https://example.org/sheet/" + id,
		Withdrawn:    true,
	}
	return ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openT(t, dir)

	// Same id "b" in both catalogs for FindByID; ids out of order for Scan.
	nat := []ports.StoredResource{full(core.National, "c"), full(core.National, "a"), full(core.National, "b")}
	dk := []ports.StoredResource{full(core.DKBR, "b")}
	meta := core.CatalogMeta{
		Catalog: core.National, Version: "2024-06",
		LastResult: &core.IngestResult{Catalog: core.National, Origin: core.OriginJSON, Version: "2024-06",
			Seen: 3, Upserted: 3, Changed: []string{"national:a"},
			StartedAt: time.Date(2024, 6, 1, 3, 0, 0, 0, time.UTC), FinishedAt: time.Date(2024, 6, 1, 3, 0, 1, 5, time.UTC)},
		LastIngest: time.Date(2024, 6, 1, 3, 0, 1, 5, time.UTC),
		NextIngest: time.Date(2024, 6, 2, 3, 0, 0, 0, time.UTC),
		LastError:  "json api down",
	}
	if err := s.Apply(ctx, core.National, ports.Changes{Put: nat, Meta: &meta}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, core.DKBR, ports.Changes{Put: dk}); err != nil {
		t.Fatal(err)
	}

	check := func(s *Store) {
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
			if want := full(core.National, r.Resource.ID); !reflect.DeepEqual(r, want) {
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

		m, err := s.Meta(ctx, core.National)
		if err != nil || !reflect.DeepEqual(m, meta) {
			t.Fatalf("Meta = %+v, %v; want %+v", m, err, meta)
		}
		if m, err := s.Meta(ctx, core.DKBR); err != nil || !reflect.DeepEqual(m, core.CatalogMeta{Catalog: core.DKBR}) {
			t.Fatalf("empty Meta = %+v, %v", m, err)
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir)
	defer s.Close()
	check(s)

	// PutMeta replaces the meta alone.
	dm := core.CatalogMeta{Catalog: core.DKBR, Version: "br25"}
	if err := s.PutMeta(ctx, dm); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Meta(ctx, core.DKBR); err != nil || !reflect.DeepEqual(m, dm) {
		t.Fatalf("Meta after PutMeta = %+v, %v", m, err)
	}
}

func TestScanStopsOnError(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()
	if err := s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{full(core.National, "a"), full(core.National, "b")}}); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	err := s.Scan(ctx, core.National, func(ports.StoredResource) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Scan = %v after %d calls", err, n)
	}
}

func TestApplyAtomic(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()

	old := full(core.National, "a")
	if err := s.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{old}, Meta: &core.CatalogMeta{Catalog: core.National, Version: "1"}}); err != nil {
		t.Fatal(err)
	}

	changed := full(core.National, "a")
	changed.Resource.NameSV = "changed"
	bad := []ports.Changes{
		{Put: []ports.StoredResource{changed, full(core.National, "new"), full(core.DKBR, "x")}, Meta: &core.CatalogMeta{Catalog: core.National, Version: "2"}},
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
	if m, _ := s.Meta(ctx, core.National); m.Version != "1" {
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

// TestApplyLimit checks that a catalog far larger than ours fits in one
// Apply, and that an oversized Apply fails cleanly and writes nothing.
func TestApplyLimit(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()

	// Copies of one full resource (about 1 KB of JSON, so its record goes
	// to the value log) under different ids; hashes do not matter here.
	base := full(core.National, "")
	puts := func(n int) []ports.StoredResource {
		out := make([]ports.StoredResource, n)
		for i := range out {
			out[i] = base
			out[i].Resource.ID = fmt.Sprintf("r%06d", i)
		}
		return out
	}
	if err := s.Apply(ctx, core.National, ports.Changes{Put: puts(core.MaxBatchResources)}); err != nil {
		t.Fatalf("Apply of %d resources: %v", core.MaxBatchResources, err)
	}
	// Small records, so the entry count, not the byte budget, is what breaks.
	huge := make([]ports.StoredResource, s.db.MaxBatchCount()+1)
	for i := range huge {
		huge[i].Resource = core.Resource{ID: fmt.Sprintf("huge%06d", i), Catalog: core.National}
	}
	err := s.Apply(ctx, core.National, ports.Changes{Put: huge, Meta: &core.CatalogMeta{Catalog: core.National, Version: "huge"}})
	if !errors.Is(err, badger.ErrTxnTooBig) || core.KindOf(err) != core.KindInvalid {
		t.Fatalf("oversized Apply = %v; want an invalid error wrapping ErrTxnTooBig", err)
	}
	t.Log(err)
	if n, _ := s.Count(ctx, core.National); n != core.MaxBatchResources {
		t.Fatalf("Count after oversized Apply = %d", n)
	}
	if m, _ := s.Meta(ctx, core.National); m.Version != "" {
		t.Fatalf("meta after oversized Apply = %+v", m)
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

func TestKVTTL(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()

	if err := s.PutTTL(ctx, "forever", []byte("v0"), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTTL(ctx, "short", []byte("v1"), time.Second); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.GetKV(ctx, "short"); err != nil || !ok || string(v) != "v1" {
		t.Fatalf("GetKV fresh = %q, %v, %v", v, ok, err)
	}
	if _, ok, err := s.GetKV(ctx, "absent"); err != nil || ok {
		t.Fatalf("GetKV absent = %v, %v", ok, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ok, err := s.GetKV(ctx, "short")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("value with a 1s TTL still readable after 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v, ok, err := s.GetKV(ctx, "forever"); err != nil || !ok || string(v) != "v0" {
		t.Fatalf("GetKV without TTL = %q, %v, %v", v, ok, err)
	}
	// KV keys live apart from resources and metas.
	if n, _ := s.Count(ctx, core.National); n != 0 {
		t.Fatalf("Count = %d", n)
	}
}

// TestDecodedCacheFollowsCommits checks the decoded-resource cache never
// serves a stale version and hands out copies callers may change.
func TestDecodedCacheFollowsCommits(t *testing.T) {
	st, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	key := core.Key{Catalog: core.National, ID: "1"}
	for i, name := range []string{"första", "andra", "tredje"} {
		r := core.Resource{ID: "1", Catalog: core.National, NameSV: name, Conversions: map[string]float64{"kg/m³": float64(i)}}
		if err := st.Apply(ctx, core.National, ports.Changes{Put: []ports.StoredResource{{Resource: r, Hash: name}}}); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2; j++ { // the second read comes from the cache
			got, found, err := st.Get(ctx, key)
			if err != nil || !found || got.Resource.NameSV != name || got.Hash != name || got.Resource.Conversions["kg/m³"] != float64(i) {
				t.Fatalf("after write %d read %d: %+v %v", i, j, got, err)
			}
			got.Resource.Conversions["kg/m³"] = 99 // must not leak into the cache
		}
	}
}
