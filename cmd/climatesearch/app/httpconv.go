package app

import (
	"go.uber.org/fx"

	"github.com/climatesearch/climatesearch/adapters/httpapi"
	"github.com/climatesearch/climatesearch/adapters/mcpserver"
	"github.com/climatesearch/climatesearch/config"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/status"
	"github.com/climatesearch/climatesearch/ports"
)

// httpConventions adds what HTTP clients expect of the API (issue 13):
// validators from the stored data (ETag, Last-Modified, 304), HEAD on every
// GET route but the MCP streams, and CORS for the configured origins
// around the whole handler (outside the hosted build's guard).
func httpConventions() fx.Option {
	return fx.Options(
		fx.Decorate(func(cfg config.Config, api *httpapi.API, st ports.ResourceStore, vis *core.Visibility) *httpapi.API {
			// The answers also depend on the product-sheet host
			// (origin links); the build is part of the seed.
			api.Validators(status.NewStamper(st, vis), cfg.OriginBase, Hosted)
			api.NoHead(mcpserver.PathStreamable, mcpserver.PathSSE)
			return api
		}),
		fx.Decorate(func(cfg config.Config, r Root) Root {
			return Root{Handler: httpapi.NewCORS(cfg.CORSOrigins).Wrap(r.Handler)}
		}),
	)
}
