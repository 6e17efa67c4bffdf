package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// Ids the document names on purpose although the demo snapshot lacks them.
var (
	// The 404 examples' id: it must stay missing.
	missingID = "6000009999"
	// The 409 example's bare id, held by two catalogs; only a store with
	// both catalogs loaded can show that.
	ambiguousID = "1234"
)

// TestExampleIDsExistInTheDemoSnapshot: every national id the document
// names (examples, descriptions) is a resource of the demo snapshot, so a
// reader who tries it on a fresh offline start finds it.
func TestExampleIDsExistInTheDemoSnapshot(t *testing.T) {
	b, err := os.ReadFile(docPath())
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t)
	prefixed := regexp.MustCompile(`national:([0-9]+)`)
	bare := regexp.MustCompile(`\b6[01][0-9]{8}\b`)
	seen := map[string]bool{}
	for _, m := range prefixed.FindAllStringSubmatch(string(b), -1) {
		seen[m[1]] = true
	}
	for _, id := range bare.FindAllString(string(b), -1) {
		seen[id] = true
	}
	if len(seen) < 5 {
		t.Fatalf("found only %d ids in the document; the pattern is broken", len(seen))
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		_, ok := snap[id]
		switch id {
		case missingID:
			if ok {
				t.Errorf("national:%s is in the demo snapshot; the 404 examples need an id that is not", id)
			}
		case ambiguousID:
		default:
			if !ok {
				t.Errorf("the document names national:%s, which the demo snapshot does not hold", id)
			}
		}
	}
	t.Logf("ids named by the document: %v", ids)
}

// tryItOut builds the request Swagger UI's "Try it out" sends for op
// before the user types anything: every parameter with an example or a
// default, path parameters encoded with encodeURIComponent.
func tryItOut(path string, op *openapi3.Operation) (string, error) {
	q := map[string]string{}
	for _, ref := range op.Parameters {
		p := ref.Value
		var v any
		switch {
		case p.Example != nil:
			v = p.Example
		case len(p.Examples) > 0:
			return "", fmt.Errorf("parameter %s: named examples; the first would be sent", p.Name)
		case p.Schema != nil && p.Schema.Value.Example != nil:
			v = p.Schema.Value.Example
		case p.Schema != nil && p.Schema.Value.Default != nil:
			v = p.Schema.Value.Default
		default:
			if p.Required {
				return "", fmt.Errorf("required parameter %s has no example: Try it out starts empty", p.Name)
			}
			continue
		}
		s := fmt.Sprint(v)
		if p.In == "path" {
			path = strings.ReplaceAll(path, "{"+p.Name+"}", strings.ReplaceAll(url.QueryEscape(s), "+", "%20"))
			continue
		}
		q[p.Name] = s
	}
	if len(q) > 0 {
		path += "?" + escapeQuery(q)
	}
	return path, nil
}

// TestTryItOutOnAFreshOfflineStart: every read operation, sent as "Try it
// out" pre-fills it, answers on a fresh start without the publisher (the
// demo snapshot) with a useful answer, not an error or an empty list.
func TestTryItOutOnAFreshOfflineStart(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromFile(docPath())
	if err != nil {
		t.Fatal(err)
	}
	p := startOffline(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var tried []string
	for _, path := range doc.Paths.InMatchingOrder() {
		op := doc.Paths.Value(path).Get
		if op == nil || !strings.HasPrefix(path, "/api/") {
			continue
		}
		tried = append(tried, op.OperationID)
		t.Run(op.OperationID, func(t *testing.T) {
			target, err := tryItOut(path, op)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+target, nil)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			t.Logf("GET %s -> %d", target, resp.StatusCode)
			if op.OperationID == "getResourceOrigin" {
				if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "https://klimatdatabasen.boverket.se/") {
					t.Errorf("GET %s: %d Location %q, want 302 to the product sheet", target, resp.StatusCode, resp.Header.Get("Location"))
				}
				return
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d %s", target, resp.StatusCode, body)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("GET %s: %v", target, err)
			}
			// The list a user looks at must not be empty.
			field := map[string]string{
				"searchResources": "results", "listResources": "resources",
				"findAlternatives": "alternatives", "listCatalogs": "catalogs",
			}[op.OperationID]
			if field != "" {
				var list []json.RawMessage
				if err := json.Unmarshal(m[field], &list); err != nil || len(list) == 0 {
					t.Errorf("GET %s: %s is empty: %.300s", target, field, body)
				}
			}
			if op.OperationID == "compareResources" && string(m["incomparable"]) != "false" {
				t.Errorf("GET %s: incomparable: %.300s", target, body)
			}
		})
	}
	for _, want := range []string{"searchResources", "listResources", "compareResources", "getResource", "getResourceOrigin", "findAlternatives", "listCatalogs"} {
		if !slices.Contains(tried, want) {
			t.Errorf("operation %s was not tried", want)
		}
	}
}
