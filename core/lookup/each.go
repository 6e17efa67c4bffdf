package lookup

import (
	"context"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Each calls fn for every live resource of the catalogs, in catalog and id
// order, inside one read of the Visibility gate. The resources are the
// stored ones: fn must not modify them.
func (s *Service) Each(ctx context.Context, catalogs []core.CatalogID, fn func(core.Resource) error) error {
	return s.vis.Read(catalogs, func() error {
		for _, c := range catalogs {
			err := s.store.Scan(ctx, c, func(sr ports.StoredResource) error {
				if sr.Resource.Withdrawn {
					return nil
				}
				return fn(sr.Resource)
			})
			if core.KindOf(err) == core.KindLoading {
				return err
			}
			if err != nil {
				return core.Unavailablef(err, "store unavailable")
			}
		}
		return nil
	})
}
