package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/climatesearch/climatesearch/core"
)

// inspectTimeout bounds the inspector's two calls together.
const inspectTimeout = 20 * time.Second

// inspection sets the REST answer beside the MCP answer of the same
// question, both fetched for real from this process over loopback.
type inspection struct {
	REST    answer
	MCP     answer
	Agree   bool
	Verdict string
	// Same is the REST question asked with MCP's retrieval settings, when
	// the form's differ (MCP always uses vectors and reranks when a
	// reranker is configured).
	Same *answer
	// SameAgree tells whether Same matches the MCP answer.
	SameAgree bool
	Note      string
}

// answer is one interface's list of hits, or why it failed.
type answer struct {
	Label string
	URL   string
	Took  string
	Refs  []string
	Names []string
	Raw   string
	Error string
}

func (c *Console) inspect(g *gin.Context, f queryForm) *inspection {
	ctx, cancel := context.WithTimeout(g, inspectTimeout)
	defer cancel()
	self := c.d.SelfURL()
	in := &inspection{}
	in.REST = c.fetchREST(ctx, self, "/api/search?"+f.restQuery().Encode(), "REST GET /api/search")
	in.MCP = c.callMCP(ctx, self, f)
	in.Agree = in.REST.Error == "" && in.MCP.Error == "" && equalRefs(in.REST.Refs, in.MCP.Refs)
	mcpForm := f
	mcpForm.Vector, mcpForm.Rerank = true, c.d.MCPRerank
	mcpForm.Limit = min(f.Limit, mcpMaxLimit)
	if mcpForm.Vector != f.Vector || mcpForm.Rerank != f.Rerank || mcpForm.Limit != f.Limit {
		in.Note = fmt.Sprintf("MCP search always asks for vectors%s and returns at most %d hits, so it answers the REST question with vector=true%s.",
			map[bool]string{true: " and reranks (a reranker is configured)", false: ""}[c.d.MCPRerank], mcpMaxLimit,
			map[bool]string{true: "&rerank=true", false: ""}[c.d.MCPRerank])
		same := c.fetchREST(ctx, self, "/api/search?"+mcpForm.restQuery().Encode(), "REST with MCP's settings")
		in.Same = &same
		in.SameAgree = same.Error == "" && in.MCP.Error == "" && equalRefs(same.Refs, in.MCP.Refs)
	}
	switch {
	case in.REST.Error != "" || in.MCP.Error != "":
		in.Verdict = "could not compare: a call failed"
	case in.Agree:
		in.Verdict = fmt.Sprintf("agree: the same %d hits in the same order", len(in.REST.Refs))
	case in.Same != nil && in.SameAgree:
		in.Verdict = "differ only because the retrieval settings differ: REST asked with MCP's settings agrees hit for hit"
	default:
		in.Verdict = "disagree: the hit lists differ"
	}
	return in
}

func equalRefs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// maxRaw bounds the JSON the inspector shows of each answer.
const maxRaw = 16 << 10

func (c *Console) fetchREST(ctx context.Context, self, path, label string) answer {
	a := answer{Label: label, URL: path}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, self+path, nil)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	for k, v := range c.d.SelfHeaders {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	a.Took = formatDuration(time.Since(start))
	if err != nil {
		a.Error = err.Error()
		return a
	}
	if resp.StatusCode != http.StatusOK {
		a.Error = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, truncate(string(body), 500))
		return a
	}
	a.fill(body)
	return a
}

func (a *answer) fill(body []byte) {
	var sr core.SearchResponse
	if err := json.Unmarshal(body, &sr); err != nil {
		a.Error = "answer is not a SearchResponse: " + err.Error()
		return
	}
	for _, h := range sr.Results {
		a.Refs = append(a.Refs, h.Ref())
		a.Names = append(a.Names, h.Name)
	}
	var pretty any
	_ = json.Unmarshal(body, &pretty)
	b, _ := json.MarshalIndent(pretty, "", "  ")
	a.Raw = truncate(string(b), maxRaw)
}

// callMCP runs tools/call of the search tool through this process's own
// streamable-HTTP endpoint, as an MCP client would.
func (c *Console) callMCP(ctx context.Context, self string, f queryForm) answer {
	a := answer{Label: "MCP tools/call " + mcpSearchTool, URL: "/mcp"}
	start := time.Now()
	cli, err := client.NewStreamableHttpClient(self+"/mcp", transport.WithHTTPHeaders(c.d.SelfHeaders))
	if err != nil {
		a.Error = err.Error()
		return a
	}
	defer cli.Close()
	if err := cli.Start(ctx); err != nil {
		a.Error = "connecting: " + err.Error()
		return a
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "climatesearch-console", Version: "1"}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := cli.Initialize(ctx, init); err != nil {
		a.Error = "initialize: " + err.Error()
		return a
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = mcpSearchTool
	req.Params.Arguments = f.mcpArgs()
	res, err := cli.CallTool(ctx, req)
	a.Took = formatDuration(time.Since(start))
	if err != nil {
		a.Error = "tools/call: " + err.Error()
		return a
	}
	if res.IsError {
		msg := ""
		for _, ct := range res.Content {
			if tc, ok := mcp.AsTextContent(ct); ok {
				msg += tc.Text
			}
		}
		a.Error = "tool error: " + truncate(msg, 500)
		return a
	}
	body := []byte(res.RawStructuredContent)
	if len(body) == 0 {
		body, _ = json.Marshal(res.StructuredContent)
	}
	a.fill(body)
	return a
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n-- // keep UTF-8 whole
	}
	return s[:n] + "…"
}
