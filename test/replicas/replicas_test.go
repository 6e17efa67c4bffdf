// Package replicas runs three compiled climatesearch binaries on one
// PostgreSQL database (SERVICE_STORE), the way a hosted deployment runs
// them behind a load balancer, and checks that they agree: a write through
// one is searchable on the others, a webhook event reaches its destination
// once whatever the number of replicas, a replica killed mid-delivery
// leaves the event to another, a restart of PostgreSQL loses nothing, and
// one replica only runs the scheduled ingest.
//
// No test asserts how long anything takes: waits are polls bounded by a
// generous safety limit. The propagation time is logged (docs/SCALING.md).
package replicas

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/adapters/pgstore"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/pgtest"
	"github.com/climatesearch/climatesearch/test/shareddata"
	"github.com/climatesearch/climatesearch/test/testbin"
)

// patience bounds every wait; a safety net, never an expectation of speed.
const patience = 60 * time.Second

const adminToken = "replicas-admin-token"

var binPath string

func TestMain(m *testing.M) {
	bin, _, cleanup, err := testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica tests:", err)
		os.Exit(1)
	}
	binPath = bin
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// replica is one running binary with its own data directory (its search
// index) over the shared database.
type replica struct {
	name string
	dir  string
	env  map[string]string
	p    *testbin.Proc
}

type cluster struct {
	t    testing.TB
	pg   *pgtest.Cluster
	db   string
	up   *boverkettest.Server
	reps []*replica
}

// newCluster starts three replicas on a new database; prepare, when
// given, runs on the database before they start.
func newCluster(t testing.TB, env map[string]string, prepare func(db string)) *cluster {
	t.Helper()
	pg := pgtest.Start(t)
	c := &cluster{t: t, pg: pg, db: pg.NewDB(t), up: publisher(t)}
	if prepare != nil {
		prepare(c.db)
	}
	for _, name := range []string{"A", "B", "C"} {
		r := &replica{name: name, dir: t.TempDir(), env: map[string]string{
			"SERVICE_STORE":                 c.db,
			"SERVICE_DATA_DIR":              "",
			"SERVICE_UPSTREAM_URL":          c.up.URL,
			"SERVICE_EXCEL_URL_SV":          c.up.ExcelURL("sv"),
			"SERVICE_EXCEL_URL_EN":          c.up.ExcelURL("en"),
			"SERVICE_BOOT_INGEST":           "false",
			"SERVICE_INGEST_INTERVAL":       "0",
			"SERVICE_ADMIN_TOKEN":           adminToken,
			"SERVICE_WEBHOOK_ALLOW_PRIVATE": "true",
			"SERVICE_WEBHOOK_BACKOFF":       "200ms",
			"SERVICE_WEBHOOK_TIMEOUT":       "3s",
			"SERVICE_WEBHOOK_LEASE":         "4s",
			"SERVICE_INGEST_TIMEOUT":        "3s",
			"SERVICE_LOG_LEVEL":             "info",
		}}
		r.env["SERVICE_DATA_DIR"] = r.dir
		for k, v := range env {
			r.env[k] = v
		}
		c.reps = append(c.reps, r)
	}
	// Started together: they migrate the empty database once between them.
	var wg sync.WaitGroup
	for _, r := range c.reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.p = testbin.Start(t, binPath, r.dir, r.env, patience)
		}()
	}
	wg.Wait()
	return c
}

// restart stops r (SIGTERM, a clean stop) and starts it again.
func (c *cluster) restart(r *replica) {
	c.t.Helper()
	c.stop(r)
	r.p = testbin.Start(c.t, binPath, r.dir, r.env, patience)
}

func (c *cluster) stop(r *replica) {
	c.t.Helper()
	_ = r.p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.p.Done:
	case <-time.After(patience):
		c.t.Fatalf("replica %s did not stop", r.name)
	}
}

var (
	exportsOnce sync.Once
	sv0206      []byte
	en0207      []byte
	wbSV, wbEN  []byte
)

// publisher is a stand-in of the publisher serving the real exports.
func publisher(t testing.TB) *boverkettest.Server {
	t.Helper()
	exportsOnce.Do(func() {
		sv0206 = boverkettest.LoadExport(t, boverkettest.Export0206SV)
		en0207 = boverkettest.LoadExport(t, boverkettest.Export0207EN)
		wbSV = boverkettest.WorkbookFromExport(t, sv0206, "sv")
		wbEN = boverkettest.WorkbookFromExport(t, en0207, "en")
	})
	up := boverkettest.NewServer(t)
	up.SetJSON("sv", sv0206)
	up.SetJSON("en", en0207)
	up.SetExcel("sv", wbSV)
	up.SetExcel("en", wbEN)
	return up
}

// --- HTTP ---------------------------------------------------------------

type answer struct {
	status int
	body   []byte
}

func (a answer) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("decoding %d %.300s: %v", a.status, a.body, err)
	}
}

func do(t testing.TB, method, u string, body io.Reader, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Admin-Token", adminToken)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{status: 0, body: []byte(err.Error())}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, body: b}
}

func (r *replica) get(t testing.TB, path string) answer {
	t.Helper()
	return do(t, http.MethodGet, r.p.URL+path, nil, nil)
}

func (r *replica) postJSON(t testing.TB, path string, v any) answer {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, http.MethodPost, r.p.URL+path, bytes.NewReader(b), map[string]string{"Content-Type": "application/json"})
}

func (r *replica) postForm(t testing.TB, path, filename string, data []byte, fields map[string]string) answer {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if data != nil {
		fw, err := w.CreateFormFile("file", filename)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	for k, v := range fields {
		w.WriteField(k, v)
	}
	w.Close()
	return do(t, http.MethodPost, r.p.URL+path, &buf, map[string]string{"Content-Type": w.FormDataContentType()})
}

// hits is the refs the replica's search answers for q, in order.
func (r *replica) hits(t testing.TB, q string) []string {
	t.Helper()
	a := r.get(t, "/api/search?limit=50&q="+url.QueryEscape(q))
	if a.status != http.StatusOK {
		return nil
	}
	var res core.SearchResponse
	a.decode(t, &res)
	out := make([]string, len(res.Results))
	for i, h := range res.Results {
		out[i] = h.Ref()
	}
	return out
}

// eventually polls cond until it holds, and returns how long that took.
func eventually(t testing.TB, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > patience {
			t.Fatalf("%s: not after %s", what, patience)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// --- Webhooks -----------------------------------------------------------

// receiver records every delivery by its webhook-id; hang holds requests
// until released.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     map[string]int // webhook-id -> 2xx answers given
	tries   map[string]int // webhook-id -> requests seen
	ports   map[string]int // webhook-id -> client port of the last request
	hang    chan struct{}  // non-nil: requests wait for it to close
	hanging chan string    // receives the id of each request that waits
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{got: map[string]int{}, tries: map[string]int{}, ports: map[string]int{}, hanging: make(chan string, 16)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		id := req.Header.Get("webhook-id")
		_, port, _ := strings.Cut(req.RemoteAddr, ":")
		p, _ := strconv.Atoi(port)
		rc.mu.Lock()
		rc.tries[id]++
		rc.ports[id] = p
		hang := rc.hang
		rc.mu.Unlock()
		if hang != nil {
			rc.hanging <- id
			select {
			case <-hang:
			case <-req.Context().Done():
				return
			}
			http.Error(w, "held", http.StatusServiceUnavailable)
			return
		}
		rc.mu.Lock()
		rc.got[id]++
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// hold makes the next requests wait until release.
func (rc *receiver) hold() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.hang = make(chan struct{})
}

func (rc *receiver) release() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.hang != nil {
		close(rc.hang)
		rc.hang = nil
	}
}

func (rc *receiver) port(id string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.ports[id]
}

func (rc *receiver) delivered() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.got))
	for k, v := range rc.got {
		out[k] = v
	}
	return out
}

// eventIDs lists the ids of the events of type typ the replica's admin API
// knows (every replica knows every event: they share the store).
func (r *replica) eventIDs(t testing.TB, typ string) []string {
	t.Helper()
	a := r.get(t, "/admin/events?limit=100")
	if a.status != http.StatusOK {
		t.Fatalf("events: %d %.300s", a.status, a.body)
	}
	var evs struct {
		Events []core.EventRecord `json:"events"`
	}
	a.decode(t, &evs)
	var ids []string
	for _, e := range evs.Events {
		if string(e.Event.Type) == typ {
			ids = append(ids, e.Event.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// --- The test -----------------------------------------------------------

func TestThreeReplicasOnOnePostgres(t *testing.T) {
	c := newCluster(t, nil, nil)
	a, b, cc := c.reps[0], c.reps[1], c.reps[2]
	rc := newReceiver(t)

	// A destination added on C is everybody's.
	d := cc.postJSON(t, "/admin/webhooks", map[string]any{"url": rc.URL, "events": []string{"catalog.changed"}})
	if d.status != http.StatusCreated {
		t.Fatalf("create destination: %d %.300s", d.status, d.body)
	}

	// An ingest through A is searchable on B and C.
	if r := a.postJSON(t, "/admin/ingest/run?catalog=national", nil); r.status != http.StatusOK {
		t.Fatalf("ingest on A: %d %.300s", r.status, r.body)
	}
	want := a.hits(t, "spånskiva")
	if len(want) == 0 {
		t.Fatal("A finds nothing after its own ingest")
	}
	for _, r := range []*replica{b, cc} {
		took := eventually(t, "the national ingest searchable on "+r.name, func() bool {
			return strings.Join(r.hits(t, "spånskiva"), ",") == strings.Join(want, ",")
		})
		t.Logf("A's ingest of the national release searchable on %s after %s", r.name, took)
	}

	// A file previewed on C and applied through B appears on A.
	br25 := shareddata.Read(t, "data", "dkbr", "br25-tabel7-2025.xlsx")
	p := cc.postForm(t, "/admin/ingest/preview", "br25-tabel7-2025.xlsx", br25, nil)
	var prev core.IngestPreview
	p.decode(t, &prev)
	if p.status != http.StatusOK || prev.PreviewID == "" {
		t.Fatalf("preview on C: %d %.300s", p.status, p.body)
	}
	fields := map[string]string{"preview_id": prev.PreviewID, "version": "BR25"}
	for k, v := range prev.SuggestedMap {
		fields["map."+k] = v
	}
	if r := b.postForm(t, "/admin/ingest/file?catalog=dkbr", "", nil, fields); r.status != http.StatusOK {
		t.Fatalf("apply on B: %d %.300s", r.status, r.body)
	}
	took := eventually(t, "B's file on A", func() bool { return a.get(t, "/api/resources/dkbr:%23B1318").status == http.StatusOK })
	t.Logf("B's BR25 workbook found on A after %s", took)
	if got := a.hits(t, "krydslamineret træ"); len(got) == 0 || strings.Join(got, ",") != strings.Join(b.hits(t, "krydslamineret træ"), ",") {
		t.Fatalf("A and B answer differently: %v / %v", got, b.hits(t, "krydslamineret træ"))
	}

	// Every catalog.changed event reached the destination exactly once,
	// although three replicas deliver.
	ids := a.eventIDs(t, string(core.EventCatalogChanged))
	if len(ids) != 2 {
		t.Fatalf("catalog.changed events: %v, want 2 (the national ingest and the file)", ids)
	}
	eventually(t, "both events delivered", func() bool { return len(rc.delivered()) == 2 })
	for _, id := range ids {
		if n := rc.delivered()[id]; n != 1 {
			t.Fatalf("event %s delivered %d times, want once", id, n)
		}
	}

	// The backup of the embedded store does not apply; the answer says what does.
	if r := a.get(t, "/admin/backup"); r.status != http.StatusNotImplemented || !strings.Contains(string(r.body), "pg_dump") {
		t.Fatalf("backup on PostgreSQL: %d %.300s", r.status, r.body)
	}
	backup := filepath.Join(t.TempDir(), "badger.backup")
	if err := os.WriteFile(backup, []byte("climatesearch-backup 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, map[string]string{"SERVICE_STORE": c.db, "SERVICE_DATA_DIR": t.TempDir()}, "restore", backup)
	if code != 1 || !strings.Contains(out, "pg_restore") {
		t.Fatalf("restore on PostgreSQL: exit %d %s", code, out)
	}
	// A command writing to the shared store directly (no server of its
	// own) is followed by every replica like a replica's write.
	csv := "id,name,unit,a1a3\nCLI-1,Kommandoskiva,kg,2.5\n"
	file := filepath.Join(t.TempDir(), "cli.csv")
	if err := os.WriteFile(file, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, map[string]string{"SERVICE_STORE": c.db, "SERVICE_DATA_DIR": t.TempDir()}, "ingest", file, "--catalog", "national", "--version", "cli")
	if code != 0 {
		t.Fatalf("ingest from the command line: exit %d %s", code, out)
	}
	for _, r := range c.reps {
		eventually(t, "the command's write on "+r.name, func() bool {
			h := r.hits(t, "kommandoskiva")
			return len(h) > 0 && h[0] == "national:CLI-1"
		})
	}
}

// runCLI runs the binary as a command with env (and no other SERVICE_
// variable) and returns its exit code and its output.
func runCLI(t testing.TB, env map[string]string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SERVICE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// --- Processes ----------------------------------------------------------

// owner finds the replica whose process holds the TCP connection with
// local port port (the client side of a delivery the receiver sees):
// /proc/net/tcp names the socket's inode, /proc/<pid>/fd the process.
func owner(t testing.TB, reps []*replica, port int) *replica {
	t.Helper()
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 10 {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(p) == port {
				inodes[fields[9]] = true
			}
		}
	}
	for _, r := range reps {
		if r.p.Exited() {
			continue
		}
		dir := fmt.Sprintf("/proc/%d/fd", r.p.Cmd.Process.Pid)
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return r
			}
		}
	}
	t.Fatalf("no replica holds the connection from port %d", port)
	return nil
}

// batch is a one-resource batch for catalog national.
func batch(id, name string) map[string]any {
	return map[string]any{"catalog": "national", "version": "test", "resources": []map[string]any{{
		"id": id, "name": name, "unit": "kg", "category": "Skivor", "a1a3": 1.25,
	}}}
}

// TestReplicasSurviveAKilledReplicaAndAPostgresRestart: a replica killed
// with kill -9 while it delivers an event leaves the event to another once
// its lease runs out; PostgreSQL going away makes every replica unhealthy
// (and refuse writes cleanly) until it is back, and after it nothing is
// lost: writes made through one replica reach the others.
func TestReplicasSurviveAKilledReplicaAndAPostgresRestart(t *testing.T) {
	c := newCluster(t, nil, nil)
	a, b := c.reps[0], c.reps[1]
	rc := newReceiver(t)
	if d := a.postJSON(t, "/admin/webhooks", map[string]any{"url": rc.URL, "events": []string{"catalog.changed"}}); d.status != http.StatusCreated {
		t.Fatalf("create destination: %d %.300s", d.status, d.body)
	}

	// kill -9 the replica that is delivering.
	rc.hold()
	if r := a.postJSON(t, "/admin/resources", batch("REPL-1", "Replikaskiva ett")); r.status != http.StatusOK {
		t.Fatalf("batch: %d %.300s", r.status, r.body)
	}
	var id string
	select {
	case id = <-rc.hanging:
	case <-time.After(patience):
		t.Fatal("no delivery attempt reached the receiver")
	}
	victim := owner(t, c.reps, rc.port(id))
	t.Logf("replica %s delivers %s: kill -9", victim.name, id)
	if err := victim.p.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.p.Done
	rc.release()
	took := eventually(t, "the event delivered by another replica", func() bool { return rc.delivered()[id] == 1 })
	t.Logf("delivered by a surviving replica %s after the kill (lease 4s)", took)
	victim.p = testbin.Start(t, binPath, victim.dir, victim.env, patience)
	if got := victim.hits(t, "replikaskiva"); len(got) != 1 || got[0] != "national:REPL-1" {
		t.Fatalf("the restarted replica %s finds %v", victim.name, got)
	}

	// PostgreSQL goes away: every replica says so, writes are refused cleanly.
	if err := c.pg.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.reps {
		eventually(t, "replica "+r.name+" unhealthy without PostgreSQL", func() bool { return r.get(t, "/healthz").status == http.StatusServiceUnavailable })
	}
	if r := b.postJSON(t, "/admin/resources", batch("REPL-2", "Replikaskiva två")); r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), `"error"`) {
		t.Fatalf("a write without PostgreSQL: %d %.300s", r.status, r.body)
	}
	if err := c.pg.Start(); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.reps {
		took := eventually(t, "replica "+r.name+" healthy again", func() bool { return r.get(t, "/healthz").status == http.StatusOK })
		t.Logf("replica %s healthy %s after PostgreSQL came back", r.name, took)
	}
	// Nothing lost, and the replicas follow each other again.
	if r := b.postJSON(t, "/admin/resources", batch("REPL-2", "Replikaskiva två")); r.status != http.StatusOK {
		t.Fatalf("batch after the restart: %d %.300s", r.status, r.body)
	}
	for _, r := range c.reps {
		eventually(t, "REPL-2 searchable on "+r.name, func() bool { return len(r.hits(t, "replikaskiva")) == 2 })
	}
	ids := a.eventIDs(t, string(core.EventCatalogChanged))
	if len(ids) != 2 {
		t.Fatalf("catalog.changed events: %v, want 2", ids)
	}
	eventually(t, "both events delivered", func() bool { return len(rc.delivered()) == 2 })
	for _, id := range ids {
		if n := rc.delivered()[id]; n != 1 {
			t.Fatalf("event %s delivered %d times, want once", id, n)
		}
	}
}

// TestOneReplicaRunsTheScheduledIngest: three replicas wake at the shared
// schedule; one runs it, and a manual run on another replica while an
// ingest runs answers 409.
func TestOneReplicaRunsTheScheduledIngest(t *testing.T) {
	// The schedule, shared in the database, falls due a few seconds after
	// the replicas start.
	ctx := context.Background()
	var st *pgstore.Store
	due := time.Now().Add(8 * time.Second).UTC()
	c := newCluster(t, map[string]string{"SERVICE_INGEST_INTERVAL": "1m"}, func(db string) {
		var err error
		if st, err = pgstore.Open(ctx, db, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.PutMeta(ctx, core.CatalogMeta{Catalog: core.National, NextIngest: due}); err != nil {
			t.Fatal(err)
		}
	})
	b := c.reps[1]
	eventually(t, "the scheduled run", func() bool {
		m, err := st.Meta(ctx, core.National)
		return err == nil && m.NextIngest.After(due)
	})
	time.Sleep(2 * time.Second)                                        // a second run, if any, would be under way by now
	if runs := c.up.Requests(boverkettest.JSONPathPrefix); runs != 2 { // one run asks for the Swedish and the English export
		t.Fatalf("the publisher was asked %d times; one run asks twice", runs)
	}
	if m, _ := st.Meta(ctx, core.National); !m.NextIngest.Equal(due.Add(time.Minute)) {
		t.Fatalf("next run %s, want one interval after %s", m.NextIngest, due)
	}
	// The replicas that found the run held looked again now and then, not
	// in a loop on the store for as long as it lasted (hundreds of times
	// before).
	skipped := 0
	for _, r := range c.reps {
		skipped += strings.Count(r.p.Stderr.String(), "an ingest of the catalog is running")
	}
	if skipped > 10*len(c.reps) {
		t.Fatalf("the schedule looked %d times while another replica ran it", skipped)
	}
	eventually(t, "the scheduled ingest searchable on B", func() bool { return len(b.hits(t, "spånskiva")) > 0 })

	// A manual run on one replica while another's run holds the catalog: 409.
	c.up.Hang(true)
	done := make(chan answer, 1)
	go func() { done <- c.reps[0].postJSON(t, "/admin/ingest/run?catalog=national", nil) }()
	eventually(t, "A's run reaching the publisher", func() bool { return c.up.Requests(boverkettest.JSONPathPrefix) > 2 })
	if r := b.postJSON(t, "/admin/ingest/run?catalog=national", nil); r.status != http.StatusConflict || !strings.Contains(string(r.body), "already running") {
		t.Fatalf("a second run on B while A runs: %d %.300s", r.status, r.body)
	}
	c.up.Hang(false)
	<-done // A's run gives up on the hanging publisher (SERVICE_INGEST_TIMEOUT)
	if r := b.postJSON(t, "/admin/ingest/run?catalog=national", nil); r.status != http.StatusOK {
		t.Fatalf("a run on B once A's has ended: %d %.300s", r.status, r.body)
	}
}

// TestStoreURLPasswordStaysSecret: a replica that cannot open its
// PostgreSQL store exits with one clear error, and neither it nor any log
// line shows the URL's password.
func TestStoreURLPasswordStaysSecret(t *testing.T) {
	pg := pgtest.Start(t)
	for name, u := range map[string]string{
		"no database": fmt.Sprintf("postgres://postgres:Hunter2SecretPw@127.0.0.1:%d/no_such_db", pg.Port()),
		"no server":   "postgres://postgres:Hunter2SecretPw@127.0.0.1:1/x?connect_timeout=2",
	} {
		code, out := runCLI(t, map[string]string{"SERVICE_STORE": u, "SERVICE_DATA_DIR": t.TempDir(), "SERVICE_ADDR": testbin.FreeAddr(t), "SERVICE_LOG_LEVEL": "debug"})
		lines := strings.Split(strings.TrimSpace(out), "\n")
		last := lines[len(lines)-1]
		if code != 1 || !strings.HasPrefix(last, "climatesearch: opening the PostgreSQL store (SERVICE_STORE): ") {
			t.Errorf("%s: exit %d, last line %q", name, code, last)
		}
		if strings.Contains(out, "Hunter2SecretPw") {
			t.Errorf("%s: the password is in the output: %s", name, out)
		}
	}
}
