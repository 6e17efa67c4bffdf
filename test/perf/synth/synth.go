// Package synth generates synthetic national-catalog resources from the real
// publisher exports' vocabulary, deterministically: resource i depends only
// on the seed and i (never on N), so the first 10,000 resources of a 100,000
// catalog are the 10,000 catalog, and a resource can be regenerated alone
// (with a variant) to test a one-resource change.
//
// Texts recombine the real ones: a real name's head ("Spånskiva",
// "Fabriksbetong") with qualifiers taken from other real names of the same
// category ("husbyggnad C30/37", "fuktbeständig") plus a numbered
// producer/product line, so names are varied but stay in the catalog's words;
// descriptions mix the sentences of two real resources of the category;
// synonyms come from the category's real synonyms. Numbers follow the real
// ones of the base resource with a log-normal spread (sigma 0.25), so the
// catalog keeps the real spread across categories.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/climatesearch/climatesearch/adapters/boverket"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/ingest"
)

// FirstID is the id of resource 0; ids are FirstID+i (the real catalog's ids
// are 6000000000-6100000014, so synthetic ones never collide with them).
const FirstID = 7000000000

// Version is the dataset version of the synthetic batches.
const Version = "SCALE.01"

// SharedDir returns $CLIMATESEARCH_SHARED or ../shared next to the
// repository root (the directory holding go.mod above the working
// directory), like test/shareddata.
func SharedDir() (string, error) {
	if d := os.Getenv("CLIMATESEARCH_SHARED"); d != "" {
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above the working directory; set CLIMATESEARCH_SHARED")
		}
		dir = parent
	}
}

type category struct {
	bases    []core.Resource
	qualsSV  []string
	qualsEN  []string
	sentSV   []string
	sentEN   []string
	synonyms []string
}

// Generator holds the vocabulary read from the real exports.
type Generator struct {
	seed uint64
	cats []*category
	// weights: a category is picked in proportion to its real size.
	all []int // index into cats per real resource
	// byHead: the real resources per name head ("Gipsskiva").
	byHead map[string][]core.Resource
}

// New reads 02.06.000-sv-se.json and 02.07.000-en-gb.json under
// shared/data/boverket and merges them as the service does.
func New(shared string, seed uint64) (*Generator, error) {
	read := func(name string) (*boverket.Export, error) {
		b, err := os.ReadFile(filepath.Join(shared, "data", "boverket", name))
		if err != nil {
			return nil, err
		}
		return boverket.DecodeExport(b)
	}
	sv, err := read("02.06.000-sv-se.json")
	if err != nil {
		return nil, err
	}
	en, err := read("02.07.000-en-gb.json")
	if err != nil {
		return nil, err
	}
	m := boverket.Merge(sv, en)
	if len(m.Resources) == 0 {
		return nil, fmt.Errorf("no resources in the exports")
	}
	g := &Generator{seed: seed, byHead: map[string][]core.Resource{}}
	byCat := map[string]*category{}
	var names []string
	for _, r := range m.Resources {
		if r.A1A3 == nil || strings.TrimSpace(r.NameSV) == "" {
			continue
		}
		key := r.Category
		c := byCat[key]
		if c == nil {
			c = &category{}
			byCat[key] = c
			names = append(names, key)
		}
		c.bases = append(c.bases, r)
		g.byHead[head(r.NameSV)] = append(g.byHead[head(r.NameSV)], r)
		c.sentSV = append(c.sentSV, sentences(r.DescriptionSV)...)
		c.sentEN = append(c.sentEN, sentences(r.DescriptionEN)...)
		for _, s := range strings.Split(r.Synonyms, ",") {
			if s = strings.TrimSpace(s); s != "" {
				c.synonyms = append(c.synonyms, s)
			}
		}
	}
	sort.Strings(names)
	for i, n := range names {
		c := byCat[n]
		g.cats = append(g.cats, c)
		for range c.bases {
			g.all = append(g.all, i)
		}
	}
	return g, nil
}

// tails returns the comma-separated qualifiers of a real name
// ("Glasull, lösull, vindsbjälklag" -> "lösull", "vindsbjälklag").
func tails(name string) []string {
	parts := strings.Split(name, ",")
	var out []string
	for _, p := range parts[1:] {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func sentences(d string) []string {
	var out []string
	for _, s := range strings.SplitAfter(d, ". ") {
		if s = strings.TrimSpace(s); len(s) > 10 {
			out = append(out, s)
		}
	}
	return out
}

func head(name string) string {
	h, _, _ := strings.Cut(name, ",")
	return strings.TrimSpace(h)
}

// maxSentences bounds a description.
const maxSentences = 2

var (
	linesSV = []string{"produktlinje", "typ", "variant", "serie", "modell"}
	linesEN = []string{"product line", "type", "variant", "series", "model"}
)

// Item returns synthetic resource i. variant 0 is the resource as loaded;
// another variant changes its A1-A3 values (and nothing else), for a
// one-resource change.
func (g *Generator) Item(i int, variant int) core.BatchItem {
	rng := rand.New(rand.NewPCG(g.seed, uint64(i)))
	c := g.cats[g.all[rng.IntN(len(g.all))]]
	base := c.bases[rng.IntN(len(c.bases))]
	pick := func(s []string) string {
		if len(s) == 0 {
			return ""
		}
		return s[rng.IntN(len(s))]
	}
	line := rng.IntN(len(linesSV))
	num := 1 + rng.IntN(999)
	nameSV := head(base.NameSV)
	nameEN := head(base.NameEN)
	// The qualifier comes from a donor: a real resource of the same head
	// name when there are several ("Fabriksbetong, ... C30/37"), else of the
	// same category; the English qualifier is the donor's own translation.
	donors := g.byHead[nameSV]
	if len(donors) < 2 {
		donors = c.bases
	}
	donor := donors[rng.IntN(len(donors))]
	if qSV := tails(donor.NameSV); len(qSV) > 0 && rng.IntN(5) > 0 {
		j := rng.IntN(len(qSV))
		nameSV += ", " + qSV[j]
		if qEN := tails(donor.NameEN); nameEN != "" && j < len(qEN) {
			nameEN += ", " + qEN[j]
		}
	}
	nameSV += fmt.Sprintf(", %s %d", linesSV[line], num)
	if nameEN != "" {
		nameEN += fmt.Sprintf(", %s %d", linesEN[line], num)
	}
	desc := func(own string, pool []string) string {
		s := sentences(own)
		if len(pool) > 0 {
			s = append(s, pick(pool))
		}
		rng.Shuffle(len(s), func(a, b int) { s[a], s[b] = s[b], s[a] })
		// At most maxSentences distinct sentences, so that a batch of
		// 10,000 stays under the API's 8 MiB.
		var kept []string
		for _, x := range s {
			if len(kept) < maxSentences && !slices.Contains(kept, x) {
				kept = append(kept, x)
			}
		}
		s = kept
		return strings.Join(s, " ")
	}
	c = &category{sentSV: sentences(donor.DescriptionSV), sentEN: sentences(donor.DescriptionEN), synonyms: c.synonyms}
	syn := strings.TrimSpace(base.Synonyms)
	if extra := pick(c.synonyms); extra != "" && !strings.Contains(syn, extra) {
		if syn != "" {
			syn += ", "
		}
		syn += extra
	}
	spread := math.Exp(rng.NormFloat64() * 0.25)
	if variant != 0 {
		spread *= 1 + 0.01*float64(variant)
	}
	scale := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		v := math.Round(*p*spread*1e4) / 1e4
		return &v
	}
	var conv map[string]float64
	if len(base.Conversions) > 0 {
		conv = map[string]float64{}
		f := math.Exp(rng.NormFloat64() * 0.1)
		for k, v := range base.Conversions {
			if v > 0 {
				conv[k] = math.Round(v*f*1e4) / 1e4
				if conv[k] <= 0 {
					conv[k] = v
				}
			}
		}
	}
	return core.BatchItem{
		ID:               fmt.Sprint(FirstID + i),
		NameSV:           nameSV,
		NameEN:           nameEN,
		DescriptionSV:    desc(base.DescriptionSV, c.sentSV),
		DescriptionEN:    desc(base.DescriptionEN, c.sentEN),
		Synonyms:         syn,
		Unit:             base.Unit,
		GWPUnit:          base.GWPUnit,
		Category:         base.Category,
		CategoryCode:     base.CategoryCode,
		A1A3:             scale(base.A1A3),
		A1A3Conservative: scale(base.A1A3Conservative),
		A4:               scale(base.A4),
		A51:              scale(base.A51),
		Conversions:      conv,
	}
}

// Batch returns resources [from, from+n) as one batch of the national
// catalog.
func (g *Generator) Batch(from, n, variant int) core.ResourceBatch {
	b := core.ResourceBatch{Catalog: "national", Version: Version, Resources: make([]core.BatchItem, 0, n)}
	for i := from; i < from+n; i++ {
		b.Resources = append(b.Resources, g.Item(i, variant))
	}
	return b
}

// Resources returns resources [from, from+n) as an ingest of their batches
// makes them (core/ingest's mapping of a batch item), for loading an index
// or a store directly.
func (g *Generator) Resources(from, n int) ([]core.Resource, error) {
	out := make([]core.Resource, 0, n)
	for i := from; i < from+n; i += core.MaxBatchResources {
		rel, err := ingest.ReleaseFromBatch(g.Batch(i, min(core.MaxBatchResources, from+n-i), 0))
		if err != nil {
			return nil, err
		}
		out = append(out, rel.Resources...)
	}
	return out, nil
}

// Size reads a benchmark's size from the environment variable name (def
// when unset) and fails on anything but a positive integer.
func Size(tb interface {
	Helper()
	Fatalf(string, ...any)
}, name string, def int) int {
	tb.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		tb.Fatalf("%s=%q: want a positive number", name, s)
	}
	return v
}
