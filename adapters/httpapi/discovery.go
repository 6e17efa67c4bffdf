package httpapi

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

// alternatives answers GET /api/resources/{id}/alternatives.
func (a *API) alternatives(c *gin.Context) {
	if !checkParams(c, "impact", "unit", "databases", "limit", "lang") {
		return
	}
	lang, ok := parseLang(c)
	if !ok {
		return
	}
	impact, ok := parseImpact(c)
	if !ok {
		return
	}
	var catalogs []core.CatalogID // none: the resource's own catalog
	if strings.TrimSpace(c.Query("databases")) != "" {
		if catalogs, ok = parseCatalogs(c); !ok {
			return
		}
	}
	limit, ok := parseInt(c, "limit", 1, core.MaxAlternatives)
	if !ok {
		return
	}
	alt, err := a.d.Compare.Alternatives(c, core.AlternativesRequest{
		Ref: c.Param("id"), Impact: impact, Unit: c.Query("unit"), Catalogs: catalogs, Limit: limit, Lang: lang,
	})
	if err != nil {
		a.fail(c, err)
		return
	}
	keepable(c)
	c.JSON(http.StatusOK, alt)
}

func parseImpact(c *gin.Context) (core.Impact, bool) {
	impact, err := core.ParseImpact(c.Query("impact"))
	if err != nil {
		writeError(c, http.StatusBadRequest, err.Error())
		return "", false
	}
	return impact, true
}

// catalogs answers GET /api/catalogs.
func (a *API) catalogs(c *gin.Context) {
	if !checkParams(c) {
		return
	}
	list, err := a.d.Catalogs.CatalogList(c)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, list)
}
