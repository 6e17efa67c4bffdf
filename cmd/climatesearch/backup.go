package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/climatesearch/climatesearch/cmd/climatesearch/app"
)

// runBackup streams GET /admin/backup of the running service into FILE:
// written beside it first and renamed when complete, so FILE is never a
// partial backup.
func runBackup(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("backup", stderr)
	base := urlFlag(fs, defaultURL())
	force := fs.Bool("force", false, "replace FILE if it exists")
	pos, code, ok := parseArgs(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return fail(stderr, "backup", exitUsage, "give the FILE to write, e.g. climatesearch backup climatesearch.backup")
	}
	file := pos[0]
	if _, err := os.Stat(file); err == nil && !*force {
		return fail(stderr, "backup", exitUsage, "%s exists: choose another name or pass --force", file)
	}
	c, err := newClient(*base, 0)
	if err != nil {
		return fail(stderr, "backup", exitUsage, "%v", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".partial-*")
	if err != nil {
		return fail(stderr, "backup", exitFail, "%v", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	n, err := c.Backup(context.Background(), tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		return fail(stderr, "backup", exitFail, "%v", err)
	}
	fmt.Fprintf(stdout, "backup of %s written to %s (%d bytes)\n", *base, file, n)
	return exitOK
}

// runRestore loads a backup into an empty data directory; the server
// starts on it afterwards.
func runRestore(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("restore", stderr)
	dataDir := fs.String("data-dir", "", "empty (or new) data directory to restore into (default SERVICE_DATA_DIR)")
	pos, code, ok := parseArgs(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return fail(stderr, "restore", exitUsage, "give the backup FILE to load, e.g. climatesearch restore climatesearch.backup --data-dir ./data")
	}
	cfg, err := localConfig(*dataDir)
	if err != nil {
		return fail(stderr, "restore", exitUsage, "%v", err)
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return fail(stderr, "restore", exitUsage, "%v", err)
	}
	defer f.Close()
	if err := app.Restore(cfg, f, cliLogger(cfg, stderr)); err != nil {
		if errors.Is(err, app.ErrLocked) {
			return fail(stderr, "restore", exitFail, "the data directory %s is in use by a running server: stop it", cfg.DataDir)
		}
		return fail(stderr, "restore", exitFail, "%v", err)
	}
	fmt.Fprintf(stdout, "restored %s into %s; start the server on it\n", pos[0], cfg.DataDir)
	return exitOK
}
