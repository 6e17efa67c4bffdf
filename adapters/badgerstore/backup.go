package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"go.uber.org/zap"
)

// ErrLocked: another process (a running server) holds the store's
// directory; badger admits one process at a time.
var ErrLocked = errors.New("the data directory is in use by another process")

// lockedError turns badger's directory-lock failure into ErrLocked.
func lockedError(dir string, err error) error {
	if errors.Is(err, syscall.EWOULDBLOCK) || strings.Contains(err.Error(), "Cannot acquire directory lock") {
		return fmt.Errorf("%w (%s)", ErrLocked, dir)
	}
	return nil
}

// backupMagic opens every backup, so a restore refuses a file that is none
// before badger reads it.
const backupMagic = "climatesearch-backup 1\n"

// Backup writes a consistent snapshot of the whole store to w (badger's
// backup format: every live key at one read timestamp), while the store
// keeps serving reads and writes. Load it with Restore.
func (s *Store) Backup(ctx context.Context, w io.Writer) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave()
	cw := ctxWriter{ctx, w}
	if _, err := io.WriteString(cw, backupMagic); err != nil {
		return err
	}
	_, err := s.db.Backup(cw, 0)
	return err
}

// ctxWriter stops a backup when its caller goes away.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// Restore loads a backup written by Backup into dir, which must be empty or
// absent (a restore never merges into existing data).
func Restore(dir string, r io.Reader, log *zap.Logger) (err error) {
	head := make([]byte, len(backupMagic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != backupMagic {
		return errors.New("not a climatesearch backup (GET /admin/backup, climatesearch backup)")
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty: restore only into an empty data directory", dir)
	}
	s, err := Open(dir, log)
	if err != nil {
		return err
	}
	defer func() {
		// badger trusts the lengths in the stream: a damaged file can
		// make it panic.
		if p := recover(); p != nil {
			_ = s.Close()
			err = fmt.Errorf("the backup is damaged: %v", p)
		}
	}()
	if err := s.db.Load(r, 256); err != nil {
		_ = s.Close()
		return fmt.Errorf("loading the backup: %w", err)
	}
	// A backup taken while a large change was being journaled holds part
	// of it and its undo entries: the restored store rolls it back now
	// (the next Open would too).
	if _, err := s.recoverJournals(context.Background()); err != nil {
		_ = s.Close()
		return fmt.Errorf("rolling back the change unfinished in the backup: %w", err)
	}
	return s.Close()
}
