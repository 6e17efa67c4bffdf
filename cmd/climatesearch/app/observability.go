package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/adapters/hnsw"
	"github.com/climatesearch/climatesearch/adapters/httpapi"
	"github.com/climatesearch/climatesearch/adapters/prommetrics"
	"github.com/climatesearch/climatesearch/config"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/core/status"
	"github.com/climatesearch/climatesearch/core/webhooks"
	"github.com/climatesearch/climatesearch/ports"
)

// observability provides the metrics (ports.Metrics for the services, the
// Prometheus adapter behind it) and the servers of /metrics and pprof.
func observability() fx.Option {
	return fx.Provide(
		newMetrics,
		func(m *prommetrics.Metrics) ports.Metrics { return m },
		newObserved,
	)
}

func newMetrics() *prommetrics.Metrics { return prommetrics.New() }

// observed is what newRoot needs so /metrics and pprof are served: the
// gauges read at scrape time are wired, /metrics is mounted on the main
// listener (or served on SERVICE_METRICS_ADDR), pprof started when asked.
type observed struct {
	// MetricsAddr is where a separate /metrics listener listens, once started.
	MetricsAddr func() string
	// PprofAddr is where pprof listens, once started.
	PprofAddr func() string
}

func newObserved(lc fx.Lifecycle, cfg config.Config, log *zap.Logger, m *prommetrics.Metrics, api *httpapi.API,
	st *status.Service, vec *embedding.Syncer, wh *webhooks.Service) *observed {
	d := prommetrics.Deps{Catalogs: st.Overview, WebhookQueue: wh.QueueStats}
	if vec != nil {
		if ix, ok := vec.Index().(*hnsw.CatalogIndex); ok {
			d.Vectors = ix.Lens
		}
	}
	m.Watch(d)
	o := &observed{MetricsAddr: func() string { return "" }, PprofAddr: func() string { return "" }}
	if cfg.MetricsAddr == "" {
		// Public in the self-hosted build; the hosted guard asks for the
		// admin token (adapters/guard).
		api.Engine().GET("/metrics", gin.WrapH(m.Handler()))
	} else {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Handler())
		o.MetricsAddr = sideServer(lc, log, "metrics", cfg.MetricsAddr, mux)
	}
	if addr := cfg.PprofListen(); addr != "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				log.Warn("SERVICE_PPROF_ADDR is not a loopback address: anyone who reaches it can profile the process", zap.String("addr", addr))
			}
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		o.PprofAddr = sideServer(lc, log, "pprof", addr, mux)
	}
	return o
}

// sideServer serves h on addr from the start to the stop of the app and
// returns where it listens once started.
func sideServer(lc fx.Lifecycle, log *zap.Logger, name, addr string, h http.Handler) func() string {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	var ln net.Listener
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			var err error
			if ln, err = net.Listen("tcp", addr); err != nil {
				return fmt.Errorf("listening for %s on %s: %w", name, addr, err)
			}
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error(name+" server stopped", zap.Error(err))
				}
			}()
			log.Info(name+" listening", zap.String("addr", ln.Addr().String()))
			return nil
		},
		OnStop: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return srv.Shutdown(ctx)
		},
	})
	return func() string {
		if ln == nil {
			return ""
		}
		return ln.Addr().String()
	}
}

// requestIDs adds the request id a context carries (core.RequestID, set by
// the HTTP adapter for every request) to the core's slog lines written
// with that context (InfoContext, WarnContext, ...).
type requestIDs struct{ slog.Handler }

func (h requestIDs) Handle(ctx context.Context, r slog.Record) error {
	if id := core.RequestID(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDs) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDs{h.Handler.WithAttrs(as)}
}

func (h requestIDs) WithGroup(name string) slog.Handler { return requestIDs{h.Handler.WithGroup(name)} }

// bootState marks the boot ingest as running before anything is served
// (readiness waits for it) when SERVICE_BOOT_INGEST is on; the ingest
// service tells vis when it has finished or failed.
func bootState(cfg config.Config, vis *core.Visibility) ingest.BootState {
	if !cfg.BootIngest {
		return nil
	}
	vis.BeginBootIngest()
	return vis
}
