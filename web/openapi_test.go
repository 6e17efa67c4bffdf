package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/climatesearch/climatesearch/core"
)

func loadDoc(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPI())
	if err != nil {
		t.Fatalf("load openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	return doc
}

func TestOpenAPIDocument(t *testing.T) {
	doc := loadDoc(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	if doc.Info == nil {
		t.Fatal("info missing")
	}
	if doc.Info.Version != "0.1.0" {
		t.Errorf("info.version = %q, want 0.1.0", doc.Info.Version)
	}
	if doc.Info.Title != "climatesearch" {
		t.Errorf("info.title = %q, want climatesearch", doc.Info.Title)
	}
	for _, want := range []string{"Boverket", "Boverket Klimatdatabas", "Social- og Boligstyrelsen", "not affiliated"} {
		if !strings.Contains(doc.Info.Description, want) {
			t.Errorf("info.description does not mention %q", want)
		}
	}
}

func TestOpenAPIOperations(t *testing.T) {
	doc := loadDoc(t)
	tests := []struct {
		path, method string
		codes        []string
		admin        bool
	}{
		{"/healthz", "GET", []string{"200", "503", "500"}, false},
		{"/readyz", "GET", []string{"200", "503", "500"}, false},
		{"/openapi.yaml", "GET", []string{"200", "304", "500"}, false},
		{"/docs", "GET", []string{"200", "500"}, false},
		{"/api/search", "GET", []string{"200", "304", "400", "401", "402", "429", "503", "500"}, false},
		{"/api/resources", "GET", []string{"200", "304", "400", "401", "402", "429", "503", "500"}, false},
		{"/api/resources/{id}", "GET", []string{"200", "304", "400", "401", "402", "404", "409", "429", "503", "500"}, false},
		{"/api/resources/{id}/origin", "GET", []string{"302", "400", "401", "402", "404", "409", "429", "503", "500"}, false},
		{"/api/resources/compare", "GET", []string{"200", "304", "400", "401", "402", "404", "409", "429", "503", "500"}, false},
		{"/api/resources/{id}/alternatives", "GET", []string{"200", "304", "400", "401", "402", "404", "409", "429", "503", "500"}, false},
		{"/api/catalogs", "GET", []string{"200", "400", "401", "402", "429", "503", "500"}, false},
		{"/admin/ingest/run", "POST", []string{"200", "400", "401", "409", "502", "503", "500"}, true},
		{"/admin/resources", "POST", []string{"200", "400", "401", "413", "415", "503", "500"}, true},
		{"/admin/ingest/preview", "POST", []string{"200", "400", "401", "413", "415", "503", "500"}, true},
		{"/admin/ingest/file", "POST", []string{"200", "400", "401", "404", "413", "415", "503", "500"}, true},
		{"/admin/webhooks", "GET", []string{"200", "400", "401", "503", "500"}, true},
		{"/admin/webhooks", "POST", []string{"201", "400", "401", "409", "413", "503", "500"}, true},
		{"/admin/webhooks/{id}", "GET", []string{"200", "400", "401", "404", "503", "500"}, true},
		{"/admin/webhooks/{id}", "PATCH", []string{"200", "400", "401", "404", "409", "413", "503", "500"}, true},
		{"/admin/webhooks/{id}", "DELETE", []string{"204", "400", "401", "404", "409", "503", "500"}, true},
		{"/admin/webhooks/{id}/test", "POST", []string{"200", "400", "401", "404", "503", "500"}, true},
		{"/admin/webhooks/{id}/deliveries", "GET", []string{"200", "400", "401", "404", "503", "500"}, true},
		{"/admin/events", "GET", []string{"200", "400", "401", "503", "500"}, true},
		{"/admin/backup", "GET", []string{"200", "400", "401", "500", "501"}, true},
	}
	documented := map[string]bool{}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			documented[tc.method+" "+tc.path] = true
			item := doc.Paths.Find(tc.path)
			if item == nil {
				t.Fatalf("path %s missing", tc.path)
			}
			op := item.GetOperation(tc.method)
			if op == nil {
				t.Fatalf("%s %s missing", tc.method, tc.path)
			}
			if op.OperationID == "" || op.Summary == "" {
				t.Errorf("operationId or summary missing")
			}
			var got []string
			for code := range op.Responses.Map() {
				got = append(got, code)
			}
			sort.Strings(got)
			want := slices.Clone(tc.codes)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("status codes = %v, want %v", got, want)
			}
			for code, ref := range op.Responses.Map() {
				resp := ref.Value
				if resp == nil || resp.Description == nil || *resp.Description == "" {
					t.Errorf("%s: no description", code)
					continue
				}
				if code == "302" || code == "201" {
					loc := resp.Headers["Location"]
					if loc == nil || loc.Value == nil || !loc.Value.Required {
						t.Errorf("%s: required Location header missing", code)
					}
				}
				if code == "302" || code == "204" || code == "304" {
					if len(resp.Content) != 0 {
						t.Errorf("%s: documents a body", code)
					}
					continue
				}
				if len(resp.Content) == 0 {
					t.Errorf("%s: no content", code)
				}
				for mt, c := range resp.Content {
					if c.Schema == nil || c.Schema.Value == nil {
						t.Errorf("%s %s: no schema", code, mt)
					}
				}
				if code == "402" {
					// The Payment scheme's challenge: an RFC 9457 problem.
					c := resp.Content.Get("application/problem+json")
					if c == nil || c.Schema == nil || c.Schema.Ref != "#/components/schemas/Problem" || resp.Headers["WWW-Authenticate"] == nil {
						t.Errorf("402: want an application/problem+json Problem body and a WWW-Authenticate header")
					}
					continue
				}
				if strings.HasPrefix(code, "4") || strings.HasPrefix(code, "5") {
					c := resp.Content.Get("application/json")
					if c == nil || c.Schema == nil {
						t.Errorf("%s: no application/json body", code)
						continue
					}
					want := "#/components/schemas/Error"
					switch {
					case code == "500":
						// The shared answer of the recovery middleware, on
						// every route.
						if ref.Ref != "#/components/responses/InternalError" {
							t.Errorf("500: $ref %q, want the shared InternalError response", ref.Ref)
						}
					case tc.path == "/healthz":
						want = "#/components/schemas/Health"
					case tc.path == "/readyz":
						want = "#/components/schemas/Readiness"
					}
					if c.Schema.Ref != want {
						t.Errorf("%s: schema %q, want %q", code, c.Schema.Ref, want)
					}
					// A 503 may mean the index is still loading after a
					// start (every read and ingest, and /readyz): the
					// answer says when to ask again.
					if code == "503" && tc.path != "/healthz" {
						if h := resp.Headers["Retry-After"]; h == nil || h.Value == nil || h.Value.Schema == nil || !h.Value.Schema.Value.Type.Is("integer") {
							t.Errorf("503: Retry-After header not documented")
						}
					}
				}
			}
			if tc.admin {
				if op.Security == nil || len(*op.Security) != 2 {
					t.Fatalf("admin operation must have security [{}, {adminToken: []}], got %v", op.Security)
				}
				sec := *op.Security
				if len(sec[0]) != 0 {
					t.Errorf("first security requirement must be empty (token optional), got %v", sec[0])
				}
				if _, ok := sec[1]["adminToken"]; !ok {
					t.Errorf("second security requirement must be adminToken, got %v", sec[1])
				}
			} else if strings.HasPrefix(tc.path, "/api/") {
				// Open in the self-hosted build; a key or a payment in the hosted one.
				if op.Security == nil || len(*op.Security) != 3 || len((*op.Security)[0]) != 0 {
					t.Fatalf("/api operation must have security [{}, {customerKey: []}, {payment: []}], got %v", op.Security)
				}
				if _, ok := (*op.Security)[1]["customerKey"]; !ok {
					t.Errorf("second security requirement must be customerKey")
				}
				if _, ok := (*op.Security)[2]["payment"]; !ok {
					t.Errorf("third security requirement must be payment")
				}
			} else if op.Security != nil && len(*op.Security) > 0 {
				t.Errorf("public operation has security %v", *op.Security)
			}
		})
	}
	// No operation beyond the table, so the table stays the complete list.
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !documented[method+" "+path] {
				t.Errorf("operation %s %s is not in the test table", method, path)
			}
		}
	}

	// The fixed segment must be declared next to the template it could be
	// confused with.
	if doc.Paths.Value("/api/resources/compare") == nil || doc.Paths.Value("/api/resources/{id}") == nil {
		t.Error("both /api/resources/compare and /api/resources/{id} must be declared")
	}
}

func TestOpenAPIParameters(t *testing.T) {
	doc := loadDoc(t)
	param := func(path, method, name string) *openapi3.Parameter {
		t.Helper()
		op := doc.Paths.Find(path).GetOperation(method)
		p := op.Parameters.GetByInAndName("query", name)
		if p == nil {
			p = op.Parameters.GetByInAndName("path", name)
		}
		if p == nil {
			t.Fatalf("%s %s: parameter %s missing", method, path, name)
		}
		return p
	}
	enum := func(p *openapi3.Parameter) []string {
		var out []string
		for _, v := range p.Schema.Value.Enum {
			out = append(out, v.(string))
		}
		return out
	}

	q := param("/api/search", "GET", "q")
	if !q.Required || q.Schema.Value.MinLength != 1 || q.Schema.Value.MaxLength == nil || *q.Schema.Value.MaxLength != core.MaxQueryLen {
		t.Errorf("q: want required, 1..%d characters", core.MaxQueryLen)
	}
	for _, path := range []string{"/api/search", "/api/resources", "/api/resources/{id}", "/api/resources/compare"} {
		lang := param(path, "GET", "lang")
		if !slices.Equal(enum(lang), []string{"sv", "en"}) || lang.Schema.Value.Default != "sv" {
			t.Errorf("%s lang: enum %v default %v", path, enum(lang), lang.Schema.Value.Default)
		}
	}
	for _, path := range []string{"/api/search", "/api/resources"} {
		if db := param(path, "GET", "databases"); db.Required || db.Schema.Value.Type.Is("string") == false {
			t.Errorf("%s databases: want optional string", path)
		}
	}
	for _, name := range []string{"vector", "rerank"} {
		p := param("/api/search", "GET", name)
		if !p.Schema.Value.Type.Is("boolean") || p.Schema.Value.Default != false {
			t.Errorf("%s: want boolean default false", name)
		}
	}
	limit := param("/api/search", "GET", "limit")
	if s := limit.Schema.Value; !s.Type.Is("integer") || s.Min == nil || *s.Min != 1 || s.Max == nil || *s.Max != core.MaxLimit || s.Default != float64(core.DefaultLimit) {
		t.Errorf("limit: want integer 1..%d default %d", core.MaxLimit, core.DefaultLimit)
	}
	for _, name := range []string{"a", "b"} {
		if !param("/api/resources/compare", "GET", name).Required {
			t.Errorf("compare %s must be required", name)
		}
	}
	if param("/api/resources/compare", "GET", "unit").Required {
		t.Error("compare unit must be optional")
	}
	impact := param("/api/resources/compare", "GET", "impact")
	if want := []string{"typical", "conservative", "a4", "a5_1"}; !slices.Equal(enum(impact), want) || impact.Schema.Value.Default != "typical" {
		t.Errorf("impact: enum %v default %v", enum(impact), impact.Schema.Value.Default)
	}
	for _, imp := range enum(impact) {
		if _, err := core.ParseImpact(imp); err != nil {
			t.Errorf("impact %q not accepted by core: %v", imp, err)
		}
	}
	if !param("/admin/ingest/run", "POST", "catalog").Required {
		t.Error("ingest catalog must be required")
	}
	for _, path := range []string{"/api/resources/{id}", "/api/resources/{id}/origin"} {
		if !param(path, "GET", "id").Required {
			t.Errorf("%s: id must be a required path parameter", path)
		}
	}
	body := doc.Paths.Find("/admin/resources").Post.RequestBody
	if body == nil || !body.Value.Required || body.Value.Content.Get("application/json") == nil ||
		body.Value.Content.Get("application/json").Schema.Ref != "#/components/schemas/ResourceBatch" {
		t.Error("/admin/resources: want required application/json ResourceBatch body")
	}
	dl := param("/admin/webhooks/{id}/deliveries", "GET", "limit")
	if s := dl.Schema.Value; !s.Type.Is("integer") || s.Min == nil || *s.Min != 1 || s.Max == nil || *s.Max != core.MaxDeliveryLog || s.Default != float64(core.DefaultDeliveryList) {
		t.Errorf("deliveries limit: want integer 1..%d default %d", core.MaxDeliveryLog, core.DefaultDeliveryList)
	}
	for _, path := range []string{"/admin/webhooks/{id}", "/admin/webhooks/{id}/test", "/admin/webhooks/{id}/deliveries"} {
		for method := range doc.Paths.Find(path).Operations() {
			if !param(path, method, "id").Required {
				t.Errorf("%s %s: id must be a required path parameter", method, path)
			}
		}
	}
	sec := doc.Components.SecuritySchemes["adminToken"]
	if sec == nil || sec.Value.Type != "apiKey" || sec.Value.In != "header" || sec.Value.Name != "X-Admin-Token" {
		t.Error("security scheme adminToken: want apiKey in header X-Admin-Token")
	}
}

// jsonFields returns the JSON names of a struct's fields (embedded structs
// flattened) and which of them are always present (no omitempty/omitzero).
func jsonFields(typ reflect.Type) (names []string, always map[string]bool) {
	always = map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			n, a := jsonFields(f.Type)
			names = append(names, n...)
			for k, v := range a {
				always[k] = v
			}
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
		always[name] = !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero")
	}
	return names, always
}

// schemaFields collects the properties and required names of a schema,
// following allOf.
func schemaFields(s *openapi3.Schema) (props map[string]*openapi3.SchemaRef, required []string) {
	props = map[string]*openapi3.SchemaRef{}
	for _, part := range s.AllOf {
		p, r := schemaFields(part.Value)
		for k, v := range p {
			props[k] = v
		}
		required = append(required, r...)
	}
	for k, v := range s.Properties {
		props[k] = v
	}
	return props, append(required, s.Required...)
}

// The JSON tags in core are the truth for field names: every field the
// server writes is documented, nothing else is, and every required property
// is always written.
func TestSchemasMatchCore(t *testing.T) {
	doc := loadDoc(t)
	tests := []struct {
		schema string
		typ    any
	}{
		{"Resource", core.Resource{}},
		{"Transport", core.Transport{}},
		{"Hit", core.Hit{}},
		{"SearchResponse", core.SearchResponse{}},
		{"ListResponse", core.ListResponse{}},
		{"Comparison", core.Comparison{}},
		{"Alternatives", core.Alternatives{}},
		{"Alternative", core.Alternative{}},
		{"CatalogList", core.CatalogList{}},
		{"CatalogSummary", core.CatalogSummary{}},
		{"IngestResult", core.IngestResult{}},
		{"ResourceBatch", core.ResourceBatch{}},
		{"BatchItem", core.BatchItem{}},
		{"Health", core.Health{}},
		{"Readiness", core.Readiness{}},
		{"CatalogLoad", core.CatalogLoad{}},
		{"WebhookEvent", core.Event{}},
		{"WebhookEventCounts", core.EventCounts{}},
		{"WebhookDestination", core.Destination{}},
		{"WebhookDestinationInput", core.DestinationInput{}},
		{"WebhookDeliveryAttempt", core.DeliveryAttempt{}},
		{"WebhookDeliveryLog", core.DeliveryLog{}},
		{"WebhookEventRecord", core.EventRecord{}},
		{"WebhookEventDelivery", core.EventDelivery{}},
		{"WebhookEventList", struct {
			Events []core.EventRecord `json:"events"`
		}{}},
		// The handler's list wrapper, which has no type of its own in core.
		{"WebhookDestinationList", struct {
			Destinations []core.Destination `json:"destinations"`
		}{}},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			ref := doc.Components.Schemas[tc.schema]
			if ref == nil || ref.Value == nil {
				t.Fatalf("schema %s missing", tc.schema)
			}
			props, required := schemaFields(ref.Value)
			names, always := jsonFields(reflect.TypeOf(tc.typ))
			for _, n := range names {
				p, ok := props[n]
				if !ok {
					t.Errorf("field %q of %T is not documented", n, tc.typ)
					continue
				}
				if p.Ref == "" && (p.Value == nil || p.Value.Description == "") {
					t.Errorf("property %q has no description", n)
				}
			}
			for n := range props {
				if !slices.Contains(names, n) {
					t.Errorf("property %q is not a field of %T", n, tc.typ)
				}
			}
			for _, n := range required {
				if !always[n] {
					t.Errorf("property %q is required but %T may omit it", n, tc.typ)
				}
			}
		})
	}

	// Numbers are doubles everywhere (a client generator makes a number
	// without format a float32), and nothing is nullable but the times
	// core writes as null (pointers without omitempty).
	var walk func(name string, s *openapi3.SchemaRef, seen map[*openapi3.Schema]bool)
	walk = func(name string, s *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
		if s == nil || s.Value == nil || seen[s.Value] {
			return
		}
		seen[s.Value] = true
		v := s.Value
		if v.Type.Is("number") && v.Format != "double" {
			t.Errorf("%s: number without format double", name)
		}
		if v.Nullable && !strings.HasSuffix(name, ".last_ingest") && !strings.HasSuffix(name, ".next_ingest") {
			t.Errorf("%s: nullable is not used in this document", name)
		}
		for k, p := range v.Properties {
			walk(name+"."+k, p, seen)
		}
		for _, p := range v.AllOf {
			walk(name, p, seen)
		}
		walk(name+"[]", v.Items, seen)
		if v.AdditionalProperties.Schema != nil {
			walk(name+"{}", v.AdditionalProperties.Schema, seen)
		}
	}
	for name, s := range doc.Components.Schemas {
		walk(name, s, map[*openapi3.Schema]bool{})
	}

	comparison := doc.Components.Schemas["Comparison"].Value
	want := []string{"source", "a", "b", "unit", "impact", "value_a", "value_b", "delta_a1a3", "lower_impact_id", "incomparable"}
	for _, n := range want {
		if !slices.Contains(comparison.Required, n) {
			t.Errorf("Comparison: %q must be required", n)
		}
	}
	resource := doc.Components.Schemas["Resource"].Value
	if got := slices.Sorted(slices.Values(resource.Required)); !slices.Equal(got, []string{"catalog", "id", "source"}) {
		t.Errorf("Resource required = %v, want id, catalog, source", got)
	}
	errSchema := doc.Components.Schemas["Error"].Value
	if !slices.Equal(errSchema.Required, []string{"error"}) || errSchema.Properties["catalogs"] == nil {
		t.Errorf("Error: want required error and optional catalogs")
	}
}

var externalURL = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+`)

func TestSwaggerUIOffline(t *testing.T) {
	ui := SwaggerUI()
	index, err := fs.ReadFile(ui, "index.html")
	if err != nil {
		t.Fatalf("index.html not at the top of SwaggerUI(): %v", err)
	}
	html := string(index)
	if m := regexp.MustCompile(`(?i)https?://`).FindString(html); m != "" {
		t.Errorf("index.html references an http(s) URL (%q); /docs must work offline", m)
	}
	if m := externalURL.FindString(html); m != "" {
		t.Errorf("index.html references another host (%q)", m)
	}
	for _, want := range []string{`href="/docs/swagger-ui.css"`, `src="/docs/swagger-ui-bundle.js"`, `url: "/openapi.yaml"`, `dom_id: "#swagger-ui"`, `validatorUrl: null`} {
		if !strings.Contains(html, want) {
			t.Errorf("index.html does not contain %s", want)
		}
	}
	for _, name := range []string{"swagger-ui.css", "swagger-ui-bundle.js", "LICENSE"} {
		info, err := fs.Stat(ui, name)
		if err != nil {
			t.Errorf("vendored %s missing: %v", name, err)
			continue
		}
		if info.Size() == 0 {
			t.Errorf("vendored %s is empty", name)
		}
	}
	// The vendored stylesheet must not pull fonts or images from other hosts.
	css, err := fs.ReadFile(ui, "swagger-ui.css")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`url\(\s*["']?([^"')]*)`).FindAllStringSubmatch(string(css), -1) {
		if !strings.HasPrefix(m[1], "data:") {
			t.Errorf("swagger-ui.css loads %q", m[1])
		}
	}
}

// The webhook schemas follow core's limits and enums, and the event body is
// reachable from x-webhooks (OpenAPI 3.0 has no webhooks section).
func TestOpenAPIWebhooks(t *testing.T) {
	doc := loadDoc(t)
	schema := func(name string) *openapi3.Schema {
		t.Helper()
		ref := doc.Components.Schemas[name]
		if ref == nil || ref.Value == nil {
			t.Fatalf("schema %s missing", name)
		}
		return ref.Value
	}
	enum := func(s *openapi3.Schema) []string {
		var out []string
		for _, v := range s.Enum {
			out = append(out, v.(string))
		}
		return out
	}
	var subscribable []string
	for _, e := range core.SubscribableEvents {
		subscribable = append(subscribable, string(e))
	}

	in := schema("WebhookDestinationInput").Properties
	if m := in["url"].Value.MaxLength; m == nil || *m != core.MaxWebhookURL {
		t.Errorf("input url maxLength = %v, want %d", m, core.MaxWebhookURL)
	}
	if m := in["description"].Value.MaxLength; m == nil || *m != core.MaxWebhookDescr {
		t.Errorf("input description maxLength = %v, want %d", m, core.MaxWebhookDescr)
	}
	if in["secret"].Value.Pattern != "^"+core.SecretPrefix {
		t.Errorf("input secret pattern = %q", in["secret"].Value.Pattern)
	}
	if got := enum(in["events"].Value.Items.Value); !slices.Equal(got, append(slices.Clone(subscribable), "*")) {
		t.Errorf("input events enum = %v", got)
	}
	if _, err := core.ParseEventTypes(enum(in["events"].Value.Items.Value)); err != nil {
		t.Errorf("input events not accepted by core: %v", err)
	}
	for _, k := range enum(in["kind"].Value) {
		if _, err := core.ParseWebhookKind(k); err != nil {
			t.Errorf("kind %q not accepted by core: %v", k, err)
		}
	}
	if got := enum(schema("WebhookDestination").Properties["events"].Value.Items.Value); !slices.Equal(got, subscribable) {
		t.Errorf("destination events enum = %v, want %v", got, subscribable)
	}
	all := append(slices.Clone(subscribable), string(core.EventWebhookTest))
	for _, p := range [][2]string{{"WebhookEvent", "type"}, {"WebhookDeliveryAttempt", "event_type"}} {
		if got := enum(schema(p[0]).Properties[p[1]].Value); !slices.Equal(got, all) {
			t.Errorf("%s.%s enum = %v, want %v", p[0], p[1], got, all)
		}
	}
	status := enum(schema("WebhookDeliveryAttempt").Properties["status"].Value)
	if want := []string{string(core.DeliveryDelivered), string(core.DeliveryRetrying), string(core.DeliveryFailed)}; !slices.Equal(status, want) {
		t.Errorf("attempt status enum = %v, want %v", status, want)
	}
	ev := schema("WebhookEvent")
	for _, want := range []string{"webhook-id", "webhook-timestamp", "webhook-signature", "X-Service-Signature", "whsec_", `{"text"`, `{"content"`} {
		if !strings.Contains(ev.Description, want) {
			t.Errorf("WebhookEvent description does not mention %s", want)
		}
	}
	if ex, ok := ev.Example.(map[string]any); !ok || ex["type"] != string(core.EventCatalogChanged) {
		t.Errorf("WebhookEvent example must be a catalog.changed event, got %v", ev.Example)
	}

	// POST requires url on top of the shared input schema.
	body := doc.Paths.Find("/admin/webhooks").Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	var required []string
	for _, part := range body.AllOf {
		required = append(required, part.Value.Required...)
	}
	if !slices.Contains(required, "url") {
		t.Error("POST /admin/webhooks must require url")
	}

	x, ok := doc.Extensions["x-webhooks"].(map[string]any)
	if !ok || !strings.Contains(fmt.Sprint(x), "#/components/schemas/WebhookEvent") {
		t.Errorf("x-webhooks must describe the WebhookEvent body, got %v", doc.Extensions["x-webhooks"])
	}
}

// TestOpenAPIJSONIsTheSameDocument: the JSON form (served as /openapi.json
// by the hosted build) holds every path of the YAML document.
func TestOpenAPIJSONIsTheSameDocument(t *testing.T) {
	doc, err := OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(doc)
	loaded, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	yml, err := openapi3.NewLoader().LoadFromData(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Paths.Map()) != len(yml.Paths.Map()) || loaded.Info.Version != yml.Info.Version {
		t.Fatalf("JSON form: %d paths, version %s; YAML: %d, %s", len(loaded.Paths.Map()), loaded.Info.Version, len(yml.Paths.Map()), yml.Info.Version)
	}
}

// TestOpenAPIForClientGenerators: what client generators and "Try it out"
// read beyond the operations: where to send requests, the default security,
// who to ask and on which terms, one unique operationId per operation, and
// no pre-filled value that narrows an answer without the user asking.
func TestOpenAPIForClientGenerators(t *testing.T) {
	doc := loadDoc(t)
	if len(doc.Servers) == 0 {
		t.Error("servers missing: generators and Swagger UI have no base URL")
	}
	for _, s := range doc.Servers {
		if s.URL == "" || s.Description == "" {
			t.Errorf("server %+v: want a url and a description", s)
		}
	}
	if doc.Security == nil || len(doc.Security) != 0 {
		t.Errorf("root security = %v, want an explicit empty list (public unless an operation says so)", doc.Security)
	}
	if doc.Info.License == nil || doc.Info.License.Name == "" {
		t.Error("info.license missing")
	}
	if doc.Info.Contact == nil || doc.Info.Contact.URL == "" {
		t.Error("info.contact with a url missing")
	}
	if doc.Components.Responses["InternalError"] == nil {
		t.Error("components.responses.InternalError missing")
	}
	ids := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s: no operationId", where)
			} else if other, dup := ids[op.OperationID]; dup {
				t.Errorf("%s: operationId %q already used by %s", where, op.OperationID, other)
			}
			ids[op.OperationID] = where
			if r := op.Responses.Value("500"); r == nil || r.Ref != "#/components/responses/InternalError" {
				t.Errorf("%s: no documented 500 (want $ref InternalError)", where)
			}
			for _, p := range op.Parameters {
				// A pre-filled databases (e.g. national) would silently
				// hide the other catalogs from whoever tries the operation.
				if p.Value.Name == "databases" && (p.Value.Example != nil || len(p.Value.Examples) > 0 || p.Value.Schema.Value.Default != nil) {
					t.Errorf("%s: databases has a pre-filled value; absent must mean every catalog", where)
				}
			}
		}
	}
	// The wrapper type a generator makes for an operation (oapi-codegen:
	// <OperationId>Response, <OperationId>Params) must not be a schema's name.
	for id := range ids {
		for _, suffix := range []string{"Response", "Params"} {
			name := strings.ToUpper(id[:1]) + id[1:] + suffix
			if doc.Components.Schemas[name] != nil {
				t.Errorf("schema %s collides with the generated wrapper of operation %s", name, id)
			}
		}
	}
}
