// Package binary runs the compiled climatesearch command as a subprocess,
// the way an operator runs it: configuration from the environment and flags,
// logs on stderr, signals to stop, kill -9 to crash. The binary is built once
// per test run in TestMain; every test gets its own data directory, a free
// port and, where it needs one, its own stand-in of the publisher.
//
// No test asserts how long anything takes: waits are polls on behaviour
// (an answer, a log line, an exit) bounded only by a generous safety limit.
package binary

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/test/testbin"
)

// patience bounds every wait so a hung process fails the test instead of the
// whole run; it is a safety net, never an expectation of speed.
const patience = 45 * time.Second

var (
	binPath  string // the compiled command
	repoRoot string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin, root, cleanup, err := testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "binary tests:", err)
		return 1
	}
	defer cleanup()
	binPath, repoRoot = bin, root
	return m.Run()
}

// ---------------------------------------------------------------------------
// The publisher stand-in and the real exports.

var (
	exportsOnce sync.Once
	sv0206      []byte
	en0207      []byte
	wbSV, wbEN  []byte
)

func realExports(t *testing.T) {
	t.Helper()
	exportsOnce.Do(func() {
		sv0206 = boverkettest.LoadExport(t, boverkettest.Export0206SV)
		en0207 = boverkettest.LoadExport(t, boverkettest.Export0207EN)
		wbSV = boverkettest.WorkbookFromExport(t, sv0206, "sv")
		wbEN = boverkettest.WorkbookFromExport(t, en0207, "en")
	})
	if sv0206 == nil || en0207 == nil {
		t.Fatal("loading the real exports failed in an earlier test")
	}
}

// publisher starts a stand-in serving the real 02.06 sv and 02.07 en
// exports and workbooks built from them.
func publisher(t *testing.T) *boverkettest.Server {
	t.Helper()
	realExports(t)
	up := boverkettest.NewServer(t)
	up.SetJSON("sv", sv0206)
	up.SetJSON("en", en0207)
	up.SetExcel("sv", wbSV)
	up.SetExcel("en", wbEN)
	return up
}

// publisherEnv points the service at a stand-in.
func publisherEnv(up *boverkettest.Server) map[string]string {
	return map[string]string{
		"SERVICE_UPSTREAM_URL": up.URL,
		"SERVICE_EXCEL_URL_SV": up.ExcelURL("sv"),
		"SERVICE_EXCEL_URL_EN": up.ExcelURL("en"),
	}
}

// downPublisher is a stand-in whose JSON and workbooks both answer 503.
func downPublisher(t *testing.T) *boverkettest.Server {
	t.Helper()
	up := boverkettest.NewServer(t)
	up.FailJSON(http.StatusServiceUnavailable)
	up.FailExcel(http.StatusServiceUnavailable)
	return up
}

// ---------------------------------------------------------------------------
// Processes.

// logBuf collects a process's output lines and wakes waiters on each one.
type logBuf struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	changed chan struct{} // closed and replaced on every new line
}

func newLogBuf() *logBuf { return &logBuf{changed: make(chan struct{})} }

func (b *logBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.partial = append(b.partial, p...)
	added := false
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		b.lines = append(b.lines, string(b.partial[:i]))
		b.partial = b.partial[i+1:]
		added = true
	}
	if added {
		close(b.changed)
		b.changed = make(chan struct{})
	}
	return len(p), nil
}

// snapshot returns the complete lines so far plus a trailing partial line,
// and a channel closed when another line arrives.
func (b *logBuf) snapshot() ([]string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([]string(nil), b.lines...)
	if len(b.partial) > 0 {
		out = append(out, string(b.partial))
	}
	return out, b.changed
}

func (b *logBuf) String() string {
	lines, _ := b.snapshot()
	return strings.Join(lines, "\n")
}

// logLine is one decoded JSON log line.
type logLine map[string]any

func (l logLine) str(k string) string { s, _ := l[k].(string); return s }

func decodeLines(lines []string) []logLine {
	var out []logLine
	for _, s := range lines {
		var l logLine
		if json.Unmarshal([]byte(s), &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

// proc is one run of the binary.
type proc struct {
	t       *testing.T
	cmd     *exec.Cmd
	URL     string // http://127.0.0.1:<port>
	Addr    string
	DataDir string
	Stderr  *logBuf
	Stdout  *logBuf

	done  chan struct{} // closed when the process has exited
	state *os.ProcessState
	err   error
}

// baseEnv is the environment every run gets unless overridden: JSON logs,
// no schedule, a short upstream timeout.
func baseEnv(dataDir string) map[string]string {
	return map[string]string{
		"SERVICE_DATA_DIR":        dataDir,
		"SERVICE_LOG_FORMAT":      "json",
		"SERVICE_LOG_LEVEL":       "info",
		"SERVICE_INGEST_INTERVAL": "0",
		"SERVICE_INGEST_TIMEOUT":  "5s",
	}
}

// environ builds the child's environment: the parent's minus every SERVICE_*
// variable (so the developer's shell cannot leak in), plus env.
func environ(env map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SERVICE_") {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// spawn starts the binary with env and args and does not wait for anything.
func spawn(t *testing.T, env map[string]string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, Stderr: newLogBuf(), Stdout: newLogBuf(), done: make(chan struct{})}
	p.cmd = exec.Command(binPath, args...)
	p.cmd.Dir = repoRoot
	p.cmd.Env = environ(env)
	p.cmd.Stdout = p.Stdout
	p.cmd.Stderr = p.Stderr
	p.DataDir = env["SERVICE_DATA_DIR"]
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", binPath, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill() // only this test's own child, by its pid
			<-p.done
		}
		if t.Failed() {
			t.Logf("stderr of pid %d:\n%s", p.cmd.Process.Pid, tail(p.Stderr.String(), 60))
		}
	})
	return p
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d earlier lines)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// freePort returns a port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return port
}

// start runs the binary on a free port and waits until /readyz answers 200:
// the search index is loaded, so reads answer (before, they answer 503).
// A port taken in between (the only expected start failure) is retried on
// another port. addrFlag passes the address as -addr instead of SERVICE_ADDR.
func start(t *testing.T, env map[string]string, args ...string) *proc {
	t.Helper()
	return startOpt(t, false, env, args...)
}

func startOpt(t *testing.T, addrFlag bool, env map[string]string, args ...string) *proc {
	t.Helper()
	for attempt := 0; ; attempt++ {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		a := append([]string(nil), args...)
		if addrFlag {
			a = append(a, "-addr="+addr)
		} else {
			e["SERVICE_ADDR"] = addr
		}
		p := spawn(t, e, a...)
		p.Addr, p.URL = addr, "http://"+addr
		err := p.waitReady()
		if err == nil {
			return p
		}
		if p.exited() && strings.Contains(p.Stderr.String(), "address already in use") && attempt < 5 {
			t.Logf("port %s was taken; retrying on another", addr)
			continue
		}
		t.Fatalf("the service did not become ready: %v\nstderr:\n%s", err, tail(p.Stderr.String(), 40))
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitReady polls /readyz until it answers 200 or the process exits.
func (p *proc) waitReady() error {
	err := testbin.WaitReady(p.URL, p.done, patience)
	if err != nil && p.exited() {
		return fmt.Errorf("process exited: %v", p.err)
	}
	return err
}

// wait waits for the process to exit and returns its exit code (-1 when it
// was killed by a signal).
func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(patience):
		p.t.Fatalf("process %d did not exit within the safety limit\nstderr:\n%s", p.cmd.Process.Pid, tail(p.Stderr.String(), 40))
	}
	return p.state.ExitCode()
}

// signal sends sig to the process.
func (p *proc) signal(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v to %d: %v", sig, p.cmd.Process.Pid, err)
	}
}

// stop sends SIGTERM and requires a clean exit.
func (p *proc) stop() {
	p.t.Helper()
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		p.t.Fatalf("exit code after SIGTERM = %d, want 0\nstderr:\n%s", code, tail(p.Stderr.String(), 40))
	}
}

// kill9 kills the process without warning.
func (p *proc) kill9() {
	p.t.Helper()
	p.signal(syscall.SIGKILL)
	p.wait()
}

// waitLog waits for a JSON log line on stderr matching pred, looking at
// lines from index from on; it returns the line and the index after it.
func (p *proc) waitLog(from int, what string, pred func(logLine) bool) (logLine, int) {
	p.t.Helper()
	deadline := time.After(patience)
	for {
		lines, changed := p.Stderr.snapshot()
		for i := from; i < len(lines); i++ {
			var l logLine
			if json.Unmarshal([]byte(lines[i]), &l) == nil && pred(l) {
				return l, i + 1
			}
		}
		select {
		case <-changed:
		case <-p.done:
			// Drain what the process wrote before it exited, then give up.
			lines, _ := p.Stderr.snapshot()
			for i := from; i < len(lines); i++ {
				var l logLine
				if json.Unmarshal([]byte(lines[i]), &l) == nil && pred(l) {
					return l, i + 1
				}
			}
			p.t.Fatalf("process exited before logging %s\nstderr:\n%s", what, tail(p.Stderr.String(), 40))
		case <-deadline:
			p.t.Fatalf("no log line %s within the safety limit\nstderr:\n%s", what, tail(p.Stderr.String(), 40))
		}
	}
}

// bootIngestDone waits for the log line that ends the boot ingest, whatever
// its outcome, and returns it.
func (p *proc) bootIngestDone() logLine {
	p.t.Helper()
	l, _ := p.waitLog(0, "ending the boot ingest", func(l logLine) bool {
		return l.str("run") == "boot" && (l.str("msg") == "ingest finished" || l.str("msg") == "ingest failed")
	})
	return l
}

// ---------------------------------------------------------------------------
// HTTP.

var client = &http.Client{Timeout: 30 * time.Second}

// getJSON GETs path and decodes a 200 answer into out.
func (p *proc) getJSON(path string, out any) {
	p.t.Helper()
	resp, err := client.Get(p.URL + path)
	if err != nil {
		p.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatalf("GET %s: reading body: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		p.t.Fatalf("GET %s: %s %s", path, resp.Status, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		p.t.Fatalf("GET %s: decoding %q: %v", path, truncate(body), err)
	}
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// resource is the part of core.Resource the tests read.
type resource struct {
	ID            string   `json:"id"`
	Catalog       string   `json:"catalog"`
	A1A3          *float64 `json:"a1a3"`
	DescriptionSV string   `json:"description_sv"`
	Synonyms      string   `json:"synonyms"`
	Version       string   `json:"version"`
	Withdrawn     bool     `json:"withdrawn"`
}

type listResponse struct {
	Resources []resource `json:"resources"`
}

// national lists the live national resources by id.
func (p *proc) national() map[string]resource {
	p.t.Helper()
	var lr listResponse
	p.getJSON("/api/resources?databases=national", &lr)
	out := make(map[string]resource, len(lr.Resources))
	for _, r := range lr.Resources {
		if r.Catalog != "national" {
			p.t.Fatalf("databases=national listed %s:%s", r.Catalog, r.ID)
		}
		if _, dup := out[r.ID]; dup {
			p.t.Fatalf("the listing repeats national:%s", r.ID)
		}
		out[r.ID] = r
	}
	return out
}

// pollNational polls the national listing until cond holds on it.
func (p *proc) pollNational(what string, cond func(map[string]resource) bool) map[string]resource {
	p.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		got := p.national()
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the national listing never showed %s (last: %d resources)\nstderr:\n%s", what, len(got), tail(p.Stderr.String(), 40))
		}
		if p.exited() {
			p.t.Fatalf("process exited while waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// post sends an empty POST and returns status and body; err is a transport
// failure (reset, EOF, timeout).
func post(ctx context.Context, url string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// ---------------------------------------------------------------------------
// Expected values, decoded from the exports independently of the service.

// a1a3Of maps ResourceId to the A1-A3 Typical value of one export: the first
// such value of a resource, first row of an id.
func a1a3Of(t *testing.T, export []byte) map[string]float64 {
	t.Helper()
	var e struct {
		Resources []struct {
			ResourceId json.Number
			DataItems  []struct {
				DataValueItems []struct {
					DataModuleCode string
					Value          *float64
				}
			}
		}
	}
	if err := json.Unmarshal(export, &e); err != nil {
		t.Fatalf("decoding export: %v", err)
	}
	out := map[string]float64{}
	for _, r := range e.Resources {
		id := r.ResourceId.String()
		if _, seen := out[id]; seen || id == "" {
			continue
		}
	items:
		for _, it := range r.DataItems {
			for _, v := range it.DataValueItems {
				if v.DataModuleCode == "A1-A3 Typical" && v.Value != nil {
					out[id] = *v.Value
					break items
				}
			}
		}
	}
	return out
}

// mergeA1A3 merges a Swedish and an English export's values by id, the
// newer release's (here the English) winning where both have one.
func mergeA1A3(sv, en map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(sv)+len(en))
	for id, v := range sv {
		out[id] = v
	}
	for id, v := range en {
		out[id] = v
	}
	return out
}
