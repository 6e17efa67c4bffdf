// Package testbin finds the repository root and compiles the climatesearch
// command once per test binary, for the tests that run it as a subprocess.
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
func Build() (bin, root string, cleanup func(), err error) { return BuildTags() }

// BuildTags is Build with build tags (e.g. "hosted").
func BuildTags(tags ...string) (bin, root string, cleanup func(), err error) {
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
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	build := exec.Command("go", append(args, "./cmd/climatesearch")...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", "", nil, fmt.Errorf("go %s ./cmd/climatesearch: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin, root, cleanup, nil
}
