package boverkettest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/climatesearch/climatesearch/test/shareddata"
)

// Names of the real exports in the shared reference data.
const (
	Export0204EN = "02.04.000-en-gb.json"
	Export0205SV = "02.05.000-sv-se.json"
	Export0206SV = "02.06.000-sv-se.json"
	Export0207EN = "02.07.000-en-gb.json"
)

// LoadExport reads a real export from the shared data/boverket directory,
// e.g. LoadExport(t, Export0206SV).
func LoadExport(tb testing.TB, name string) []byte {
	tb.Helper()
	return shareddata.Read(tb, "data", "boverket", name)
}

// MutateExport returns a modified copy of an export: fn receives the
// resources (as decoded JSON objects, numbers kept as json.Number so they
// re-encode digit for digit) and returns the new list; a nil fn keeps them.
// A non-empty version replaces the export's Version and every resource's
// Version and SourceVersion, e.g. for a version-only bump.
func MutateExport(tb testing.TB, body []byte, fn func(resources []map[string]any) []map[string]any, version string) []byte {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		tb.Fatalf("MutateExport: decoding export: %v", err)
	}
	raw, _ := top["Resources"].([]any)
	res := make([]map[string]any, 0, len(raw))
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			tb.Fatalf("MutateExport: a resource is %T, want an object", r)
		}
		res = append(res, m)
	}
	if fn != nil {
		res = fn(res)
	}
	if version != "" {
		top["Version"] = version
		for _, r := range res {
			r["Version"] = version
			r["SourceVersion"] = version
		}
	}
	out := make([]any, len(res))
	for i, r := range res {
		out[i] = r
	}
	top["Resources"] = out
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep ">50 år" readable in a failing test's dump
	if err := enc.Encode(top); err != nil {
		tb.Fatalf("MutateExport: encoding export: %v", err)
	}
	return buf.Bytes()
}

// ResourceID returns the ResourceId of a resource decoded by MutateExport.
func ResourceID(r map[string]any) string {
	switch v := r["ResourceId"].(type) {
	case json.Number:
		return v.String()
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// WorkbookOptions shape a workbook built from an export.
type WorkbookOptions struct {
	// TitleRows puts this many rows (a title, then blank rows) above the
	// header row.
	TitleRows int
	// DecimalComma writes every number as text with a decimal comma, as a
	// Swedish spreadsheet exported to text would.
	DecimalComma bool
	// Omit leaves out the columns with these headers.
	Omit []string
	// NumberFormat, e.g. "0.0", is applied to every numeric cell, so a
	// reader of formatted text would see rounded values.
	NumberFormat string
}

// Workbook headers per culture, in column order.
var (
	HeadersSV = []string{"Resurs-ID", "Produktnamn", "Kategori", "Deklarerad enhet", "Enhet för klimatpåverkan",
		"Klimatpåverkan A1-A3 typiskt värde", "Klimatpåverkan A1-A3 konservativt värde", "A4", "A5.1",
		"Avfallsfaktor", "Omräkningsfaktor", "Enhet omräkningsfaktor", "Synonymer", "Beskrivning", "Version"}
	HeadersEN = []string{"Resource ID", "Product name", "Category", "Declared unit", "Unit for climate impact",
		"A1-A3 Typical", "A1-A3 Conservative", "A4", "A5.1",
		"Waste factor", "Conversion factor", "Conversion unit", "Synonyms", "Description", "Version"}
)

// WorkbookFromExport builds an xlsx workbook like the publisher's from a real
// export: one sheet, the Swedish ("sv") or English ("en") headers in row 1,
// one row per resource, numbers as numeric cells.
func WorkbookFromExport(tb testing.TB, exportJSON []byte, culture string) []byte {
	tb.Helper()
	return WorkbookFromExportWith(tb, exportJSON, culture, WorkbookOptions{})
}

// wbResource is the part of an export resource a workbook shows.
type wbResource struct {
	ResourceId    json.Number
	Version       string
	Name          string
	InventoryUnit string
	Synonyms      string
	WasteFactor   *float64

	TechnologyDescriptionAndIncludedProcesses string

	Conversions []struct {
		Unit  string
		Value *float64
	}
	Categories []struct{ ClassificationType, Text string }
	DataItems  []struct {
		PropertyUnitCode string
		DataValueItems   []struct {
			DataModuleCode string
			Value          *float64
		}
	}
}

// WorkbookFromExportWith is WorkbookFromExport with options.
func WorkbookFromExportWith(tb testing.TB, exportJSON []byte, culture string, opt WorkbookOptions) []byte {
	tb.Helper()
	var export struct {
		Version   string
		Resources []wbResource
	}
	if err := json.Unmarshal(exportJSON, &export); err != nil {
		tb.Fatalf("WorkbookFromExport: decoding export: %v", err)
	}
	headers := HeadersSV
	if culture == "en" {
		headers = HeadersEN
	}
	omit := map[string]bool{}
	for _, h := range opt.Omit {
		omit[h] = true
	}
	var keep []int
	for i, h := range headers {
		if !omit[h] {
			keep = append(keep, i)
		}
	}

	f := excelize.NewFile()
	defer f.Close()
	sheet := "Klimatdatabas"
	if err := f.SetSheetName(f.GetSheetName(0), sheet); err != nil {
		tb.Fatal(err)
	}
	style := 0
	if opt.NumberFormat != "" {
		var err error
		if style, err = f.NewStyle(&excelize.Style{CustomNumFmt: &opt.NumberFormat}); err != nil {
			tb.Fatalf("WorkbookFromExport: %v", err)
		}
	}
	set := func(col, row int, v any) {
		cell, err := excelize.CoordinatesToCellName(col, row)
		if err == nil {
			err = f.SetCellValue(sheet, cell, v)
		}
		if _, isFloat := v.(float64); err == nil && isFloat && style != 0 {
			err = f.SetCellStyle(sheet, cell, cell, style)
		}
		if err != nil {
			tb.Fatalf("WorkbookFromExport: %v", err)
		}
	}
	if opt.TitleRows > 0 {
		set(1, 1, fmt.Sprintf("Boverkets klimatdatabas, version %s", export.Version))
	}
	row := opt.TitleRows + 1
	for c, i := range keep {
		set(c+1, row, headers[i])
	}
	num := func(p *float64) any {
		switch {
		case p == nil:
			return nil
		case opt.DecimalComma:
			return strings.Replace(strconv.FormatFloat(*p, 'f', -1, 64), ".", ",", 1)
		}
		return *p
	}
	for _, r := range export.Resources {
		row++
		vals := workbookRow(r, num)
		for c, i := range keep {
			if vals[i] != nil {
				set(c+1, row, vals[i])
			}
		}
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		tb.Fatalf("WorkbookFromExport: %v", err)
	}
	return buf.Bytes()
}

// workbookRow lays out one resource in the column order of HeadersSV/EN.
func workbookRow(r wbResource, num func(*float64) any) []any {
	var id any
	if n, err := strconv.ParseInt(r.ResourceId.String(), 10, 64); err == nil {
		id = n
	}
	var category string
	for _, c := range r.Categories {
		if c.ClassificationType == "Boverket" {
			category = c.Text
			break
		}
	}
	var gwpUnit string
	var typical, conservative, a4, a51 *float64
	if len(r.DataItems) > 0 {
		gwpUnit = r.DataItems[0].PropertyUnitCode
		for _, v := range r.DataItems[0].DataValueItems {
			switch v.DataModuleCode {
			case "A1-A3 Typical":
				typical = v.Value
			case "A1-A3 Conservative":
				conservative = v.Value
			case "A4":
				a4 = v.Value
			case "A5.1":
				a51 = v.Value
			}
		}
	}
	var convFactor *float64
	var convUnit any
	if len(r.Conversions) > 0 {
		convFactor, convUnit = r.Conversions[0].Value, r.Conversions[0].Unit
	}
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	return []any{id, str(r.Name), str(category), str(r.InventoryUnit), str(gwpUnit),
		num(typical), num(conservative), num(a4), num(a51),
		num(r.WasteFactor), num(convFactor), convUnit, str(r.Synonyms),
		str(r.TechnologyDescriptionAndIncludedProcesses), str(r.Version)}
}

var realJSON struct {
	once   sync.Once
	sv, en []byte
}

// RealJSONPublisher starts a stand-in serving the real 02.06 sv and 02.07
// en exports (read once per test binary) whose workbooks fail, so the
// service ingests the JSON and never falls back.
func RealJSONPublisher(tb testing.TB) *Server {
	tb.Helper()
	realJSON.once.Do(func() {
		realJSON.sv = LoadExport(tb, Export0206SV)
		realJSON.en = LoadExport(tb, Export0207EN)
	})
	if realJSON.sv == nil || realJSON.en == nil {
		tb.Fatal("loading the real exports failed in an earlier test")
	}
	up := NewServer(tb)
	up.SetJSON("sv", realJSON.sv)
	up.SetJSON("en", realJSON.en)
	up.FailExcel(http.StatusNotFound)
	return up
}
