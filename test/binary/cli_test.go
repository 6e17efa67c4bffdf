package binary

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/climatesearch/climatesearch/test/shareddata"
)

// The subcommands of the binary (climatesearch version, healthcheck,
// export, ingest, backup, restore, mcp --stdio, eval) against a running
// service and on a stopped data directory.

const cliToken = "cli-test-admin-token-9f3b"

// cliRun runs the binary with args to its end and returns its exit code,
// stdout and stderr.
func cliRun(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	p := spawn(t, env, args...)
	code := p.wait()
	return code, p.Stdout.String(), p.Stderr.String()
}

// cliEnv is the environment of a command: the server's data directory and
// the admin token, nothing else.
func cliEnv(dataDir string) map[string]string {
	return map[string]string{"SERVICE_DATA_DIR": dataDir, "SERVICE_ADMIN_TOKEN": cliToken, "SERVICE_LOG_FORMAT": "json"}
}

// demoServer starts the binary on dir with the publisher down (so it
// serves the demo snapshot) and the admin token, and waits for the
// national catalog.
func demoServer(t *testing.T, dir string) *proc {
	t.Helper()
	env := baseEnv(dir)
	for k, v := range publisherEnv(downPublisher(t)) {
		env[k] = v
	}
	env["SERVICE_ADMIN_TOKEN"] = cliToken
	p := start(t, env)
	p.pollNational("the demo snapshot", func(m map[string]resource) bool { return len(m) > 0 })
	return p
}

// oneLine requires stderr to be exactly one line holding every want.
func oneLine(t *testing.T, stderr string, want ...string) {
	t.Helper()
	s := strings.TrimRight(stderr, "\n")
	if s == "" || strings.Contains(s, "\n") {
		t.Fatalf("stderr is not one line:\n%s", stderr)
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("stderr %q does not mention %q", s, w)
		}
	}
}

func noSecret(t *testing.T, outs ...string) {
	t.Helper()
	for _, o := range outs {
		if strings.Contains(o, cliToken) {
			t.Fatalf("the admin token appears in the output:\n%s", o)
		}
	}
}

func TestCLIVersionAndHelp(t *testing.T) {
	t.Parallel()
	// The test binary, built plainly: the module version and Go version.
	code, out, _ := cliRun(t, nil, "version")
	if code != 0 || !regexp.MustCompile(`^climatesearch \S+ .*go1\.\d+`).MatchString(out) {
		t.Fatalf("version: exit %d, %q", code, out)
	}
	code, out2, _ := cliRun(t, nil, "--version")
	if code != 0 || out2 != out {
		t.Errorf("--version: exit %d, %q; want %q", code, out2, out)
	}
	code, help, _ := cliRun(t, nil, "--help")
	if code != 0 {
		t.Errorf("--help: exit %d", code)
	}
	for _, c := range []string{"version", "healthcheck", "export", "ingest", "backup", "restore", "mcp", "eval", "-boot-ingest", "-data-dir"} {
		if !strings.Contains(help, c) {
			t.Errorf("--help does not list %s:\n%s", c, help)
		}
		if strings.HasPrefix(c, "-") {
			continue
		}
		code, sub, _ := cliRun(t, nil, c, "--help")
		if code != 0 || !strings.HasPrefix(sub, "Usage: climatesearch "+c) {
			t.Errorf("%s --help: exit %d, %q", c, code, sub)
		}
	}
	// A wrong flag is one line naming it, exit 2.
	code, _, errOut := cliRun(t, nil, "export", "--no-such-flag")
	if code != 2 {
		t.Errorf("export --no-such-flag: exit %d, want 2", code)
	}
	oneLine(t, errOut, "climatesearch export", "no-such-flag")
}

// TestCLIBooleanFlags: -boot-ingest=false and a bare boolean flag before
// another flag start the server; -boot-ingest=false really skips the boot
// ingest (the store stays empty).
func TestCLIBooleanFlags(t *testing.T) {
	t.Parallel()
	env := baseEnv(t.TempDir())
	for k, v := range publisherEnv(downPublisher(t)) {
		env[k] = v
	}
	p := start(t, env, "-boot-ingest=false", "-keep-answers", "-log-format=json")
	var cats struct {
		Catalogs []struct {
			ID   string `json:"id"`
			Live int    `json:"live"`
		} `json:"catalogs"`
	}
	p.getJSON("/api/catalogs", &cats)
	for _, c := range cats.Catalogs {
		if c.Live != 0 {
			t.Errorf("-boot-ingest=false: catalog %s has %d resources", c.ID, c.Live)
		}
	}
	p.stop()
	// The bare flag means true: the boot ingest runs (and falls back to
	// the demo snapshot, the publisher being down).
	p = start(t, env, "-boot-ingest", "-log-format=json")
	p.pollNational("the demo snapshot after -boot-ingest", func(m map[string]resource) bool { return len(m) > 0 })
}

func TestCLIHealthcheck(t *testing.T) {
	t.Parallel()
	p := demoServer(t, t.TempDir())
	code, out, _ := cliRun(t, nil, "healthcheck", "--url", p.URL)
	if code != 0 || strings.TrimSpace(out) != "healthy" {
		t.Errorf("healthcheck on a running service: exit %d, %q", code, out)
	}
	// Without --url it checks SERVICE_ADDR, as a container's would.
	if code, _, errOut := cliRun(t, map[string]string{"SERVICE_ADDR": p.Addr}, "healthcheck", "--ready"); code != 0 {
		t.Errorf("healthcheck --ready with SERVICE_ADDR: exit %d %s", code, errOut)
	}
	p.stop()
	code, _, errOut := cliRun(t, nil, "healthcheck", "--url", p.URL)
	if code != 1 {
		t.Errorf("healthcheck on a stopped service: exit %d, want 1", code)
	}
	oneLine(t, errOut, p.URL, "not healthy")
	if code, _, _ := cliRun(t, nil, "healthcheck", "extra"); code != 2 {
		t.Errorf("healthcheck extra: exit %d, want 2", code)
	}
}

// exportCSV parses an export: the comment lines and the records.
func exportCSV(t *testing.T, out string) ([]string, [][]string) {
	t.Helper()
	var comments []string
	rest := out
	for strings.HasPrefix(rest, "#") {
		line, after, _ := strings.Cut(rest, "\n")
		comments = append(comments, line)
		rest = after
	}
	recs, err := csv.NewReader(strings.NewReader(rest)).ReadAll()
	if err != nil {
		t.Fatalf("the export is not CSV after its comments: %v\n%.500s", err, out)
	}
	return comments, recs
}

func TestCLIExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := demoServer(t, dir)
	want := p.national()

	code, out, errOut := cliRun(t, nil, "export", "--url", p.URL, "--catalog", "national")
	if code != 0 {
		t.Fatalf("export --url: exit %d %s", code, errOut)
	}
	comments, recs := exportCSV(t, out)
	if len(comments) == 0 || !strings.Contains(comments[0], "Source: ") || !strings.Contains(comments[0], "Boverket") {
		t.Errorf("the CSV does not open with the source attribution: %q", comments)
	}
	if len(recs) != len(want)+1 || recs[0][0] != "catalog" || recs[0][1] != "id" {
		t.Fatalf("export has %d records, want a header and %d rows", len(recs), len(want))
	}
	a1a3 := -1
	for i, h := range recs[0] {
		if h == "a1a3" {
			a1a3 = i
		}
	}
	for _, r := range recs[1:] {
		w, ok := want[r[1]]
		if !ok || r[0] != "national" {
			t.Fatalf("export row %v is not a live national resource", r[:3])
		}
		if w.A1A3 != nil && r[a1a3] != fmt.Sprint(*w.A1A3) {
			t.Errorf("%s: a1a3 %q, REST says %v", r[1], r[a1a3], *w.A1A3)
		}
	}

	// JSON Lines from the running service, one resource per line.
	code, out, _ = cliRun(t, nil, "export", "--url", p.URL, "--format", "jsonl", "--lang", "en")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var first resource
	if code != 0 || len(lines) < len(want) || json.Unmarshal([]byte(lines[0]), &first) != nil || first.ID == "" {
		t.Fatalf("export jsonl: exit %d, %d lines", code, len(lines))
	}

	// The data directory is locked while the server runs: one line says
	// what to do.
	code, _, errOut = cliRun(t, cliEnv(dir), "export")
	if code != 1 {
		t.Errorf("export on a locked directory: exit %d, want 1", code)
	}
	oneLine(t, errOut, "in use by a running server", "stop it", "--url")

	// Stopped: the same resources, straight from the data directory, as JSON.
	p.stop()
	file := filepath.Join(t.TempDir(), "out.json")
	code, _, errOut = cliRun(t, cliEnv(dir), "export", "--catalog", "national", "--format", "json", "--out", file)
	if code != 0 {
		t.Fatalf("export on the stopped directory: exit %d %s", code, errOut)
	}
	b, _ := os.ReadFile(file)
	var doc struct {
		Source    string     `json:"source"`
		Resources []resource `json:"resources"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || !strings.Contains(doc.Source, "Boverket") || len(doc.Resources) != len(want) {
		t.Fatalf("export json: %v, source %q, %d resources, want %d", err, doc.Source, len(doc.Resources), len(want))
	}
	for _, r := range doc.Resources {
		if _, ok := want[r.ID]; !ok {
			t.Errorf("offline export has %s, the running service did not list it", r.ID)
		}
	}
	if code, _, errOut := cliRun(t, cliEnv(dir), "export", "--format", "xml"); code != 2 || !strings.Contains(errOut, "xml") {
		t.Errorf("export --format xml: exit %d %s", code, errOut)
	}
}

var br25 = []string{"data", "dkbr", "br25-tabel7-2025.xlsx"}

// getStatus answers the status of GET path.
func (p *proc) getStatus(path string) int {
	p.t.Helper()
	resp, err := client.Get(p.URL + path)
	if err != nil {
		p.t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestCLIIngest(t *testing.T) {
	t.Parallel()
	file := shareddata.Path(t, br25...)
	dir := t.TempDir()
	p := demoServer(t, dir)

	// Through the running service: a dry run stores nothing.
	code, out, errOut := cliRun(t, cliEnv(dir), "ingest", file, "--catalog", "br25", "--version", "BR25", "--dry-run", "--url", p.URL)
	if code != 0 || !strings.Contains(out, "dry run") || !strings.Contains(out, "504 upserted") {
		t.Fatalf("ingest --dry-run: exit %d\n%s\n%s", code, out, errOut)
	}
	if s := p.getStatus("/api/resources/br25:%23B1318"); s != http.StatusNotFound {
		t.Fatalf("a dry run stored data: %d", s)
	}
	// Without the admin token the service refuses; the command says so.
	noToken := cliEnv(dir)
	delete(noToken, "SERVICE_ADMIN_TOKEN")
	code, out, errOut = cliRun(t, noToken, "ingest", file, "--catalog", "br25", "--version", "BR25", "--url", p.URL)
	if code != 1 || !strings.Contains(errOut, "401") {
		t.Errorf("ingest without the token: exit %d %s", code, errOut)
	}
	// With the token (from the environment), flags after the file.
	code, out, errOut = cliRun(t, cliEnv(dir), "ingest", file, "--catalog", "br25", "--version", "BR25", "--url", p.URL, "--json")
	var res struct {
		Catalog  string `json:"catalog"`
		Version  string `json:"version"`
		Upserted int    `json:"upserted"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Catalog != "dkbr" || res.Version != "BR25" || res.Upserted != 504 {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errOut)
	}
	var got resource
	p.getJSON("/api/resources/br25:%23B1318", &got)
	if got.Version != "BR25" || got.A1A3 == nil || *got.A1A3 != -664 {
		t.Errorf("after ingest: %+v", got)
	}
	noSecret(t, out, errOut)

	// A bad file: exit 1, the problem named, nothing stored.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	_ = os.WriteFile(bad, []byte("id;name;gwp\n#D1;Beton;0,12\n#D2;Tegl;abc\n"), 0o644)
	code, _, errOut = cliRun(t, cliEnv(dir), "ingest", bad, "--catalog", "dkbr", "--version", "BR25", "--map", "id=id", "--map", "name=name", "--map", "a1a3=gwp", "--url", p.URL)
	if code != 1 {
		t.Errorf("bad file: exit %d", code)
	}
	oneLine(t, errOut, "nothing stored", "abc")
	// Usage errors: exit 2.
	for _, args := range [][]string{{"ingest"}, {"ingest", file}, {"ingest", file, "--upstream"}, {"ingest", file, "--catalog", "nope"}} {
		if code, _, errOut := cliRun(t, cliEnv(dir), args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}

	// On the stopped data directory: the BR18 CSV over BR25, with the
	// same core services; the server sees it after its restart.
	p.stop()
	noSecret(t, p.Stderr.String()) // complete once stopped (info lines are buffered)
	br18 := shareddata.Path(t, "data", "dkbr", "br18-tabel7-201222.csv")
	code, out, errOut = cliRun(t, cliEnv(dir), "ingest", br18, "--catalog", "dkbr", "--version", "BR18")
	if code != 0 || !strings.Contains(out, "ingested: dkbr BR18") {
		t.Fatalf("ingest on the stopped directory: exit %d\n%s\n%s", code, out, errOut)
	}
	p = demoServer(t, dir)
	var cats struct {
		Catalogs []struct{ ID, Version string } `json:"catalogs"`
	}
	p.getJSON("/api/catalogs", &cats)
	for _, c := range cats.Catalogs {
		if c.ID == "dkbr" && c.Version != "BR18" {
			t.Errorf("dkbr serves %q after the offline ingest, want BR18", c.Version)
		}
	}
	// And locked while it runs.
	code, _, errOut = cliRun(t, cliEnv(dir), "ingest", br18, "--catalog", "dkbr", "--version", "BR18")
	if code != 1 {
		t.Errorf("ingest on a locked directory: exit %d", code)
	}
	oneLine(t, errOut, "stop it", "--url")
}

// TestCLIIngestUpstream: ingest --upstream through the running service and
// on a stopped directory, from a stand-in of the publisher.
func TestCLIIngestUpstream(t *testing.T) {
	t.Parallel()
	up := publisher(t)
	dir := t.TempDir()
	env := baseEnv(dir)
	for k, v := range publisherEnv(up) {
		env[k] = v
	}
	// Offline first: the store is filled by the command.
	code, out, errOut := cliRun(t, env, "ingest", "--upstream")
	if code != 0 || !strings.Contains(out, "ingested: national") {
		t.Fatalf("ingest --upstream on the stopped directory: exit %d\n%s\n%s", code, out, errOut)
	}
	env["SERVICE_BOOT_INGEST"] = "false"
	env["SERVICE_ADMIN_TOKEN"] = cliToken
	p := start(t, env)
	n := len(p.national())
	if n == 0 {
		t.Fatal("the offline upstream ingest stored nothing")
	}
	code, out, errOut = cliRun(t, cliEnv(dir), "ingest", "--upstream", "--url", p.URL, "--json")
	var res struct{ Upserted, Unchanged int }
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Upserted != 0 || res.Unchanged == 0 {
		t.Fatalf("ingest --upstream --url: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestCLIEval(t *testing.T) {
	t.Parallel()
	golden := shareddata.Path(t, "eval", "golden-dev.json")
	dir := t.TempDir()
	p := demoServer(t, dir)
	code, out, errOut := cliRun(t, cliEnv(dir), "eval", "--golden", golden, "--url", p.URL, "--json")
	var reports []evalReport
	if code != 0 || json.Unmarshal([]byte(out), &reports) != nil || len(reports) != 1 || reports[0].Overall.Queries == 0 {
		t.Fatalf("eval --url: exit %d\n%.500s\n%s", code, out, errOut)
	}
	code, _, errOut = cliRun(t, cliEnv(dir), "eval", "--golden", golden)
	if code != 1 {
		t.Errorf("eval on a locked directory: exit %d", code)
	}
	oneLine(t, errOut, "climatesearch eval", "in use by a running server", "stop it", "--url")
	// Stopped: the same scores from the data directory.
	p.stop()
	code, out, errOut = cliRun(t, cliEnv(dir), "eval", "--golden", golden, "--json")
	var offline []evalReport
	if code != 0 || json.Unmarshal([]byte(out), &offline) != nil || len(offline) != 1 {
		t.Fatalf("eval on the stopped directory: exit %d %s", code, errOut)
	}
	if offline[0].Overall != reports[0].Overall {
		t.Errorf("eval over HTTP and on the directory differ: %+v vs %+v", reports[0].Overall, offline[0].Overall)
	}
}

// evalReport is the part of an eval report compared (latencies differ).
type evalReport struct {
	Overall struct {
		Queries   int     `json:"queries"`
		Expecting int     `json:"expecting"`
		Hit1      float64 `json:"hit_at_1"`
		Hit3      float64 `json:"hit_at_3"`
		MRR       float64 `json:"mrr"`
		Recall10  float64 `json:"recall_at_10"`
	} `json:"overall"`
}

// answers are a few REST answers compared before a backup and after its
// restore.
func answers(p *proc) map[string]string {
	out := map[string]string{}
	for _, path := range []string{
		"/api/resources?databases=national", "/api/resources?databases=dkbr", "/api/resources/br25:%23B1318",
		"/api/resources/national:6000000000", "/api/search?q=sp%C3%A5nskiva&limit=5",
		"/api/resources/compare?a=6000000000&b=6000000168&unit=m3",
	} {
		var v map[string]any
		p.getJSON(path, &v)
		delete(v, "took_ms")
		b, _ := json.Marshal(v)
		out[path] = string(b)
	}
	return out
}

func TestCLIBackupRestore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := demoServer(t, dir)
	if code, _, errOut := cliRun(t, cliEnv(dir), "ingest", shareddata.Path(t, br25...), "--catalog", "dkbr", "--version", "BR25", "--url", p.URL); code != 0 {
		t.Fatalf("ingest: %d %s", code, errOut)
	}
	before := answers(p)
	file := filepath.Join(t.TempDir(), "cs.backup")

	// Without the token: refused, no file.
	noToken := cliEnv(dir)
	delete(noToken, "SERVICE_ADMIN_TOKEN")
	code, _, errOut := cliRun(t, noToken, "backup", file, "--url", p.URL)
	if code != 1 || !strings.Contains(errOut, "401") {
		t.Errorf("backup without the token: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a refused backup left a file")
	}
	// Online, while the service serves.
	code, out, errOut := cliRun(t, cliEnv(dir), "backup", file, "--url", p.URL)
	if code != 0 {
		t.Fatalf("backup: exit %d %s", code, errOut)
	}
	noSecret(t, out, errOut)
	if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
		t.Fatalf("backup file: %v", err)
	}
	if code, _, _ := cliRun(t, cliEnv(dir), "backup", file, "--url", p.URL); code != 2 {
		t.Errorf("backup over an existing file: exit %d, want 2", code)
	}
	p.stop()
	noSecret(t, p.Stderr.String()) // complete once stopped (info lines are buffered)

	// restore refuses a non-empty directory and leaves it alone.
	code, _, errOut = cliRun(t, cliEnv(dir), "restore", file)
	if code != 1 {
		t.Errorf("restore into a non-empty directory: exit %d", code)
	}
	oneLine(t, errOut, "not empty")
	// A file that is no backup fails and leaves the directory empty.
	junk := filepath.Join(t.TempDir(), "junk")
	_ = os.WriteFile(junk, bytes.Repeat([]byte("not a backup "), 100), 0o644)
	empty := filepath.Join(t.TempDir(), "empty")
	if code, _, _ := cliRun(t, cliEnv(empty), "restore", junk); code != 1 {
		t.Errorf("restore of junk: exit %d, want 1", code)
	}

	// Into a new directory: the same answers.
	restored := filepath.Join(t.TempDir(), "restored")
	code, out, errOut = cliRun(t, cliEnv(restored), "restore", file)
	if code != 0 {
		t.Fatalf("restore: exit %d\n%s\n%s", code, out, errOut)
	}
	env := baseEnv(restored)
	for k, v := range publisherEnv(downPublisher(t)) {
		env[k] = v
	}
	env["SERVICE_BOOT_INGEST"] = "false"
	q := start(t, env)
	after := answers(q)
	for path, b := range before {
		if after[path] != b {
			t.Errorf("%s differs after backup and restore:\nbefore %.300s\nafter  %.300s", path, b, after[path])
		}
	}
}

// TestCLIMCPStdio: the stdio server offers the HTTP server's tools and
// answers as it does.
func TestCLIMCPStdio(t *testing.T) {
	t.Parallel()
	p := demoServer(t, t.TempDir())
	ctx := context.Background()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "cli-test", Version: "1"}

	httpc, err := mcpclient.NewStreamableHttpClient(p.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer httpc.Close()
	if err := httpc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	hi, err := httpc.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	stdio, err := mcpclient.NewStdioMCPClient(binPath, environ(map[string]string{}), "mcp", "--stdio", "--url", p.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer stdio.Close()
	si, err := stdio.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize over stdio: %v", err)
	}
	_, ver, _ := cliRun(t, nil, "version", "--json")
	var info struct {
		Version   string `json:"version"`
		Revision  string `json:"revision"`
		GoVersion string `json:"go_version"`
	}
	_ = json.Unmarshal([]byte(ver), &info)
	if si.ServerInfo.Version != info.Version || hi.ServerInfo.Version != info.Version || info.Version == "" {
		t.Errorf("serverInfo versions: stdio %q, http %q, binary %q", si.ServerInfo.Version, hi.ServerInfo.Version, info.Version)
	}
	// The same version on /metrics, as the build-info gauge.
	resp, err := client.Get(p.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`(?m)^climatesearch_build_info\{[^}]*version="` + regexp.QuoteMeta(info.Version) + `"[^}]*\} 1$`).Match(metrics) {
		t.Errorf("/metrics has no climatesearch_build_info gauge with version %q", info.Version)
	}
	if si.Instructions != hi.Instructions {
		t.Errorf("instructions differ")
	}
	ht, err := httpc.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := stdio.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	hj, _ := json.Marshal(ht.Tools)
	sj, _ := json.Marshal(st.Tools)
	if len(st.Tools) < 5 || string(hj) != string(sj) {
		t.Errorf("tools over stdio differ from /mcp:\n%.400s\n%.400s", sj, hj)
	}
	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"get_resource_details", map[string]any{"id": "national:6000000000"}},
		{"search_climate_data", map[string]any{"query": "spånskiva"}},
		{"get_resource_details", map[string]any{"id": "national:0"}}, // a tool error
	} {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = call.name, call.args
		hr, herr := httpc.CallTool(ctx, req)
		sr, serr := stdio.CallTool(ctx, req)
		if (herr == nil) != (serr == nil) {
			t.Fatalf("%s: http error %v, stdio error %v", call.name, herr, serr)
		}
		if herr != nil {
			continue
		}
		hb, _ := json.Marshal(hr.Content)
		sb, _ := json.Marshal(sr.Content)
		if string(hb) != string(sb) || hr.IsError != sr.IsError {
			t.Errorf("%s answers differently over stdio:\n%.300s\n%.300s", call.name, sb, hb)
		}
	}
	if code, _, errOut := cliRun(t, nil, "mcp"); code != 2 || !strings.Contains(errOut, "--stdio") {
		t.Errorf("mcp without --stdio: exit %d %s", code, errOut)
	}
	if code, _, errOut := cliRun(t, nil, "mcp", "--stdio", "--url", "http://127.0.0.1:1"); code != 1 {
		t.Errorf("mcp --stdio with nothing listening: exit %d %s", code, errOut)
	}
}
