package ingest

import (
	"fmt"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// maxBatchProblems bounds how many problems a refused batch lists.
const maxBatchProblems = 10

// ReleaseFromBatch validates a ResourceBatch and turns it into a partial
// release of operator data. A batch item replaces the stored resource
// whole, so fields it does not carry (conversions included) are dropped.
func ReleaseFromBatch(b core.ResourceBatch) (core.Release, error) {
	if strings.TrimSpace(b.Catalog) == "" {
		return core.Release{}, core.Invalidf("catalog is required: national or dkbr (br25)")
	}
	cat, err := core.ParseCatalog(b.Catalog)
	if err != nil {
		return core.Release{}, err
	}
	if len(b.Resources) == 0 {
		return core.Release{}, core.Invalidf("resources is empty: send at least one resource with an id")
	}
	if len(b.Resources) > core.MaxBatchResources {
		return core.Release{}, core.Invalidf("batch holds %d resources; the limit is %d per request", len(b.Resources), core.MaxBatchResources)
	}
	var problems []string
	add := func(format string, args ...any) {
		if len(problems) < maxBatchProblems {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	// Sized once: appended to, a batch of 10,000 resources (about 500 bytes
	// each) allocated five times its size as the slice grew.
	rel := core.Release{Catalog: cat, Origin: core.OriginFile, Version: strings.TrimSpace(b.Version),
		Resources: make([]core.Resource, 0, len(b.Resources))}
	first := make(map[string]int, len(b.Resources))
	for i, it := range b.Resources {
		id := strings.TrimSpace(it.ID)
		if id == "" {
			add("resources[%d]: id is required", i)
			continue
		}
		if strings.ContainsAny(id, ":/?") || len(id) > 100 {
			add("resources[%d]: id %q may not contain : / ? and is at most 100 characters", i, id)
			continue
		}
		for k, v := range it.Conversions {
			num, den, ok := strings.Cut(k, "/")
			if !ok || strings.TrimSpace(num) == "" || strings.TrimSpace(den) == "" {
				add("resources[%d] (%s): conversion key %q must look like <unit>/<unit>, e.g. kg/m³", i, id, k)
			}
			if v <= 0 {
				add("resources[%d] (%s): conversion %q must be positive, got %v", i, id, k, v)
			}
		}
		r := itemResource(cat, it)
		r.ID = id
		if r.Version == "" {
			r.Version = rel.Version
		}
		if j, dup := first[id]; dup {
			if core.ContentHash(&rel.Resources[j]) != core.ContentHash(&r) {
				add("resources[%d]: id %s repeats resources[%d] with different values", i, id, j)
			}
			continue // an identical repeat is harmless
		}
		first[id] = len(rel.Resources)
		rel.Resources = append(rel.Resources, r)
	}
	if len(problems) > 0 {
		return core.Release{}, core.Invalidf("batch refused, nothing stored: %s", strings.Join(problems, "; "))
	}
	if rel.Version == "" {
		rel.Version = rel.Resources[0].Version
	}
	return rel, nil
}

func itemResource(cat core.CatalogID, it core.BatchItem) core.Resource {
	r := core.Resource{
		Catalog: cat, NameSV: it.NameSV, NameEN: it.NameEN, NameDA: it.NameDA, NameDE: it.NameDE,
		DescriptionSV: it.DescriptionSV, DescriptionEN: it.DescriptionEN, DescriptionDA: it.DescriptionDA,
		Synonyms: it.Synonyms, Unit: it.Unit, GWPUnit: it.GWPUnit, Category: it.Category,
		CategoryCode: it.CategoryCode, Version: strings.TrimSpace(it.Version),
		A1A3: it.A1A3, A1A3Conservative: it.A1A3Conservative, A4: it.A4, A51: it.A51,
		Conversions: it.Conversions,
	}
	// `name` and `description` fill the catalog's own language.
	if cat == core.DKBR {
		r.NameDA = first(r.NameDA, it.Name)
		r.DescriptionDA = first(r.DescriptionDA, it.Description)
	} else {
		r.NameSV = first(r.NameSV, it.Name)
		r.DescriptionSV = first(r.DescriptionSV, it.Description)
	}
	if r.GWPUnit == "" && r.Unit != "" {
		r.GWPUnit = "kg CO2 eq./" + r.Unit
	}
	return r
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
