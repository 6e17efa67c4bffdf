package core

import "time"

// IngestOrigin tells where the data of an ingest came from. It is not the
// product sheet (Resource.Origin).
type IngestOrigin string

const (
	OriginJSON    IngestOrigin = "json"    // the publisher's JSON API
	OriginExcel   IngestOrigin = "excel"   // the publisher's workbooks, when the JSON failed
	OriginFixture IngestOrigin = "fixture" // the embedded demo snapshot, on an empty store only
	OriginFile    IngestOrigin = "file"    // operator-supplied data: an uploaded file or a JSON batch
)

// Release is a complete or partial set of resources for one catalog, as a
// source delivers it, before the ingest service normalises and stores it.
type Release struct {
	Catalog   CatalogID
	Origin    IngestOrigin
	Version   string
	Resources []Resource
	// Rejected counts source rows that could not be turned into a resource
	// (no id, no climate value); the source has already dropped them.
	Rejected int
	// Complete means the release is the whole catalog: resources missing
	// from it are withdrawn. Batches and partial files are not complete.
	Complete bool
}

// IngestResult reports what an ingest did.
type IngestResult struct {
	Catalog CatalogID    `json:"catalog"`
	Origin  IngestOrigin `json:"origin"`
	Version string       `json:"version"`
	// Seen counts the resources the source delivered (rejected ones included).
	Seen int `json:"seen"`
	// Upserted counts resources that are new, changed in content, or back
	// after being withdrawn.
	Upserted int `json:"upserted"`
	// Skipped = Unchanged + Rejected.
	Skipped   int `json:"skipped"`
	Unchanged int `json:"unchanged"`
	Rejected  int `json:"rejected"`
	// Withdrawn counts resources newly marked withdrawn by this ingest.
	Withdrawn int `json:"withdrawn"`
	// Changed lists the prefixed ids whose content hash changed or that are new.
	Changed    []string  `json:"changed,omitempty"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Errors records why earlier sources failed before this one answered
	// (e.g. the JSON API was down and the Excel fallback was used).
	Errors []string `json:"errors,omitempty"`
	// DryRun marks a result that was computed but not written.
	DryRun bool `json:"dry_run,omitempty"`
	// Changes names, per new or changed resource, the fields that change
	// (dry runs only).
	Changes []ResourceChange `json:"changes,omitempty"`
}

// CatalogMeta is what the store keeps about each catalog.
type CatalogMeta struct {
	Catalog CatalogID `json:"catalog"`
	// Version is the dataset version of the last successful ingest.
	Version    string        `json:"version,omitempty"`
	LastResult *IngestResult `json:"last_result,omitempty"`
	LastIngest time.Time     `json:"last_ingest,omitzero"`
	// NextIngest is when the scheduled ingest runs next; persisted so a
	// restart does not shift the schedule.
	NextIngest time.Time `json:"next_ingest,omitzero"`
	LastError  string    `json:"last_error,omitempty"`
	// DemoSnapshot is the version of the embedded demo snapshot the catalog
	// serves (e.g. "demo-02.07.000"), empty when it serves a publisher's
	// release. It is set when an empty catalog gets the snapshot, kept
	// through later partial ingests (files, batches) that only add to it,
	// and cleared by the first complete release, which replaces it.
	DemoSnapshot string `json:"demo_snapshot,omitempty"`
	// Counter counts the writes that changed the catalog's resources in a
	// store shared by several replicas, which advances it
	// (ports.Changes.IfCounter); the replicas follow each other's writes by
	// it. Zero in a store of one process.
	Counter uint64 `json:"counter,omitempty"`
	// Counts are the catalog's live and withdrawn resources, kept by every
	// ingest with its change, so a status need not scan the catalog; nil
	// in a store written before they were kept, until its next ingest.
	Counts *CatalogCounts `json:"counts,omitempty"`
}

// CatalogCounts counts a catalog's resources by state.
type CatalogCounts struct {
	Live      int `json:"live"`
	Withdrawn int `json:"withdrawn"`
}

// ResourceBatch is the JSON body of POST /admin/resources.
type ResourceBatch struct {
	Catalog   string      `json:"catalog"`
	Version   string      `json:"version,omitempty"`
	Resources []BatchItem `json:"resources"`
}

// BatchItem is one resource of a ResourceBatch. Name and Description fill the
// catalog's own language (Swedish for national, Danish for dkbr).
type BatchItem struct {
	ID               string             `json:"id"`
	Name             string             `json:"name,omitempty"`
	NameSV           string             `json:"name_sv,omitempty"`
	NameEN           string             `json:"name_en,omitempty"`
	NameDA           string             `json:"name_da,omitempty"`
	NameDE           string             `json:"name_de,omitempty"`
	Description      string             `json:"description,omitempty"`
	DescriptionSV    string             `json:"description_sv,omitempty"`
	DescriptionEN    string             `json:"description_en,omitempty"`
	DescriptionDA    string             `json:"description_da,omitempty"`
	Synonyms         string             `json:"synonyms,omitempty"`
	Unit             string             `json:"unit,omitempty"`
	GWPUnit          string             `json:"gwp_unit,omitempty"`
	Category         string             `json:"category,omitempty"`
	CategoryCode     string             `json:"category_code,omitempty"`
	Version          string             `json:"version,omitempty"`
	A1A3             *float64           `json:"a1a3,omitempty"`
	A1A3Conservative *float64           `json:"a1a3_conservative,omitempty"`
	A4               *float64           `json:"a4,omitempty"`
	A51              *float64           `json:"a5_1,omitempty"`
	Conversions      map[string]float64 `json:"conversions,omitempty"`
}

// Batch limits.
const MaxBatchResources = 10000

// EventType names a domain event.
type EventType string

const (
	EventCatalogChanged     EventType = "catalog.changed"
	EventCatalogUnreachable EventType = "catalog.unreachable"
	EventIngestFailed       EventType = "ingest.failed"
)

// Health is the answer of /healthz.
type Health struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}
