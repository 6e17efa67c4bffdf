package core

import "time"

// CatalogList answers GET /api/catalogs and the MCP list_catalogs tool.
type CatalogList struct {
	Source   string           `json:"source"`
	Catalogs []CatalogSummary `json:"catalogs"`
}

// CatalogSummary is what a client needs to know about one catalog to trust
// its answers: who publishes it, which release is served, how many
// resources, how fresh, and how far its vectors are.
type CatalogSummary struct {
	ID      CatalogID `json:"id"`
	Aliases []string  `json:"aliases"`
	Name    string    `json:"name"`
	// Publisher is the authority that publishes the data.
	Publisher string `json:"publisher"`
	// Source is the attribution every answer from this catalog carries.
	Source string `json:"source"`
	// Version is the dataset version served; "" before the first ingest.
	Version   string `json:"version"`
	Live      int    `json:"live"`
	Withdrawn int    `json:"withdrawn"`
	// Demo is true while the catalog serves the embedded demo snapshot
	// (a fresh start without the publisher), not a publisher's release,
	// also after batches were added to it.
	Demo bool `json:"demo"`
	// LastIngest and LastOrigin tell when the data last changed and where
	// it came from (json, excel, fixture: the demo snapshot, file).
	LastIngest *time.Time   `json:"last_ingest"`
	LastOrigin IngestOrigin `json:"last_origin,omitempty"`
	// NextIngest is when the scheduled upstream ingest runs next; absent
	// for catalogs without one.
	NextIngest *time.Time `json:"next_ingest"`
	// Vectors is the embedding coverage of the live resources.
	Vectors VectorCoverage `json:"vectors"`
}

// VectorCoverage is EmbeddingCoverage with the share of live resources
// that semantic search reaches.
type VectorCoverage struct {
	EmbeddingCoverage
	// Coverage is Current / Total (1 when the catalog is empty, 0 without
	// an embedder).
	Coverage float64 `json:"coverage"`
}

// catalogTitles are the catalogs' display names and publishers.
var catalogTitles = map[CatalogID]struct{ name, publisher string }{
	National: {"Boverket Klimatdatabas", "Boverket (Swedish National Board of Housing, Building and Planning)"},
	DKBR:     {"BR18/BR25 Bilag 2 Tabel 7 generic data", "Social- og Boligstyrelsen (Danish Authority of Social Services and Housing)"},
}

// Summarize turns a catalog's status into its public summary.
func Summarize(st CatalogStatus) CatalogSummary {
	id := st.Catalog.ID
	s := CatalogSummary{
		ID: id, Aliases: []string{}, Name: catalogTitles[id].name, Publisher: catalogTitles[id].publisher,
		Source: st.Catalog.Source, Version: st.Meta.Version, Live: st.Live, Withdrawn: st.Withdrawn,
		Vectors: VectorCoverage{EmbeddingCoverage: st.Embedding},
	}
	if id == DKBR {
		s.Aliases = append(s.Aliases, string(BR25))
	}
	if !st.Meta.LastIngest.IsZero() {
		t := st.Meta.LastIngest
		s.LastIngest = &t
	}
	if st.Meta.LastResult != nil {
		s.LastOrigin = st.Meta.LastResult.Origin
	}
	// A batch added to the demo data changes the last origin, not what is
	// served: the demo snapshot stays until a complete release replaces it.
	s.Demo = st.Meta.DemoSnapshot != ""
	if st.Catalog.Upstream && !st.Meta.NextIngest.IsZero() {
		t := st.Meta.NextIngest
		s.NextIngest = &t
	}
	switch e := st.Embedding; {
	case e.EmbedderID == "":
	case e.Total == 0:
		s.Vectors.Coverage = 1
	default:
		s.Vectors.Coverage = float64(e.Current) / float64(e.Total)
	}
	return s
}
