package core

// MatchSource tells how retrieval found a hit.
type MatchSource string

const (
	MatchFTS    MatchSource = "fts"
	MatchVector MatchSource = "vector"
	MatchBoth   MatchSource = "both"
)

// Search limits; documented in the README and /openapi.yaml.
const (
	MaxQueryLen  = 256 // characters of q
	DefaultLimit = 10
	MaxLimit     = 50
	rrfConstantK = 60
)

// RRFK is the Reciprocal Rank Fusion constant of the specification.
const RRFK = rrfConstantK

// SearchRequest is a validated search question.
type SearchRequest struct {
	Query    string
	Lang     Lang
	Catalogs []CatalogID
	Vector   bool
	Rerank   bool
	Limit    int
}

// Hit is a Resource found by a search, with how and how well it matched.
type Hit struct {
	Resource
	Lang        Lang        `json:"lang"`
	Score       float64     `json:"score"`
	MatchSource MatchSource `json:"match_source"`
	Reranked    bool        `json:"reranked,omitempty"`
	RerankScore *float64    `json:"rerank_score,omitempty"`
	Details     string      `json:"details"`
}

// SearchResponse answers a search.
type SearchResponse struct {
	Source  string `json:"source"`
	Query   string `json:"query"`
	Lang    Lang   `json:"lang"`
	Results []Hit  `json:"results"`
	// Notes explain degraded answers, e.g. that vectors were unavailable.
	Notes []string `json:"notes,omitempty"`
}

// TextQuery is what the search service asks of the full-text index.
type TextQuery struct {
	Text     string
	Lang     Lang
	Catalogs []CatalogID
	Limit    int
}

// Scored is a key with a retrieval score, as indexes return them.
type Scored struct {
	Key   Key
	Score float64
}

// DetailsPath is the REST path of a resource.
func DetailsPath(k Key) string { return "/api/resources/" + k.String() }

// ListResponse answers a listing.
type ListResponse struct {
	Source    string     `json:"source"`
	Resources []Resource `json:"resources"`
}
