// Package ports holds the interfaces between the core and the adapters:
// what the core needs from the outside world (driven ports: store, index,
// sources, events) and what it offers to drivers (REST, MCP, console).
// It imports only the standard library and package core.
package ports

import (
	"context"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// --- Driven ports: implemented by adapters, used by core services. ---

// StoredResource is a resource with the hash of its content.
type StoredResource struct {
	Resource core.Resource
	Hash     string
}

// Changes is one atomic write: every Put, the Meta and the Events land
// together or not at all.
type Changes struct {
	Put  []StoredResource
	Meta *core.CatalogMeta
	// IfCounter, when set, is the catalog's change counter
	// (CatalogMeta.Counter) the caller's diff read. A store shared by
	// several processes refuses the write with core.KindConflict when its
	// counter differs, since another process wrote the catalog in between
	// and the diff is stale; otherwise a write that puts resources advances
	// the counter by one and stamps them with it (ChangeFeed.Since). A store
	// of one process, where the caller's lock already orders the writes of
	// a catalog, keeps no counter.
	IfCounter *uint64
	// Events go to the webhook outbox in the same transaction, so a change
	// is never stored without its event (see WebhookStore.RecordEvent).
	Events []core.Event
}

// Check refuses changes a store must not write to catalog (every store
// checks them before writing): an unknown catalog, a resource of another
// catalog or without id, meta of another catalog, an event without id.
func (ch Changes) Check(catalog core.CatalogID) error {
	known := false
	for _, k := range core.Catalogs {
		known = known || k == catalog
	}
	if !known {
		return core.Invalidf("store: apply: unknown catalog %q", catalog)
	}
	for i := range ch.Put {
		r := &ch.Put[i].Resource
		if r.Catalog != catalog {
			return core.Invalidf("store: apply to %s: resource %q belongs to catalog %q", catalog, r.ID, r.Catalog)
		}
		if r.ID == "" {
			return core.Invalidf("store: apply to %s: resource without id", catalog)
		}
	}
	if ch.Meta != nil && ch.Meta.Catalog != catalog {
		return core.Invalidf("store: apply to %s: meta is for catalog %q", catalog, ch.Meta.Catalog)
	}
	for _, ev := range ch.Events {
		if ev.ID == "" {
			return core.Invalidf("store: apply to %s: event %s without id", catalog, ev.Type)
		}
	}
	return nil
}

// ResourceStore is the durable source of truth. Resources are never deleted;
// a withdrawn resource is stored with Withdrawn set.
type ResourceStore interface {
	// Get returns one resource; found is false when it does not exist.
	Get(ctx context.Context, key core.Key) (res StoredResource, found bool, err error)
	// GetMany returns the resources of keys that exist, in the order of keys.
	GetMany(ctx context.Context, keys []core.Key) ([]StoredResource, error)
	// FindByID returns the resources with this id in every catalog.
	FindByID(ctx context.Context, id string) ([]StoredResource, error)
	// Scan calls fn for every resource of the catalog (withdrawn included), in id order.
	Scan(ctx context.Context, catalog core.CatalogID, fn func(StoredResource) error) error
	// Count returns how many resources the catalog holds (withdrawn included).
	Count(ctx context.Context, catalog core.CatalogID) (int, error)
	// Apply writes all changes atomically.
	Apply(ctx context.Context, catalog core.CatalogID, ch Changes) error
	// Meta returns the catalog's metadata (zero value with Catalog set when none).
	Meta(ctx context.Context, catalog core.CatalogID) (core.CatalogMeta, error)
	// PutMeta stores the catalog's metadata; the change counter is the
	// store's and is kept whatever meta.Counter says.
	PutMeta(ctx context.Context, meta core.CatalogMeta) error
	// Ping fails when the store cannot be read.
	Ping(ctx context.Context) error
	// IndexMark returns the mark of the text index persisted at the last
	// clean stop ("" when none). The store forgets it when it is opened,
	// so a crash or another writer since leaves none.
	IndexMark(ctx context.Context) (string, error)
	// SetIndexMark keeps the mark of a text index persisted after the last
	// write (see TextIndex.Persist).
	SetIndexMark(ctx context.Context, mark string) error
}

// StateScanner is a ResourceStore that reads each resource's content hash
// and withdrawn flag without decoding the resource, in id order
// (bytewise): all that the vector coverage of a catalog needs, over every
// resource of it.
type StateScanner interface {
	ScanStates(ctx context.Context, catalog core.CatalogID, fn func(ResourceState) error) error
}

// ResourceState is what ScanStates reads of one stored resource.
type ResourceState struct {
	ID        string
	Hash      string
	Withdrawn bool
}

// WriteCounter is a store that sees every write of its catalogs: Writes
// moves once each write of resources, catalog metadata or vectors has
// ended (committed, rolled back or failed), so an answer computed from a
// scan begun at one count still stands while the count has not moved. A
// store that other processes write too (PostgreSQL behind several
// replicas) does not implement it, and its readers scan every time.
type WriteCounter interface {
	Writes() uint64
}

// ChunkedApplier is a ResourceStore that writes a change too large to hold
// in memory chunk by chunk and still all or nothing (the badger store, by
// its undo journal). The ingest of a large file diffs and writes a chunk
// at a time through it, beside readers; a store without it gets the whole
// change in one Apply.
type ChunkedApplier interface {
	// BeginApply starts a change of catalog. Until it ends, other writes of
	// the catalog wait, and the store's reads of the catalog see it as it
	// was when the change began: the records put become readable at
	// Commit, which the caller runs with this process's readers held back
	// (core.Visibility) so that they see the store and the index change
	// together.
	BeginApply(ctx context.Context, catalog core.CatalogID) (ChunkedApply, error)
}

// ChunkedApply is a change begun by ChunkedApplier.BeginApply. Every one
// ends with Commit or Abort; Abort after Commit does nothing.
type ChunkedApply interface {
	// Put writes resources of ids not put before in this change.
	Put(ctx context.Context, put []StoredResource) error
	// Commit writes the meta and the events and makes the change whole.
	// After an error the change is rolled back, unless it did commit.
	Commit(ctx context.Context, meta *core.CatalogMeta, events []core.Event) error
	// Abort rolls back what was put.
	Abort(ctx context.Context) error
}

// TextIndex is the full-text (BM25) index over the searchable resources.
// It holds only live resources: withdrawn ones are removed.
type TextIndex interface {
	// Prepare does the work of a change (resources to add or replace, keys
	// to drop; unknown keys are ignored) without making any of it visible.
	// One change is prepared at a time: the next Prepare waits until this
	// one is committed or discarded, and the caller must do one of the two.
	Prepare(ctx context.Context, upsert []core.Resource, remove []core.Key) (IndexChange, error)
	// Upsert prepares and commits in one call.
	Upsert(ctx context.Context, rs []core.Resource) error
	// Search returns the best matches, best first.
	Search(ctx context.Context, q core.TextQuery) ([]core.Scored, error)
	// Count returns how many live resources match (the whole set Search
	// ranks, whatever q.Limit).
	Count(ctx context.Context, q core.TextQuery) (int, error)
	// Highlight returns, for each text, the byte spans of the words the
	// query matches in the index's analysis (stems, compound parts, close
	// spellings), for marking them in an answer.
	Highlight(ctx context.Context, q core.TextQuery, texts []string) ([][]core.Span, error)
	// Resume tells whether the index kept from the last clean stop is the
	// one persisted under mark (ResourceStore.IndexMark); if not, it empties
	// the index for a rebuild and returns false.
	Resume(ctx context.Context, mark string) (bool, error)
	// Persist closes the index and keeps it for the next start, returning
	// the mark the store keeps with it ("" when nothing is kept).
	Persist(ctx context.Context) (string, error)
}

// IndexChange is a prepared change of a TextIndex. Build does the costly
// part of committing it (writing its segments) beside searches, which do
// not see it yet; Commit then makes all of it searchable at once, in time
// proportional to the change (building it first if Build was not called).
// Extend builds the change, then prepares and builds one more part of it
// against the index as the change leaves it, still unseen by searches: a
// change too large to hold at once is taken a part at a time, and Commit
// publishes every part together. Discard drops it, built, extended or
// not, and leaves the index as it was; after a failed Build or Extend the
// caller discards it.
type IndexChange interface {
	Build() error
	Extend(ctx context.Context, upsert []core.Resource, remove []core.Key) error
	Commit() error
	Discard()
}

// CatalogSource delivers a release of a catalog: the publisher's JSON API,
// its workbooks, or the embedded demo snapshot.
type CatalogSource interface {
	// Name identifies the source in logs and errors.
	Name() string
	Fetch(ctx context.Context) (core.Release, error)
}

// EventPublisher carries domain events out of the core. Publish records the
// event durably before it returns (idempotent by event id: an event already
// written through Changes.Events is not recorded twice) and schedules its
// delivery.
type EventPublisher interface {
	Publish(ctx context.Context, ev core.Event) error
}

// --- Driver ports: implemented by core services, used by REST, MCP, console. ---

// Searcher answers searches.
type Searcher interface {
	Search(ctx context.Context, req core.SearchRequest) (core.SearchResponse, error)
}

// Resources answers lookups and listings.
type Resources interface {
	// Get resolves a prefixed (catalog:id) or bare id; a bare id in several
	// catalogs is a conflict.
	Get(ctx context.Context, ref string, lang core.Lang) (core.Resource, error)
	// List returns the live resources of the catalogs that pass the
	// request's filters, optionally sorted by an impact value and faceted.
	List(ctx context.Context, req core.ListRequest) (core.ListResponse, error)
	// Origin returns the public product-sheet URL of a resource.
	Origin(ctx context.Context, ref string) (string, error)
	// Health reports whether the store can be read.
	Health(ctx context.Context) core.Health
	// Ready reports whether every catalog is loaded into the index.
	Ready(ctx context.Context) core.Readiness
}

// Generations tells readers whether data they read may have changed: the
// generation moves whenever a write becomes visible (core.Visibility).
type Generations interface {
	Generation() uint64
}

// Comparer compares two resources in a shared unit, and finds the
// lower-impact resources that could replace one.
type Comparer interface {
	Compare(ctx context.Context, req core.CompareRequest) (core.Comparison, error)
	Alternatives(ctx context.Context, req core.AlternativesRequest) (core.Alternatives, error)
}

// CatalogGuide says what the service holds: each catalog, its publisher,
// release, size, freshness and vector coverage.
type CatalogGuide interface {
	CatalogList(ctx context.Context) (core.CatalogList, error)
}

// Ingester loads data into catalogs.
type Ingester interface {
	// RunUpstream fetches the catalog from its publisher now.
	RunUpstream(ctx context.Context, catalog core.CatalogID) (core.IngestResult, error)
	// ApplyBatch upserts operator-supplied resources.
	ApplyBatch(ctx context.Context, batch core.ResourceBatch) (core.IngestResult, error)
}

// FileParser reads uploaded spreadsheets (CSV, XLSX, XLS) and maps their
// columns to resources.
type FileParser interface {
	// Parse reads a file for a preview: format, headers, a sample, row count.
	Parse(filename string, data []byte, sheet string) (core.FileTable, error)
	// Map reads the file and maps its rows to resources with the column map
	// (field -> header), handing them to each as they are made, in the
	// file's order, in chunks of at most n, each chunk each's own: a large
	// file is never held as all its resources at once. version is the
	// release's (each resource without one takes it). Problems, when any,
	// list why the file cannot be loaded; each is called only for a file
	// without any. An error from each stops the mapping and is returned.
	Map(filename string, data []byte, sheet string, catalog core.CatalogID, mapping map[string]string, version string, n int, each func([]core.Resource) error) ([]core.FileProblem, error)
	// Schema lists every mappable Resource field.
	Schema() []core.SchemaField
	// Suggest proposes a column map for headers it recognises.
	Suggest(headers []string) map[string]string
}

// FileStash keeps uploaded files for a while, across restarts.
type FileStash interface {
	Stash(ctx context.Context, id string, f core.StashedFile, ttl time.Duration) error
	// Stashed returns a stashed file; found is false once it expired.
	Stashed(ctx context.Context, id string) (f core.StashedFile, found bool, err error)
}

// FileIngester previews and applies uploaded files.
type FileIngester interface {
	Preview(ctx context.Context, filename string, data []byte, sheet string) (core.IngestPreview, error)
	// Reopen answers the preview of a stashed file again (another sheet
	// when sheet is set), for as long as the stash keeps it.
	Reopen(ctx context.Context, previewID, sheet string) (core.IngestPreview, error)
	IngestFile(ctx context.Context, req core.FileRequest) (core.IngestResult, error)
}

// Status answers what the catalogs hold, for operators (the console's
// /data page): per-catalog state, a filterable resource table, and the
// spread of values per category.
type Status interface {
	// Overview is Catalogs without the vector coverage: cheap enough for
	// every page's header.
	Overview(ctx context.Context) ([]core.CatalogStatus, error)
	Catalogs(ctx context.Context) ([]core.CatalogStatus, error)
	Browse(ctx context.Context, f core.ResourceFilter) (core.ResourcePage, error)
	// Categories returns the live categories of the catalogs with the
	// spread of their A1-A3 per declared unit, largest category first.
	Categories(ctx context.Context, catalogs []core.CatalogID, lang core.Lang) ([]core.CategoryStats, error)
}
