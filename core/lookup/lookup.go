// Package lookup resolves resource references and answers reads: one
// resource, a listing, a product-sheet link, and the store's health.
package lookup

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Service implements ports.Resources over a ResourceStore. Every read runs
// through the Visibility gate: what it returns is also what search finds.
type Service struct {
	store ports.ResourceStore
	vis   *core.Visibility
}

var _ ports.Resources = (*Service)(nil)

// New returns a lookup service.
func New(store ports.ResourceStore, vis *core.Visibility) *Service {
	return &Service{store: store, vis: vis}
}

// MaxRefLen bounds an id reference; real ids are far shorter.
const MaxRefLen = 128

// Resolve finds the resource a reference names: `catalog:id` (aliases
// accepted) or a bare id that must be unique across catalogs.
func (s *Service) Resolve(ctx context.Context, ref string) (core.Resource, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return core.Resource{}, core.Invalidf("resource id is empty: use catalog:id (e.g. national:6000000000) or a bare id")
	}
	if len(ref) > MaxRefLen {
		return core.Resource{}, core.Invalidf("resource id is longer than %d characters", MaxRefLen)
	}
	if cat, id, ok := strings.Cut(ref, ":"); ok {
		catalog, err := core.ParseCatalog(cat)
		if err != nil {
			return core.Resource{}, err
		}
		id = strings.TrimSpace(id)
		if id == "" {
			return core.Resource{}, core.Invalidf("resource id after %q is empty", cat+":")
		}
		var sr ports.StoredResource
		var found bool
		err = s.vis.Read([]core.CatalogID{catalog}, func() (err error) {
			sr, found, err = s.store.Get(ctx, core.Key{Catalog: catalog, ID: id})
			return err
		})
		if core.KindOf(err) == core.KindLoading {
			return core.Resource{}, err
		}
		if err != nil {
			return core.Resource{}, core.Unavailablef(err, "store unavailable")
		}
		if !found {
			return core.Resource{}, core.NotFoundf("no resource %s:%s", catalog, id)
		}
		return sr.Resource, nil
	}
	var found []ports.StoredResource
	err := s.vis.Read(nil, func() (err error) {
		found, err = s.store.FindByID(ctx, ref)
		return err
	})
	if core.KindOf(err) == core.KindLoading {
		return core.Resource{}, err
	}
	if err != nil {
		return core.Resource{}, core.Unavailablef(err, "store unavailable")
	}
	switch len(found) {
	case 0:
		return core.Resource{}, core.NotFoundf("no resource %q in any catalog", ref)
	case 1:
		return found[0].Resource, nil
	}
	cats := make([]core.CatalogID, len(found))
	names := make([]string, len(found))
	for i, f := range found {
		cats[i] = f.Resource.Catalog
		names[i] = string(f.Resource.Catalog) + ":" + ref
	}
	return core.Resource{}, &core.Error{
		Kind:       core.KindConflict,
		Msg:        fmt.Sprintf("id %q exists in catalogs %s: ask for one of %s", ref, joinCatalogs(cats), strings.Join(names, ", ")),
		Candidates: cats,
	}
}

func joinCatalogs(cs []core.CatalogID) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, " and ")
}

// Get returns one resource, localized for lang. Withdrawn resources are
// returned too, marked as such.
func (s *Service) Get(ctx context.Context, ref string, lang core.Lang) (core.Resource, error) {
	r, err := s.Resolve(ctx, ref)
	if err != nil {
		return core.Resource{}, err
	}
	r.Localize(lang)
	return r, nil
}

// List returns the live resources of the catalogs that pass the filters,
// localized for lang, in id order per catalog or sorted by an impact value
// (resources without it last), with facets over the whole listing. An
// unknown category or unit is refused naming the close valid values.
func (s *Service) List(ctx context.Context, req core.ListRequest) (core.ListResponse, error) {
	start := time.Now()
	if err := req.Refine.Normalize(); err != nil {
		return core.ListResponse{}, err
	}
	if len(req.Catalogs) == 0 {
		req.Catalogs = core.Catalogs
	}
	out := core.ListResponse{Source: core.SourceFor(req.Catalogs), Resources: []core.Resource{}}
	vocab := core.NewVocabulary()
	err := s.Each(ctx, req.Catalogs, func(r core.Resource) error {
		vocab.Add(&r)
		if !req.Keep(&r) {
			return nil
		}
		r.Localize(req.Lang)
		out.Resources = append(out.Resources, r)
		return nil
	})
	if err != nil {
		return core.ListResponse{}, err
	}
	if err := vocab.Check(&req.Refine, req.Catalogs); err != nil {
		return core.ListResponse{}, err
	}
	rs := make([]*core.Resource, len(out.Resources))
	for i := range out.Resources {
		rs[i] = &out.Resources[i]
	}
	if err := core.CheckSortUnits(rs, req.Sort); err != nil {
		return core.ListResponse{}, err
	}
	out.Total = len(out.Resources)
	out.Facets = core.CountFacets(rs, req.Facets, req.Lang)
	if req.Sort.IsSet() {
		sort.SliceStable(out.Resources, func(i, j int) bool {
			return core.CompareImpact(&out.Resources[i], &out.Resources[j], req.Sort) < 0
		})
	}
	out.TookMs = core.Millis(time.Since(start))
	return out, nil
}

// Origin returns the public product-sheet URL of a resource.
func (s *Service) Origin(ctx context.Context, ref string) (string, error) {
	r, err := s.Resolve(ctx, ref)
	if err != nil {
		return "", err
	}
	if !core.CatalogInfo(r.Catalog).HasOrigin {
		return "", core.NotFoundf("catalog %s has no public product sheet; read the resource at %s", r.Catalog, core.DetailsPath(r.Key()))
	}
	if r.Origin == "" {
		return "", core.NotFoundf("resource %s has no known product sheet (its category code is unknown)", r.Ref())
	}
	return r.Origin, nil
}

// Ready reports whether every catalog is loaded into the index.
func (s *Service) Ready(context.Context) core.Readiness { return s.vis.Readiness() }

// Health reports whether the store can be read.
func (s *Service) Health(ctx context.Context) core.Health {
	if err := s.store.Ping(ctx); err != nil {
		return core.Health{Status: "unhealthy", Error: "store unreadable: " + err.Error()}
	}
	return core.Health{Status: "ok"}
}
