package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// TestDanishHitDetailsCanBeFollowed: over the real BR25 workbook, a search
// hit's details path is requested as it is, over REST and as the id of the
// MCP tool, and gives the same resource; asked in English, the Tabel 7 #G
// row shows its Danish name and says so, and its German name stays German.
func TestDanishHitDetailsCanBeFollowed(t *testing.T) {
	e := newEnv(t, nil)
	loadBR25(t, e)

	s := doSearch(t, e, "q="+q("Teppichfliesen")+"&databases=dkbr&lang=en")
	if len(s.Results) == 0 {
		t.Fatal("Teppichfliesen (a German name) finds nothing")
	}
	h := s.Results[0]
	if h.ID != "#G0008" || h.Details != "/api/resources/dkbr:%23G0008" {
		t.Fatalf("first hit %s, details %q", h.Ref(), h.Details)
	}
	if h.NameEN != "" || !strings.Contains(h.NameDE, "teppichfliesen") || h.Name != h.NameDA || h.Name == "" || h.NameLang != "da" {
		t.Fatalf("names of #G0008 in English: name %q (%s), en %q, de %q, da %q", h.Name, h.NameLang, h.NameEN, h.NameDE, h.NameDA)
	}

	r := e.get(h.Details + "?lang=en")
	var got core.Resource
	r.json(t, &got)
	if r.Status != 200 || got.Ref() != h.Ref() || got.NameDA != h.NameDA || got.NameDE != h.NameDE || got.NameLang != "da" || got.A1A3 == nil || *got.A1A3 != *h.A1A3 {
		t.Fatalf("GET %s: %d %+v", h.Details, r.Status, got)
	}

	// The console's page of the hit: the heading in Danish, marked as
	// Danish, and the German name as German.
	page := newBrowser(t, e).get("/resources/" + strings.TrimPrefix(h.Details, "/api/resources/") + "?lang=en")
	if page.Status != 200 || !strings.Contains(page.Body, `<h1 lang="da">Tæppeflise</h1>`) ||
		!strings.Contains(page.Body, `<dt>name_de</dt><dd lang="de">`+h.NameDE+`</dd>`) {
		t.Fatalf("console page: %d %.3000s", page.Status, page.Body)
	}

	cli, err := client.NewStreamableHttpClient(e.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cli.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e", Version: "1"}
	if _, err := cli.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "get_resource_details"
	req.Params.Arguments = map[string]any{"id": h.Details, "lang": "en"}
	res, err := cli.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("get_resource_details with the details path: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var viaMCP core.Resource
	if err := json.Unmarshal(b, &viaMCP); err != nil || viaMCP.Ref() != h.Ref() || viaMCP.NameLang != "da" {
		t.Fatalf("MCP resource %s: %v", b, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			text += tc.Text
		}
	}
	if !strings.Contains(text, "Name in Danish: no English name is published.") || !strings.Contains(text, "(German: "+h.NameDE+")") {
		t.Fatalf("MCP text:\n%s", text)
	}
}

// TestReingestMovesGermanOutOfNameEN: data loaded the old way (Navn DE/ENG
// as name_en, German shown as English) is corrected by the next ingest of
// the same file with the suggested map: the content hash of every row with
// a German name changes, so exactly those rows are upserted.
func TestReingestMovesGermanOutOfNameEN(t *testing.T) {
	e := newEnv(t, nil)
	br25 := shareddata.Read(t, "data", "dkbr", "br25-tabel7-2025.xlsx")
	var pv core.IngestPreview
	e.postForm("/admin/ingest/preview", "br25-tabel7-2025.xlsx", br25, nil).json(t, &pv)
	if pv.SuggestedMap["name_de_en"] != "Navn DE/ENG" || pv.SuggestedMap["name_en"] != "" {
		t.Fatalf("suggested map %v", pv.SuggestedMap)
	}
	apply := func(m map[string]string) core.IngestResult {
		t.Helper()
		fields := map[string]string{"preview_id": pv.PreviewID, "version": "BR25"}
		for k, v := range m {
			fields["map."+k] = v
		}
		var res core.IngestResult
		r := e.postForm("/admin/ingest/file?catalog=dkbr", "", nil, fields)
		r.json(t, &res)
		if r.Status != 200 {
			t.Fatalf("apply: %d %s", r.Status, r.Body)
		}
		return res
	}
	old := map[string]string{}
	for k, v := range pv.SuggestedMap {
		old[k] = v
	}
	delete(old, "name_de_en")
	old["name_en"] = "Navn DE/ENG"
	if res := apply(old); res.Upserted != 504 {
		t.Fatalf("old-style load: %+v", res)
	}
	var before core.Resource
	e.get("/api/resources/dkbr:%23G0740?lang=en").json(t, &before)
	if before.NameEN != "Betonrohr, bewehrt" || before.Name != "Betonrohr, bewehrt" {
		t.Fatalf("the old-style load should show German as English: %+v", before)
	}

	res := apply(pv.SuggestedMap)
	if res.Upserted != 319 || res.Unchanged != 185 {
		t.Fatalf("re-ingest: upserted %d unchanged %d, want the 319 rows with a German name upserted", res.Upserted, res.Unchanged)
	}
	changed := strings.Join(res.Changed, " ")
	if !strings.Contains(changed, "dkbr:#G0740") || strings.Contains(changed, "dkbr:#B1637") {
		t.Fatalf("changed ids: %v", res.Changed)
	}
	var after core.Resource
	e.get("/api/resources/dkbr:%23G0740?lang=en").json(t, &after)
	if after.NameEN != "" || after.NameDE != "Betonrohr, bewehrt" || after.Name != "Betonrør, armeret" || after.NameLang != "da" {
		t.Fatalf("after the re-ingest: %+v", after)
	}
	var ahu core.Resource
	e.get("/api/resources/dkbr:%23B1637?lang=en").json(t, &ahu)
	if ahu.NameEN != "Small AHU’s with airflow 3000 m3/hr" || ahu.NameLang != "en" || ahu.NameDE != "" {
		t.Fatalf("an English Navn DE/ENG stays English: %+v", ahu)
	}
}
