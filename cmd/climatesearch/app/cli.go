package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/httpapi"
	"github.com/climatesearch/climatesearch/adapters/prommetrics"
	"github.com/climatesearch/climatesearch/cmd/climatesearch/buildinfo"
	"github.com/climatesearch/climatesearch/config"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/core/lookup"
	"github.com/climatesearch/climatesearch/core/search"
	"github.com/climatesearch/climatesearch/core/status"
	"github.com/climatesearch/climatesearch/ports"
)

// What the command-line tools need from the wiring: the same core services
// as the server, over a stopped data directory, and the store's backup.

// ErrLocked: the data directory is held by another process, a running
// server; a command then says to stop it or to use --url.
var ErrLocked = badgerstore.ErrLocked

// mountBackup serves GET /admin/backup from the store; a store backed up
// with its own tools says so.
func mountBackup(api *httpapi.API, b ports.Backup) {
	if b == nil {
		api.RefuseBackup("the store is PostgreSQL (SERVICE_STORE): back it up with pg_dump; GET /admin/backup serves the embedded badger store only")
		return
	}
	api.MountBackup(b)
}

// Local is the core services over the data directory of cfg, for commands
// that run while the server is stopped. Close it to close the store.
type Local struct {
	Ingest  *ingest.Service
	Files   *ingest.Files
	Lookup  *lookup.Service
	Search  *search.Service
	Status  *status.Service
	Vectors *embedding.Syncer
	app     *fx.App
}

// OpenLocal builds the services without the server, webhooks worker or
// schedule; errors.Is(err, ErrLocked) when a server holds the directory.
func OpenLocal(ctx context.Context, cfg config.Config, log *zap.Logger) (*Local, error) {
	l := &Local{}
	a := fx.New(Parts(cfg, log), fx.NopLogger,
		fx.Populate(&l.Ingest, &l.Files, &l.Lookup, &l.Search, &l.Status, &l.Vectors))
	if err := a.Err(); err != nil {
		return nil, err
	}
	if err := a.Start(ctx); err != nil {
		return nil, err
	}
	l.app = a
	return l, nil
}

// LoadIndex loads the search index and the vectors from the store, as the
// server does after a start: ingests and searches need them.
func (l *Local) LoadIndex(ctx context.Context) error {
	if _, err := l.Ingest.Rebuild(ctx); err != nil {
		return err
	}
	_, _, err := l.Vectors.Boot(ctx)
	return err
}

// Close stops the services and closes the store.
func (l *Local) Close(ctx context.Context) error { return l.app.Stop(ctx) }

// Restore loads a backup (GET /admin/backup) into cfg's data directory,
// which must be empty or absent.
func Restore(cfg config.Config, r io.Reader, log *zap.Logger) error {
	if cfg.SharedStore() {
		return errors.New("SERVICE_STORE is PostgreSQL: a backup of the embedded store does not apply; restore PostgreSQL with its own tools (pg_restore or psql)")
	}
	entries, err := os.ReadDir(cfg.DataDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("data directory %s: %w", cfg.DataDir, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("data directory %s is not empty: restore only into an empty (or new) data directory", cfg.DataDir)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("data directory %s: %w", cfg.DataDir, err)
	}
	dir := filepath.Join(cfg.DataDir, "badger")
	if err := badgerstore.Restore(dir, r, log.Named("badger")); err != nil {
		_ = os.RemoveAll(dir) // this restore created it: leave the directory empty for the next try
		return err
	}
	return nil
}

// buildInfoGauge puts the binary's build on /metrics
// (climatesearch_build_info).
func buildInfoGauge(m *prommetrics.Metrics) {
	i := buildinfo.Get()
	m.SetBuildInfo(i.Version, i.Revision, i.GoVersion)
}
