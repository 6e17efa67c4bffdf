package blugeindex

import (
	"context"
	"fmt"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/test/perf/synth"
)

// BenchmarkOneChange times a change of one resource (its name, so its
// terms change) in an index of COMMIT_N (default 30,000) synthetic
// resources, in memory and on disk, where each commit also waits until
// bluge has persisted its segment. -count interleaves the two:
//
//	go test -run '^$' -bench OneChange -benchtime 50x -count 3 ./adapters/blugeindex/
func BenchmarkOneChange(b *testing.B) {
	n := synth.Size(b, "COMMIT_N", 30000)
	rs := synthResources(b, 0, n)
	ctx := context.Background()
	for _, where := range []string{"memory", "disk"} {
		b.Run(where, func(b *testing.B) {
			x := openAt(b, where)
			for i := 0; i < n; i += 10000 {
				if err := x.Upsert(ctx, rs[i:min(n, i+10000)]); err != nil {
					b.Fatal(err)
				}
			}
			r := rs[n/2]
			i := 0
			for b.Loop() {
				i++
				r.NameSV = fmt.Sprintf("%s v%d", rs[n/2].NameSV, i%7)
				if err := x.Upsert(ctx, []core.Resource{r}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBulkUpsert times the index's part of a bulk load: BULK_N
// (default 20,000) synthetic resources written in changes of 5,000 (the
// service's index chunk) into a fresh index on disk, per iteration. It
// reports resources/s and what each resource allocates, the figures the
// load's collector cost follows:
//
//	go test -run '^$' -bench BulkUpsert -benchtime 3x -count 3 ./adapters/blugeindex/
func BenchmarkBulkUpsert(b *testing.B) {
	n := synth.Size(b, "BULK_N", 20000)
	rs := synthResources(b, 0, n)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		x, err := Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := x.Resume(ctx, ""); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for i := 0; i < n; i += 5000 {
			if err := x.Upsert(ctx, rs[i:min(n, i+5000)]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		_ = x.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "resources/s")
	b.ReportMetric(float64(n), "resources/op")
}

// openAt returns an empty index in memory (where "memory") or on disk in a
// temporary directory, taken up as the service does, closed at the end.
func openAt(tb testing.TB, where string) *Index {
	tb.Helper()
	var x *Index
	var err error
	if where == "memory" {
		x, err = New()
	} else {
		x, err = Open(tb.TempDir())
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = x.Close() })
	if _, err := x.Resume(context.Background(), ""); err != nil {
		tb.Fatal(err)
	}
	return x
}

// BenchmarkPublish times what searches wait for when a change of 5,000
// resources (their A1-A3 values changed, as a re-ingest's batch) is
// published into an index of PUBLISH_N (default 30,000) synthetic
// resources on disk: Build (segments written beside searches) is outside
// the timer, Commit (the swap and the lexicon update) inside it.
//
//	go test -run '^$' -bench Publish -benchtime 10x -count 3 ./adapters/blugeindex/
func BenchmarkPublish(b *testing.B) {
	n := synth.Size(b, "PUBLISH_N", 30000)
	rs := synthResources(b, 0, n)
	ctx := context.Background()
	x := openAt(b, "disk")
	for i := 0; i < n; i += 10000 {
		if err := x.Upsert(ctx, rs[i:min(n, i+10000)]); err != nil {
			b.Fatal(err)
		}
	}
	batch := make([]core.Resource, 5000)
	round := 0
	for b.Loop() {
		b.StopTimer()
		round++
		for i := range batch {
			batch[i] = rs[i].Clone()
			v := float64(round)
			batch[i].A1A3 = &v
		}
		ch, err := x.Prepare(ctx, batch, nil)
		if err == nil {
			err = ch.Build()
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := ch.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLexiconClone is what the first Extend of a change pays: a copy
// of the lexicon of an index of CLONE_N synthetic resources (100,000).
func BenchmarkLexiconClone(b *testing.B) {
	n := synth.Size(b, "CLONE_N", 100000)
	rs := synthResources(b, 0, n)
	ctx := context.Background()
	x, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	for i := 0; i < n; i += 5000 {
		if err := x.Upsert(ctx, rs[i:min(n, i+5000)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = x.lex.clone()
	}
	b.ReportMetric(float64(n), "resources")
}
