package mcpe2e

import (
	"encoding/json"
	"net/url"
	"os"
	"strconv"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/evaluate"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

func golden(t *testing.T) evaluate.Golden {
	t.Helper()
	f, err := os.Open(shareddata.Path(t, "eval", "golden-dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := evaluate.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestMCPAnswersEqualREST: for every query of the dev golden set, the
// search_climate_data answer (structuredContent) is the REST answer to the
// same question, field for field and hit for hit: REST with vector=true
// (MCP uses vectors whenever they exist) and rerank=true exactly when the
// process has a reranker (MCP then always reranks). Over every transport,
// without and with a reranker.
func TestMCPAnswersEqualREST(t *testing.T) {
	g := golden(t)
	for _, rr := range []bool{false, true} {
		t.Run("rerank="+strconv.FormatBool(rr), func(t *testing.T) {
			settings := map[string]string{}
			if rr {
				settings["SERVICE_RERANKER"] = "http"
				settings["SERVICE_RERANKER_URL"] = rerankStub(t).URL
			}
			e := newEnv(t, settings)
			for _, kind := range transports {
				t.Run(kind, func(t *testing.T) {
					c := e.connect(t, kind)
					withOrigin, reranked := 0, 0
					for _, q := range g.Queries {
						path := "/api/search?q=" + url.QueryEscape(q.Q) + "&lang=" + q.Lang + "&databases=" + g.Catalog + "&vector=true&rerank=" + strconv.FormatBool(rr)
						got := e.equalsREST(t, q.ID, path, func() []byte {
							return structured(t, c.call(t, "search_climate_data", map[string]any{"query": q.Q, "lang": q.Lang, "databases": []string{g.Catalog}}))
						})

						var sr core.SearchResponse
						if err := json.Unmarshal(got, &sr); err != nil {
							t.Fatal(err)
						}
						if len(sr.Results) == 0 || len(sr.Notes) != 0 {
							t.Errorf("%s: %d hits, notes %v", q.ID, len(sr.Results), sr.Notes)
							continue
						}
						for _, h := range sr.Results {
							if h.Details != core.DetailsPath(h.Key()) || h.Source == "" {
								t.Errorf("%s: hit %s without details or source", q.ID, h.Ref())
							}
							if h.Origin != "" {
								withOrigin++
							}
							if h.Reranked {
								reranked++
							}
						}
					}
					if withOrigin == 0 {
						t.Error("no hit carried an origin link")
					}
					if rr != (reranked > 0) {
						t.Errorf("reranker configured %v, but %d hits were reranked", rr, reranked)
					}
				})
			}
		})
	}
}
