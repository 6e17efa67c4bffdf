// Package testbin finds the repository root and compiles the climatesearch
// command once per test binary, for the tests that run it as a subprocess.
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// RepoRoot walks up from the working directory to the directory of go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Build compiles ./cmd/climatesearch into a fresh temporary directory and
// returns the binary, the repository root and a cleanup that removes it.
func Build() (bin, root string, cleanup func(), err error) {
	root, err = RepoRoot()
	if err != nil {
		return "", "", nil, err
	}
	dir, err := os.MkdirTemp("", "climatesearch-bin-")
	if err != nil {
		return "", "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, "climatesearch")
	build := exec.Command("go", "build", "-o", bin, "./cmd/climatesearch")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", "", nil, fmt.Errorf("go build ./cmd/climatesearch: %v\n%s", err, out)
	}
	return bin, root, cleanup, nil
}
