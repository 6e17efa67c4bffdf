package core

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Visibility makes each write appear on every read path at once. A write
// changes two things, the store (what lookups and listings read) and the
// index (what search reads); readers and the write's publication exclude
// each other, so a reader sees both before the write or both after it:
// once any endpoint shows a change, search finds it, and no answer mixes two
// releases.
//
// Only the publication is exclusive, not the write's preparation: an ingest
// analyses its resources first and then, inside Publish, commits the store
// transaction and swaps the index batch in, which takes time proportional
// to the change. Readers hold the read side only while they touch the store
// and the index, never while waiting on a remote service (the embedder, the
// reranker): a writer waiting for the lock also holds back new readers.
//
// Visibility also knows which catalogs are still being loaded into the index
// after a start: their reads answer KindLoading instead of an incomplete
// answer, and readiness reports them.
type Visibility struct {
	rw sync.RWMutex
	// gen counts publications: an answer cached with one generation is
	// still the answer while the generation has not moved.
	gen atomic.Uint64

	mu      sync.Mutex
	loading map[CatalogID]*CatalogLoad
	// boot is the state of the boot ingest ("" when none runs).
	boot string
}

// States of the boot ingest in Readiness.BootIngest.
const (
	BootIngestRunning  = "running"
	BootIngestFinished = "finished"
	BootIngestFailed   = "failed"
)

// CatalogLoad is the progress of a catalog being loaded into the index.
type CatalogLoad struct {
	Catalog CatalogID `json:"catalog"`
	// Indexed and Total count resources; Total is 0 until the store was read.
	Indexed int `json:"indexed"`
	Total   int `json:"total"`
	// Error says why the load failed; the catalog stays unsearchable until
	// a restart loads it.
	Error string `json:"error,omitempty"`
}

// Readiness is the answer of /readyz.
type Readiness struct {
	Ready bool `json:"ready"`
	// Loading lists the catalogs not yet searchable, with their progress.
	Loading []CatalogLoad `json:"loading,omitempty"`
	// Reason says in words why the service is not ready.
	Reason string `json:"reason,omitempty"`
	// BootIngest is the state of the ingest run at boot (running,
	// finished, failed); absent when the process runs none. The service is
	// not ready while it runs.
	BootIngest string `json:"boot_ingest,omitempty"`
}

// NewVisibility returns a gate with every catalog searchable.
func NewVisibility() *Visibility {
	return &Visibility{loading: map[CatalogID]*CatalogLoad{}}
}

// BeginLoading marks catalogs as being loaded into the index: their reads
// answer KindLoading until MarkLoaded. A process calls it before it serves
// anything, then loads the index in the background.
func (v *Visibility) BeginLoading(catalogs ...CatalogID) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, c := range catalogs {
		v.loading[c] = &CatalogLoad{Catalog: c}
	}
}

// Read runs fn with every write's publication held back, after checking
// that the catalogs (none: all) are loaded.
func (v *Visibility) Read(catalogs []CatalogID, fn func() error) error {
	if err := v.Loaded(catalogs); err != nil {
		return err
	}
	v.rw.RLock()
	defer v.rw.RUnlock()
	return fn()
}

// Publish runs fn, the commit of a write to the store and the index, with
// every reader held back, and moves the generation.
func (v *Visibility) Publish(fn func() error) error {
	v.rw.Lock()
	defer v.rw.Unlock()
	defer v.gen.Add(1)
	return fn()
}

// Generation counts the publications so far.
func (v *Visibility) Generation() uint64 { return v.gen.Load() }

// Loaded returns a KindLoading error naming the catalogs (none: all) that
// are still being loaded into the index, nil when all are searchable.
func (v *Visibility) Loaded(catalogs []CatalogID) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.loading) == 0 {
		return nil
	}
	var parts []string
	for _, c := range Catalogs {
		l, ok := v.loading[c]
		if !ok || (len(catalogs) > 0 && !slices.Contains(catalogs, c)) {
			continue
		}
		parts = append(parts, l.describe())
	}
	if len(parts) == 0 {
		return nil
	}
	return &Error{Kind: KindLoading, Msg: "the search index is still loading after a start (" + strings.Join(parts, "; ") + "); retry in a few seconds"}
}

// SetProgress records how far the load of a catalog has come.
func (v *Visibility) SetProgress(c CatalogID, indexed, total int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if l, ok := v.loading[c]; ok {
		l.Indexed, l.Total = indexed, total
	}
}

// MarkFailed records that loading a catalog failed: its reads keep
// answering KindLoading, now with the cause, and readiness says so.
func (v *Visibility) MarkFailed(c CatalogID, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if l, ok := v.loading[c]; ok {
		l.Error = err.Error()
	}
}

// MarkLoaded makes a catalog searchable; its reads are served from now on.
func (v *Visibility) MarkLoaded(c CatalogID) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.loading, c)
	v.gen.Add(1)
}

// BeginBootIngest marks the boot ingest as running: the service is not
// ready until BootIngestDone. A process calls it before it serves anything.
func (v *Visibility) BeginBootIngest() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.boot = BootIngestRunning
}

// BootIngestDone records that the boot ingest has finished (failed nil) or
// failed; either way the service can be ready (it serves what it stores).
func (v *Visibility) BootIngestDone(failed error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.boot = BootIngestFinished
	if failed != nil {
		v.boot = BootIngestFailed
	}
}

// Readiness reports whether every catalog is searchable and the boot
// ingest, if any, has finished or failed.
func (v *Visibility) Readiness() Readiness {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := Readiness{BootIngest: v.boot}
	var parts []string
	for _, c := range Catalogs {
		if l, ok := v.loading[c]; ok {
			out.Loading = append(out.Loading, *l)
			parts = append(parts, l.describe())
		}
	}
	var reasons []string
	if len(parts) > 0 {
		reasons = append(reasons, "loading the search index: "+strings.Join(parts, "; "))
	}
	if v.boot == BootIngestRunning {
		reasons = append(reasons, "boot ingest running")
	}
	out.Ready = len(reasons) == 0
	out.Reason = strings.Join(reasons, "; ")
	return out
}

func (l *CatalogLoad) describe() string {
	if l.Error != "" {
		return fmt.Sprintf("%s: loading failed (%s); a restart loads it again", l.Catalog, l.Error)
	}
	if l.Total == 0 {
		return fmt.Sprintf("%s: reading the store", l.Catalog)
	}
	return fmt.Sprintf("%s: %d of %d resources indexed", l.Catalog, l.Indexed, l.Total)
}
