package core

import "time"

// CatalogStatus is what an operator needs to know about one catalog: its
// release, its size, how its last ingest went, and how far its vectors are
// in step with its content.
type CatalogStatus struct {
	Catalog   Catalog           `json:"catalog"`
	Meta      CatalogMeta       `json:"meta"`
	Live      int               `json:"live"`
	Withdrawn int               `json:"withdrawn"`
	Embedding EmbeddingCoverage `json:"embedding"`
}

// EmbeddingCoverage counts, over a catalog's live resources, which have a
// vector of their current content.
type EmbeddingCoverage struct {
	// EmbedderID names the embedder; "" when none is configured.
	EmbedderID string `json:"embedder_id,omitempty"`
	Total      int    `json:"total"`
	// Current resources have a vector computed from their stored content.
	Current int `json:"current"`
	// Stale resources have a vector computed from older content (being
	// recomputed in the background).
	Stale int `json:"stale"`
	// Missing resources have no vector yet.
	Missing int `json:"missing"`
}

// VectorState tells whether a resource has a vector of its current content.
type VectorState string

const (
	VectorCurrent VectorState = "current"
	VectorStale   VectorState = "stale"
	VectorMissing VectorState = "missing"
	VectorNone    VectorState = "none" // no embedder configured
)

// Withdrawn filters of a resource listing.
const (
	WithdrawnExclude = "" // live resources only (the default)
	WithdrawnOnly    = "only"
	WithdrawnInclude = "include"
)

// Browse limits.
const (
	DefaultBrowseLimit = 50
	MaxBrowseLimit     = 200
)

// ResourceFilter selects resources for an operator's table.
type ResourceFilter struct {
	Catalogs []CatalogID
	// Category keeps resources whose category (either language) equals it, ignoring case.
	Category string
	// Text keeps resources whose id, names or category contain it, ignoring case.
	Text string
	// Withdrawn is WithdrawnExclude, WithdrawnOnly or WithdrawnInclude.
	Withdrawn string
	// MissingVector keeps live resources without a current vector.
	MissingVector bool
	Lang          Lang
	Offset, Limit int
}

// ResourceRow is a resource in an operator's table, with its vector state.
type ResourceRow struct {
	Resource
	Vector VectorState `json:"vector"`
}

// ResourcePage is one page of a filtered resource table.
type ResourcePage struct {
	Total     int           `json:"total"`
	Offset    int           `json:"offset"`
	Limit     int           `json:"limit"`
	Resources []ResourceRow `json:"resources"`
}

// CategoryStats describes one category of a catalog: how many live
// resources it holds and, per declared unit, the spread of their A1-A3.
type CategoryStats struct {
	Catalog    CatalogID    `json:"catalog"`
	Category   string       `json:"category"`
	CategoryEN string       `json:"category_en,omitempty"`
	Count      int          `json:"count"`
	Units      []UnitSpread `json:"units"`
}

// UnitSpread is the distribution of typical A1-A3 values of resources that
// share a declared unit (values of different units are never mixed).
type UnitSpread struct {
	Unit   string  `json:"unit"`
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"`
	Median float64 `json:"median"`
	Q3     float64 `json:"q3"`
	Max    float64 `json:"max"`
	// Points are the values with their resources, lowest first.
	Points []SpreadPoint `json:"points"`
}

// SpreadPoint is one resource's value in a UnitSpread.
type SpreadPoint struct {
	Ref   string  `json:"id"`
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// EventRecord is a recent event with where its deliveries stand.
type EventRecord struct {
	Event Event `json:"event"`
	// FannedOut is false while the event waits in the outbox.
	FannedOut  bool            `json:"fanned_out"`
	Deliveries []EventDelivery `json:"deliveries"`
}

// EventDelivery is the state of one event at one destination.
type EventDelivery struct {
	DestinationID string `json:"destination_id"`
	// State is queued (no attempt yet), or the status of the latest attempt.
	State        string    `json:"state"`
	Attempts     int       `json:"attempts"`
	ResponseCode int       `json:"response_code,omitempty"`
	Error        string    `json:"error,omitempty"`
	At           time.Time `json:"at,omitzero"`
	NextAttempt  time.Time `json:"next_attempt,omitzero"`
}

// DeliveryQueued is the state of a delivery no attempt was made for yet.
const DeliveryQueued = "queued"

// MaxEventHistory is how many recent events are kept for operators.
const MaxEventHistory = 100
