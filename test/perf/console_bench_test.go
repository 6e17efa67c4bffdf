package perf

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// BenchmarkConsolePages times the server side of each console page (the
// handler, the core calls behind it, template execution) over both real
// catalogs: the 235 national resources and the 504 rows of the BR25
// workbook. resp-bytes is what the page transfers (its stylesheet and script,
// 11 KB together, come once and are cached).
//
//	go test -run '^$' -bench ConsolePages -benchmem ./test/perf/
func BenchmarkConsolePages(b *testing.B) {
	h, stop := boot(b, upstream(b))
	defer stop()
	runIngest(b, h)
	preview := loadBR25(b, h)
	for _, c := range []struct{ name, target string }{
		{"query-empty", "/"},
		{"query-spanskiva", "/?q=sp%C3%A5nskiva"},
		{"query-betong-100", "/?q=betong&limit=100"},
		{"resource", "/resources/national:6000000000"},
		{"compare", "/compare?a=national:6000000000&b=national:6000000168&unit=m3"},
		{"data", "/data"},
		{"data-dkbr", "/data?chart=dkbr&catalog=dkbr"},
		{"ingest-preview", "/ingest?preview=" + preview},
		{"connect", "/connect"},
		{"webhooks", "/webhooks"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = call(b, h, http.MethodGet, c.target).Body.Len()
			}
			b.ReportMetric(float64(n), "resp-bytes")
		})
	}
}

// loadBR25 previews the real BR25 workbook, applies it to dkbr with the
// suggested map, and returns the preview id.
func loadBR25(b *testing.B, h http.Handler) string {
	data := shareddata.Read(b, "data", "dkbr", "br25-tabel7-2025.xlsx")
	post := func(target string, fields map[string]string, file []byte) []byte {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for k, v := range fields {
			_ = w.WriteField(k, v)
		}
		if file != nil {
			fw, _ := w.CreateFormFile("file", "br25-tabel7-2025.xlsx")
			_, _ = fw.Write(file)
		}
		_ = w.Close()
		req := httptest.NewRequest(http.MethodPost, target, &buf)
		req.Header.Set("Content-Type", w.FormDataContentType())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %.300s", target, rec.Code, rec.Body.String())
		}
		return rec.Body.Bytes()
	}
	var pv core.IngestPreview
	if err := json.Unmarshal(post("/admin/ingest/preview", nil, data), &pv); err != nil {
		b.Fatal(err)
	}
	fields := map[string]string{"preview_id": pv.PreviewID, "version": "BR25"}
	for k, v := range pv.SuggestedMap {
		fields["map."+k] = v
	}
	var res core.IngestResult
	if err := json.Unmarshal(post("/admin/ingest/file?catalog=dkbr", fields, nil), &res); err != nil || res.Upserted != 504 {
		b.Fatalf("BR25: %+v %v", res, err)
	}
	return pv.PreviewID
}
