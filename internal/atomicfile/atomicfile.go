// Package atomicfile writes a file so that its path holds either the old
// file or the whole new one, never a part: what the indexes keep across a
// clean stop (adapters/blugeindex, adapters/hnsw) is written through it.
// It imports only the standard library, so any adapter may use it.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes path through a synced temporary file beside it (named
// path.*) renamed over it, then syncs the directory.
func Write(path string, write func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }() // after the rename, a no-op
	if err := write(f); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
