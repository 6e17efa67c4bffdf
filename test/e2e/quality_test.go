package e2e

import (
	"context"
	"os"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/climatesearch/climatesearch/core/evaluate"
	"github.com/climatesearch/climatesearch/core/search"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// Quality floors on the dev golden set, with the default configuration
// (hash embedder, no reranker). A drop below any of them fails the build.
const (
	floorHit1     = 0.95
	floorRecall10 = 0.95
)

func TestSearchQualityOnTheGoldenSet(t *testing.T) {
	var svc *search.Service
	e := newEnv(t, nil, fx.Populate(&svc))
	e.mustIngest()
	f, err := os.Open(shareddata.Path(t, "eval", "golden-dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := evaluate.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, vector := range []bool{false, true} {
		rep, err := evaluate.Run(context.Background(), svc, g, vector, false)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		rep.Print(&b)
		t.Log("\n" + b.String())
		o := rep.Overall
		if o.Hit1 < floorHit1 || o.Recall10 < floorRecall10 || o.ZeroResult > 0 || o.Inversions > 0 {
			t.Errorf("vector=%v: hit@1 %.3f (floor %.2f), recall@10 %.3f (floor %.2f), zero-result %.3f, inversions %d",
				vector, o.Hit1, floorHit1, o.Recall10, floorRecall10, o.ZeroResult, o.Inversions)
		}
	}
}
