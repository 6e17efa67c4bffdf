// Package hosted proves the hosted build (go build -tags hosted) as a
// client sees it: the compiled binary, run against stand-ins of the key
// service (Unkey's wire format), the payment chain's JSON-RPC and the
// publisher, answering real HTTP requests. No test asserts how long
// anything takes; waits are polls with a generous safety limit.
package hosted

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/test/testbin"
)

const (
	patience   = 60 * time.Second
	adminToken = "hosted-admin-token-0123456789abcdef"
)

var (
	binPath        string // -tags hosted
	paymentBinPath string // -tags hosted,paymenttest: adds the test payment method
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	bin, _, cleanup, err := testbin.BuildTags("hosted")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hosted tests:", err)
		return 1
	}
	defer cleanup()
	pbin, _, pcleanup, err := testbin.BuildTags("hosted", "paymenttest")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hosted tests:", err)
		return 1
	}
	defer pcleanup()
	binPath, paymentBinPath = bin, pbin
	return m.Run()
}

type proc struct {
	URL    string
	cmd    *exec.Cmd
	stderr *testbin.SyncBuffer
	done   chan struct{}
	code   int
}

// baseEnv runs the binary offline: no boot ingest (the demo snapshot is not
// needed: the guard answers before any data is read), no schedule.
func baseEnv(t *testing.T) map[string]string {
	return map[string]string{
		"SERVICE_DATA_DIR":        t.TempDir(),
		"SERVICE_BOOT_INGEST":     "false",
		"SERVICE_INGEST_INTERVAL": "0",
		"SERVICE_LOG_FORMAT":      "json",
		"SERVICE_ADMIN_TOKEN":     adminToken,
		"SERVICE_EMBEDDER":        "none",
	}
}

// spawn runs the binary with exactly env (plus PATH and HOME).
func spawn(t *testing.T, env map[string]string) *proc { return spawnBin(t, binPath, env) }

// spawnBin runs bin with exactly env (plus PATH and HOME).
func spawnBin(t *testing.T, bin string, env map[string]string) *proc {
	t.Helper()
	addr := testbin.FreeAddr(t)
	cmd := exec.Command(bin, "-addr", addr)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &proc{URL: "http://" + addr, cmd: cmd, stderr: &testbin.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(patience):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("stderr:\n%s", testbin.Tail(p.stderr.String(), 30))
		}
	})
	return p
}

// start spawns the binary and waits until /readyz answers 200.
func start(t *testing.T, env map[string]string) *proc { return startBin(t, binPath, env) }

// startBin spawns bin and waits until /readyz (public, like /healthz)
// answers 200: the search index is loaded, so paid calls answer (before,
// they answer 503 without charging).
func startBin(t *testing.T, bin string, env map[string]string) *proc {
	t.Helper()
	p := spawnBin(t, bin, env)
	if err := testbin.WaitReady(p.URL, p.done, patience); err != nil {
		t.Fatalf("the hosted binary is not ready: %v\n%s", err, testbin.Tail(p.stderr.String(), 20))
	}
	return p
}

// stoppedLogs stops p as an operator would (SIGINT, a clean exit) and
// returns everything it wrote to stderr. The service writes its info lines
// (the access line of every request) through a buffer flushed within
// 100 ms, so the stderr of a running process may still lack the last
// requests' lines: a test that requires a secret to be in no line reads
// them all, after the stop.
func (p *proc) stoppedLogs(t *testing.T) string {
	t.Helper()
	_ = p.cmd.Process.Signal(os.Interrupt) // this test's own child, by its pid
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit code after SIGINT = %d, want 0\n%s", code, testbin.Tail(p.stderr.String(), 20))
	}
	return p.stderr.String()
}

// exit waits for a process that must stop on its own and returns its code.
func (p *proc) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(patience):
		t.Fatal("the process did not exit")
	}
	return -1
}

// answer is what a client got.
type answer struct {
	Status int
	Header http.Header
	Body   string
}

func do(t *testing.T, method, url, body string, header ...string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	cli := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cli.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}
