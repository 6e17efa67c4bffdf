package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// lintResult is Redocly's `--format json` report.
type lintResult struct {
	Totals struct {
		Errors, Warnings, Ignored int
	} `json:"totals"`
	Version  string `json:"version"`
	Problems []struct {
		RuleID   string `json:"ruleId"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
		Location []struct {
			Pointer string `json:"pointer"`
			Start   struct{ Line, Col int }
		} `json:"location"`
	} `json:"problems"`
}

// redoclyLint lints the document at path with the pinned Redocly CLI and
// this directory's redocly.yaml (the recommended ruleset).
func redoclyLint(t *testing.T, path string) lintResult {
	t.Helper()
	cli := filepath.Join(testDir, "node_modules", "@redocly", "cli", "bin", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("the pinned Redocly CLI is missing (%v): run `npm ci` in test/openapi (test/suite.sh does it)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH (%v): Redocly CLI needs Node.js >= 20.19", err)
	}
	if out, err := exec.Command(node, "-e", "const [a,b]=process.versions.node.split('.').map(Number);process.stdout.write(String(a>20||(a===20&&b>=19)))").Output(); err != nil || string(out) != "true" {
		v, _ := exec.Command(node, "--version").Output()
		t.Fatalf("Redocly CLI %s needs Node.js >= 20.19 (its engines); node on PATH is %s", pinnedRedocly(t), strings.TrimSpace(string(v)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "lint", "--config", filepath.Join(testDir, "redocly.yaml"), "--format", "json", path)
	cmd.Dir = t.TempDir()
	home := t.TempDir()
	// No telemetry, no update check: the test talks to nobody.
	cmd.Env = append(os.Environ(), "HOME="+home, "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1", "CI=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("redocly lint did not finish within the safety limit\n%s", stderr.String())
	}
	var res lintResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("redocly lint (%v) gave no JSON report: %v\nstdout:\n%s\nstderr:\n%s", runErr, err, stdout.String(), stderr.String())
	}
	if res.Version != pinnedRedocly(t) {
		t.Fatalf("redocly lint ran version %q, want the pinned %q", res.Version, pinnedRedocly(t))
	}
	// Redocly exits 1 exactly when there are errors.
	if (runErr != nil) != (res.Totals.Errors > 0) {
		t.Fatalf("redocly lint exit %v with %d errors\nstderr:\n%s", runErr, res.Totals.Errors, stderr.String())
	}
	return res
}

// pinnedRedocly is the exact version package.json pins.
func pinnedRedocly(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	v := pkg.DevDependencies["@redocly/cli"]
	if v == "" || strings.ContainsAny(v, "^~<>*x ") {
		t.Fatalf("package.json must pin @redocly/cli to an exact version, has %q", v)
	}
	return v
}

func (r lintResult) lines(severity string) []string {
	var out []string
	for _, p := range r.Problems {
		if p.Severity != severity {
			continue
		}
		where := ""
		if len(p.Location) > 0 {
			where = fmt.Sprintf("line %d %s", p.Location[0].Start.Line, p.Location[0].Pointer)
		}
		out = append(out, fmt.Sprintf("%s: %s (%s)", p.RuleID, p.Message, where))
	}
	return out
}

// TestRedoclyLintsTheDocumentWithoutErrors: web/openapi.yaml passes
// Redocly's recommended ruleset with zero errors; warnings are listed in
// the log.
func TestRedoclyLintsTheDocumentWithoutErrors(t *testing.T) {
	start := time.Now()
	res := redoclyLint(t, docPath())
	for _, w := range res.lines("warn") {
		t.Logf("warning: %s", w)
	}
	t.Logf("redocly %s, recommended ruleset: %d errors, %d warnings, %d ignored (%s)",
		res.Version, res.Totals.Errors, res.Totals.Warnings, res.Totals.Ignored, time.Since(start).Round(time.Millisecond))
	if res.Totals.Errors != 0 {
		t.Errorf("web/openapi.yaml has %d Redocly errors:\n%s", res.Totals.Errors, strings.Join(res.lines("error"), "\n"))
	}
	if res.Totals.Ignored != 0 {
		t.Errorf("%d problems are ignored through an ignore file; fix them or turn the rule off in redocly.yaml with a reason", res.Totals.Ignored)
	}
}

// TestRedoclyConfigKeepsTheRecommendedRules: the configuration in force
// still catches what the document was fixed for (no servers, no security,
// an operation without operationId, an unresolved $ref), so a rule turned
// off in redocly.yaml cannot pass unnoticed.
func TestRedoclyConfigKeepsTheRecommendedRules(t *testing.T) {
	bad := `openapi: 3.0.3
info:
  title: broken
  version: "1"
  license:
    name: UNLICENSED
paths:
  /x:
    get:
      summary: no operationId, no security, no servers
      responses:
        "200":
          $ref: "#/components/responses/Missing"
        "400":
          description: bad
`
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	res := redoclyLint(t, path)
	var rules []string
	for _, p := range res.Problems {
		rules = append(rules, p.Severity+" "+p.RuleID)
	}
	for _, want := range []string{"error no-empty-servers", "error security-defined", "warn operation-operationId", "error no-unresolved-refs"} {
		if !slices.Contains(rules, want) {
			t.Errorf("redocly.yaml no longer reports %q; got %v", want, rules)
		}
	}
}
