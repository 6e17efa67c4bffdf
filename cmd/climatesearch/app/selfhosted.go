//go:build !hosted

package app

import (
	"net/http"
	"strings"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/adapters/console"
	"github.com/climatesearch/climatesearch/adapters/httpapi"
	"github.com/climatesearch/climatesearch/config"
)

// Hosted tells which build this is: the self-hosted one has no guard.
const Hosted = false

// buildParts are the parts only one build has (none here) and the HTTP
// conventions both have.
func buildParts() fx.Option { return fx.Options(httpConventions()) }

// CheckConfig is the build's own check of the configuration; the
// self-hosted build needs nothing beyond config.Load's.
func CheckConfig(config.Config) error { return nil }

// newRoot is the handler the server serves: the API (with MCP and the
// console on its engine), unguarded. Hosted-only settings are named once.
func newRoot(cfg config.Config, api *httpapi.API, _ *console.Console, log *zap.Logger, _ *observed) Root {
	if hs := cfg.HostedSettings(); len(hs) > 0 {
		log.Warn("this is the self-hosted build: it ignores the hosted-only settings " + strings.Join(hs, ", ") + " (build with -tags hosted to use them)")
	}
	return Root{Handler: http.Handler(api)}
}
