// Command scalegen writes synthetic national-catalog resources built from the
// real exports' vocabulary (see package test/perf/synth) as ResourceBatch
// JSON, the body of POST /admin/resources, at most 10,000 resources a batch.
//
//	go run ./test/perf/scalegen -n 100000 -seed 1 -batch 10000 -out DIR   # DIR/batch-0001.json ...
//	go run ./test/perf/scalegen -n 1000 > batches.ndjson                  # one batch per line on stdout
//	go run ./test/perf/scalegen -from 42 -n 1 -variant 3                  # resource 42 alone, A1-A3 changed
//	go run ./test/perf/scalegen -n 10000 -csv DIR/resources.csv           # also a CSV for /admin/ingest/file
//
// Output is deterministic: the same -seed gives the same bytes, and resource
// i is the same whatever -n is.
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/perf/synth"
)

func main() {
	n := flag.Int("n", 10000, "number of resources")
	from := flag.Int("from", 0, "index of the first resource (id = 7000000000 + index)")
	seed := flag.Uint64("seed", 1, "seed")
	batch := flag.Int("batch", core.MaxBatchResources, "resources per batch (at most 10000)")
	variant := flag.Int("variant", 0, "0 = as loaded; another value changes the A1-A3 values")
	out := flag.String("out", "", "directory for batch-NNNN.json (default: one batch per line on stdout)")
	csvPath := flag.String("csv", "", "also write the resources as CSV to this file")
	flag.Parse()
	if *batch < 1 || *batch > core.MaxBatchResources {
		fail(fmt.Errorf("-batch must be 1..%d", core.MaxBatchResources))
	}
	shared, err := synth.SharedDir()
	if err != nil {
		fail(err)
	}
	g, err := synth.New(shared, *seed)
	if err != nil {
		fail(err)
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fail(err)
		}
	}
	var cw *csv.Writer
	if *csvPath != "" {
		f, err := os.Create(*csvPath)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		cw = csv.NewWriter(f)
		defer cw.Flush()
		cw.Write([]string{"id", "name_sv", "name_en", "description_sv", "synonyms", "unit", "category", "category_code", "a1a3", "a1a3_conservative", "a4", "a5_1"})
	}
	enc := json.NewEncoder(os.Stdout)
	for k, start := 1, *from; start < *from+*n; k, start = k+1, start+*batch {
		m := min(*batch, *from+*n-start)
		b := g.Batch(start, m, *variant)
		if *out == "" {
			if err := enc.Encode(b); err != nil {
				fail(err)
			}
		} else {
			data, err := json.Marshal(b)
			if err != nil {
				fail(err)
			}
			if err := os.WriteFile(filepath.Join(*out, fmt.Sprintf("batch-%04d.json", k)), data, 0o644); err != nil {
				fail(err)
			}
		}
		if cw != nil {
			for _, it := range b.Resources {
				cw.Write([]string{it.ID, it.NameSV, it.NameEN, it.DescriptionSV, it.Synonyms, it.Unit, it.Category, it.CategoryCode, num(it.A1A3), num(it.A1A3Conservative), num(it.A4), num(it.A51)})
			}
		}
	}
}

func num(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scalegen:", err)
	os.Exit(1)
}
