package console

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

type connectPage struct {
	layout
	Base    string
	Health  core.Health
	Ready   core.Readiness
	Clients []clientConfig
	Curls   []curlExample
}

// clientConfig is a ready-to-paste MCP client configuration.
type clientConfig struct {
	ID, Name, Where, Text string
}

type curlExample struct {
	What, Cmd string
	Admin     bool
}

func pretty(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func (c *Console) connect(g *gin.Context) {
	base := baseURL(g.Request)
	p := connectPage{layout: c.layout(g, "Connect", "connect"), Base: base,
		Health: c.d.Resources.Health(g), Ready: c.d.Resources.Ready(g)}
	mcpURL, sseURL := base+"/mcp", base+"/mcp/sse"
	type srv = map[string]any
	for _, t := range []struct {
		suffix, url, label string
	}{{"", mcpURL, "streamable HTTP (/mcp)"}, {"-sse", sseURL, "legacy SSE (/mcp/sse)"}} {
		sse := t.suffix != ""
		name := "climatesearch"
		vsType := "http"
		if sse {
			vsType = "sse"
		}
		p.Clients = append(p.Clients,
			clientConfig{ID: "claude-desktop" + t.suffix, Name: "Claude Desktop, " + t.label, Where: "claude_desktop_config.json (through mcp-remote, which needs Node.js)",
				Text: pretty(srv{"mcpServers": srv{name: srv{"command": "npx", "args": mcpRemoteArgs(t.url, sse)}}})},
			clientConfig{ID: "claude-code" + t.suffix, Name: "Claude Code, " + t.label, Where: "a terminal",
				Text: "claude mcp add --transport " + map[bool]string{false: "http", true: "sse"}[sse] + " " + name + " " + t.url},
			clientConfig{ID: "vscode" + t.suffix, Name: "VS Code, " + t.label, Where: ".vscode/mcp.json",
				Text: pretty(srv{"servers": srv{name: srv{"type": vsType, "url": t.url}}})},
			clientConfig{ID: "cursor" + t.suffix, Name: "Cursor, " + t.label, Where: "~/.cursor/mcp.json or .cursor/mcp.json",
				Text: pretty(srv{"mcpServers": srv{name: srv{"url": t.url}}})},
		)
		if !sse {
			p.Clients = append(p.Clients, clientConfig{ID: "codex", Name: "Codex, " + t.label, Where: "~/.codex/config.toml",
				Text: "[mcp_servers." + name + "]\nurl = \"" + t.url + "\""})
		} else {
			p.Clients = append(p.Clients, clientConfig{ID: "codex-sse", Name: "Codex, " + t.label, Where: "~/.codex/config.toml (Codex speaks streamable HTTP only; mcp-remote bridges SSE)",
				Text: "[mcp_servers." + name + "]\ncommand = \"npx\"\nargs = [\"-y\", \"mcp-remote\", \"" + t.url + "\", \"--transport\", \"sse-only\"]"})
		}
	}
	admin := ""
	if c.d.AdminToken != "" {
		admin = " -H 'X-Admin-Token: <your SERVICE_ADMIN_TOKEN>'"
	}
	p.Curls = []curlExample{
		{What: "Health", Cmd: "curl -s " + base + "/healthz"},
		{What: "Readiness (503 while the index loads)", Cmd: "curl -s " + base + "/readyz"},
		{What: "The OpenAPI document", Cmd: "curl -s " + base + "/openapi.yaml"},
		{What: "Search", Cmd: "curl -s '" + base + "/api/search?q=sp%C3%A5nskiva&lang=sv&limit=5'"},
		{What: "Search both catalogs with vectors", Cmd: "curl -s '" + base + "/api/search?q=roof+tile&lang=en&databases=national,dkbr&vector=true'"},
		{What: "List a catalog", Cmd: "curl -s '" + base + "/api/resources?databases=dkbr&lang=en'"},
		{What: "One resource", Cmd: "curl -s " + base + "/api/resources/national:6000000000"},
		{What: "Its product sheet (302)", Cmd: "curl -si " + base + "/api/resources/national:6000000000/origin"},
		{What: "Compare in one unit", Cmd: "curl -s '" + base + "/api/resources/compare?a=national:6000000000&b=national:6000000168&unit=m3'"},
		{What: "Lower-carbon alternatives", Cmd: "curl -s '" + base + "/api/resources/national:6000000032/alternatives?limit=5'"},
		{What: "What the catalogs hold", Cmd: "curl -s " + base + "/api/catalogs"},
		{What: "Run the upstream ingest now", Cmd: "curl -s -X POST" + admin + " '" + base + "/admin/ingest/run?catalog=national'", Admin: true},
		{What: "Preview a spreadsheet", Cmd: "curl -s" + admin + " -F file=@br25-tabel7-2025.xlsx " + base + "/admin/ingest/preview", Admin: true},
		{What: "Apply it with a column map", Cmd: "curl -s" + admin + " -F preview_id=pv_… -F version=BR25 -F map.id=… -F map.name=… -F map.a1a3=… '" + base + "/admin/ingest/file?catalog=dkbr&dry_run=true'", Admin: true},
		{What: "Load a JSON batch", Cmd: "curl -s" + admin + " -H 'Content-Type: application/json' -d '{\"catalog\":\"dkbr\",\"version\":\"BR25\",\"resources\":[{\"id\":\"X1\",\"name\":\"Tagsten\",\"unit\":\"kg\",\"a1a3\":0.35}]}' " + base + "/admin/resources", Admin: true},
		{What: "List webhook destinations", Cmd: "curl -s" + admin + " " + base + "/admin/webhooks", Admin: true},
		{What: "Add a webhook destination", Cmd: "curl -s" + admin + " -H 'Content-Type: application/json' -d '{\"url\":\"https://example.org/hook\",\"events\":[\"catalog.changed\"]}' " + base + "/admin/webhooks", Admin: true},
		{What: "One destination", Cmd: "curl -s" + admin + " " + base + "/admin/webhooks/wh_…", Admin: true},
		{What: "Disable a destination", Cmd: "curl -s -X PATCH" + admin + " -H 'Content-Type: application/json' -d '{\"enabled\":false}' " + base + "/admin/webhooks/wh_…", Admin: true},
		{What: "Rotate its secret", Cmd: "curl -s -X PATCH" + admin + " -H 'Content-Type: application/json' -d '{\"rotate_secret\":true}' " + base + "/admin/webhooks/wh_…", Admin: true},
		{What: "Delete a destination", Cmd: "curl -s -X DELETE" + admin + " " + base + "/admin/webhooks/wh_…", Admin: true},
		{What: "Send a test delivery", Cmd: "curl -s -X POST" + admin + " " + base + "/admin/webhooks/wh_…/test", Admin: true},
		{What: "A destination's delivery log", Cmd: "curl -s" + admin + " " + base + "/admin/webhooks/wh_…/deliveries", Admin: true},
		{What: "Recent events", Cmd: "curl -s" + admin + " " + base + "/admin/events", Admin: true},
		{What: "A consistent online backup of the store", Cmd: "curl -s" + admin + " -o climatesearch.backup " + base + "/admin/backup", Admin: true},
	}
	status := http.StatusOK
	c.render(g, status, "connect", p)
}

func mcpRemoteArgs(url string, sse bool) []string {
	args := []string{"-y", "mcp-remote", url}
	if sse {
		args = append(args, "--transport", "sse-only")
	}
	if len(url) > 7 && url[:7] == "http://" {
		args = append(args, "--allow-http")
	}
	return args
}
