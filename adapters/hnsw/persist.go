package hnsw

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/internal/atomicfile"
	"github.com/climatesearch/climatesearch/ports"
)

var _ ports.VectorSnapshots = (*CatalogIndex)(nil)

// OpenCatalogIndex returns an empty CatalogIndex kept in the file at path
// across a clean stop (Persist), to be taken up at the next start (Resume)
// instead of rebuilt. A snapshot found there is set aside at once, as the
// text index does with its own: from this start on the graph moves on, and
// a crash must not leave a file that seems to match it.
func OpenCatalogIndex(dim int, path string) (*CatalogIndex, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("hnsw: %w", err)
	}
	c := NewCatalogIndex(dim)
	c.path = path
	taken := path + ".taken"
	_ = os.Remove(taken) // left by a start that never resumed
	switch err := os.Rename(path, taken); {
	case err == nil:
		c.taken = taken
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("hnsw: %w", err)
	}
	// Temporary files of a Persist cut short (a stop past its timeout).
	if left, err := filepath.Glob(path + ".*"); err == nil {
		for _, f := range left {
			if f != taken {
				_ = os.Remove(f)
			}
		}
	}
	return c, nil
}

// Persist writes every catalog's graph, with the embedder's id and mark,
// to the index's file (through a temporary file renamed over it). An index
// without a file (NewCatalogIndex) keeps nothing. Writers must have
// stopped: a vector added meanwhile may or may not be in the file.
func (c *CatalogIndex) Persist(ctx context.Context, embedderID, mark string) error {
	if c.path == "" {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hnsw: keeping the graph: %w", err)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	cats := make([]core.CatalogID, 0, len(c.per))
	for cat := range c.per {
		cats = append(cats, cat)
	}
	slices.Sort(cats)
	err := atomicfile.Write(c.path, func(f *os.File) error {
		w := newSnapWriter(f)
		writeHeader(w, snapHeader{embedder: embedderID, mark: mark, dim: c.dim, catalogs: len(cats)})
		for _, cat := range cats {
			w.str(string(cat))
			ix := c.per[cat]
			ix.vacMu.Lock()
			ix.mu.Lock()
			ix.save(w)
			ix.mu.Unlock()
			ix.vacMu.Unlock()
		}
		return w.finish()
	})
	if err != nil {
		return fmt.Errorf("hnsw: keeping the graph: %w", err)
	}
	return nil
}

// Resume takes up the graphs persisted by embedderID under mark, replacing
// what the index holds, and reports whether it did. Another mark or
// embedder, no file, or an empty mark give false and no error; a file that
// cannot be read (damaged, truncated, another format or parameters) gives
// false and the reason. Either way the file is removed: it is taken up
// once.
func (c *CatalogIndex) Resume(_ context.Context, embedderID, mark string) (bool, error) {
	if c.taken == "" {
		return false, nil
	}
	defer func() {
		_ = os.Remove(c.taken)
		c.taken = ""
	}()
	if mark == "" {
		return false, nil
	}
	f, err := os.Open(c.taken)
	if err != nil {
		return false, fmt.Errorf("hnsw: %w", err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("hnsw: %w", err)
	}
	r := newSnapReader(f, fi.Size())
	h := readHeader(r)
	switch {
	case r.err != nil:
		return false, r.err
	case h.mark != mark || h.embedder != embedderID:
		return false, nil
	case h.dim != c.dim:
		return false, fmt.Errorf("%w: %d dimensions, the index %d", errSnapshot, h.dim, c.dim)
	}
	per := make(map[core.CatalogID]*Index, h.catalogs)
	for range h.catalogs {
		cat := core.CatalogID(r.str(1 << 10))
		ix := load(r, h.version, c.dim, Options{})
		if ix == nil || r.err != nil {
			return false, r.err
		}
		per[cat] = ix
	}
	if err := r.check(); err != nil {
		return false, err
	}
	c.mu.Lock()
	c.per = per
	c.mu.Unlock()
	return true, nil
}
