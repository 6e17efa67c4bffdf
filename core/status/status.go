// Package status answers what the catalogs hold, for operators: each
// catalog's release, size, last ingest and vector coverage; a filterable
// table of resources; and the spread of climate values per category.
package status

import (
	"context"
	"errors"
	"iter"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Service implements ports.Status over the store and, when an embedder is
// configured, the stored vectors.
type Service struct {
	store   ports.ResourceStore
	vectors ports.VectorStore
	// embedderID is "" when no embedder is configured.
	embedderID string

	// counts caches live and withdrawn counts per catalog for Overview,
	// which every console page shows. Every ingest rewrites the catalog's
	// metadata with a new LastIngest in the same transaction as its
	// resources, so (LastIngest, stored count) changes whenever the counts
	// can have changed.
	mu     sync.Mutex
	counts map[core.CatalogID]countsEntry

	// writes, when the store (and the vector store) count their writes,
	// keeps Catalogs' answer until they move: it scans every resource and
	// every vector (about 0.5 s at 100,000 resources, docs/PERFORMANCE.md
	// section 12y). coverage holds one scan at
	// a time, so callers polling during a long scan wait for its answer
	// instead of each starting their own.
	writes   []ports.WriteCounter
	coverage chan struct{}
	kept     *keptCatalogs
}

// keptCatalogs is Catalogs' answer and the write count it was computed at.
type keptCatalogs struct {
	writes uint64
	out    []core.CatalogStatus
}

type countsEntry struct {
	lastIngest      time.Time
	stored          int
	live, withdrawn int
}

var _ ports.Status = (*Service)(nil)

// New returns a status service; vectors may be nil with embedderID "".
func New(store ports.ResourceStore, vectors ports.VectorStore, embedderID string) *Service {
	if vectors == nil {
		embedderID = ""
	}
	s := &Service{store: store, vectors: vectors, embedderID: embedderID, counts: map[core.CatalogID]countsEntry{},
		coverage: make(chan struct{}, 1)}
	if w, ok := store.(ports.WriteCounter); ok {
		s.writes = append(s.writes, w)
		if vectors != nil && any(vectors) != any(store) {
			if w, ok := vectors.(ports.WriteCounter); ok {
				s.writes = append(s.writes, w)
			} else {
				s.writes = nil
			}
		}
	}
	return s
}

// writeCount sums the stores' write counts.
func (s *Service) writeCount() (n uint64) {
	for _, w := range s.writes {
		n += w.Writes()
	}
	return n
}

// vectorHashes maps each key with a stored vector of the embedder to the
// content hash the vector was computed from.
func (s *Service) vectorHashes(ctx context.Context) (map[core.Key]string, error) {
	if s.embedderID == "" {
		return nil, nil
	}
	out := map[core.Key]string{}
	err := s.vectors.ScanVectors(ctx, s.embedderID, func(v ports.StoredVector) error {
		out[v.Key] = v.Hash
		return nil
	})
	if err != nil {
		return nil, core.Unavailablef(err, "reading stored vectors failed")
	}
	return out, nil
}

// sideBySide reports whether the stores read a catalog's resource states
// and vector hashes in the same id order, so the coverage walks the two
// together (vectorWalk) instead of holding a map of every vector's hash
// (a million entries at a million resources).
func (s *Service) sideBySide() (ports.VectorHashScanner, bool) {
	if s.embedderID == "" {
		return nil, false
	}
	hs, ok := s.vectors.(ports.VectorHashScanner)
	_, states := s.store.(ports.StateScanner)
	return hs, ok && states
}

// vectorWalk returns the vector state of each resource of c, asked in
// increasing id order, reading c's vector hashes as it goes; done ends the
// read and reports its failure.
func (s *Service) vectorWalk(ctx context.Context, c core.CatalogID, hs ports.VectorHashScanner) (state func(id, hash string) core.VectorState, done func() error) {
	var scanErr error
	next, stop := iter.Pull2(func(yield func(string, string) bool) {
		scanErr = hs.ScanVectorHashes(ctx, s.embedderID, c, func(id, hash string) error {
			if !yield(id, hash) {
				return errWalkStopped
			}
			return nil
		})
	})
	vid, vhash, more := next()
	state = func(id, hash string) core.VectorState {
		for more && vid < id {
			vid, vhash, more = next()
		}
		switch {
		case !more || vid != id:
			return core.VectorMissing
		case vhash != hash:
			return core.VectorStale
		}
		return core.VectorCurrent
	}
	done = func() error {
		stop()
		if errors.Is(scanErr, errWalkStopped) {
			return nil
		}
		return scanErr
	}
	return state, done
}

var errWalkStopped = errors.New("status: the vector walk ended first")

func (s *Service) stateOf(hashes map[core.Key]string, k core.Key, hash string) core.VectorState {
	if s.embedderID == "" {
		return core.VectorNone
	}
	h, ok := hashes[k]
	switch {
	case !ok:
		return core.VectorMissing
	case h != hash:
		return core.VectorStale
	}
	return core.VectorCurrent
}

// scanStates calls fn with the hash and withdrawn flag of every resource
// of c: read without decoding the resources when the store can
// (ports.StateScanner): 20 times faster (badgerstore BenchmarkScanStates).
func (s *Service) scanStates(ctx context.Context, c core.CatalogID, fn func(ports.ResourceState) error) error {
	if ss, ok := s.store.(ports.StateScanner); ok {
		return ss.ScanStates(ctx, c, fn)
	}
	return s.store.Scan(ctx, c, func(sr ports.StoredResource) error {
		return fn(ports.ResourceState{ID: sr.Resource.ID, Hash: sr.Hash, Withdrawn: sr.Resource.Withdrawn})
	})
}

// Catalogs returns the state of every catalog, in the canonical order.
// The answer is kept while the stores' write counts stand still.
func (s *Service) Catalogs(ctx context.Context) ([]core.CatalogStatus, error) {
	if len(s.writes) == 0 { // a store that does not count its writes
		return s.catalogs(ctx, true)
	}
	select {
	case s.coverage <- struct{}{}:
	case <-ctx.Done():
		return nil, core.Unavailablef(ctx.Err(), "counting the vector coverage: %v", ctx.Err())
	}
	defer func() { <-s.coverage }()
	// Read before the scan: a write ending during it moves the count, so
	// what the scan saw of it is not kept past the next call.
	n := s.writeCount()
	if k := s.kept; k != nil && k.writes == n {
		return slices.Clone(k.out), nil
	}
	out, err := s.catalogs(ctx, true)
	if err == nil {
		s.kept = &keptCatalogs{writes: n, out: slices.Clone(out)}
	}
	return out, err
}

// Overview returns the state of every catalog without reading vectors
// (Embedding is left zero).
func (s *Service) Overview(ctx context.Context) ([]core.CatalogStatus, error) {
	return s.catalogs(ctx, false)
}

func (s *Service) catalogs(ctx context.Context, vectors bool) ([]core.CatalogStatus, error) {
	var hashes map[core.Key]string
	hs, walk := s.sideBySide()
	if vectors && !walk {
		var err error
		if hashes, err = s.vectorHashes(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]core.CatalogStatus, 0, len(core.Catalogs))
	for _, c := range core.Catalogs {
		meta, err := s.store.Meta(ctx, c)
		if err != nil {
			return nil, core.Unavailablef(err, "store unavailable")
		}
		st := core.CatalogStatus{Catalog: core.CatalogInfo(c), Meta: meta}
		if !vectors && meta.Counts != nil {
			// Kept by every ingest with its change: no scan of the catalog
			// after each ingest (4.3 s at 100,000 resources).
			st.Live, st.Withdrawn = meta.Counts.Live, meta.Counts.Withdrawn
			out = append(out, st)
			continue
		}
		stored := 0
		if !vectors {
			stored, err = s.store.Count(ctx, c)
			if err != nil {
				return nil, core.Unavailablef(err, "store unavailable")
			}
			s.mu.Lock()
			e, ok := s.counts[c]
			s.mu.Unlock()
			if ok && e.stored == stored && e.lastIngest.Equal(meta.LastIngest) {
				st.Live, st.Withdrawn = e.live, e.withdrawn
				out = append(out, st)
				continue
			}
		}
		state := func(id, hash string) core.VectorState { return s.stateOf(hashes, core.Key{Catalog: c, ID: id}, hash) }
		done := func() error { return nil }
		if vectors {
			st.Embedding.EmbedderID = s.embedderID
			if walk {
				state, done = s.vectorWalk(ctx, c, hs)
			}
		}
		err = s.scanStates(ctx, c, func(rs ports.ResourceState) error {
			if rs.Withdrawn {
				st.Withdrawn++
				return nil
			}
			st.Live++
			if !vectors {
				return nil
			}
			switch state(rs.ID, rs.Hash) {
			case core.VectorCurrent:
				st.Embedding.Current++
			case core.VectorStale:
				st.Embedding.Stale++
			case core.VectorMissing:
				st.Embedding.Missing++
			}
			return nil
		})
		if derr := done(); err == nil && derr != nil {
			return nil, core.Unavailablef(derr, "reading stored vectors failed")
		}
		if err != nil {
			return nil, core.Unavailablef(err, "store unavailable")
		}
		if vectors {
			st.Embedding.Total = st.Live
		} else {
			s.mu.Lock()
			s.counts[c] = countsEntry{lastIngest: meta.LastIngest, stored: stored, live: st.Live, withdrawn: st.Withdrawn}
			s.mu.Unlock()
		}
		out = append(out, st)
	}
	return out, nil
}

// Browse returns one page of the resources that pass the filter, in catalog
// then id order.
func (s *Service) Browse(ctx context.Context, f core.ResourceFilter) (core.ResourcePage, error) {
	switch f.Withdrawn {
	case core.WithdrawnExclude, core.WithdrawnOnly, core.WithdrawnInclude:
	default:
		return core.ResourcePage{}, core.Invalidf("withdrawn must be empty, %q or %q", core.WithdrawnOnly, core.WithdrawnInclude)
	}
	if f.Limit <= 0 {
		f.Limit = core.DefaultBrowseLimit
	}
	if f.Limit > core.MaxBrowseLimit {
		return core.ResourcePage{}, core.Invalidf("limit must be at most %d", core.MaxBrowseLimit)
	}
	if f.Offset < 0 {
		return core.ResourcePage{}, core.Invalidf("offset must not be negative")
	}
	if f.MissingVector && s.embedderID == "" {
		return core.ResourcePage{}, core.Invalidf("no embedder is configured (SERVICE_EMBEDDER=none), so no resource has a vector to miss")
	}
	if len(f.Text) > core.MaxQueryLen {
		return core.ResourcePage{}, core.Invalidf("text filter is longer than %d characters", core.MaxQueryLen)
	}
	catalogs := f.Catalogs
	if len(catalogs) == 0 {
		catalogs = core.Catalogs
	}
	hashes, err := s.vectorHashes(ctx)
	if err != nil {
		return core.ResourcePage{}, err
	}
	text := strings.ToLower(strings.TrimSpace(f.Text))
	category := strings.TrimSpace(f.Category)
	page := core.ResourcePage{Offset: f.Offset, Limit: f.Limit, Resources: []core.ResourceRow{}}
	for _, c := range catalogs {
		err := s.store.Scan(ctx, c, func(sr ports.StoredResource) error {
			r := &sr.Resource
			switch {
			case f.Withdrawn == core.WithdrawnExclude && r.Withdrawn,
				f.Withdrawn == core.WithdrawnOnly && !r.Withdrawn:
				return nil
			case category != "" && !strings.EqualFold(r.Category, category) && !strings.EqualFold(r.CategoryEN, category):
				return nil
			case text != "" && !matchesText(r, text):
				return nil
			}
			state := s.stateOf(hashes, sr.Resource.Key(), sr.Hash)
			if f.MissingVector && (r.Withdrawn || state == core.VectorCurrent) {
				return nil
			}
			if page.Total >= f.Offset && len(page.Resources) < f.Limit {
				row := core.ResourceRow{Resource: r.Clone(), Vector: state}
				row.Localize(f.Lang)
				page.Resources = append(page.Resources, row)
			}
			page.Total++
			return nil
		})
		if err != nil {
			return core.ResourcePage{}, core.Unavailablef(err, "store unavailable")
		}
	}
	return page, nil
}

func matchesText(r *core.Resource, text string) bool {
	for _, v := range []string{r.ID, r.NameSV, r.NameEN, r.NameDA, r.NameDE, r.Category, r.CategoryEN, r.Synonyms, r.SynonymsEN} {
		if v != "" && strings.Contains(strings.ToLower(v), text) {
			return true
		}
	}
	return false
}

// Categories returns every live category of the catalogs, largest first,
// with the spread of typical A1-A3 per declared unit.
func (s *Service) Categories(ctx context.Context, catalogs []core.CatalogID, lang core.Lang) ([]core.CategoryStats, error) {
	if len(catalogs) == 0 {
		catalogs = core.Catalogs
	}
	type group struct {
		stats core.CategoryStats
		units map[string][]core.SpreadPoint
	}
	var groups []*group
	for _, c := range catalogs {
		byName := map[string]*group{}
		err := s.store.Scan(ctx, c, func(sr ports.StoredResource) error {
			r := sr.Resource
			if r.Withdrawn {
				return nil
			}
			name := r.Category
			if name == "" {
				name = "(no category)"
			}
			g := byName[name]
			if g == nil {
				g = &group{stats: core.CategoryStats{Catalog: c, Category: name, CategoryEN: r.CategoryEN}, units: map[string][]core.SpreadPoint{}}
				byName[name] = g
				groups = append(groups, g)
			}
			g.stats.Count++
			if r.A1A3 != nil {
				r.Localize(lang)
				g.units[r.Unit] = append(g.units[r.Unit], core.SpreadPoint{Ref: r.Ref(), Name: r.Name, Value: *r.A1A3})
			}
			return nil
		})
		if err != nil {
			return nil, core.Unavailablef(err, "store unavailable")
		}
	}
	out := make([]core.CategoryStats, 0, len(groups))
	for _, g := range groups {
		g.stats.Units = []core.UnitSpread{}
		for unit, pts := range g.units {
			g.stats.Units = append(g.stats.Units, Spread(unit, pts))
		}
		sort.Slice(g.stats.Units, func(i, j int) bool {
			a, b := g.stats.Units[i], g.stats.Units[j]
			if a.N != b.N {
				return a.N > b.N
			}
			return a.Unit < b.Unit
		})
		out = append(out, g.stats)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if out[i].Catalog != out[j].Catalog {
			return out[i].Catalog < out[j].Catalog
		}
		return out[i].Category < out[j].Category
	})
	return out, nil
}

// Spread sorts the points and computes their five-number summary
// (quartiles by linear interpolation between closest ranks).
func Spread(unit string, pts []core.SpreadPoint) core.UnitSpread {
	sort.Slice(pts, func(i, j int) bool {
		if pts[i].Value != pts[j].Value {
			return pts[i].Value < pts[j].Value
		}
		return pts[i].Ref < pts[j].Ref
	})
	u := core.UnitSpread{Unit: unit, N: len(pts), Points: pts}
	if len(pts) == 0 {
		return u
	}
	q := func(p float64) float64 {
		pos := p * float64(len(pts)-1)
		lo := int(math.Floor(pos))
		hi := int(math.Ceil(pos))
		return pts[lo].Value + (pts[hi].Value-pts[lo].Value)*(pos-float64(lo))
	}
	u.Min, u.Q1, u.Median, u.Q3, u.Max = pts[0].Value, q(0.25), q(0.5), q(0.75), pts[len(pts)-1].Value
	return u
}

// CatalogList describes every catalog for clients (GET /api/catalogs).
func (s *Service) CatalogList(ctx context.Context) (core.CatalogList, error) {
	sts, err := s.Catalogs(ctx)
	if err != nil {
		return core.CatalogList{}, err
	}
	out := core.CatalogList{Source: core.SourceAll, Catalogs: make([]core.CatalogSummary, len(sts))}
	for i, st := range sts {
		out.Catalogs[i] = core.Summarize(st)
	}
	return out, nil
}
