package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/adapters/badgerstore"
	"github.com/climatesearch/climatesearch/adapters/pgstore"
	"github.com/climatesearch/climatesearch/config"
	"github.com/climatesearch/climatesearch/ports"
)

// stores are the store ports of the configured store (SERVICE_STORE),
// provided one by one: the rest of the wiring never names the store's type.
type stores struct {
	fx.Out
	Resources ports.ResourceStore
	Vectors   ports.VectorStore
	Webhooks  ports.WebhookStore
	Stash     ports.FileStash
	Ledger    ports.PaymentLedger
	KV        ports.KV // the console's sessions
	// Backup is nil when the store is backed up by its own tools.
	Backup   ports.Backup
	Replicas replicas
}

// replicas is what several replicas over one shared store need (docs/SCALING.md);
// zero for badger, a store of one process.
type replicas struct {
	Feed  ports.ChangeFeed
	Locks ports.RunLocks
}

// newStore opens the configured store and closes it at stop (after every
// part that uses it: hooks stop in reverse order).
func newStore(lc fx.Lifecycle, cfg config.Config, log *zap.Logger) (stores, error) {
	if cfg.SharedStore() {
		return openShared(lc, cfg, log)
	}
	dir := filepath.Join(cfg.DataDir, "badger")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return stores{}, fmt.Errorf("data directory %s: %w", cfg.DataDir, err)
	}
	st, err := badgerstore.Open(dir, log.Named("badger"))
	if err != nil {
		return stores{}, fmt.Errorf("opening the store in %s: %w", dir, err)
	}
	lc.Append(fx.StopHook(st.Close))
	return stores{Resources: st, Vectors: st, Webhooks: st, Stash: st, Ledger: st, KV: st, Backup: st}, nil
}

// openShared opens PostgreSQL, migrating it first (once across replicas
// starting together). It must answer at start; later outages are ridden out
// (health says 503, reads and writes fail cleanly, every part reconnects).
func openShared(lc fx.Lifecycle, cfg config.Config, log *zap.Logger) (stores, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.StartTimeout)
	defer cancel()
	st, err := pgstore.Open(ctx, cfg.Store, log.Named("postgres"))
	if err != nil {
		return stores{}, fmt.Errorf("opening the PostgreSQL store (SERVICE_STORE): %w", err)
	}
	lc.Append(fx.StopHook(st.Close))
	// No Backup: PostgreSQL is backed up with its own tools (pg_dump).
	return stores{Resources: st, Vectors: st, Webhooks: st, Stash: st, Ledger: st, KV: st,
		Replicas: replicas{Feed: st, Locks: st}}, nil
}
