package perf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/perf/synth"
)

// BenchmarkFileApply applies a generated CSV of FILE_N rows (default
// 100,000; the shape of test/perf/files.sh's: semicolon, decimal comma,
// Danish column names) to the dkbr catalog through POST /admin/ingest/file
// in the real app (hash embedder), once per process, and reports:
//
//	apply-s          the apply's answer time
//	peak-heap-MB     the largest live heap seen (sampled every 50 ms)
//	hwm-applied-MB   the process's VmHWM when the apply has answered
//	hwm-vectors-MB   VmHWM once the background vectors have caught up
//
// VmHWM is the process's peak RSS, so run it alone in a fresh process
// (-benchtime 1x). With HEAP_OUT=FILE the heap profile taken at the
// largest live heap is written there (what holds memory at the peak):
//
//	FILE_N=100000 HEAP_OUT=/tmp/fa.heap go test -run '^$' -bench FileApply -benchtime 1x ./test/perf/
//	go tool pprof -sample_index=inuse_space -top /tmp/fa.heap
func BenchmarkFileApply(b *testing.B) {
	n := synth.Size(b, "FILE_N", 100000)
	csv := fileCSV(n)
	h, stop := bootEnv(b, upstream(b), map[string]string{"SERVICE_EMBEDDER": "hash", "SERVICE_MAX_UPLOAD": "256MiB"})
	defer stop()

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{
		"map.id": "Sorterings ID", "map.name": "Navn DK", "map.name_en": "Navn DE/ENG",
		"map.a1a3": "Global Opvarmning, modul A1-A3", "map.unit": "Deklareret enhed (FU)",
		"map.conversion_value": "Masse faktor", "version": "GEN",
	} {
		if err := mw.WriteField(k, v); err != nil {
			b.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile("file", "gen.csv")
	if err != nil {
		b.Fatal(err)
	}
	fw.Write(csv)
	mw.Close()
	csv = nil

	peak := newHeapPeak(os.Getenv("HEAP_OUT"))
	runtime.GC()
	for b.Loop() {
		peak.start()
		req := httptest.NewRequest(http.MethodPost, "/admin/ingest/file?catalog=dkbr", bytes.NewReader(body.Bytes()))
		req.Header.Set("Content-Type", mw.FormDataContentType())
		rec := httptest.NewRecorder()
		t0 := time.Now()
		h.ServeHTTP(rec, req)
		took := time.Since(t0)
		if rec.Code != http.StatusOK {
			b.Fatalf("apply: %d %.300s", rec.Code, rec.Body.String())
		}
		var res core.IngestResult
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.Upserted+res.Unchanged != n {
			b.Fatalf("apply: %v %+v", err, res)
		}
		b.ReportMetric(took.Seconds(), "apply-s")
		hwmApplied := vmHWM(b)
		b.ReportMetric(float64(hwmApplied)/(1<<20), "hwm-applied-MB")
		caught := time.Now()
		for {
			var ans core.SearchResponse
			if err := json.Unmarshal(call(b, h, http.MethodGet, "/api/search?q=zzqqxx&databases=dkbr&vector=true&limit=1").Body.Bytes(), &ans); err != nil {
				b.Fatal(err)
			}
			if !vectorBacklog(ans.Notes) {
				b.Logf("notes once the vectors caught up: %q", ans.Notes)
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		b.ReportMetric(time.Since(caught).Seconds(), "vectors-s")
		b.ReportMetric(float64(vmHWM(b))/(1<<20), "hwm-vectors-MB")
		b.ReportMetric(float64(peak.stop(b))/1e6, "peak-heap-MB")
		// Also logged: a failure later (stopping the app) drops the metrics.
		b.Logf("%d rows: apply %.1f s, peak heap %.0f MB, VmHWM %.0f MiB after the apply, vectors %.1f s later",
			n, took.Seconds(), float64(peak.max)/1e6, float64(hwmApplied)/(1<<20), time.Since(caught).Seconds())
	}
}

// fileCSV is files.sh's generated CSV, from a Go generator (seed 1).
func fileCSV(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 1))
	var sb strings.Builder
	sb.WriteString("Sorterings ID;Navn DK;Navn DE/ENG;Global Opvarmning, modul A1-A3;Deklareret enhed (FU);Masse faktor\n")
	for i := range n {
		v := strings.Replace(fmt.Sprintf("%.3f", -50+rng.Float64()*950), ".", ",", 1)
		fmt.Fprintf(&sb, "#T%06d;Produkt %d beton klasse %d;Product %d;%s;m3;%d\n", i, i, i%40, i, v, 100+rng.IntN(2401))
	}
	return []byte(sb.String())
}

// vmHWM is the process's peak resident set size in bytes.
func vmHWM(b *testing.B) int64 { return procStatus(b, "VmHWM:") }

// procStatus reads a size (kB) of /proc/self/status, in bytes.
func procStatus(b *testing.B, field string) int64 {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status: ", err)
	}
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// heapPeak samples the live heap (objects) every 50 ms and keeps the
// largest; with a file name it writes a heap profile whenever the largest
// grew by a tenth, so the last one written is taken near the peak.
type heapPeak struct {
	file string
	max  uint64
	done chan struct{}
	wg   sync.WaitGroup
}

func newHeapPeak(file string) *heapPeak { return &heapPeak{file: file} }

func (p *heapPeak) start() {
	p.done = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		written := uint64(0)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
			}
			metrics.Read(s)
			v := s[0].Value.Uint64()
			if v > p.max {
				p.max = v
			}
			if p.file != "" && v > written+written/10 {
				written = v
				if f, err := os.Create(p.file); err == nil {
					pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
		}
	}()
}

func (p *heapPeak) stop(b *testing.B) uint64 {
	close(p.done)
	p.wg.Wait()
	return p.max
}
