package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

// refineParams are the query parameters of the refinements shared by
// search and listing (core.Refine).
var refineParams = func() []string {
	ps := []string{"category", "unit", "sort", "facets"}
	for _, f := range core.ImpactFields {
		ps = append(ps, f+"_min", f+"_max")
	}
	return ps
}()

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
	for _, field := range core.ImpactFields {
		imp, _ := core.ImpactByField(field)
		rg := core.Range{Impact: imp}
		for _, b := range []struct {
			suffix string
			dst    **float64
		}{{"_min", &rg.Min}, {"_max", &rg.Max}} {
			name := field + b.suffix
			v := strings.TrimSpace(c.Query(name))
			if v == "" {
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				writeError(c, http.StatusBadRequest, name+" must be a number (kg CO2e per declared unit, e.g. "+name+"=100), got "+strconv.Quote(v))
				return f, false
			}
			*b.dst = &x
		}
		if rg.Min != nil || rg.Max != nil {
			f.Ranges = append(f.Ranges, rg)
		}
	}
	if err := f.Normalize(); err != nil {
		writeError(c, http.StatusBadRequest, err.Error())
		return f, false
	}
	return f, true
}
