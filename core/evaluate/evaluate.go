// Package evaluate measures search quality on a labelled ("golden") query
// set through the same core search the API uses.
package evaluate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Golden is a labelled query set (the format of golden-dev.json).
type Golden struct {
	Catalog        string  `json:"catalog"`
	DatasetVersion string  `json:"dataset_version"`
	Queries        []Query `json:"queries"`
}

// Query is one labelled query: ExpectID must rank first, NearMiss must not
// outrank it, Relevant belongs in the top 10.
type Query struct {
	ID       string   `json:"id"`
	Q        string   `json:"q"`
	Lang     string   `json:"lang"`
	Kind     string   `json:"kind"`
	ExpectID string   `json:"expect_id"`
	NearMiss []string `json:"near_miss"`
	Relevant []string `json:"relevant"`
}

// Parse reads a golden set.
func Parse(r io.Reader) (Golden, error) {
	var g Golden
	dec := json.NewDecoder(r)
	if err := dec.Decode(&g); err != nil {
		return g, fmt.Errorf("golden set: %w", err)
	}
	if len(g.Queries) == 0 {
		return g, fmt.Errorf("golden set has no queries")
	}
	return g, nil
}

// Metrics summarise a group of queries. Hit@k and MRR count only queries
// with an expect_id; Recall@10 covers expect_id plus relevant.
type Metrics struct {
	Queries    int           `json:"queries"`
	Expecting  int           `json:"expecting"`
	Hit1       float64       `json:"hit_at_1"`
	Hit3       float64       `json:"hit_at_3"`
	MRR        float64       `json:"mrr"`
	Recall10   float64       `json:"recall_at_10"`
	Inversions int           `json:"inversions"`
	ZeroResult float64       `json:"zero_result_share"`
	P50        time.Duration `json:"p50"`
	P95        time.Duration `json:"p95"`

	hits1, hits3, rr, relFound, relTotal float64
	zero                                 int
	lat                                  []time.Duration
}

// Miss explains a query that did not meet its label.
type Miss struct {
	ID, Q, Kind string
	// Rank of expect_id (0 = not in the results), and the top ids returned.
	Rank int
	Top  []string
	Why  string
}

// Report is the outcome of a run.
type Report struct {
	Vector  bool                `json:"vector"`
	Rerank  bool                `json:"rerank"`
	Overall Metrics             `json:"overall"`
	ByKind  map[string]*Metrics `json:"by_kind"`
	Misses  []Miss              `json:"misses"`
}

// Run searches every query (limit 10) and scores the answers.
func Run(ctx context.Context, s ports.Searcher, g Golden, vector, rerank bool) (Report, error) {
	rep := Report{Vector: vector, Rerank: rerank, ByKind: map[string]*Metrics{}}
	cat, err := core.ParseCatalogs([]string{g.Catalog})
	if err != nil {
		return rep, err
	}
	for _, q := range g.Queries {
		lang, err := core.ParseLang(q.Lang)
		if err != nil {
			return rep, fmt.Errorf("query %s: %w", q.ID, err)
		}
		start := time.Now()
		resp, err := s.Search(ctx, core.SearchRequest{Query: q.Q, Lang: lang, Catalogs: cat, Vector: vector, Rerank: rerank, Limit: 10})
		took := time.Since(start)
		if err != nil {
			return rep, fmt.Errorf("query %s (%q): %w", q.ID, q.Q, err)
		}
		ids := make([]string, len(resp.Results))
		for i, h := range resp.Results {
			ids[i] = h.ID
		}
		kind := rep.ByKind[q.Kind]
		if kind == nil {
			kind = &Metrics{}
			rep.ByKind[q.Kind] = kind
		}
		for _, m := range []*Metrics{&rep.Overall, kind} {
			if miss := m.add(q, ids, took); miss != nil && m == &rep.Overall {
				rep.Misses = append(rep.Misses, *miss)
			}
		}
	}
	rep.Overall.finish()
	for _, m := range rep.ByKind {
		m.finish()
	}
	return rep, nil
}

func rankOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i + 1
		}
	}
	return 0
}

func (m *Metrics) add(q Query, ids []string, took time.Duration) *Miss {
	m.Queries++
	m.lat = append(m.lat, took)
	if len(ids) == 0 {
		m.zero++
	}
	var why []string
	rank := 0
	if q.ExpectID != "" {
		m.Expecting++
		rank = rankOf(ids, q.ExpectID)
		if rank == 1 {
			m.hits1++
		} else {
			why = append(why, fmt.Sprintf("expect_id at rank %d", rank))
		}
		if rank >= 1 && rank <= 3 {
			m.hits3++
		}
		if rank > 0 {
			m.rr += 1 / float64(rank)
		}
		for _, nm := range q.NearMiss {
			if r := rankOf(ids, nm); r > 0 && (rank == 0 || r < rank) {
				m.Inversions++
				why = append(why, "near miss "+nm+" above expect_id")
			}
		}
	}
	want := append([]string{}, q.Relevant...)
	if q.ExpectID != "" {
		want = append(want, q.ExpectID)
	}
	for _, id := range want {
		m.relTotal++
		if r := rankOf(ids, id); r > 0 && r <= 10 {
			m.relFound++
		} else if id != q.ExpectID {
			why = append(why, "relevant "+id+" not in top 10")
		}
	}
	if len(why) == 0 {
		return nil
	}
	top := ids
	if len(top) > 5 {
		top = top[:5]
	}
	return &Miss{ID: q.ID, Q: q.Q, Kind: q.Kind, Rank: rank, Top: top, Why: strings.Join(why, "; ")}
}

func (m *Metrics) finish() {
	if m.Expecting > 0 {
		m.Hit1 = m.hits1 / float64(m.Expecting)
		m.Hit3 = m.hits3 / float64(m.Expecting)
		m.MRR = m.rr / float64(m.Expecting)
	}
	if m.relTotal > 0 {
		m.Recall10 = m.relFound / m.relTotal
	}
	if m.Queries > 0 {
		m.ZeroResult = float64(m.zero) / float64(m.Queries)
	}
	sort.Slice(m.lat, func(i, j int) bool { return m.lat[i] < m.lat[j] })
	if n := len(m.lat); n > 0 {
		m.P50 = m.lat[n/2]
		m.P95 = m.lat[min(n-1, n*95/100)]
	}
}

// Print writes the report as a table.
func (r Report) Print(w io.Writer) {
	fmt.Fprintf(w, "vector=%v rerank=%v\n", r.Vector, r.Rerank)
	fmt.Fprintf(w, "%-14s %5s %6s %6s %6s %9s %5s %6s %9s %9s\n", "kind", "n", "hit@1", "hit@3", "mrr", "recall@10", "inv", "zero", "p50", "p95")
	line := func(name string, m *Metrics) {
		hit1, hit3, mrr := "-", "-", "-" // no query of the group has an expect_id
		if m.Expecting > 0 {
			hit1, hit3, mrr = fmt.Sprintf("%.3f", m.Hit1), fmt.Sprintf("%.3f", m.Hit3), fmt.Sprintf("%.3f", m.MRR)
		}
		fmt.Fprintf(w, "%-14s %5d %6s %6s %6s %9.3f %5d %6.3f %9s %9s\n", name, m.Queries, hit1, hit3, mrr, m.Recall10, m.Inversions, m.ZeroResult, m.P50.Round(time.Microsecond), m.P95.Round(time.Microsecond))
	}
	kinds := make([]string, 0, len(r.ByKind))
	for k := range r.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		line(k, r.ByKind[k])
	}
	line("overall", &r.Overall)
	for _, m := range r.Misses {
		fmt.Fprintf(w, "miss %-22s %-40q %s; top %v\n", m.ID, m.Q, m.Why, m.Top)
	}
}
