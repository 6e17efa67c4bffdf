package core

import "net/url"

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
	// Category and Unit keep only hits whose category (either language) or
	// declared unit equals them, ignoring case.
	Category string
	Unit     string
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
}

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

// DetailsPath is the REST path of a resource, usable as it is: the id is
// percent-encoded as a path segment (/api/resources/dkbr:%23G0740), since a
// raw # would start a URL fragment and a space or / break the path.
func DetailsPath(k Key) string {
	return "/api/resources/" + string(k.Catalog) + ":" + url.PathEscape(k.ID)
}

// ListResponse answers a listing.
type ListResponse struct {
	Source    string     `json:"source"`
	Resources []Resource `json:"resources"`
}
