package mcpserver

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestDocsShowTheServedSchemas keeps docs/MCP.md true: the input schema
// printed under each tool's heading is the one tools/list serves.
func TestDocsShowTheServedSchemas(t *testing.T) {
	b, err := os.ReadFile("../../docs/MCP.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	f := newFixture(t, false)
	for _, name := range []string{ToolSearch, ToolDetails, ToolCompare, ToolAlternatives, ToolCatalogs} {
		i := strings.Index(doc, "### `"+name+"`")
		if i < 0 {
			t.Fatalf("docs/MCP.md has no section for %s", name)
		}
		rest := doc[i:]
		start := strings.Index(rest, "```json\n")
		if start < 0 {
			t.Fatalf("docs/MCP.md: no input schema under %s", name)
		}
		rest = rest[start+len("```json\n"):]
		block := rest[:strings.Index(rest, "```")]
		var documented, served any
		if err := json.Unmarshal([]byte(block), &documented); err != nil {
			t.Fatalf("docs/MCP.md: the %s schema is not JSON: %v", name, err)
		}
		tl := f.tools[name]
		raw := tl.RawInputSchema
		if raw == nil {
			raw, _ = json.Marshal(tl.InputSchema)
		}
		if err := json.Unmarshal(raw, &served); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(documented, served) {
			t.Errorf("docs/MCP.md shows another input schema for %s than the server serves:\n%s", name, raw)
		}
	}
}
