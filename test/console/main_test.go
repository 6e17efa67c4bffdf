// Package consoletest proves the operator console in a real browser:
// Debian's chromium, driven by chromedp, against the compiled binary run as
// a subprocess over the publisher's real exports (served by boverkettest)
// and the real Danish BR25 workbook. Every test asserts what a person at
// the browser would notice: what a page shows after a click, where a form
// lands, what is refused.
//
// Every test also watches the browser from its first request: no request
// may go to another host than the service's own, and no console error,
// uncaught exception or CSP violation may be reported. TestEveryPage runs
// axe-core (npm, pinned in package.json here) on every page and saves a
// full-page screenshot of each under $CONSOLE_SCREENSHOTS (default:
// test/console/artifacts).
//
// test/suite.sh installs chromium (apt) and axe-core (npm ci here); a
// missing browser or npm install fails the tests with what to run, never
// skips them. No test asserts how long anything takes: waits are polls
// bounded by a generous safety limit.
package consoletest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/test/testbin"
)

// patience bounds every wait; a safety net, never an expectation of speed.
const patience = 90 * time.Second

var (
	repoRoot string
	binPath  string // the compiled command
	pkgDir   string // this directory: package.json, node_modules, artifacts
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "console tests:", err)
		return 1
	}
	pkgDir = wd
	bin, root, cleanup, err := testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "console tests:", err)
		return 1
	}
	defer cleanup()
	binPath, repoRoot = bin, root
	// A failure's screenshot belongs to the run that failed.
	stale, _ := filepath.Glob(filepath.Join(screenshotPath(), "FAILED-*.png"))
	for _, f := range stale {
		_ = os.Remove(f)
	}
	return m.Run()
}

// --- the publisher stand-in --------------------------------------------------

// publisher is a stand-in of the national catalog's publisher serving the
// real 02.06 sv and 02.07 en exports; its workbooks fail.
func publisher(t *testing.T) *boverkettest.Server { return boverkettest.RealJSONPublisher(t) }

// --- the compiled binary -------------------------------------------------------

// service is one run of the binary.
type service struct {
	*testbin.Proc
	t *testing.T
}

// nationalResources is the number of live national resources the real
// exports give; the boot ingest is done when the catalog has them.
const nationalResources = 235

// startService runs the binary on a free loopback port with a fresh data
// directory against a publisher stand-in, waits for /readyz and for its
// boot ingest of the national catalog to finish.
func startService(t *testing.T, extra map[string]string) *service {
	t.Helper()
	up := publisher(t)
	env := map[string]string{
		"SERVICE_DATA_DIR":        t.TempDir(),
		"SERVICE_UPSTREAM_URL":    up.URL,
		"SERVICE_EXCEL_URL_SV":    up.ExcelURL("sv"),
		"SERVICE_EXCEL_URL_EN":    up.ExcelURL("en"),
		"SERVICE_BOOT_INGEST":     "true",
		"SERVICE_INGEST_INTERVAL": "0",
		"SERVICE_LOG_FORMAT":      "json",
		"SERVICE_LOG_LEVEL":       "info",
	}
	for k, v := range extra {
		env[k] = v
	}
	s := &service{Proc: testbin.Start(t, binPath, repoRoot, env, patience), t: t}
	s.waitNational()
	return s
}

// waitNational polls the national listing until the boot ingest has stored
// the real catalog.
func (s *service) waitNational() {
	s.t.Helper()
	n := 0
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s.Exited() {
			s.t.Fatalf("the service exited during its boot ingest\n%s", tail(s.Stderr.String(), 40))
		}
		status, body := s.api(http.MethodGet, "/api/resources?databases=national", "", nil)
		if status != http.StatusOK {
			continue
		}
		var list struct {
			Resources []json.RawMessage `json:"resources"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			s.t.Fatalf("/api/resources: %v: %.300s", err, body)
		}
		if n = len(list.Resources); n >= nationalResources {
			return
		}
	}
	s.t.Fatalf("the national catalog has %d resources, not %d, after the safety limit\n%s", n, nationalResources, tail(s.Stderr.String(), 40))
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

// api calls the service directly (not through the browser): the tests use
// it only to check what a page claims, never to drive a flow.
func (s *service) api(method, path, body string, header map[string]string) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// --- files ---------------------------------------------------------------------------

// screenshotDir is where the page screenshots go: $CONSOLE_SCREENSHOTS, or
// artifacts/ in this directory (ignored by git).
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := screenshotPath()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func screenshotPath() string {
	dir := os.Getenv("CONSOLE_SCREENSHOTS")
	if dir == "" {
		return filepath.Join(pkgDir, "artifacts")
	}
	if !filepath.IsAbs(dir) {
		return filepath.Join(pkgDir, dir)
	}
	return dir
}

// axeSource is the pinned axe-core; a missing npm install fails the test.
func axeSource(t *testing.T) string {
	t.Helper()
	p := filepath.Join(pkgDir, "node_modules", "axe-core", "axe.min.js")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("axe-core is not installed (%v): run `npm ci` in test/console (test/suite.sh does it)", err)
	}
	return string(b)
}

func tail(s string, n int) string { return testbin.Tail(s, n) }
