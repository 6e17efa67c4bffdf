package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"go.uber.org/zap"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockID is the key of the session advisory lock (single bigint
// form) under which goose migrates: the first replica to take it applies
// what is missing, the others wait, then find nothing to do.
const migrationLockID int64 = 0x636c696d61746573 // "climates"

// migrate applies the embedded migrations the database lacks, through
// goose's Provider on a database/sql handle of pgx's stdlib driver. The
// lock is polled every second (goose's minimum) for up to five minutes.
func migrate(ctx context.Context, cc *pgx.ConnConfig, log *zap.Logger) error {
	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID), lock.WithLockTimeout(1, 300))
	if err != nil {
		return err
	}
	db := stdlib.OpenDB(*cc.Copy())
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
		goose.WithLogger(gooseLogger{log.Named("goose").Sugar()}))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	for _, r := range res {
		log.Info("postgres migration applied", zap.String("migration", r.Source.Path), zap.Duration("took", r.Duration))
	}
	return nil
}

type gooseLogger struct{ s *zap.SugaredLogger }

func (l gooseLogger) Printf(format string, v ...any) { l.s.Debugf(format, v...) }
func (l gooseLogger) Fatalf(format string, v ...any) { l.s.Errorf(format, v...) }
