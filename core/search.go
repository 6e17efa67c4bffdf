package core

import (
	"net/url"
	"time"
)

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
	MaxLimit     = 100
	MaxOffset    = 1000
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
	Offset   int
	// Explain adds each hit's ranks and scores in every retrieval list.
	Explain bool
	// Refine holds the filters (category, unit, impact ranges), the sort
	// on an impact value and the facets; they apply to the whole match set.
	Refine
	// Highlight adds each hit's name and description with the words the
	// query matched marked.
	Highlight bool
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
	Explain     *Explain    `json:"explain,omitempty"`
	// Highlight holds the shown name and description, HTML-escaped, with
	// the words the query matched in <mark>…</mark> (highlight=true).
	Highlight *Highlight `json:"highlight,omitempty"`
}

// Highlight is a hit's name and description with the matched words marked.
// The texts are HTML-escaped; only the <mark> tags are markup.
type Highlight struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Span is a byte range [Start, End) of a text.
type Span struct{ Start, End int }

// Explain shows how a hit was retrieved: its rank (1-based) and raw score in
// each list, and the fused Reciprocal Rank Fusion score.
type Explain struct {
	FTSRank     int     `json:"fts_rank,omitempty"`
	FTSScore    float64 `json:"fts_score,omitempty"`
	VectorRank  int     `json:"vector_rank,omitempty"`
	VectorScore float64 `json:"vector_score,omitempty"`
	Fused       float64 `json:"fused"`
}

// SearchResponse answers a search.
type SearchResponse struct {
	Source  string `json:"source"`
	Query   string `json:"query"`
	Lang    Lang   `json:"lang"`
	Results []Hit  `json:"results"`
	// Total is how many resources match (after the filters), before paging.
	Total int `json:"total"`
	// TookMs is how long the answer took to compute, in milliseconds. A
	// kept answer (served again until the data changes) keeps the time of
	// its computation.
	TookMs float64 `json:"took_ms"`
	// Facets counts category, unit and catalog over the whole match set.
	Facets Facets `json:"facets,omitempty"`
	// Notes explain degraded answers, e.g. that vectors were unavailable.
	Notes []string `json:"notes,omitempty"`
}

// Millis is d in milliseconds, to the microsecond.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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

// ListPlace is where a key stands in a ranked list: its 1-based Rank and
// its Score there, or Rank 0 when the list does not hold it.
type ListPlace struct {
	Rank  int
	Score float64
}

// DetailsPath is the REST path of a resource, usable as it is: the id is
// percent-encoded as a path segment (/api/resources/dkbr:%23G0740), since a
// raw # would start a URL fragment and a space or / break the path.
func DetailsPath(k Key) string {
	return "/api/resources/" + string(k.Catalog) + ":" + url.PathEscape(k.ID)
}

// ListRequest asks for the live resources of catalogs.
type ListRequest struct {
	Catalogs []CatalogID
	Lang     Lang
	Refine
}

// ListResponse answers a listing.
type ListResponse struct {
	Source    string     `json:"source"`
	Resources []Resource `json:"resources"`
	// Total is how many resources the listing holds (after the filters).
	Total int `json:"total"`
	// TookMs is how long the answer took to compute (see SearchResponse).
	TookMs float64 `json:"took_ms"`
	Facets Facets  `json:"facets,omitempty"`
}
