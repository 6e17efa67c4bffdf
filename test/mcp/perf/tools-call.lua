-- wrk script: every request is one MCP tools/call of search_climate_data
-- over streamable HTTP, on a session opened beforehand (MCP_SESSION), for
-- QUERY (default spånskiva). Like the REST runs it has no response()
-- callback, so wrk spends the same effort per answer; wrk counts non-2xx
-- answers itself, and measure.sh checks a sample answer before and after.
local session = os.getenv("MCP_SESSION")
local query = os.getenv("QUERY") or "spånskiva"
local body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_climate_data","arguments":{"query":"' .. query .. '"}}}'

request = function()
  return wrk.format("POST", "/mcp", {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Session-Id"] = session,
    ["Mcp-Protocol-Version"] = "2025-11-25",
  }, body)
end
