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
	"os/exec"
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
	t      *testing.T
	cmd    *exec.Cmd
	URL    string // http://127.0.0.1:port
	Host   string // 127.0.0.1:port
	stderr *testbin.SyncBuffer
	done   chan struct{}
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
	for attempt := 0; ; attempt++ {
		addr := testbin.FreeAddr(t)
		env := map[string]string{
			"SERVICE_ADDR":            addr,
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
		s := &service{t: t, URL: "http://" + addr, Host: addr, stderr: &testbin.SyncBuffer{}, done: make(chan struct{})}
		s.cmd = exec.Command(binPath)
		s.cmd.Dir = repoRoot
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "SERVICE_") {
				s.cmd.Env = append(s.cmd.Env, kv)
			}
		}
		for k, v := range env {
			s.cmd.Env = append(s.cmd.Env, k+"="+v)
		}
		s.cmd.Stderr = s.stderr
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			_ = s.cmd.Wait()
			close(s.done)
		}()
		t.Cleanup(func() {
			select {
			case <-s.done:
			default:
				_ = s.cmd.Process.Kill() // this test's own child, by its pid
				<-s.done
			}
			if t.Failed() {
				t.Logf("stderr of the service:\n%s", tail(s.stderr.String(), 40))
			}
		})
		if err := s.waitReady(); err != nil {
			if s.exited() && strings.Contains(s.stderr.String(), "address already in use") && attempt < 5 {
				continue
			}
			t.Fatalf("the service did not become ready: %v\n%s", err, tail(s.stderr.String(), 40))
		}
		s.waitNational()
		return s
	}
}

func (s *service) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// waitReady waits until /readyz answers 200: the search index is loaded,
// so the pages' reads answer (before, they show 503 loading).
func (s *service) waitReady() error { return testbin.WaitReady(s.URL, s.done, patience) }

// waitNational polls the national listing until the boot ingest has stored
// the real catalog.
func (s *service) waitNational() {
	s.t.Helper()
	n := 0
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s.exited() {
			s.t.Fatalf("the service exited during its boot ingest\n%s", tail(s.stderr.String(), 40))
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
	s.t.Fatalf("the national catalog has %d resources, not %d, after the safety limit\n%s", n, nationalResources, tail(s.stderr.String(), 40))
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
