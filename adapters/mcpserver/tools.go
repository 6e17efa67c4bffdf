package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
)

// Tool names.
const (
	ToolSearch  = "search_climate_data"
	ToolDetails = "get_resource_details"
	ToolCompare = "compare_resources"
)

func readOnly(title string) mcp.ToolAnnotation {
	return mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		// The catalogs are held by this service; a call reaches no
		// open-ended outside world.
		OpenWorldHint: mcp.ToBoolPtr(false),
	}
}

func (s *Server) tools() []tool {
	return []tool{
		{
			def: mcp.Tool{
				Name:  ToolSearch,
				Title: "Search climate data of construction products",
				Description: "Search construction products and energy carriers by name or description in Sweden's national climate-declaration database " +
					"(Boverket Klimatdatabas, catalog national) and the Danish BR18/BR25 generic data (catalog dkbr, alias br25). Text in Swedish, English and Danish is searchable " +
					"(the dkbr catalog's Danish names; the German ÖKOBAUDAT names of dkbr rows as exact words). " +
					"Returns ranked hits and the total that match; each hit is the full resource with its climate impact (typical and conservative A1-A3, A4, A5.1 when published, " +
					"kg CO2e per declared unit), the declared unit and conversions, a details path and, for national resources, the origin link to the publisher's product sheet. " +
					"Narrow with category, unit and value ranges (a1a3_max, ...), order by a value with sort (within one unit), page with offset, count categories, units and catalogs with facets. " +
					"Pass a hit's catalog:id to get_resource_details or compare_resources. Cite the answer's source when you use the values.",
				RawInputSchema:  searchInput,
				RawOutputSchema: searchOutput,
				Annotations:     readOnly("Search climate data"),
			},
			handler: s.search,
		},
		{
			def: mcp.Tool{
				Name:  ToolDetails,
				Title: "Get one resource's climate data",
				Description: "Return every published value of one construction product or energy carrier: names and descriptions in Swedish and English " +
					"(for dkbr rows the Danish name, and a #G row's German ÖKOBAUDAT name), " +
					"typical and conservative A1-A3, A4, A5.1, declared unit, unit conversions, transports, category, release version, source and origin (product sheet). " +
					"Takes a prefixed id (national:6000000000) or a bare id; a bare id that several catalogs hold is refused with the candidates.",
				RawInputSchema:  detailsInput,
				RawOutputSchema: detailsOutput,
				Annotations:     readOnly("Get resource details"),
			},
			handler: s.details,
		},
		{
			def: mcp.Tool{
				Name:  ToolCompare,
				Title: "Compare two resources in one unit",
				Description: "State the climate impact of two resources in one shared unit (restated through their declared conversions) and report the difference a minus b " +
					"and which is lower. Compares typical A1-A3 unless impact says otherwise. Without unit the service picks a shared unit, or marks the pair incomparable; " +
					"an explicit unit that cannot apply to both is refused, never answered with a silently wrong number.",
				RawInputSchema:  compareInput,
				RawOutputSchema: compareOutput,
				Annotations:     readOnly("Compare resources"),
			},
			handler: s.compare,
		},
	}
}

// --- Arguments ---

// args are a call's arguments by name; JSON null counts as absent.
type args map[string]json.RawMessage

// parseArgs decodes the arguments object and refuses names the tool does
// not take, so a typo never silently changes an answer.
func parseArgs(req mcp.CallToolRequest, accepted ...string) (args, error) {
	raw := req.Params.RawArguments
	if len(bytes.TrimSpace(raw)) == 0 && req.Params.Arguments != nil {
		b, err := json.Marshal(req.Params.Arguments)
		if err != nil {
			return nil, core.Invalidf("arguments must be a JSON object")
		}
		raw = b
	}
	a := args{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := json.Unmarshal(t, &a); err != nil {
			return nil, core.Invalidf("arguments must be a JSON object with the properties %s", strings.Join(accepted, ", "))
		}
	}
	var unknown []string
	for k, v := range a {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(a, k)
			continue
		}
		known := false
		for _, n := range accepted {
			if k == n {
				known = true
				break
			}
		}
		if !known {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, core.Invalidf("unknown argument %s; this tool accepts %s", strings.Join(unknown, ", "), strings.Join(accepted, ", "))
	}
	return a, nil
}

// str returns an optional string argument.
func (a args) str(name string) (string, error) {
	v, ok := a[name]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", core.Invalidf("%s must be a string", name)
	}
	return s, nil
}

// id returns a required resource id. National ids are digits, and clients
// that coerce key=value input (the Inspector CLI does) or agents send them
// as numbers: the number's own digits are taken, never a float's rendering.
func (a args) id(name, example string) (string, error) {
	if v, ok := a[name]; ok {
		var n json.Number
		if err := json.Unmarshal(v, &n); err == nil {
			return n.String(), nil
		}
	}
	s, err := a.required(name, example)
	if err != nil {
		return "", err
	}
	return resourceRef(s)
}

// required returns a string argument that must be present and not blank.
func (a args) required(name, example string) (string, error) {
	s, err := a.str(name)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", core.Invalidf("%s is required, e.g. %s", name, example)
	}
	return s, nil
}

// integer returns an optional integer argument within [lo, hi], def when absent.
func (a args) integer(name string, lo, hi, def int) (int, error) {
	v, ok := a[name]
	if !ok {
		return def, nil
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, core.Invalidf("%s must be an integer between %d and %d, got %s", name, lo, hi, v)
	}
	return int(f), nil
}

// strings returns an optional list of strings; a single string is read as a
// comma-separated list, as REST's databases parameter is.
func (a args) strings(name string) ([]string, error) {
	v, ok := a[name]
	if !ok {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(v, &list); err == nil {
		return list, nil
	}
	var one string
	if err := json.Unmarshal(v, &one); err == nil {
		return strings.Split(one, ","), nil
	}
	example := `["national"]`
	if name == "facets" {
		example = `["category", "unit"]`
	}
	return nil, core.Invalidf("%s must be an array of strings, e.g. %s", name, example)
}

// boolean returns an optional true/false argument, false when absent.
func (a args) boolean(name string) (bool, error) {
	v, ok := a[name]
	if !ok {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		return false, core.Invalidf("%s must be true or false, got %s", name, v)
	}
	return b, nil
}

// bound returns an impact-range argument (a1a3_min, ...): a number, or a
// numeric string read as REST reads the parameter (blank is absent, as an
// empty REST parameter); nil when absent.
func (a args) bound(name string) (*float64, error) {
	v, ok := a[name]
	if !ok {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return core.ParseBound(name, s)
	}
	var x float64
	if err := json.Unmarshal(v, &x); err != nil {
		return nil, core.BoundError(name, string(v))
	}
	return &x, nil
}

func (a args) lang() (core.Lang, error) {
	s, err := a.str("lang")
	if err != nil {
		return "", err
	}
	return core.ParseLang(s)
}

// --- Handlers ---

// searchArgs are the arguments search_climate_data accepts, in the order
// its schema lists them.
var searchArgs = append([]string{"query", "lang", "databases", "limit", "offset", "category", "unit", "sort", "facets", "highlight"}, core.RangeParams...)

func (s *Server) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	sr, err := searchRequest(req, s.d.Rerank)
	if err != nil {
		return s.fail(ctx, ToolSearch, err), nil
	}
	resp, err := s.d.Search.Search(ctx, sr)
	if err != nil {
		return s.fail(ctx, ToolSearch, err), nil
	}
	for _, n := range resp.Notes {
		s.notify(ctx, mcp.LoggingLevelWarning, n)
	}
	return structured(resp, searchText(resp, sr))
}

// searchRequest maps the arguments to the core request exactly as REST's
// GET /api/search maps its parameters (adapters/httpapi), with vector
// retrieval always on and rerank when the process has a reranker.
func searchRequest(req mcp.CallToolRequest, rerank bool) (core.SearchRequest, error) {
	a, err := parseArgs(req, searchArgs...)
	if err != nil {
		return core.SearchRequest{}, err
	}
	sr := core.SearchRequest{Vector: true, Rerank: rerank}
	if sr.Query, err = a.required("query", `"spånskiva" or "cross laminated timber"`); err != nil {
		return sr, err
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(sr.Query)); n > core.MaxQueryLen {
		return sr, core.Invalidf("query is %d characters long; the limit is %d", n, core.MaxQueryLen)
	}
	if sr.Lang, err = a.lang(); err != nil {
		return sr, err
	}
	dbs, err := a.strings("databases")
	if err != nil {
		return sr, err
	}
	if sr.Catalogs, err = core.ParseCatalogs(dbs); err != nil {
		return sr, fmt.Errorf("databases: %w", err)
	}
	if sr.Limit, err = a.integer("limit", 1, maxLimit, core.DefaultLimit); err != nil {
		return sr, err
	}
	if sr.Offset, err = a.integer("offset", 0, core.MaxOffset, 0); err != nil {
		return sr, err
	}
	if sr.Category, err = a.str("category"); err != nil {
		return sr, err
	}
	if sr.Unit, err = a.str("unit"); err != nil {
		return sr, err
	}
	sortArg, err := a.str("sort")
	if err != nil {
		return sr, err
	}
	if sr.Sort, err = core.ParseSort(sortArg); err != nil {
		return sr, err
	}
	if sr.Facets, err = a.strings("facets"); err != nil {
		return sr, err
	}
	if sr.Ranges, err = core.Ranges(a.bound); err != nil {
		return sr, err
	}
	if sr.Highlight, err = a.boolean("highlight"); err != nil {
		return sr, err
	}
	// As REST does before asking the core: trimmed filters, checked
	// ranges and facets, the same messages.
	return sr, sr.Refine.Normalize()
}

func (s *Server) details(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := parseArgs(req, "id", "lang")
	if err != nil {
		return s.fail(ctx, ToolDetails, err), nil
	}
	id, err := a.id("id", `"national:6000000000"`)
	if err != nil {
		return s.fail(ctx, ToolDetails, err), nil
	}
	lang, err := a.lang()
	if err != nil {
		return s.fail(ctx, ToolDetails, err), nil
	}
	r, err := s.d.Resources.Get(ctx, id, lang)
	if err != nil {
		return s.fail(ctx, ToolDetails, err), nil
	}
	return structured(r, detailsText(&r, lang))
}

func (s *Server) compare(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := parseArgs(req, "a", "b", "unit", "impact", "lang")
	if err != nil {
		return s.fail(ctx, ToolCompare, err), nil
	}
	cr := core.CompareRequest{}
	if cr.A, err = a.id("a", `"national:6000000000"`); err != nil {
		return s.fail(ctx, ToolCompare, err), nil
	}
	if cr.B, err = a.id("b", `"national:6000000168"`); err != nil {
		return s.fail(ctx, ToolCompare, err), nil
	}
	if cr.Unit, err = a.str("unit"); err != nil {
		return s.fail(ctx, ToolCompare, err), nil
	}
	imp, err := a.str("impact")
	if err != nil {
		return s.fail(ctx, ToolCompare, err), nil
	}
	if cr.Impact, err = core.ParseImpact(imp); err != nil {
		return s.fail(ctx, ToolCompare, err), nil
	}
	if cr.Lang, err = a.lang(); err != nil {
		return s.fail(ctx, ToolCompare, err), nil
	}
	c, err := s.d.Compare.Compare(ctx, cr)
	if err != nil {
		return s.fail(ctx, ToolCompare, err), nil
	}
	return structured(c, compareText(&c))
}

// structured answers with v as structuredContent, encoded by encoding/json
// as the REST adapter encodes it, and text for clients that read only
// text. v is handed over as the value, not pre-encoded: the transport then
// encodes the answer once instead of encoding it and re-scanning the bytes.
func structured(v any, text string) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(text)},
		StructuredContent: v,
	}, nil
}

// fail turns a failure into a tool error (isError) whose message tells the
// agent what to do next. Failures are never protocol errors: an agent sees
// a tool error in its context and can correct the call.
func (s *Server) fail(ctx context.Context, tool string, err error) *mcp.CallToolResult {
	var ce *core.Error
	errors.As(err, &ce)
	msg := err.Error()
	switch core.KindOf(err) {
	case core.KindInvalid:
		msg += ". " + invalidHint(tool, msg)
	case core.KindNotFound:
		msg += ". Find ids with search_climate_data: each hit has catalog and id; pass them as catalog:id."
	case core.KindConflict:
		cands := make([]string, 0)
		if ce != nil {
			for _, c := range ce.Candidates {
				cands = append(cands, string(c))
			}
		}
		msg += ". Call " + tool + " again with one of these prefixed ids (candidate catalogs: " + strings.Join(cands, ", ") + ")."
	case core.KindLoading:
		// A start, not an incident: the message names what is loading.
		msg += ". The service has just started and answers once its index is loaded: call " + tool + " again in a few seconds."
	case core.KindUnavailable:
		s.d.Log.Error("mcp tool failed", zap.String("tool", tool), zap.String("request_id", core.RequestID(ctx)), zap.Error(err))
		msg = "the service cannot answer right now (" + msg + "); try again in a moment."
	default:
		s.d.Log.Error("mcp tool failed", zap.String("tool", tool), zap.String("request_id", core.RequestID(ctx)), zap.Error(err))
		msg = "internal error; the incident is logged. Try again; if it persists the service operator has to look at it."
	}
	return mcp.NewToolResultError(tool + ": " + msg)
}

func invalidHint(tool, msg string) string {
	if strings.HasPrefix(msg, "unknown argument") {
		return "Call again without it."
	}
	switch tool {
	case ToolSearch:
		switch {
		case strings.HasPrefix(msg, "sort="):
			return "Call again with unit set to one of the units named above (values are per declared unit), or without sort."
		case strings.HasPrefix(msg, "unknown category"), strings.HasPrefix(msg, "unknown unit"):
			return "Call again with one of the values named above, or without the filter; facets [\"category\", \"unit\"] lists those of a search."
		}
		return "Correct the arguments and call again: query (required, at most 256 characters), lang sv or en, databases from national, dkbr, br25, limit 1 to 50, offset 0 to 1000, " +
			"sort a1a3, a1a3_conservative, a4 or a5_1 (leading - for descending), facets from category, unit, catalog, <impact>_min/<impact>_max numbers, highlight true or false."
	case ToolDetails:
		return "Correct the arguments and call again: id as catalog:id (e.g. national:6000000000) or a bare id, lang sv or en."
	}
	switch {
	case strings.HasPrefix(msg, "unit "):
		return "Call again with a unit both sides can be restated in (the units each side allows are named above), or omit unit to let the service pick a shared one."
	case strings.Contains(msg, "does not publish") || strings.Contains(msg, "publishes"):
		return "Call again with another impact; typical is published for every product."
	}
	return "Correct the arguments and call again: a and b as catalog:id or bare ids, impact typical, conservative, a4 or a5_1, lang sv or en."
}

// notify sends a log message to the client when it asked for that level;
// clients that did not, or transports without a session, get nothing.
func (s *Server) notify(ctx context.Context, level mcp.LoggingLevel, msg string) {
	_ = s.mcp.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, Name, msg))
}
