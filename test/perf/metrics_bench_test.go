package perf

import (
	"net/http"
	"testing"

	"go.uber.org/fx"

	"github.com/climatesearch/climatesearch/ports"
)

// BenchmarkMetricsCost times a full-text search through the HTTP handler
// (request id, route, access-log check, the core search) with the
// Prometheus metrics on (the default wiring: HTTP request counter and
// histogram, search histograms) and off (ports.NoMetrics), answers not
// kept, so every request searches. Interleave the two and compare medians
// (go test -count repeats one sub-benchmark before the other, so loop):
//
//	go test -c -o /tmp/perf.test ./test/perf/ && cd test/perf
//	for i in $(seq 10); do for m in with without; do
//	  /tmp/perf.test -test.run '^$' -test.bench "MetricsCost/$m\$" -test.benchtime 3000x; done; done
func BenchmarkMetricsCost(b *testing.B) {
	queries := []string{"/api/search?q=sp%C3%A5nskiva", "/api/search?q=betong%20C30%2F37", "/api/search?q=stone%20wool%20roof%20board", "/api/search?q=KL-tr%C3%A4"}
	for _, c := range []struct {
		name  string
		extra []fx.Option
	}{
		{"with", nil},
		{"without", []fx.Option{fx.Decorate(func(ports.Metrics) ports.Metrics { return ports.NoMetrics{} })}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h, stop := bootEnv(b, upstream(b), map[string]string{"SERVICE_KEEP_ANSWERS": "false", "SERVICE_EMBEDDER": "none"}, c.extra...)
			defer stop()
			runIngest(b, h)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				call(b, h, http.MethodGet, queries[i%len(queries)])
				i++
			}
		})
	}
}
