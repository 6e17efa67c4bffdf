package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/climatesearch/climatesearch/ports"
)

// observeTool records each tool call in the metrics: ok, tool_error (the
// tool answered isError, e.g. a bad id or an index still loading) or
// failed (a protocol error or a panic).
func (s *Server) observeTool(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	m := ports.MetricsOrNone(s.d.Metrics)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := next(ctx, req)
		outcome := ports.OutcomeOK
		switch {
		case err != nil:
			outcome = ports.OutcomeFailed
		case res != nil && res.IsError:
			outcome = ports.OutcomeToolError
		}
		m.ObserveToolCall(req.Params.Name, outcome)
		return res, err
	}
}
