// Package mcpserver is the Model Context Protocol driver adapter: five
// read-only tools (search_climate_data, get_resource_details,
// compare_resources, find_alternatives, list_catalogs), resources, prompts
// and completions (resources.go) that call the same driver ports as the REST
// adapter, so an MCP answer is the REST answer for the same question. One tool registry
// is served over streamable HTTP at /mcp and over the legacy SSE transport at
// /mcp/sse (messages posted to /mcp/message), both mounted on the REST
// adapter's gin engine.
package mcpserver

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/climatesearch/climatesearch/ports"
)

// Paths of the endpoints Mount registers.
const (
	PathStreamable = "/mcp"
	PathSSE        = "/mcp/sse"
	PathMessage    = "/mcp/message"
)

// Name and Version identify the server in the MCP handshake; Deps.Version,
// the binary's build version, replaces Version when set.
const (
	Name    = "climatesearch"
	Version = "0.1.0"
)

// Limits of the tool arguments.
const (
	maxLimit  = 50  // search_climate_data limit
	maxRefLen = 128 // resource ids, as in REST
)

// keepAlive is how often an idle stream gets a ping, so proxies and
// load balancers that drop silent connections keep it open.
const keepAlive = 25 * time.Second

// sessionIdleTTL bounds how long the per-session state of a streamable HTTP
// client that never says goodbye (DELETE) is kept.
const sessionIdleTTL = time.Hour

// instructions reach the agent in the initialize answer.
const instructions = `climatesearch answers with the climate impact (GWP-GHG, kg CO2e per declared unit) of construction products and energy carriers from Sweden's national climate-declaration database (Boverket Klimatdatabas, catalog national) and the Danish building-regulation generic data (BR18/BR25 Bilag 2 Tabel 7, catalog dkbr, alias br25).
Use search_climate_data to find resources by name or description (Swedish, English or Danish), get_resource_details for every value of one resource, and compare_resources to state two resources in one unit.
Every answer carries "source": cite it when you use the values, and link the "origin" product sheet when there is one. climatesearch is not affiliated with the publishers.`

// Deps are the ports the tools call and the settings of the transports.
type Deps struct {
	Search    ports.Searcher
	Resources ports.Resources
	Compare   ports.Comparer
	Catalogs  ports.CatalogGuide
	// Rerank is true when the process has a reranker configured: MCP
	// searches then always rerank (REST reranks only when asked).
	Rerank bool
	// AllowAnyHost turns off the DNS-rebinding protection of the MCP
	// endpoints (a request arriving over loopback must name a loopback
	// Host). Only for a reverse proxy on the same host that forwards the
	// public Host header; see docs/MCP.md.
	AllowAnyHost bool
	// Version is the serverInfo version of the handshake (the binary's
	// build version); Version (the constant) when empty.
	Version string
	// Metrics records each tool call by tool and outcome; nil records nothing.
	Metrics ports.Metrics
	Log     *zap.Logger
}

// Server is the MCP server with its two HTTP transports.
type Server struct {
	d          Deps
	mcp        *server.MCPServer
	streamable *server.StreamableHTTPServer
	sse        *server.SSEServer
}

// New builds the tool registry and both transports.
func New(d Deps) *Server {
	if d.Log == nil {
		d.Log = zap.NewNop()
	}
	sl := slog.New(zapslog.NewHandler(d.Log.Core()))
	s := &Server{d: d}
	version := d.Version
	if version == "" {
		version = Version
	}
	s.mcp = server.NewMCPServer(Name, version, append([]server.ServerOption{
		server.WithTitle("Climate data of construction products (Sweden, Denmark)"),
		server.WithInstructions(instructions),
		server.WithToolCapabilities(false),
		server.WithLogging(),
		server.WithToolHandlerMiddleware(s.observeTool), // outside recovery: a panic counts as failed
		server.WithRecovery(),
		server.WithLogger(slog.New(accessLevels{sl.Handler()})),
	}, s.resourceOptions()...)...)
	s.addTools()
	s.addResources()
	s.streamable = server.NewStreamableHTTPServer(s.mcp,
		server.WithEndpointPath(PathStreamable),
		server.WithHeartbeatInterval(keepAlive),
		server.WithSessionIdleTTL(sessionIdleTTL),
		server.WithDisableLocalhostProtection(d.AllowAnyHost),
		server.WithStreamableHTTPLogger(sl),
	)
	s.sse = server.NewSSEServer(s.mcp,
		server.WithStaticBasePath(PathStreamable),
		server.WithSSEEndpoint(PathSSE[len(PathStreamable):]),
		server.WithMessageEndpoint(PathMessage[len(PathStreamable):]),
		// A relative endpoint (/mcp/message?sessionId=...) resolves against
		// whatever URL the client used, also behind a proxy.
		server.WithUseFullURLForMessageEndpoint(false),
		server.WithKeepAliveInterval(keepAlive),
		server.WithSSEDisableLocalhostProtection(d.AllowAnyHost),
	)
	return s
}

// MCPServer returns the tool registry, e.g. for an in-process client.
func (s *Server) MCPServer() *server.MCPServer { return s.mcp }

// Mount registers the MCP endpoints on r: /mcp (POST, GET, DELETE),
// /mcp/sse (GET) and /mcp/message (POST). Pass a router group carrying a
// guard to put the endpoints behind it.
func (s *Server) Mount(r gin.IRoutes) {
	r.POST(PathStreamable, gin.WrapH(s.streamable))
	r.GET(PathStreamable, longLived(s.streamable))
	r.DELETE(PathStreamable, gin.WrapH(s.streamable))
	r.GET(PathSSE, longLived(s.sse.SSEHandler()))
	r.POST(PathMessage, gin.WrapH(s.sse.MessageHandler()))
}

// longLived serves a stream that stays open as long as the client listens:
// the HTTP server's read and write timeouts, which bound ordinary requests,
// must not cut it.
func longLived(h http.Handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		rc := http.NewResponseController(c.Writer)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		h.ServeHTTP(c.Writer, c.Request)
	}
}

// Close ends every open stream (SSE sessions and streamable listening
// streams) so the HTTP server's graceful shutdown does not wait for clients
// that never hang up. Call it before shutting the HTTP server down.
func (s *Server) Close(ctx context.Context) error {
	s.sse.CloseSessions()
	return s.streamable.Shutdown(ctx) // no own http.Server: closes sessions, stops the sweeper
}

// accessLevels logs the library's per-request lines (mcp.request, mcp.tool)
// as the REST access log does: failures at info, successes at debug, so a
// loaded server does not spend its time writing logs.
type accessLevels struct{ slog.Handler }

func (h accessLevels) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && (r.Message == "mcp.request" || r.Message == "mcp.tool") {
		ok := false
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "outcome" {
				ok = a.Value.String() == "ok"
				return false
			}
			return true
		})
		if ok {
			if !h.Handler.Enabled(ctx, slog.LevelDebug) {
				return nil
			}
			r.Level = slog.LevelDebug
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h accessLevels) WithAttrs(as []slog.Attr) slog.Handler {
	return accessLevels{h.Handler.WithAttrs(as)}
}
func (h accessLevels) WithGroup(g string) slog.Handler { return accessLevels{h.Handler.WithGroup(g)} }

// tool pairs a definition with its handler.
type tool struct {
	def     mcp.Tool
	handler server.ToolHandlerFunc
}

func (s *Server) addTools() {
	for _, t := range append(s.tools(), s.discoveryTools()...) {
		s.mcp.AddTool(t.def, t.handler)
	}
}
