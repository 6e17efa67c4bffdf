package httpapi

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

// refineParams are the query parameters of the refinements shared by
// search and listing (core.Refine).
var refineParams = append([]string{"category", "unit", "sort", "facets"}, core.RangeParams...)

// parseRefine reads category, unit, sort, facets and the impact ranges
// (<field>_min, <field>_max); it answers 400 on a malformed one.
func parseRefine(c *gin.Context) (core.Refine, bool) {
	f := core.Refine{Category: c.Query("category"), Unit: c.Query("unit")}
	var err error
	if f.Sort, err = core.ParseSort(c.Query("sort")); err != nil {
		writeError(c, http.StatusBadRequest, err.Error())
		return f, false
	}
	if v := c.Query("facets"); v != "" {
		f.Facets = strings.Split(v, ",")
	}
	if f.Ranges, err = core.Ranges(func(p string) (*float64, error) { return core.ParseBound(p, c.Query(p)) }); err != nil {
		writeError(c, http.StatusBadRequest, err.Error())
		return f, false
	}
	if err := f.Normalize(); err != nil {
		writeError(c, http.StatusBadRequest, err.Error())
		return f, false
	}
	return f, true
}
