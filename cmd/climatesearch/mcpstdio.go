package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/climatesearch/climatesearch/cmd/climatesearch/buildinfo"
)

// runMCP serves the MCP tools over stdio for clients that only start local
// processes. It holds no tool of its own: it connects to the running
// service's /mcp endpoint, offers the tools that endpoint lists (same
// names, descriptions, schemas, annotations) and forwards every call, so
// there is one implementation of the tools and a stdio answer is the HTTP
// answer (docs/DECISIONS.md, "mcp --stdio").
func runMCP(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("mcp", stderr)
	base := urlFlag(fs, defaultURL())
	stdio := fs.Bool("stdio", false, "serve over stdin/stdout (the only transport of this command)")
	pos, code, ok := parseArgs(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return fail(stderr, "mcp", exitUsage, "unexpected argument %q", pos[0])
	}
	if !*stdio {
		return fail(stderr, "mcp", exitUsage, "pass --stdio (the service itself serves MCP over HTTP at /mcp)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	p := &mcpProxy{url: *base + "/mcp"}
	init, tools, err := p.connect(ctx)
	if err != nil {
		return fail(stderr, "mcp", exitFail, "connecting to %s/mcp: %v", *base, err)
	}
	defer p.close()
	s := server.NewMCPServer("climatesearch", buildinfo.Get().Version,
		server.WithInstructions(init.Instructions),
		server.WithToolCapabilities(false),
		server.WithRecovery())
	for _, t := range tools {
		s.AddTool(t, p.call)
	}
	ss := server.NewStdioServer(s)
	ss.SetErrorLogger(log.New(stderr, "climatesearch mcp: ", 0))
	if err := ss.Listen(ctx, os.Stdin, stdout); err != nil && ctx.Err() == nil && err != io.EOF {
		return fail(stderr, "mcp", exitFail, "%v", err)
	}
	return exitOK
}

// mcpProxy is a client of the service's /mcp; a lost session (the service
// restarted) is opened again once per call.
type mcpProxy struct {
	url string
	mu  sync.Mutex
	c   *client.Client
}

func (p *mcpProxy) headers() map[string]string {
	// The hosted build's customer key, when the service needs one.
	if k := os.Getenv("CLIMATESEARCH_API_KEY"); k != "" {
		return map[string]string{"Authorization": "Bearer " + k}
	}
	return nil
}

func (p *mcpProxy) connect(ctx context.Context) (*mcp.InitializeResult, []mcp.Tool, error) {
	c, err := client.NewStreamableHttpClient(p.url, transport.WithHTTPHeaders(p.headers()), transport.WithHTTPTimeout(5*time.Minute))
	if err != nil {
		return nil, nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "climatesearch-mcp-stdio", Version: buildinfo.Get().Version}
	init, err := c.Initialize(ctx, req)
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	p.mu.Lock()
	old := p.c
	p.c = c
	p.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	return init, tools.Tools, nil
}

func (p *mcpProxy) client() *client.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.c
}

func (p *mcpProxy) close() {
	if c := p.client(); c != nil {
		_ = c.Close()
	}
}

// call forwards one tools/call. A transport failure (not a tool error,
// which is an answer) reconnects once and retries: the tools are read-only.
func (p *mcpProxy) call(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := p.client().CallTool(ctx, req)
	if err == nil || ctx.Err() != nil {
		return res, err
	}
	if _, _, cerr := p.connect(ctx); cerr != nil {
		return nil, fmt.Errorf("the service at %s is unreachable: %v", p.url, cerr)
	}
	return p.client().CallTool(ctx, req)
}
