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
	"syscall"
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
//	cpu-s            the process's CPU time (user and system) during the
//	                 apply: steadier than apply-s on a shared machine
//	gc-cpu-s         the garbage collector's CPU time in it, idle mark
//	                 workers left out (what a memory limit trades for memory)
//	peak-heap-MB     the largest heap of objects seen during the apply
//	                 (sampled every 50 ms; live and not yet swept garbage:
//	                 what the heap grew to)
//	peak-live-MB     the largest live heap seen during the apply (marked
//	                 live by a GC cycle), and when (logged)
//	hwm-applied-MB   the process's VmHWM when the apply has answered
//	live-after-MB    the live heap right after the answer (after a GC):
//	                 what the process keeps of the apply (index, lexicon,
//	                 badger) before the background vectors grow it
//	hwm-vectors-MB   VmHWM once the background vectors have caught up
//	                 (FILE_VECTORS=skip: not waited for, reported as now)
//	peak-anon-MB     the largest anonymous resident size seen during the
//	                 apply (RssAnon: the Go heap, its unreturned free pages,
//	                 stacks, the runtime's own)
//	peak-file-MB     the largest file-backed resident size seen (RssFile:
//	                 the binary, badger's value log and tables and bluge's
//	                 segments, which are mapped)
//
// VmHWM is the process's peak RSS, so run it alone in a fresh process
// (-benchtime 1x). With HEAP_OUT=FILE the heap profile taken at the
// largest live heap is written there (what holds memory at the peak; its
// inuse figures are those of the GC cycle that marked that heap), and the
// one of live-after-MB to FILE.after; with CPU_OUT=FILE, the CPU profile
// of the apply:
//
//	FILE_N=100000 HEAP_OUT=/tmp/fa.heap go test -run '^$' -bench FileApply -benchtime 1x ./test/perf/
//	go tool pprof -sample_index=inuse_space -top /tmp/fa.heap
func BenchmarkFileApply(b *testing.B) {
	n := synth.Size(b, "FILE_N", 100000)
	csv := fileCSV(n)
	h, stop := bootEnv(b, upstream(b), map[string]string{"SERVICE_EMBEDDER": "hash", "SERVICE_MAX_UPLOAD": "256MiB", "SERVICE_MAX_ROWS": "1048576"})
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
		if f := os.Getenv("CPU_OUT"); f != "" {
			out, err := os.Create(f)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.StartCPUProfile(out); err != nil {
				b.Fatal(err)
			}
			defer out.Close()
		}
		cpu0, gc0 := cpuTimes()
		t0 := time.Now()
		h.ServeHTTP(rec, req)
		took := time.Since(t0)
		cpu1, gc1 := cpuTimes()
		peak.stop(b)
		pprof.StopCPUProfile()
		if rec.Code != http.StatusOK {
			b.Fatalf("apply: %d %.300s", rec.Code, rec.Body.String())
		}
		var res core.IngestResult
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.Upserted+res.Unchanged != n {
			b.Fatalf("apply: %v %+v", err, res)
		}
		b.ReportMetric(took.Seconds(), "apply-s")
		b.ReportMetric(cpu1-cpu0, "cpu-s")
		b.ReportMetric(gc1-gc0, "gc-cpu-s")
		hwmApplied := vmHWM(b)
		b.ReportMetric(float64(hwmApplied)/(1<<20), "hwm-applied-MB")
		runtime.GC()
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		b.ReportMetric(float64(live[0].Value.Uint64())/1e6, "live-after-MB")
		if f := os.Getenv("HEAP_OUT"); f != "" {
			writeHeap(f + ".after")
		}
		caught := time.Now()
		for os.Getenv("FILE_VECTORS") != "skip" {
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
		b.ReportMetric(float64(peak.max)/1e6, "peak-heap-MB")
		b.ReportMetric(float64(peak.maxLive)/1e6, "peak-live-MB")
		b.ReportMetric(float64(peak.maxAnon)/(1<<20), "peak-anon-MB")
		b.ReportMetric(float64(peak.maxFile)/(1<<20), "peak-file-MB")
		// Also logged: a failure later (stopping the app) drops the metrics.
		b.Logf("%d rows: apply %.1f s, peak heap %.0f MB (%.1f s after the upload), peak live heap %.0f MB (%.1f s after), VmHWM %.0f MiB after the apply, vectors %.1f s later",
			n, took.Seconds(), float64(peak.max)/1e6, peak.maxAt.Seconds(), float64(peak.maxLive)/1e6, peak.liveAt.Seconds(),
			float64(hwmApplied)/(1<<20), time.Since(caught).Seconds())
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

// cpuTimes returns the process's CPU seconds (user and system) and the
// garbage collector's estimated CPU seconds so far, without its idle mark
// workers (which run only on otherwise idle cores).
func cpuTimes() (cpu, gc float64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}}
	metrics.Read(s)
	return cpu, s[0].Value.Float64() - s[1].Value.Float64()
}

// vmHWM is the process's peak resident set size in bytes.
func vmHWM(b *testing.B) int64 { return procStatus(b, "VmHWM:") }

// procStatus reads a size (kB) of /proc/self/status, in bytes.
func procStatus(b *testing.B, field string) int64 {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status: ", err)
	}
	return statusBytes(st, field)
}

// statusBytes reads a size (kB) of the text of /proc/self/status, in bytes.
func statusBytes(st []byte, field string) int64 {
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// heapPeak samples the heap every 50 ms and keeps the largest heap of
// objects and the largest live heap (as marked by the last GC cycle); with
// a file name it writes a heap profile whenever the largest live heap grew
// by a twentieth, so the last one written is taken at (or near) the peak.
type heapPeak struct {
	file    string
	max     uint64
	maxLive uint64
	// maxAnon and maxFile are the largest anonymous and file-backed
	// resident sizes seen (/proc/self/status RssAnon, RssFile), in bytes:
	// VmHWM is about their sum at its peak, and the file part (badger's
	// value log and tables, bluge's segments, all mapped) is not heap.
	maxAnon, maxFile int64
	liveAt           time.Duration // when maxLive was seen, from start
	maxAt            time.Duration // when max was seen, from start
	done             chan struct{}
	wg               sync.WaitGroup
}

func newHeapPeak(file string) *heapPeak { return &heapPeak{file: file} }

func (p *heapPeak) start() {
	p.done = make(chan struct{})
	p.wg.Add(1)
	t0 := time.Now()
	go func() {
		defer p.wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
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
			if st, err := os.ReadFile("/proc/self/status"); err == nil {
				p.maxAnon = max(p.maxAnon, statusBytes(st, "RssAnon:"))
				p.maxFile = max(p.maxFile, statusBytes(st, "RssFile:"))
			}
			v, live := s[0].Value.Uint64(), s[1].Value.Uint64()
			if v > p.max {
				p.max, p.maxAt = v, time.Since(t0)
			}
			if live > p.maxLive {
				p.maxLive, p.liveAt = live, time.Since(t0)
			}
			if p.file != "" && live > written+written/20 {
				written = live
				writeHeap(p.file)
			}
		}
	}()
}

// writeHeap writes a heap profile to file.
func writeHeap(file string) {
	if f, err := os.Create(file); err == nil {
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
}

func (p *heapPeak) stop(b *testing.B) {
	close(p.done)
	p.wg.Wait()
}
