package httpapi

import (
	"io/fs"
	"testing"

	"github.com/climatesearch/climatesearch/web"
)

// BenchmarkGzip measures compressing the largest embedded document once
// (the Swagger UI bundle, kept compressed after the first request) and the
// OpenAPI document: docs/PERFORMANCE.md.
//
//	go test ./adapters/httpapi/ -run '^$' -bench Gzip -count 5
func BenchmarkGzip(b *testing.B) {
	bundle, err := fs.ReadFile(web.SwaggerUI(), "swagger-ui-bundle.js")
	if err != nil {
		b.Fatal(err)
	}
	for name, body := range map[string][]byte{"swagger-ui-bundle.js": bundle, "openapi.yaml": web.OpenAPI()} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			var n int
			for b.Loop() {
				n = len(gzipBytes(body))
			}
			b.ReportMetric(float64(n), "gzipped-bytes")
		})
	}
}
