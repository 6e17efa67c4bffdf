package core

// Alternatives limits; documented in docs/SEARCH.md and /openapi.yaml.
const (
	DefaultAlternatives = 10
	MaxAlternatives     = 100
)

// AlternativesRequest asks what could replace a resource with a lower
// climate impact.
type AlternativesRequest struct {
	Ref    string // prefixed or bare id of the resource to replace
	Impact Impact
	// Unit is the unit every value is stated in; empty means the
	// resource's declared unit.
	Unit string
	// Catalogs to look in; empty means the resource's own catalog.
	Catalogs []CatalogID
	Limit    int
	Lang     Lang
}

// Why an Alternative was considered comparable.
const (
	// ReasonSibling: a variant of the same product (same name head,
	// category and classes), such as the climate-improved concrete of the
	// same strength class or the scrap-based aluminium.
	ReasonSibling = "sibling"
	// ReasonCategory: the same publisher category.
	ReasonCategory = "same_category"
	// ReasonBK04: the same BK04 class.
	ReasonBK04 = "same_bk04"
	// ReasonName: found by a full-text search of the resource's name.
	ReasonName = "name_match"
)

// Alternative is a resource that can replace the given one, stated in the
// answer's unit.
type Alternative struct {
	Resource
	// Value is the chosen impact per the answer's unit.
	Value float64 `json:"value"`
	// Saving is the given resource's value minus this one's, per the
	// answer's unit: how much less this one emits.
	Saving float64 `json:"saving"`
	// SavingPercent is Saving relative to the given resource's value;
	// absent when that value is not positive.
	SavingPercent *float64 `json:"saving_percent,omitempty"`
	// Reasons say why it was considered comparable (Reason* constants),
	// strongest first.
	Reasons []string `json:"reasons"`
	Details string   `json:"details"`
}

// Alternatives answers an AlternativesRequest: the lower-impact resources
// that can replace Resource, siblings first, then by Value ascending.
type Alternatives struct {
	Source   string   `json:"source"`
	Resource Resource `json:"resource"`
	Impact   Impact   `json:"impact"`
	// Unit is the unit every value is stated in.
	Unit string `json:"unit"`
	// Value is the given resource's impact per Unit.
	Value float64 `json:"value"`
	// Considered counts the comparable resources that could be stated per
	// Unit, lower or not; Lower how many of them emit less.
	Considered   int           `json:"considered"`
	Lower        int           `json:"lower"`
	Alternatives []Alternative `json:"alternatives"`
	// Notes say when nothing lower exists, and what was left out (other
	// units, no published value).
	Notes []string `json:"notes,omitempty"`
}
