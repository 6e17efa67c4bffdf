package replicas

import (
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/test/pgtest"
	"github.com/climatesearch/climatesearch/test/shareddata"
	"github.com/climatesearch/climatesearch/test/testbin"
)

// The figures of docs/SCALING.md (never run by the suite: benchmarks only).
//
//	CLIMATESEARCH_SHARED=/work/shared go test -run '^$' -bench . -benchtime 5x -timeout 30m ./test/replicas/
//
// BenchmarkIngest: the national release (235 resources, from the publisher
// stand-in) and the BR25 workbook (504 rows, preview + apply) into an empty
// catalog, per store; each iteration on a fresh store.
// BenchmarkPropagation: a one-resource batch through A until B and C find it.
// BenchmarkThroughput: wrk on search and lookup, one replica against three.

// single starts one binary on the store: badger in its data directory, or
// a fresh database of pg.
func single(b *testing.B, pg *pgtest.Cluster) *replica {
	b.Helper()
	up := publisher(b)
	r := &replica{name: "solo", dir: b.TempDir(), env: map[string]string{
		"SERVICE_UPSTREAM_URL":    up.URL,
		"SERVICE_EXCEL_URL_SV":    up.ExcelURL("sv"),
		"SERVICE_EXCEL_URL_EN":    up.ExcelURL("en"),
		"SERVICE_BOOT_INGEST":     "false",
		"SERVICE_INGEST_INTERVAL": "0",
		"SERVICE_ADMIN_TOKEN":     adminToken,
		"SERVICE_LOG_LEVEL":       "warn",
	}}
	r.env["SERVICE_DATA_DIR"] = r.dir
	if pg != nil {
		r.env["SERVICE_STORE"] = pg.NewDB(b)
	}
	r.p = testbin.Start(b, binPath, r.dir, r.env, patience)
	return r
}

func BenchmarkIngest(b *testing.B) {
	br25 := shareddata.Read(b, "data", "dkbr", "br25-tabel7-2025.xlsx")
	pg := pgtest.Start(b)
	for _, store := range []string{"badger", "postgres"} {
		var cl *pgtest.Cluster
		if store == "postgres" {
			cl = pg
		}
		b.Run(store+"/national", func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				r := single(b, cl)
				b.StartTimer()
				if a := r.postJSON(b, "/admin/ingest/run?catalog=national", nil); a.status != http.StatusOK {
					b.Fatalf("%d %.300s", a.status, a.body)
				}
				b.StopTimer()
				_ = r.p.Cmd.Process.Kill()
				<-r.p.Done
			}
		})
		b.Run(store+"/br25", func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				r := single(b, cl)
				b.StartTimer()
				p := r.postForm(b, "/admin/ingest/preview", "br25-tabel7-2025.xlsx", br25, nil)
				var prev struct {
					PreviewID    string            `json:"preview_id"`
					SuggestedMap map[string]string `json:"suggested_map"`
				}
				p.decode(b, &prev)
				fields := map[string]string{"preview_id": prev.PreviewID, "version": "BR25"}
				for k, v := range prev.SuggestedMap {
					fields["map."+k] = v
				}
				if a := r.postForm(b, "/admin/ingest/file?catalog=dkbr", "", nil, fields); a.status != http.StatusOK {
					b.Fatalf("%d %.300s", a.status, a.body)
				}
				b.StopTimer()
				_ = r.p.Cmd.Process.Kill()
				<-r.p.Done
			}
		})
	}
}

func BenchmarkPropagation(b *testing.B) {
	c := newCluster(b, map[string]string{"SERVICE_LOG_LEVEL": "warn"}, nil)
	a := c.reps[0]
	if r := a.postJSON(b, "/admin/ingest/run?catalog=national", nil); r.status != http.StatusOK {
		b.Fatalf("%d %.300s", r.status, r.body)
	}
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("PROP-%d", i)
		name := fmt.Sprintf("Spridningsskiva%d", i)
		start := time.Now()
		if r := a.postJSON(b, "/admin/resources", batch(id, name)); r.status != http.StatusOK {
			b.Fatalf("%d %.300s", r.status, r.body)
		}
		written := time.Now()
		var wg sync.WaitGroup
		for _, r := range c.reps[1:] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for len(r.hits(b, name)) == 0 {
					if time.Since(start) > patience {
						panic("not propagated")
					}
					time.Sleep(time.Millisecond)
				}
			}()
		}
		wg.Wait()
		took = append(took, time.Since(written))
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-p50-after-write")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "ms-max-after-write")
}

var reqPerSec = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
var p50 = regexp.MustCompile(`\n\s+50%\s+([0-9.]+)(us|ms|s)`)

// wrk runs wrk against url and returns requests per second and the median latency in ms.
func wrk(b *testing.B, url string, conns int, d string) (float64, float64) {
	out, err := exec.Command("wrk", "-t1", "-c"+strconv.Itoa(conns), "-d"+d, "--latency", url).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	m := reqPerSec.FindSubmatch(out)
	l := p50.FindSubmatch(out)
	if m == nil || l == nil {
		b.Fatalf("wrk output: %s", out)
	}
	rps, _ := strconv.ParseFloat(string(m[1]), 64)
	lat, _ := strconv.ParseFloat(string(l[1]), 64)
	switch string(l[2]) {
	case "us":
		lat /= 1000
	case "s":
		lat *= 1000
	}
	return rps, lat
}

// load runs one wrk (one thread, 4 connections, 10 s) per URL at once, the
// same client whatever the replicas, and returns the total requests per
// second and the worst of their median latencies in ms.
func load(b *testing.B, urls []string) (float64, float64) {
	var mu sync.Mutex
	var total, worst float64
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rps, lat := wrk(b, u, 4, "10s")
			mu.Lock()
			total += rps
			worst = max(worst, lat)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total, worst
}

// BenchmarkThroughput: three wrk clients on one replica (badger, then
// PostgreSQL), then one on each of three replicas (a load balancer's
// share), for search and lookup. Each iteration is one round of the six,
// interleaved, 10 s each; the metrics are the medians over the rounds
// (-benchtime 3x for three rounds).
func BenchmarkThroughput(b *testing.B) {
	c := newCluster(b, map[string]string{"SERVICE_LOG_LEVEL": "warn"}, nil)
	if r := c.reps[0].postJSON(b, "/admin/ingest/run?catalog=national", nil); r.status != http.StatusOK {
		b.Fatalf("%d %.300s", r.status, r.body)
	}
	for _, r := range c.reps {
		eventually(b, "the catalog on "+r.name, func() bool { return len(r.hits(b, "spånskiva")) > 0 })
	}
	solo := single(b, nil)
	if r := solo.postJSON(b, "/admin/ingest/run?catalog=national", nil); r.status != http.StatusOK {
		b.Fatalf("%d %.300s", r.status, r.body)
	}
	type variant struct {
		name string
		urls []string
	}
	var vs []variant
	for _, ep := range []struct{ name, path string }{{"search", "/api/search?q=sp%C3%A5nskiva"}, {"lookup", "/api/resources/national:6000000000"}} {
		a, bb, cc := c.reps[0].p.URL+ep.path, c.reps[1].p.URL+ep.path, c.reps[2].p.URL+ep.path
		s := solo.p.URL + ep.path
		vs = append(vs,
			variant{ep.name + "-badger-one", []string{s, s, s}},
			variant{ep.name + "-postgres-one", []string{a, a, a}},
			variant{ep.name + "-postgres-three", []string{a, bb, cc}})
	}
	rps := map[string][]float64{}
	lat := map[string][]float64{}
	b.ResetTimer()
	for range b.N {
		for _, v := range vs {
			r, l := load(b, v.urls)
			rps[v.name] = append(rps[v.name], r)
			lat[v.name] = append(lat[v.name], l)
		}
	}
	b.StopTimer()
	for _, v := range vs {
		b.ReportMetric(median(rps[v.name]), v.name+"-req/s")
		b.ReportMetric(median(lat[v.name]), v.name+"-ms-p50")
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
