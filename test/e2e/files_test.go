package e2e

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// multipartBody builds a form with an optional file and fields.
func multipartBody(t *testing.T, filename string, data []byte, fields map[string]string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if data != nil {
		fw, err := w.CreateFormFile("file", filename)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	for k, v := range fields {
		w.WriteField(k, v)
	}
	w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func (e *env) postForm(path, filename string, data []byte, fields map[string]string) response {
	e.t.Helper()
	body, ct := multipartBody(e.t, filename, data, fields)
	return e.do(http.MethodPost, path, body, map[string]string{"Content-Type": ct})
}

func TestDanishCatalogFromTheRealFiles(t *testing.T) {
	e := newEnv(t, nil)
	br25 := shareddata.Read(t, "data", "dkbr", "br25-tabel7-2025.xlsx")
	r := e.postForm("/admin/ingest/preview", "br25-tabel7-2025.xlsx", br25, nil)
	var p core.IngestPreview
	r.json(t, &p)
	if r.Status != 200 || p.PreviewID == "" || p.Format != "xlsx" || p.Rows != 507 || len(p.Headers) != 14 || len(p.Sample) == 0 || len(p.Schema) < 20 {
		t.Fatalf("preview: %d %.600s", r.Status, r.Body)
	}
	if p.Sample[0][0] != "#B1318" || p.SuggestedMap["id"] != "Sorterings ID" || p.SuggestedMap["a1a3"] != "Global Opvarmning, modul A1-A3" {
		t.Fatalf("sample/suggested map: %v %v", p.Sample[0], p.SuggestedMap)
	}
	fields := map[string]string{"preview_id": p.PreviewID, "version": "BR25"}
	for k, v := range p.SuggestedMap {
		fields["map."+k] = v
	}

	// A dry run writes nothing.
	r = e.postForm("/admin/ingest/file?catalog=br25&dry_run=true", "", nil, fields)
	var res core.IngestResult
	r.json(t, &res)
	if r.Status != 200 || !res.DryRun || res.Upserted != 504 || len(res.Changes) != 504 || !res.Changes[0].New {
		t.Fatalf("dry run: %d %.400s", r.Status, r.Body)
	}
	if r := e.get("/api/resources/dkbr:%23B1318"); r.Status != 404 {
		t.Fatalf("a dry run stored data: %d", r.Status)
	}

	// The preview survives a restart (badger TTL).
	e.restart()
	r = e.postForm("/admin/ingest/file?catalog=br25", "", nil, fields)
	res = core.IngestResult{}
	r.json(t, &res)
	if r.Status != 200 || res.Catalog != core.DKBR || res.Origin != core.OriginFile || res.Version != "BR25" || res.Upserted != 504 || res.DryRun {
		t.Fatalf("apply: %d %.400s", r.Status, r.Body)
	}
	if n := len(e.Events.ofType(core.EventCatalogChanged)); n != 1 {
		t.Fatalf("file ingests publish catalog.changed like any other: %d", n)
	}
	var got core.Resource
	e.get("/api/resources/br25:%23B1318").json(t, &got)
	if got.Catalog != core.DKBR || got.NameDA != "Krydslamineret træ, CLT (Forbrænding EoL)" || got.A1A3 == nil || *got.A1A3 != -664 ||
		got.Unit != "m³" || got.Conversions["kg/m³"] != 470 || got.Version != "BR25" || got.Origin != "" {
		t.Fatalf("BR25 row: %+v", got)
	}
	if r := e.get("/api/resources/dkbr:%23B1318/origin"); r.Status != 404 {
		t.Fatalf("dkbr origin: %d", r.Status)
	}
	s := doSearch(t, e, "q="+q("krydslamineret træ")+"&databases=dkbr")
	if len(s.Results) == 0 || s.Results[0].Catalog != core.DKBR {
		t.Fatalf("Danish search: %+v", s.Results)
	}

	// The BR18 CSV over it: a dry run names the fields that change.
	br18 := shareddata.Read(t, "data", "dkbr", "br18-tabel7-201222.csv")
	r = e.postForm("/admin/ingest/preview", "br18.csv", br18, nil)
	var p18 core.IngestPreview
	r.json(t, &p18)
	if r.Status != 200 || p18.Format != "csv" || p18.Rows != 465 || p18.Delimiter != "," {
		t.Fatalf("BR18 preview: %d %.300s", r.Status, r.Body)
	}
	f18 := map[string]string{"version": "BR18"}
	for k, v := range p18.SuggestedMap {
		f18["map."+k] = v
	}
	r = e.postForm("/admin/ingest/file?catalog=dkbr&dry_run=true", "br18.csv", br18, f18)
	r.json(t, &res)
	if r.Status != 200 || !res.DryRun || res.Upserted == 0 {
		t.Fatalf("BR18 dry run: %d %.300s", r.Status, r.Body)
	}
}

func TestBadFilesAreRefusedWhole(t *testing.T) {
	e := newEnv(t, nil)
	csv := []byte("id;name;gwp\n#D1;Beton;0,12\n#D2;Tegl;abc\n;Uden id;1\n")
	fields := map[string]string{"map.id": "id", "map.name": "name", "map.a1a3": "gwp", "version": "BR25"}
	r := e.postForm("/admin/ingest/file?catalog=dkbr", "bad.csv", csv, fields)
	var body struct {
		Error    string             `json:"error"`
		Problems []core.FileProblem `json:"problems"`
	}
	r.json(t, &body)
	if r.Status != 400 || len(body.Problems) < 2 || !contains(body.Error, "nothing stored") {
		t.Fatalf("bad rows: %d %s", r.Status, r.Body)
	}
	if r := e.get("/api/resources/dkbr:%23D1"); r.Status != 404 {
		t.Fatalf("a refused file stored its good rows: %d", r.Status)
	}
	// Unknown header in the map.
	fields["map.a1a3"] = "GWP total"
	if r := e.postForm("/admin/ingest/file?catalog=dkbr", "bad.csv", csv, fields); r.Status != 400 || !contains(r.errMsg(t), "GWP total") {
		t.Fatalf("unknown header: %d %s", r.Status, r.Body)
	}
	// Expired or unknown preview.
	if r := e.postForm("/admin/ingest/file?catalog=dkbr", "", nil, map[string]string{"preview_id": "pv_00000000000000000000000000000000", "map.id": "id"}); r.Status != 404 {
		t.Fatalf("unknown preview: %d %s", r.Status, r.Body)
	}
	// Not a spreadsheet at all, an empty file, no file.
	for _, tc := range []struct {
		name string
		data []byte
	}{{"x.xlsx", []byte("PK\x03\x04 truncated")}, {"empty.csv", []byte{}}} {
		if r := e.postForm("/admin/ingest/preview", tc.name, tc.data, nil); r.Status != 400 {
			t.Fatalf("%s: %d %s", tc.name, r.Status, r.Body)
		}
	}
	if r := e.postForm("/admin/ingest/preview", "", nil, nil); r.Status != 400 {
		t.Fatalf("no file: %d", r.Status)
	}
	// Over the upload limit.
	small := newEnv(t, map[string]string{"SERVICE_MAX_UPLOAD": "1KiB"})
	if r := small.postForm("/admin/ingest/preview", "big.csv", bytes.Repeat([]byte("a,b\n"), 1000), nil); r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("upload limit: %d %s", r.Status, r.Body)
	}
	// Over the row limit: refused whole, and a file within it goes in.
	few := newEnv(t, map[string]string{"SERVICE_MAX_ROWS": "3"})
	rows := []byte("id;name;gwp\n#R1;Beton;0,12\n#R2;Tegl;0,2\n#R3;Træ;0,1\n")
	fields = map[string]string{"map.id": "id", "map.name": "name", "map.a1a3": "gwp", "version": "BR25"}
	if r := few.postForm("/admin/ingest/file?catalog=dkbr", "rows.csv", rows, fields); r.Status != http.StatusRequestEntityTooLarge || !contains(r.errMsg(t), "3 rows") {
		t.Fatalf("row limit: %d %s", r.Status, r.Body)
	}
	if r := few.get("/api/resources/dkbr:%23R1"); r.Status != 404 {
		t.Fatalf("a file over the row limit stored its rows: %d", r.Status)
	}
	if r := few.postForm("/admin/ingest/file?catalog=dkbr", "rows.csv", rows[:bytes.LastIndex(rows[:len(rows)-1], []byte("\n"))+1], fields); r.Status != 200 {
		t.Fatalf("within the row limit: %d %s", r.Status, r.Body)
	}
}
