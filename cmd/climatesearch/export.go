package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/climatesearch/climatesearch/cmd/climatesearch/buildinfo"
	"github.com/climatesearch/climatesearch/core"
)

// csvColumns are the columns of `export --format csv`, in order.
var csvColumns = []string{"catalog", "id", "name", "name_lang", "name_sv", "name_en", "name_da", "category", "category_en", "bk04",
	"unit", "a1a3", "a1a3_conservative", "a4", "a5_1", "gwp_unit", "conservative_factor", "waste_factor", "biogenic_carbon",
	"service_life", "conversions", "version", "source", "origin"}

func num(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

func csvRow(r *core.Resource) []string {
	conv := ""
	if len(r.Conversions) > 0 {
		b, _ := json.Marshal(r.Conversions)
		conv = string(b)
	}
	return []string{string(r.Catalog), r.ID, r.Name, r.NameLang, r.NameSV, r.NameEN, r.NameDA, r.Category, r.CategoryEN, r.BK04,
		r.Unit, num(r.A1A3), num(r.A1A3Conservative), num(r.A4), num(r.A51), r.GWPUnit, num(r.ConservativeFactor), num(r.WasteFactor),
		num(r.BiogenicCarbon), r.ServiceLife, conv, r.Version, r.Source, r.Origin}
}

// runExport writes the live resources (what GET /api/resources lists) of
// the running service (--url) or of a stopped data directory.
func runExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("export", stderr)
	base := urlFlag(fs, "")
	dataDir := fs.String("data-dir", "", "data directory of a stopped server (default SERVICE_DATA_DIR)")
	catalogs := fs.String("catalog", "", "catalogs, comma-separated: national, dkbr (br25); default all")
	format := fs.String("format", "csv", "csv, json or jsonl")
	lang := fs.String("lang", "sv", "language of name and description: sv or en")
	out := fs.String("out", "", "file to write (default stdout)")
	pos, code, ok := parseArgs(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return fail(stderr, "export", exitUsage, "unexpected argument %q", pos[0])
	}
	if *format != "csv" && *format != "json" && *format != "jsonl" {
		return fail(stderr, "export", exitUsage, "invalid --format %q: use csv, json or jsonl", *format)
	}
	cats, err := core.ParseCatalogList(*catalogs)
	if err != nil {
		return fail(stderr, "export", exitUsage, "invalid --catalog: %v", err)
	}
	l, err := core.ParseLang(*lang)
	if err != nil {
		return fail(stderr, "export", exitUsage, "invalid --lang: %v", err)
	}
	ctx := context.Background()
	req := core.ListRequest{Catalogs: cats, Lang: l}
	var list core.ListResponse
	if *base != "" {
		c, err := newClient(*base, 5*time.Minute)
		if err != nil {
			return fail(stderr, "export", exitUsage, "%v", err)
		}
		if list, err = c.List(ctx, req); err != nil {
			return fail(stderr, "export", exitFail, "%v", err)
		}
	} else {
		cfg, err := localConfig(*dataDir)
		if err != nil {
			return fail(stderr, "export", exitUsage, "%v", err)
		}
		loc, err := openLocal(ctx, cfg, stderr)
		if err != nil {
			return fail(stderr, "export", exitFail, "%v", err)
		}
		list, err = loc.Lookup.List(ctx, req)
		_ = loc.Close(ctx)
		if err != nil {
			return fail(stderr, "export", exitFail, "%v", err)
		}
	}
	w := stdout
	var f *os.File
	if *out != "" {
		if f, err = os.Create(*out); err != nil {
			return fail(stderr, "export", exitFail, "%v", err)
		}
		w = f
	}
	bw := bufio.NewWriter(w)
	err = writeExport(bw, *format, list)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fail(stderr, "export", exitFail, "writing: %v", err)
	}
	fmt.Fprintf(stderr, "exported %d resources (%s)\n", len(list.Resources), *format)
	return exitOK
}

func writeExport(w io.Writer, format string, list core.ListResponse) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Source    string          `json:"source"`
			Resources []core.Resource `json:"resources"`
		}{list.Source, list.Resources})
	case "jsonl":
		enc := json.NewEncoder(w)
		for i := range list.Resources {
			if err := enc.Encode(&list.Resources[i]); err != nil {
				return err
			}
		}
		return nil
	}
	// The attribution comes first, as comment lines (readers of CSV with
	// comments skip them; others see them as the first rows).
	for _, line := range strings.Split(list.Source, "\n") {
		if _, err := fmt.Fprintf(w, "# Source: %s\n", line); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "# Exported by %s on %s: %d live resources.\n", buildinfo.Get().String(), time.Now().UTC().Format(time.RFC3339), len(list.Resources))
	cw := csv.NewWriter(w)
	if err := cw.Write(csvColumns); err != nil {
		return err
	}
	for i := range list.Resources {
		if err := cw.Write(csvRow(&list.Resources[i])); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitFail
	}
	return exitOK
}
