// Package arch guards the hexagonal layout: the core and its ports depend on
// nothing but the standard library and each other.
package arch

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/climatesearch/climatesearch"

type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

func listPackages(t *testing.T, patterns ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, patterns...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestCoreAndPortsImportOnlyStdlibAndEachOther(t *testing.T) {
	pkgs := listPackages(t, "./core/...", "./ports/...")
	if len(pkgs) < 3 {
		t.Fatalf("expected core, its services and ports, got %d packages", len(pkgs))
	}
	std := map[string]bool{}
	for _, p := range listPackages(t, "std") {
		std[p.ImportPath] = true
	}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			inner := strings.HasPrefix(imp, module+"/core") || strings.HasPrefix(imp, module+"/ports")
			if !std[imp] && !inner {
				t.Errorf("%s imports %s: core and ports may import only the standard library, core and ports", p.ImportPath, imp)
			}
		}
	}
}

// TestAdaptersDoNotImportEachOther keeps adapters independent: they depend
// inward on core and ports, never sideways (test helpers excepted).
func TestAdaptersDoNotImportEachOther(t *testing.T) {
	for _, p := range listPackages(t, "./adapters/...") {
		own := strings.TrimPrefix(p.ImportPath, module+"/adapters/")
		own = strings.SplitN(own, "/", 2)[0]
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/adapters/") {
				continue
			}
			other := strings.SplitN(strings.TrimPrefix(imp, module+"/adapters/"), "/", 2)[0]
			if other != own {
				t.Errorf("%s imports %s: adapters must not depend on each other", p.ImportPath, imp)
			}
		}
	}
}
