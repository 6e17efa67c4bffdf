package openapi

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/test/openapi/client"
)

// oapiCodegen is the generator and version client/generate.go runs.
const oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// TestGeneratedClientIsCurrent regenerates the client from web/openapi.yaml
// with the committed configuration into a scratch directory and requires
// it to equal the committed client.gen.go, so the document and the client
// cannot drift apart (run `go generate ./test/openapi/client/` after
// changing the document).
func TestGeneratedClientIsCurrent(t *testing.T) {
	dir := filepath.Join(testDir, "client")
	src, err := os.ReadFile(filepath.Join(dir, "generate.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "//go:generate go run "+oapiCodegen+" -config cfg.yaml ../../../web/openapi.yaml") {
		t.Fatalf("client/generate.go does not run %s with cfg.yaml on web/openapi.yaml", oapiCodegen)
	}
	scratch := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(dir, "cfg.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scratch, "cfg.yaml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*patience)
	defer cancel()
	// The generator runs in module mode from the proxy at its pinned
	// version, outside this module (its dependencies are not the service's).
	cmd := exec.CommandContext(ctx, "go", "run", oapiCodegen, "-config", "cfg.yaml", docPath())
	cmd.Dir = scratch
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("oapi-codegen failed on web/openapi.yaml: %v\n%s", err, stderr.String())
	}
	if s := strings.TrimSpace(stderr.String()); s != "" && !strings.HasPrefix(s, "go: downloading") {
		t.Logf("oapi-codegen said:\n%s", s)
	}
	got, err := os.ReadFile(filepath.Join(scratch, "client.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "client.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("test/openapi/client/client.gen.go is not what web/openapi.yaml generates (first difference at line %d:\n committed: %q\n generated: %q); run `go generate ./test/openapi/client/`", i+1, w, g)
			}
		}
	}
}

// TestGeneratedClientTalksToTheBinary: the generated client calls search,
// alternatives and compare on the compiled binary (a fresh offline start,
// the demo snapshot) and gets the answers a user checks, decoded into the
// generated types.
func TestGeneratedClientTalksToTheBinary(t *testing.T) {
	p := startOffline(t)
	snap := snapshot(t)
	c, err := client.NewClientWithResponses(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	str := func(s string) *string { return &s }
	perM3 := func(id string) float64 {
		r := snap[id]
		if r.A1A3 == nil || r.Conversions["kg/m³"] == 0 || r.Unit != "kg" {
			t.Fatalf("the snapshot's %s has no A1-A3 per kg with a kg/m³ conversion: %+v", id, r)
		}
		return *r.A1A3 * r.Conversions["kg/m³"]
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

	t.Run("search", func(t *testing.T) {
		res, err := c.SearchResourcesWithResponse(ctx, &client.SearchResourcesParams{Q: "spånskiva"})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
			t.Fatalf("search: %d %s", res.StatusCode(), res.Body)
		}
		sr := res.JSON200
		if len(sr.Results) == 0 || sr.Total < len(sr.Results) {
			t.Fatalf("search for spånskiva found %d hits (total %d)", len(sr.Results), sr.Total)
		}
		top := sr.Results[0]
		if top.Id != "6000000000" || top.Catalog != client.CatalogID("national") || top.Name == nil || *top.Name != "Spånskiva" {
			t.Errorf("first hit = %s:%s %v, want national:6000000000 Spånskiva", top.Catalog, top.Id, top.Name)
		}
		if top.Details != "/api/resources/national:6000000000" || top.A1a3 == nil || *top.A1a3 != *snap["6000000000"].A1A3 {
			t.Errorf("first hit: details %q, a1a3 %v; want its path and the snapshot's %v", top.Details, top.A1a3, *snap["6000000000"].A1A3)
		}
		if top.MatchSource != client.HitMatchSource("fts") || top.Score <= 0 {
			t.Errorf("first hit: match_source %q score %v", top.MatchSource, top.Score)
		}
		if !strings.Contains(sr.Source, "Boverket") {
			t.Errorf("source %q does not name the publisher", sr.Source)
		}
	})

	t.Run("alternatives", func(t *testing.T) {
		res, err := c.FindAlternativesWithResponse(ctx, "national:6000000032", &client.FindAlternativesParams{Unit: str("m3")})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
			t.Fatalf("alternatives: %d %s", res.StatusCode(), res.Body)
		}
		a := res.JSON200
		if a.Resource.Id != "6000000032" || a.Unit != "m³" || !near(a.Value, perM3("6000000032")) {
			t.Errorf("alternatives of %s per %s = %v, want national:6000000032 per m³ = %v", a.Resource.Id, a.Unit, a.Value, perM3("6000000032"))
		}
		if len(a.Alternatives) == 0 || a.Lower < len(a.Alternatives) {
			t.Fatalf("no alternatives (lower %d): %s", a.Lower, res.Body)
		}
		first := a.Alternatives[0]
		// The climate-improved variant of the same concrete comes first.
		if first.Id != "6000000033" || !slices.Contains(first.Reasons, client.AlternativeReasons("sibling")) {
			t.Errorf("first alternative = %s %v, want the climate-improved sibling 6000000033", first.Id, first.Reasons)
		}
		if !near(first.Value, perM3("6000000033")) || !near(first.Saving, a.Value-first.Value) || first.Value >= a.Value {
			t.Errorf("sibling value %v saving %v; want %v and %v", first.Value, first.Saving, perM3("6000000033"), a.Value-first.Value)
		}
		for _, alt := range a.Alternatives {
			if alt.Value >= a.Value {
				t.Errorf("alternative %s (%v) is not lower than %v", alt.Id, alt.Value, a.Value)
			}
		}
	})

	t.Run("compare", func(t *testing.T) {
		res, err := c.CompareResourcesWithResponse(ctx, &client.CompareResourcesParams{A: "national:6000000000", B: "national:6000000168", Unit: str("m3")})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
			t.Fatalf("compare: %d %s", res.StatusCode(), res.Body)
		}
		cmp := res.JSON200
		va, vb := perM3("6000000000"), perM3("6000000168")
		if cmp.Incomparable || cmp.Unit != "m³" || cmp.Impact != client.ComparisonImpact("typical") {
			t.Errorf("compare: unit %q impact %q incomparable %v, want m³, typical, comparable", cmp.Unit, cmp.Impact, cmp.Incomparable)
		}
		if !near(cmp.ValueA, va) || !near(cmp.ValueB, vb) || !near(cmp.DeltaA1a3, va-vb) || cmp.LowerImpactId != "6000000168" {
			t.Errorf("compare: a %v b %v delta %v lower %q; want %v, %v, %v, 6000000168 (glulam below particle board per m³)",
				cmp.ValueA, cmp.ValueB, cmp.DeltaA1a3, cmp.LowerImpactId, va, vb, va-vb)
		}
		if cmp.A.Id != "6000000000" || cmp.B.Id != "6000000168" {
			t.Errorf("compare sides %s, %s", cmp.A.Id, cmp.B.Id)
		}
	})

	t.Run("errors decode as the documented Error", func(t *testing.T) {
		res, err := c.CompareResourcesWithResponse(ctx, &client.CompareResourcesParams{A: "national:6000000000", B: "national:6000009999"})
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusNotFound || res.JSON404 == nil || res.JSON404.Error != "b: no resource national:6000009999" {
			t.Errorf("compare with an unknown b: %d %s", res.StatusCode(), res.Body)
		}
		bad, err := c.FindAlternativesWithResponse(ctx, "national:6000000032", &client.FindAlternativesParams{Unit: str("kWh")})
		if err != nil {
			t.Fatal(err)
		}
		if bad.StatusCode() != http.StatusBadRequest || bad.JSON400 == nil || !strings.Contains(bad.JSON400.Error, `unit "kWh" cannot apply to national:6000000032`) {
			t.Errorf("alternatives in kWh: %d %s", bad.StatusCode(), bad.Body)
		}
	})

	t.Run("the document itself", func(t *testing.T) {
		res, err := c.GetOpenAPIWithResponse(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != http.StatusOK || res.YAML200 == nil {
			t.Fatalf("getOpenAPI through the client: %d, decoded %v", res.StatusCode(), res.YAML200 != nil)
		}
		if doc, ok := (*res.YAML200).(map[string]any); !ok || doc["openapi"] != "3.0.3" {
			t.Errorf("getOpenAPI decoded into %T, want the document (a mapping with openapi: 3.0.3)", *res.YAML200)
		}
	})
}
