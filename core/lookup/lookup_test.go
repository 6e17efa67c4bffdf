package lookup_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/lookup"
)

// originBase is the publisher's public site; the ingest service builds each
// product-sheet link as {base}/detaljer/{category_code}/{id}.
const originBase = "https://klimatdatabasen.boverket.se"

// withdrawnIDs are the five resources of 02.06.000 sv missing from
// 02.07.000: a complete 02.07 release withdraws them.
var withdrawnIDs = []string{"6000000157", "6000000164", "6000000165", "6000000166", "6000000169"}

// fixture is the real national catalog (02.06 sv merged with 02.07 en: 235
// resources, 5 of them withdrawn, so 230 live) and four Danish rows of BR18
// Tabel 7, one of them loaded by an operator under the Swedish particle
// board's id 6000000000, which makes that bare id ambiguous.
type fixture struct {
	svc   *lookup.Service
	store *badgerstore.Store
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	rs := national(t, boverkettest.Export0206SV, boverkettest.Export0207EN)
	if len(rs) != 235 {
		t.Fatalf("%d national resources, want 235", len(rs))
	}
	withdrawn := map[string]bool{}
	for _, id := range withdrawnIDs {
		withdrawn[id] = true
	}
	for i := range rs {
		r := &rs[i]
		r.Withdrawn = withdrawn[r.ID]
		// As the ingest service does, except for one resource stored, as an
		// operator batch may, without a product-sheet link.
		if r.CategoryCode != "" && r.ID != "6000000033" {
			r.Origin = originBase + "/detaljer/" + r.CategoryCode + "/" + r.ID
		}
	}
	dk := dkbrRows(t, "#G0530", "#G0701", "#G1075", "#G0701")
	dk[3].ID = "6000000000" // the operator's clash
	st := openStore(t, rs, dk)
	return fixture{svc: lookup.New(st, core.NewVisibility()), store: st}
}

func TestGetResolvesPrefixedAndBareIDs(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		ref       string
		lang      core.Lang
		wantRef   string
		wantName  string
		wantA1A3  float64
		withdrawn bool
	}{
		{"national:6000000000", core.Swedish, "national:6000000000", "Spånskiva", 0.39, false},
		{"national:6000000000", core.English, "national:6000000000", "Particle board", 0.39, false},
		{" National : 6000000000 ", core.English, "national:6000000000", "Particle board", 0.39, false},
		{"dkbr:#G0701", core.Swedish, "dkbr:#G0701", "Spånplade", -873.594, false},
		// Only Danish is published: both languages fall back to it.
		{"dkbr:#G0701", core.English, "dkbr:#G0701", "Spånplade", -873.594, false},
		{"br25:#G0701", core.Swedish, "dkbr:#G0701", "Spånplade", -873.594, false},
		{"BR25:#G1075", core.Swedish, "dkbr:#G1075", "Rude (3-lags)", 57.7726, false},
		{"dkbr:6000000000", core.Swedish, "dkbr:6000000000", "Spånplade", -873.594, false},
		// Bare ids held by one catalog only.
		{"6000000008", core.Swedish, "national:6000000008", "Elektricitet, svensk elmix", 0.037, false},
		{"6000000008", core.English, "national:6000000008", "Electricity, Swedish mix", 0.037, false},
		{"#G0530", core.Swedish, "dkbr:#G0530", "Solcelleanlæg 1000 kWh / m2*a", 296.686, false},
		// Withdrawn resources stay readable by id (02.06 values: 0.644).
		{"6000000169", core.Swedish, "national:6000000169", "Formskiva", 0.644, true},
		{"national:6000000169", core.English, "national:6000000169", "Plywood, phenol coated", 0.644, true},
	}
	for _, tc := range cases {
		t.Run(tc.ref+"/"+string(tc.lang), func(t *testing.T) {
			r, err := f.svc.Get(context.Background(), tc.ref, tc.lang)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if r.Ref() != tc.wantRef || r.Name != tc.wantName || r.Withdrawn != tc.withdrawn || r.A1A3 == nil || *r.A1A3 != tc.wantA1A3 {
				t.Fatalf("got %s %q withdrawn %v a1a3 %v, want %s %q withdrawn %v a1a3 %v",
					r.Ref(), r.Name, r.Withdrawn, r.A1A3, tc.wantRef, tc.wantName, tc.withdrawn, tc.wantA1A3)
			}
		})
	}
}

func TestGetRefusals(t *testing.T) {
	f := newFixture(t)
	both := []core.CatalogID{core.National, core.DKBR}
	cases := []struct {
		name       string
		ref        string
		kind       core.ErrorKind
		contains   []string
		candidates []core.CatalogID
	}{
		{"bare id in both catalogs", "6000000000", core.KindConflict,
			[]string{`id "6000000000" exists in catalogs national and dkbr`, "national:6000000000", "dkbr:6000000000"}, both},
		{"bare id in both catalogs, spaced", " 6000000000\t", core.KindConflict, []string{"national and dkbr"}, both},
		{"unknown bare id", "999", core.KindNotFound, []string{`no resource "999" in any catalog`}, nil},
		{"unknown prefixed id", "national:999", core.KindNotFound, []string{"no resource national:999"}, nil},
		{"id of the other catalog", "br25:6000000008", core.KindNotFound, []string{"no resource dkbr:6000000008"}, nil},
		{"ids are case-sensitive", "dkbr:#g0701", core.KindNotFound, []string{"no resource dkbr:#g0701"}, nil},
		{"unknown prefix", "se:6000000000", core.KindInvalid, []string{`unknown catalog "se"`, "national, dkbr or br25"}, nil},
		{"empty prefix", ":6000000000", core.KindInvalid, []string{`unknown catalog ""`}, nil},
		{"empty", "", core.KindInvalid, []string{"resource id is empty"}, nil},
		{"blank", "   ", core.KindInvalid, []string{"resource id is empty"}, nil},
		{"nothing after the prefix", "national: ", core.KindInvalid, []string{`after "national:" is empty`}, nil},
		{"too long", strings.Repeat("6", lookup.MaxRefLen+1), core.KindInvalid, []string{"longer than 128"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.Get(context.Background(), tc.ref, core.Swedish)
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Kind != tc.kind {
				t.Fatalf("got %v (kind %d), want kind %d", err, core.KindOf(err), tc.kind)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message %q lacks %q", err, s)
				}
			}
			if !reflect.DeepEqual(ce.Candidates, tc.candidates) {
				t.Errorf("candidates %v, want %v", ce.Candidates, tc.candidates)
			}
		})
	}
}

func TestOrigin(t *testing.T) {
	f := newFixture(t)
	ok := []struct{ ref, want string }{
		// 02.07 renumbered the categories: Byggskivor is 10.
		{"national:6000000000", originBase + "/detaljer/10/6000000000"},
		// Murblock och tegel: 8 in 02.06, 9 from 02.07.
		{"6000000203", originBase + "/detaljer/9/6000000203"},
		// Withdrawn, its 02.06 category code (Byggskivor was 9).
		{"6000000169", originBase + "/detaljer/9/6000000169"},
	}
	for _, tc := range ok {
		got, err := f.svc.Origin(context.Background(), tc.ref)
		if err != nil || got != tc.want {
			t.Errorf("Origin(%s) = %q, %v; want %q", tc.ref, got, err, tc.want)
		}
	}
	bad := []struct {
		ref      string
		kind     core.ErrorKind
		contains string
	}{
		{"dkbr:#G0701", core.KindNotFound, "catalog dkbr has no public product sheet; read the resource at /api/resources/dkbr:%23G0701"},
		{"br25:#G0530", core.KindNotFound, "catalog dkbr has no public product sheet"},
		{"#G1075", core.KindNotFound, "catalog dkbr has no public product sheet"},
		{"dkbr:6000000000", core.KindNotFound, "catalog dkbr has no public product sheet"},
		{"national:6000000033", core.KindNotFound, "resource national:6000000033 has no known product sheet"},
		{"6000000000", core.KindConflict, "national and dkbr"},
		{"123", core.KindNotFound, `no resource "123"`},
		{"xx:1", core.KindInvalid, "unknown catalog"},
	}
	for _, tc := range bad {
		got, err := f.svc.Origin(context.Background(), tc.ref)
		if core.KindOf(err) != tc.kind || err == nil || !strings.Contains(err.Error(), tc.contains) || got != "" {
			t.Errorf("Origin(%s) = %q, %v (kind %d); want kind %d containing %q", tc.ref, got, err, core.KindOf(err), tc.kind, tc.contains)
		}
	}
}

func TestListLeavesOutWithdrawnAndLocalizes(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name     string
		catalogs []core.CatalogID
		lang     core.Lang
		count    int
		source   string
		names    map[string]string // ref -> Name
	}{
		{"national in Swedish", []core.CatalogID{core.National}, core.Swedish, 230,
			core.SourceFor([]core.CatalogID{core.National}),
			map[string]string{"national:6000000000": "Spånskiva", "national:6000000008": "Elektricitet, svensk elmix"}},
		{"national in English", []core.CatalogID{core.National}, core.English, 230,
			core.SourceFor([]core.CatalogID{core.National}),
			map[string]string{"national:6000000000": "Particle board", "national:6000000008": "Electricity, Swedish mix",
				// 02.07-only rows carry both names in their Names map.
				"national:6100000010": "Natural gas"}},
		{"dkbr in English falls back to Danish", []core.CatalogID{core.DKBR}, core.English, 4,
			core.SourceFor([]core.CatalogID{core.DKBR}),
			map[string]string{"dkbr:#G0701": "Spånplade", "dkbr:6000000000": "Spånplade", "dkbr:#G1075": "Rude (3-lags)"}},
		{"both catalogs", []core.CatalogID{core.National, core.DKBR}, core.English, 234, core.SourceAll,
			map[string]string{"national:6000000000": "Particle board", "dkbr:6000000000": "Spånplade"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := f.svc.List(context.Background(), core.ListRequest{Catalogs: tc.catalogs, Lang: tc.lang})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Resources) != tc.count || l.Source != tc.source {
				t.Fatalf("%d resources, source %q; want %d and %q", len(l.Resources), l.Source, tc.count, tc.source)
			}
			got := map[string]string{}
			for _, r := range l.Resources {
				if r.Withdrawn {
					t.Errorf("withdrawn %s listed", r.Ref())
				}
				if r.Name == "" {
					t.Errorf("%s listed without a name", r.Ref())
				}
				got[r.Ref()] = r.Name
			}
			for _, id := range withdrawnIDs {
				if _, listed := got["national:"+id]; listed {
					t.Errorf("withdrawn national:%s listed", id)
				}
			}
			for ref, name := range tc.names {
				if got[ref] != name {
					t.Errorf("%s named %q, want %q", ref, got[ref], name)
				}
			}
		})
	}
}

func TestHealthAndAClosedStore(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if h := f.svc.Health(ctx); h.Status != "ok" || h.Error != "" {
		t.Fatalf("open store: %+v", h)
	}
	if err := f.store.Close(); err != nil {
		t.Fatal(err)
	}
	if h := f.svc.Health(ctx); h.Status != "unhealthy" || !strings.Contains(h.Error, "store unreadable") {
		t.Fatalf("closed store: %+v", h)
	}
	for _, ref := range []string{"national:6000000000", "6000000008"} {
		if _, err := f.svc.Get(ctx, ref, core.Swedish); core.KindOf(err) != core.KindUnavailable {
			t.Errorf("Get(%s) on a closed store: %v (kind %d), want unavailable", ref, err, core.KindOf(err))
		}
	}
	if _, err := f.svc.List(ctx, core.ListRequest{Catalogs: []core.CatalogID{core.National}, Lang: core.Swedish}); core.KindOf(err) != core.KindUnavailable {
		t.Errorf("List on a closed store: %v, want unavailable", err)
	}
}
