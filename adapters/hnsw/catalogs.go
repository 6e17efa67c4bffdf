package hnsw

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// CatalogIndex implements ports.VectorIndex with one Index per catalog, so a
// catalog filter never costs recall: each asked catalog is searched for k
// and the answers are merged.
type CatalogIndex struct {
	dim int
	mu  sync.RWMutex // guards the map; each Index guards itself
	per map[core.CatalogID]*Index
	// path is the file the graphs are kept in across a clean stop ("":
	// none); taken is the snapshot found there at open, set aside for
	// Resume ("": none). See persist.go.
	path  string
	taken string
}

var _ ports.VectorIndex = (*CatalogIndex)(nil)

// NewCatalogIndex returns an empty index of dim-dimensional vectors.
func NewCatalogIndex(dim int) *CatalogIndex {
	return &CatalogIndex{dim: dim, per: map[core.CatalogID]*Index{}}
}

func (c *CatalogIndex) index(cat core.CatalogID, create bool) *Index {
	c.mu.RLock()
	ix := c.per[cat]
	c.mu.RUnlock()
	if ix != nil || !create {
		return ix
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ix = c.per[cat]; ix == nil {
		ix = New(c.dim, Options{})
		c.per[cat] = ix
	}
	return ix
}

// Upsert adds or replaces the vector of a resource.
func (c *CatalogIndex) Upsert(_ context.Context, key core.Key, vec []float32) error {
	return c.index(key.Catalog, true).Add(key.ID, vec)
}

// upsertChunk is how many vectors UpsertMany hands AddBatch at a time:
// enough for both cores, small enough to stop soon when ctx is cancelled.
const upsertChunk = 1024

// UpsertMany adds or replaces the vectors with AddBatch, catalog by
// catalog, upsertChunk at a time.
func (c *CatalogIndex) UpsertMany(ctx context.Context, vs []ports.StoredVector) (int, error) {
	var order []core.CatalogID
	per := map[core.CatalogID][]Item{}
	for _, v := range vs {
		if _, ok := per[v.Key.Catalog]; !ok {
			order = append(order, v.Key.Catalog)
		}
		per[v.Key.Catalog] = append(per[v.Key.Catalog], Item{ID: v.Key.ID, Vec: v.Vec})
	}
	stored := 0
	var errs []error
	for _, cat := range order {
		items := per[cat]
		ix := c.index(cat, true)
		for len(items) > 0 {
			if err := ctx.Err(); err != nil {
				return stored, errors.Join(append(errs, err)...)
			}
			n := min(len(items), upsertChunk)
			// A key repeated across two chunks is added twice, the
			// later last, which is what Upsert one by one would do.
			err := ix.AddBatch(items[:n])
			stored += n - rejected(err)
			if err != nil {
				errs = append(errs, err)
			}
			items = items[n:]
		}
	}
	return stored, errors.Join(errs...)
}

// rejected counts the items an error of AddBatch reports.
func rejected(err error) int {
	if err == nil {
		return 0
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return len(j.Unwrap())
	}
	return 1
}

// Remove drops resources; unknown keys are ignored.
func (c *CatalogIndex) Remove(_ context.Context, keys []core.Key) error {
	for _, k := range keys {
		if ix := c.index(k.Catalog, false); ix != nil {
			ix.Delete(k.ID)
		}
	}
	return nil
}

// Len counts the vectors of every catalog.
func (c *CatalogIndex) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for _, ix := range c.per {
		n += ix.Len()
	}
	return n
}

// Search returns the k nearest resources of the catalogs (all when empty),
// best first, ties broken by key.
func (c *CatalogIndex) Search(_ context.Context, vec []float32, catalogs []core.CatalogID, k int) ([]core.Scored, error) {
	if len(catalogs) == 0 {
		catalogs = core.Catalogs
	}
	var out []core.Scored
	for _, cat := range catalogs {
		ix := c.index(cat, false)
		if ix == nil {
			continue
		}
		for _, r := range ix.Search(vec, k) {
			out = append(out, core.Scored{Key: core.Key{Catalog: cat, ID: r.ID}, Score: float64(r.Score)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Key.String() < out[j].Key.String()
	})
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// Lens counts the vectors of each catalog (the metrics read it).
func (c *CatalogIndex) Lens() map[core.CatalogID]int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[core.CatalogID]int, len(c.per))
	for cat, ix := range c.per {
		out[cat] = ix.Len()
	}
	return out
}
