package boverket_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/boverket"
	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/core"
)

func readWorkbook(t *testing.T, body []byte, culture string) *boverket.Workbook {
	t.Helper()
	w, err := boverket.ReadWorkbook(body, culture)
	if err != nil {
		t.Fatalf("reading the %s workbook: %v", culture, err)
	}
	return w
}

// workbooks builds the two workbooks from the real exports with opt.
func workbooks(t *testing.T, opt boverkettest.WorkbookOptions) (sv, en []byte) {
	t.Helper()
	return boverkettest.WorkbookFromExportWith(t, boverkettest.LoadExport(t, boverkettest.Export0206SV), "sv", opt),
		boverkettest.WorkbookFromExportWith(t, boverkettest.LoadExport(t, boverkettest.Export0207EN), "en", opt)
}

// sameAsJSON checks that the workbooks' resources carry the JSON mapping's
// values for every field a workbook has.
func sameAsJSON(t *testing.T, got boverket.Mapped) {
	t.Helper()
	sv, en := decode(t, boverkettest.Export0206SV), decode(t, boverkettest.Export0207EN)
	inSV, inEN := map[string]bool{}, map[string]bool{}
	for _, r := range boverket.Merge(sv, nil).Resources {
		inSV[r.ID] = true
	}
	for _, r := range boverket.Merge(nil, en).Resources {
		inEN[r.ID] = true
	}
	want := byID(boverket.Merge(sv, en).Resources)
	if len(got.Resources) != len(want) || got.Rejected != 0 || got.Version != "02.07.000" {
		t.Fatalf("%d resources, %d rejected, version %q; want %d, 0, 02.07.000", len(got.Resources), got.Rejected, got.Version, len(want))
	}
	for _, g := range got.Resources {
		w, ok := want[g.ID]
		if !ok {
			t.Errorf("%s: not in the JSON mapping", g.ID)
			continue
		}
		type pair struct {
			name     string
			got, exp any
		}
		checks := []pair{
			{"A1A3", g.A1A3, w.A1A3}, {"A1A3Conservative", g.A1A3Conservative, w.A1A3Conservative},
			{"A4", g.A4, w.A4}, {"A51", g.A51, w.A51}, {"WasteFactor", g.WasteFactor, w.WasteFactor},
			{"Conversions", g.Conversions, w.Conversions}, {"Unit", g.Unit, w.Unit}, {"GWPUnit", g.GWPUnit, w.GWPUnit},
			{"Category", g.Category, w.Category}, {"CategoryEN", g.CategoryEN, w.CategoryEN},
			{"Synonyms", g.Synonyms, w.Synonyms}, {"SynonymsEN", g.SynonymsEN, w.SynonymsEN},
			{"DescriptionSV", g.DescriptionSV, w.DescriptionSV}, {"DescriptionEN", g.DescriptionEN, w.DescriptionEN},
			{"Version", g.Version, w.Version}, {"Catalog", g.Catalog, w.Catalog}, {"Source", g.Source, w.Source},
		}
		// A workbook has the name of its own language only.
		if inSV[g.ID] {
			checks = append(checks, pair{"NameSV", g.NameSV, w.NameSV})
		}
		if inEN[g.ID] {
			checks = append(checks, pair{"NameEN", g.NameEN, w.NameEN})
		}
		for _, c := range checks {
			if !reflect.DeepEqual(c.got, c.exp) {
				t.Errorf("%s %s: workbook %s, JSON %s", g.ID, c.name, show(c.got), show(c.exp))
			}
		}
		if g.CategoryCode != "" {
			t.Errorf("%s: code %q from a workbook without a code column", g.ID, g.CategoryCode)
		}
	}
}

func TestWorkbookReadsTheSameValuesAsJSON(t *testing.T) {
	t.Parallel()
	svBody, enBody := workbooks(t, boverkettest.WorkbookOptions{})
	sv, en := readWorkbook(t, svBody, "sv"), readWorkbook(t, enBody, "en")
	if sv.HeaderRow != 1 || sv.Len() != 228 || en.Len() != 230 {
		t.Fatalf("header row %d, %d sv rows, %d en rows", sv.HeaderRow, sv.Len(), en.Len())
	}
	m := boverket.MergeWorkbooks(sv, en)
	sameAsJSON(t, m)
	// And by value, for one resource, against the file itself.
	r := byID(m.Resources)["6000000000"]
	if *r.A1A3 != 0.39 || *r.A1A3Conservative != 0.488 || *r.WasteFactor != 1.1 || r.Conversions["kg/m³"] != 700 ||
		r.NameSV != "Spånskiva" || r.NameEN != "Particle board" || r.Category != "Byggskivor" || r.CategoryEN != "Building boards" {
		t.Errorf("6000000000 from the workbooks: %+v", r)
	}
}

func TestWorkbookHeaderBelowTitleRows(t *testing.T) {
	t.Parallel()
	svBody, enBody := workbooks(t, boverkettest.WorkbookOptions{TitleRows: 4})
	sv, en := readWorkbook(t, svBody, "sv"), readWorkbook(t, enBody, "en")
	if sv.HeaderRow != 5 || en.HeaderRow != 5 {
		t.Errorf("header rows %d, %d; want 5", sv.HeaderRow, en.HeaderRow)
	}
	sameAsJSON(t, boverket.MergeWorkbooks(sv, en))
}

func TestWorkbookDecimalComma(t *testing.T) {
	t.Parallel()
	svBody, enBody := workbooks(t, boverkettest.WorkbookOptions{DecimalComma: true, TitleRows: 1})
	sameAsJSON(t, boverket.MergeWorkbooks(readWorkbook(t, svBody, "sv"), readWorkbook(t, enBody, "en")))
}

// A number format must not change the values: the reader takes raw values,
// not the rounded text a spreadsheet shows.
func TestWorkbookNumberFormatDoesNotRound(t *testing.T) {
	t.Parallel()
	svBody, enBody := workbooks(t, boverkettest.WorkbookOptions{NumberFormat: "0.0"})
	sameAsJSON(t, boverket.MergeWorkbooks(readWorkbook(t, svBody, "sv"), readWorkbook(t, enBody, "en")))
}

func TestWorkbookHeaderErrors(t *testing.T) {
	t.Parallel()
	sv := boverkettest.LoadExport(t, boverkettest.Export0206SV)
	cases := []struct {
		name  string
		body  []byte
		wants []string
	}{
		{"no id header", boverkettest.WorkbookFromExportWith(t, sv, "sv", boverkettest.WorkbookOptions{Omit: []string{"Resurs-ID"}}),
			[]string{"no header row", "Resurs-ID", "Resource ID"}},
		{"header too low", boverkettest.WorkbookFromExportWith(t, sv, "sv", boverkettest.WorkbookOptions{TitleRows: 20}),
			[]string{"no header row", "first 20 rows"}},
		{"no typical value column", boverkettest.WorkbookFromExportWith(t, sv, "sv",
			boverkettest.WorkbookOptions{Omit: []string{"Klimatpåverkan A1-A3 typiskt värde"}}),
			[]string{"lacks required columns", "A1-A3 typiskt"}},
		{"no name column", boverkettest.WorkbookFromExportWith(t, sv, "sv", boverkettest.WorkbookOptions{Omit: []string{"Produktnamn"}}),
			[]string{"lacks required columns", "Produktnamn"}},
		{"not a workbook", []byte("PK\x03\x04 not really a zip"), []string{"not a readable xlsx workbook"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := boverket.ReadWorkbook(c.body, "sv")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestExcelSourceFetch(t *testing.T) {
	t.Parallel()
	svBody, enBody := workbooks(t, boverkettest.WorkbookOptions{TitleRows: 2})
	s := boverkettest.NewServer(t)
	s.SetExcel("sv", svBody)
	s.SetExcel("en", enBody)
	src := boverket.NewExcelSource(boverket.Config{
		ExcelURLSV: s.ExcelURL("sv"), ExcelURLEN: s.ExcelURL("en"), SubscriptionKey: "k3y", Timeout: 10 * time.Second,
	})
	if src.Name() != "boverket-excel" {
		t.Errorf("name %q", src.Name())
	}
	rel, err := src.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rel.Catalog != core.National || rel.Origin != core.OriginExcel || !rel.Complete || rel.Version != "02.07.000" || len(rel.Resources) != 235 {
		t.Errorf("release %s %s complete=%v version %q, %d resources", rel.Catalog, rel.Origin, rel.Complete, rel.Version, len(rel.Resources))
	}
	if n := s.Requests(boverkettest.ExcelPathPrefix); n != 2 {
		t.Errorf("%d workbook requests, want 2", n)
	}
	if k := s.LastHeader(boverkettest.ExcelPathPrefix, "Ocp-Apim-Subscription-Key"); k != "" {
		t.Errorf("the API key leaked to the workbook host: %q", k)
	}
}

func TestExcelSourceFailures(t *testing.T) {
	t.Parallel()
	svBody, enBody := workbooks(t, boverkettest.WorkbookOptions{})
	cases := []struct {
		name  string
		setup func(s *boverkettest.Server)
		cause string
	}{
		{"http 503", func(s *boverkettest.Server) { s.FailExcel(http.StatusServiceUnavailable) }, "HTTP 503"},
		{"English workbook missing", func(s *boverkettest.Server) { s.SetExcel("en", nil) }, "HTTP 404"},
		{"Swedish workbook unreadable", func(s *boverkettest.Server) { s.SetExcel("sv", []byte("<html/>")) }, "not a readable xlsx workbook"},
		{"timeout", func(s *boverkettest.Server) { s.Hang(true) }, "timed out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := boverkettest.NewServer(t)
			s.SetExcel("sv", svBody)
			s.SetExcel("en", enBody)
			c.setup(s)
			src := boverket.NewExcelSource(boverket.Config{ExcelURLSV: s.ExcelURL("sv"), ExcelURLEN: s.ExcelURL("en"), Timeout: 200 * time.Millisecond})
			_, err := src.Fetch(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), c.cause) || !strings.Contains(err.Error(), s.URL+"/excel/") {
				t.Errorf("error %q does not name the workbook URL and cause %q", err, c.cause)
			}
			if core.KindOf(err) != core.KindUnavailable {
				t.Errorf("kind %v, want unavailable", core.KindOf(err))
			}
		})
	}
}

func TestExcelSourceNeedsBothURLs(t *testing.T) {
	t.Parallel()
	_, err := boverket.NewExcelSource(boverket.Config{ExcelURLSV: "http://127.0.0.1:1/sv.xlsx"}).Fetch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no workbook URL") {
		t.Errorf("error %v", err)
	}
}
