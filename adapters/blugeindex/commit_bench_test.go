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
			var x *Index
			var err error
			if where == "memory" {
				x, err = New()
			} else {
				x, err = Open(b.TempDir())
			}
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			if _, err := x.Resume(ctx, ""); err != nil {
				b.Fatal(err)
			}
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
