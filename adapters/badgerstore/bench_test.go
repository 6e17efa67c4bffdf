package badgerstore

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// BenchmarkApply10000 applies a release of 10,000 full resources (every
// one rewritten each time) in one Apply, as adapters/pgstore's benchmark:
//
//	go test -run '^$' -bench Apply10000 ./adapters/pgstore/ ./adapters/badgerstore/
func BenchmarkApply10000(b *testing.B) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := 0; b.Loop(); i++ {
		g := i + 1
		ps := make([]ports.StoredResource, 10000)
		for j := range ps {
			r := full(core.National, fmt.Sprintf("%05d", j)).Resource
			r.NameSV = fmt.Sprintf("resource %d generation %d", j, g)
			r.A1A3 = core.F(float64(g*100000 + j))
			r.Version = strconv.Itoa(g)
			ps[j] = ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)}
		}
		if err := s.Apply(ctx, core.National, ports.Changes{Put: ps, Meta: &core.CatalogMeta{Catalog: core.National, Version: strconv.Itoa(g)}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetMany20 reads a page of 20 resources, as a search does:
//
//	go test -run '^$' -bench GetMany20 ./adapters/pgstore/ ./adapters/badgerstore/
func BenchmarkGetMany20(b *testing.B) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var ps []ports.StoredResource
	for j := range 1000 {
		ps = append(ps, full(core.National, fmt.Sprintf("%05d", j)))
	}
	if err := s.Apply(ctx, core.National, ports.Changes{Put: ps}); err != nil {
		b.Fatal(err)
	}
	keys := make([]core.Key, 20)
	for i := range keys {
		keys[i] = core.Key{Catalog: core.National, ID: fmt.Sprintf("%05d", i*37)}
	}
	for b.Loop() {
		if rs, err := s.GetMany(ctx, keys); err != nil || len(rs) != 20 {
			b.Fatal(len(rs), err)
		}
	}
}

// BenchmarkApplyLarge applies a change of APPLY_N full resources (100,000
// unless set) to a store holding the previous generation of them, forced
// into one transaction (APPLY_MODE=one: within Badger's entry limit only),
// journaled (APPLY_MODE=journal) or as Apply decides (APPLY_MODE=auto, the
// default: one transaction up to txnValueBytes of values), and reports the largest heap seen
// during the Apply and the process's VmHWM (Linux). Run one mode per
// process, once:
//
//	APPLY_N=100000 APPLY_MODE=one go test -run '^$' -bench ApplyLarge -benchtime 1x ./adapters/badgerstore/
func BenchmarkApplyLarge(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("APPLY_N")); err == nil {
		n = v
	}
	old, oldBytes := oneTxnMax, txnValueBytes
	b.Cleanup(func() { oneTxnMax, txnValueBytes = old, oldBytes })
	switch mode := os.Getenv("APPLY_MODE"); mode {
	case "one":
		oneTxnMax, txnValueBytes = math.MaxInt, math.MaxInt
	case "journal":
		oneTxnMax = 0
	case "", "auto":
	default:
		b.Fatalf("APPLY_MODE %q: one, journal or auto", mode)
	}
	ctx := context.Background()
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	gen := func(g int) ports.Changes {
		ps := make([]ports.StoredResource, n)
		for j := range ps {
			r := full(core.National, fmt.Sprintf("%07d", j)).Resource
			r.NameSV = fmt.Sprintf("resource %d generation %d", j, g)
			r.Version = strconv.Itoa(g)
			ps[j] = ports.StoredResource{Resource: r, Hash: core.ContentHash(&r)}
		}
		return ports.Changes{Put: ps, Meta: &core.CatalogMeta{Catalog: core.National, Version: strconv.Itoa(g)}}
	}
	if err := s.Apply(ctx, core.National, gen(0)); err != nil {
		b.Fatal(err)
	}
	var peak uint64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		ch := gen(i + 1)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		stop, done := make(chan struct{}), make(chan uint64)
		go func() { // the largest heap seen, sampled
			top := base
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				top = max(top, ms.HeapAlloc)
				select {
				case <-stop:
					done <- top - base
					return
				case <-t.C:
				}
			}
		}()
		b.StartTimer()
		if err := s.Apply(ctx, core.National, ch); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		close(stop)
		peak = max(peak, <-done)
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "MiB-heap-over-change")
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				b.ReportMetric(float64(kb)/1024, "MiB-VmHWM")
			}
		}
	}
}
