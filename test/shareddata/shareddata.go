// Package shareddata locates the real reference files (the publisher's
// exports, the Danish tables, the golden query set) that tests and
// benchmarks read by path. They are never copied into the repository.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/climatesearch/climatesearch/test/testbin"
)

// EnvVar overrides the location of the shared directory (the one that holds
// data/ and eval/).
const EnvVar = "CLIMATESEARCH_SHARED"

// Root returns the shared directory: $CLIMATESEARCH_SHARED, or ../shared next
// to the repository root. A missing directory fails the test: the suite
// never skips silently.
func Root(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(EnvVar)
	if dir == "" {
		dir = filepath.Join(repoRoot(tb), "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		tb.Fatalf("shared reference data not found at %s (set %s): %v", dir, EnvVar, err)
	}
	return dir
}

// Path joins elements under the shared directory, e.g.
// Path(t, "data", "boverket", "02.06.000-sv-se.json").
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	p := filepath.Join(append([]string{Root(tb)}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("reference file missing: %v", err)
	}
	return p
}

// Read returns the content of a reference file.
func Read(tb testing.TB, elem ...string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, elem...))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func repoRoot(tb testing.TB) string {
	tb.Helper()
	root, err := testbin.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return root
}
