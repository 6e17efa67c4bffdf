// Package app wires the adapters and the core together with fx. It is the
// only place that knows every concrete type; main parses configuration and
// runs it, tests boot it on a temporary directory.
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"github.com/climatesearch/climatesearch/adapters/blugeindex"
	"github.com/climatesearch/climatesearch/adapters/boverket"
	"github.com/climatesearch/climatesearch/adapters/console"
	"github.com/climatesearch/climatesearch/adapters/demosnapshot"
	"github.com/climatesearch/climatesearch/adapters/embedder"
	"github.com/climatesearch/climatesearch/adapters/filereader"
	"github.com/climatesearch/climatesearch/adapters/guard"
	"github.com/climatesearch/climatesearch/adapters/hnsw"
	"github.com/climatesearch/climatesearch/adapters/httpapi"
	"github.com/climatesearch/climatesearch/adapters/mcpserver"
	"github.com/climatesearch/climatesearch/adapters/reranker"
	"github.com/climatesearch/climatesearch/adapters/webhooksender"
	"github.com/climatesearch/climatesearch/cmd/climatesearch/buildinfo"
	"github.com/climatesearch/climatesearch/config"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/compare"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/core/lookup"
	"github.com/climatesearch/climatesearch/core/search"
	"github.com/climatesearch/climatesearch/core/status"
	"github.com/climatesearch/climatesearch/core/webhooks"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/web"
)

// Options returns the whole application: the parts, the HTTP server and the
// background ingest. Extra options (tests) come last so they can decorate or
// replace parts.
func Options(cfg config.Config, log *zap.Logger, extra ...fx.Option) fx.Option {
	return fx.Options(append([]fx.Option{Parts(cfg, log), fx.Invoke(startWebhooks, startIngest, mountMCP, mountConsole, mountBackup, buildInfoGauge, func(*Server) {})}, extra...)...)
}

// Parts provides every component without starting anything; commands such
// as eval invoke what they need.
func Parts(cfg config.Config, log *zap.Logger) fx.Option {
	return fx.Options(
		buildParts(),
		observability(),
		fx.Supply(cfg, log),
		fx.WithLogger(func() fxevent.Logger {
			return &fxevent.ZapLogger{Logger: log.Named("fx").WithOptions(zap.IncreaseLevel(zapcore.WarnLevel))}
		}),
		fx.Provide(
			newStore,
			newIndex,
			core.NewVisibility,
			newSlog,
			newWebhooks,
			func(w *webhooks.Service) ports.EventPublisher { return w },
			newSources,
			newEmbedder,
			newReranker,
			newVectors,
			newIngest,
			newFiles,
			lookup.New,
			func(l *lookup.Service, s *search.Service) *compare.Service { return compare.New(l, l, s) },
			func(cfg config.Config, m ports.Metrics) search.Config {
				return search.Config{VectorWeight: cfg.VectorWeightValue(), VectorFloor: cfg.VectorFloorValue(), Metrics: m}
			},
			search.New,
			newStatus,
			func() *selfURL { return &selfURL{} },
			newInternalToken,
			newConsole,
			newAPI,
			newMCP,
			newRoot,
			NewServer,
		),
	)
}

// NewLogger builds the process logger: JSON for machines, console for people,
// written to stderr through a buffer (logwriter.go: call Sync before exiting).
func NewLogger(cfg config.Config) (*zap.Logger, error) {
	format := cfg.LogFormat
	if format == "auto" {
		format = "json"
		if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			format = "console"
		}
	}
	zc := loggerConfig(format)
	lvl, err := zapcore.ParseLevel(cfg.LogLevel)
	if err != nil {
		return nil, err
	}
	zc.Level = zap.NewAtomicLevelAt(lvl)
	return buildLogger(zc, os.Stderr)
}

// loggerConfig is the zap configuration of a log format ("json" or
// "console"), at info.
func loggerConfig(format string) zap.Config {
	var zc zap.Config
	if format == "console" {
		zc = zap.NewDevelopmentConfig()
		zc.Development = false
		zc.EncoderConfig.EncodeLevel = zapcore.CapitalColorLevelEncoder
	} else {
		zc = zap.NewProductionConfig()
		zc.Sampling = nil
		zc.EncoderConfig.EncodeTime = iso8601Time // zapcore.ISO8601TimeEncoder's format, made once per millisecond
	}
	zc.Level = zap.NewAtomicLevelAt(zapcore.InfoLevel)
	return zc
}

func newSlog(log *zap.Logger) *slog.Logger {
	return slog.New(requestIDs{zapslog.NewHandler(log.Core(), zapslog.WithName("core"))})
}

// fileLimits are the uploaded files' limits: the configured bytes and rows,
// and cells in proportion to the rows (filereader's default is 10 per row).
func fileLimits(cfg config.Config) filereader.Limits {
	l := filereader.Limits{MaxBytes: cfg.MaxUpload, MaxRows: cfg.MaxRows}
	if cfg.MaxRows > filereader.DefaultMaxRows {
		l.MaxCells = filereader.DefaultMaxCells / filereader.DefaultMaxRows * cfg.MaxRows
	}
	return l
}

func newFiles(cfg config.Config, in *ingest.Service, stash ports.FileStash) *ingest.Files {
	return ingest.NewFiles(in, filereader.Parser{Limits: fileLimits(cfg)}, stash)
}

func newEmbedder(cfg config.Config) (ports.Embedder, error) {
	return embedder.New(cfg.Embedder, embedder.OpenAIConfig{
		BaseURL: cfg.EmbedderURL, Model: cfg.EmbedderModel, APIKey: cfg.EmbedderKey, Timeout: cfg.EmbedderTimeout,
	})
}

func newReranker(cfg config.Config) (ports.Reranker, error) {
	return reranker.New(cfg.Reranker, reranker.Config{
		BaseURL: cfg.RerankerURL, Model: cfg.RerankerModel, APIKey: cfg.RerankerKey, Flavor: cfg.RerankerFlavor, Timeout: cfg.RerankerTimeout,
	})
}

// newVectors is nil (full-text only) when no embedder is configured. With
// the embedded store the graph is kept across a clean stop beside the text
// index (index/vectors.snap, see keptIndex); a replica of a shared store
// keeps no mark, so it keeps no graph either.
func newVectors(cfg config.Config, e ports.Embedder, vs ports.VectorStore, st ports.ResourceStore, log *slog.Logger) (*embedding.Syncer, error) {
	if e == nil {
		// A graph kept by an earlier run with an embedder is of no use
		// (and large): the next run with one rebuilds it anyway.
		if !cfg.SharedStore() {
			_ = os.Remove(filepath.Join(cfg.DataDir, "index", vectorsFile))
		}
		return nil, nil
	}
	ix := hnsw.NewCatalogIndex(e.Dim())
	if !cfg.SharedStore() {
		var err error
		if ix, err = hnsw.OpenCatalogIndex(e.Dim(), filepath.Join(cfg.DataDir, "index", vectorsFile)); err != nil {
			return nil, err
		}
	}
	return embedding.New(e, vs, ix, st, log), nil
}

// vectorsFile holds the vector graph kept at a clean stop, under the index
// directory.
const vectorsFile = "vectors.snap"

// newIndex opens the full-text index kept under the data directory; the
// ingest service decides at start whether it is taken up or rebuilt.
func newIndex(lc fx.Lifecycle, cfg config.Config, vec *embedding.Syncer, log *zap.Logger) (ports.TextIndex, error) {
	ix, err := blugeindex.Open(filepath.Join(cfg.DataDir, "index"))
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(ix.Close))
	if vec == nil {
		return ix, nil
	}
	return keptIndex{Index: ix, vec: vec, log: log}, nil
}

// keptIndex is the text index whose Persist also keeps the vector graph
// under the same mark, after the text index and before the store keeps
// the mark (ingest.Service.Persist: the index's Persist, then
// SetIndexMark), so a graph is only ever taken up with a mark the store
// kept after it was written: a crash, a stop during the boot or any other
// writer leaves no mark, and the next start rebuilds both. The graph not
// kept (vectors still loading or queued, a failed update) costs only its
// rebuild; the text index is kept all the same. At start Resume takes both
// up. Every other method is the text index's own (so is RankedPrefix,
// which search asks for).
type keptIndex struct {
	*blugeindex.Index
	vec *embedding.Syncer
	log *zap.Logger
}

// Resume takes up the vector graph kept at the last clean stop (when the
// store's mark is the one it was kept under: embedding.Syncer.Resume)
// beside the text index, on the other core, and returns when both are
// done, so that once the catalogs are loaded and /readyz says so, hybrid
// search has every vector.
func (k keptIndex) Resume(ctx context.Context, mark string) (bool, error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.vec.Resume(ctx)
	}()
	ok, err := k.Index.Resume(ctx, mark)
	<-done
	return ok, err
}

func (k keptIndex) Persist(ctx context.Context) (string, error) {
	mark, err := k.Index.Persist(ctx)
	if err != nil || mark == "" {
		return mark, err
	}
	t := time.Now()
	if err := k.vec.Persist(ctx, mark); err != nil {
		k.log.Warn("the vector index was not kept; the next start rebuilds it", zap.Error(err))
	} else {
		k.log.Info("vector index kept for the next start", zap.Int("vectors", k.vec.Index().Len()), zap.Duration("took", time.Since(t)))
	}
	return mark, nil
}

// newWebhooks is the event publisher: the outbox in the store, deliveries
// over HTTP.
func newWebhooks(cfg config.Config, st ports.WebhookStore, log *slog.Logger, m ports.Metrics) (*webhooks.Service, error) {
	sender := webhooksender.New(webhooksender.Config{Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.WebhookAllowPrivate})
	return webhooks.New(webhooks.Config{
		StaticURLs: cfg.WebhookURLs, StaticSecret: cfg.WebhookSecret,
		Backoff: cfg.WebhookBackoff, RetryFor: cfg.WebhookRetryFor, Lease: cfg.WebhookLease, Metrics: m,
	}, st, sender, log)
}

// startWebhooks runs the delivery worker. Its stop hook runs before the
// store closes (hooks stop in reverse order); attempts in flight are
// abandoned and retried by the next process.
func startWebhooks(lc fx.Lifecycle, w *webhooks.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			go func() {
				defer close(done)
				w.Run(ctx)
			}()
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			<-done
			return nil
		},
	})
}

func newSources(cfg config.Config) ingest.Sources {
	bc := boverket.Config{
		BaseURL: cfg.UpstreamURL, Version: cfg.UpstreamVer, SubscriptionKey: cfg.UpstreamKey,
		Timeout: cfg.IngestTimeout, ExcelURLSV: cfg.ExcelURLSV, ExcelURLEN: cfg.ExcelURLEN,
	}
	return ingest.Sources{
		Upstream: map[core.CatalogID][]ports.CatalogSource{
			core.National: {boverket.NewJSONSource(bc), boverket.NewExcelSource(bc)},
		},
		Fixture: map[core.CatalogID]ports.CatalogSource{core.National: demosnapshot.Source{}},
	}
}

func newIngest(cfg config.Config, st ports.ResourceStore, rep replicas, ix ports.TextIndex, vis *core.Visibility, vec *embedding.Syncer, ev ports.EventPublisher, src ingest.Sources, log *slog.Logger, m ports.Metrics) *ingest.Service {
	return ingest.New(ingest.Config{
		OriginBase:    cfg.OriginBase,
		Interval:      cfg.IngestInterval,
		BootIngest:    cfg.BootIngest,
		BootTimeout:   3 * cfg.IngestTimeout, // JSON, then the workbooks, then the snapshot
		BulkGCPercent: cfg.BulkGC,
		Metrics:       m,
		BootState:     bootState(cfg, vis),
		Feed:          rep.Feed,
		Locks:         rep.Locks,
	}, st, ix, vis, vec, ev, src, log)
}

// startIngest loads the index from the store in the background, so the
// server answers (health, readiness with the progress) whatever the
// catalog size; reads of a catalog answer 503 until it is loaded. Then come
// the vectors, the boot ingest and the schedule.
func startIngest(lc fx.Lifecycle, svc *ingest.Service, vis *core.Visibility, vec *embedding.Syncer, log *zap.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	bootDone := make(chan struct{})
	vis.BeginLoading(core.Catalogs...) // before any hook starts the server
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			go func() {
				defer close(bootDone)
				t := time.Now()
				n, err := svc.Rebuild(ctx)
				if err != nil {
					if ctx.Err() == nil {
						log.Error("rebuilding the search index failed; the service stays unready", zap.Error(err))
					}
					return
				}
				log.Info("search index rebuilt from the store", zap.Int("resources", n), zap.Duration("took", time.Since(t)))
				// Vectors load (and, after a model change, are recomputed)
				// next; until then vector=true answers full-text and says
				// so. The boot ingest follows, so it never races a
				// half-loaded vector index.
				t = time.Now()
				loaded, computed, err := vec.Boot(ctx)
				if ctx.Err() != nil {
					return // stopping
				}
				if err != nil {
					log.Error("loading vectors failed; vector search is degraded", zap.Error(err))
				} else if vec != nil {
					log.Info("vectors ready", zap.Int("loaded", loaded), zap.Int("computed", computed), zap.Duration("took", time.Since(t)))
				}
				svc.Start(ctx)
			}()
			return nil
		},
		OnStop: func(stopCtx context.Context) error {
			cancel()
			svc.Stop()
			<-bootDone
			svc.Wait()
			// After the last write: the next start takes the index up
			// instead of rebuilding it.
			t := time.Now()
			if err := svc.Persist(stopCtx); err != nil {
				log.Warn("the search index was not kept; the next start rebuilds it", zap.Error(err))
			} else {
				log.Info("search index kept for the next start", zap.Duration("took", time.Since(t)))
			}
			return nil
		},
	})
}

func newAPI(cfg config.Config, log *zap.Logger, s *search.Service, l *lookup.Service, c *compare.Service, st *status.Service, in *ingest.Service, files *ingest.Files, wh *webhooks.Service, vis *core.Visibility, m ports.Metrics) *httpapi.API {
	var gens ports.Generations
	if cfg.KeepAnswers {
		gens = vis
	}
	return httpapi.New(httpapi.Deps{
		Search: s, Resources: l, Compare: c, Catalogs: st, Ingest: in, Files: files, Webhooks: wh, MaxUpload: cfg.MaxUpload,
		OpenAPI: web.OpenAPI(), SwaggerUI: web.SwaggerUI(),
		AdminToken: cfg.AdminToken, Log: log.Named("http"), Generations: gens, Metrics: m,
		Access: accessLog(log, "http"), AdminTimeout: cfg.AdminTimeout,
	})
}

// newMCP serves the same core services as MCP tools (spec rule 8: MCP
// reranks whenever the process has a reranker).
func newMCP(cfg config.Config, log *zap.Logger, s *search.Service, l *lookup.Service, c *compare.Service, st *status.Service, m ports.Metrics) *mcpserver.Server {
	return mcpserver.New(mcpserver.Deps{
		Search: s, Resources: l, Compare: c, Catalogs: st,
		Rerank: cfg.Reranker != "none", AllowAnyHost: cfg.MCPAllowAnyHost, Log: log.Named("mcp"), Metrics: m,
		Version: buildinfo.Get().Version,
	})
}

// mountMCP puts /mcp, /mcp/sse and /mcp/message on the API's engine (the
// hosted build passes the engine grouped under its /api guard instead).
// Taking *Server makes this stop hook run before the HTTP server's, so
// open MCP streams end first and the graceful shutdown does not wait on them.
func mountMCP(lc fx.Lifecycle, api *httpapi.API, m *mcpserver.Server, _ *Server) {
	m.Mount(api.Engine())
	lc.Append(fx.StopHook(m.Close))
}

// newStatus answers what the catalogs hold; vector coverage is counted for
// the configured embedder.
func newStatus(st ports.ResourceStore, vs ports.VectorStore, e ports.Embedder) *status.Service {
	if e == nil {
		return status.New(st, nil, "")
	}
	return status.New(st, vs, e.ID())
}

// newConsole is the operator console; it calls the same services as REST
// and MCP, and its inspector calls this process's own /api and /mcp.
func newConsole(cfg config.Config, log *zap.Logger, s *search.Service, l *lookup.Service, c *compare.Service, in *ingest.Service,
	files *ingest.Files, wh *webhooks.Service, st *status.Service, e ports.Embedder, r ports.Reranker, self *selfURL, it internalToken, kv ports.KV) (*console.Console, error) {
	d := console.Deps{
		Search: s, Resources: l, Compare: c, Ingest: in, Files: files, Webhooks: wh, Status: st,
		AdminToken: cfg.AdminToken, Sessions: kv, MaxUpload: cfg.MaxUpload, SelfURL: self.get,
		SelfHeaders: map[string]string{guard.InternalHeader: string(it)},
		MCPRerank:   cfg.Reranker != "none", Log: log.Named("console"),
	}
	if e != nil {
		d.EmbedderID = e.ID()
	}
	if r != nil {
		d.RerankerID = r.ID()
	}
	return console.New(d)
}

// internalToken is a random per-process secret: the console's inspector
// sends it on its loopback calls, and the hosted build's guard lets those
// through (an operator's own question is not charged). It never leaves the
// process.
type internalToken string

func newInternalToken() internalToken {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return internalToken(hex.EncodeToString(b))
}

// selfURL hands the console the server's loopback URL; the server is built
// after the console (it serves the console), so the URL is looked up late.
type selfURL struct{ srv *Server }

func (u *selfURL) get() string { return u.srv.SelfURL() }

// mountConsole puts the console's pages on the API's engine and tells it
// where the server listens.
func mountConsole(api *httpapi.API, c *console.Console, self *selfURL, srv *Server) {
	c.Mount(api.Engine())
	self.srv = srv
}

// Root is the handler the HTTP server serves: the API engine, behind the
// access guard in the hosted build (see hosted.go and selfhosted.go).
type Root struct{ http.Handler }

// Server is the HTTP server; Addr is known once the app has started.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Addr is the address the server listens on (useful with port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// SelfURL is the base URL that reaches this server over loopback: the
// listen address, with an unspecified host (0.0.0.0, ::) replaced by
// 127.0.0.1.
func (s *Server) SelfURL() string {
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		return "http://" + s.Addr()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func mustStdLog(l *stdlog.Logger, err error) *stdlog.Logger {
	if err != nil {
		panic(err) // only for a level zap does not know
	}
	return l
}

// NewServer listens at start, so a busy port fails the boot at once, and
// drains in-flight requests at stop.
func NewServer(lc fx.Lifecycle, cfg config.Config, root Root, log *zap.Logger) *Server {
	s := &Server{srv: &http.Server{
		Handler:           root,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      10 * time.Minute, // an admin ingest gets SERVICE_ADMIN_TIMEOUT instead (httpapi's long)
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		// net/http's own complaints (TLS handshakes, panics) as JSON warnings
		// in the log's order, not plain text around its buffer.
		ErrorLog: mustStdLog(zap.NewStdLogAt(log.Named("http"), zap.WarnLevel)),
	}}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			ln, err := net.Listen("tcp", cfg.Addr)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", cfg.Addr, err)
			}
			s.ln = ln
			go func() {
				if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("http server stopped", zap.Error(err))
				}
			}()
			log.Info("listening", zap.String("addr", ln.Addr().String()), zap.String("docs", "http://"+ln.Addr().String()+"/docs"))
			return nil
		},
		OnStop: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, cfg.ShutdownGrace)
			defer cancel()
			return s.srv.Shutdown(ctx)
		},
	})
	return s
}
