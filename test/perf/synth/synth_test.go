package synth_test

import (
	"testing"

	"github.com/climatesearch/climatesearch/test/perf/synth"
	"github.com/climatesearch/climatesearch/test/shareddata"
)

// TestTextsRepeatAsInACollection checks what the index's memo of long
// texts relies on in the scale benchmarks (docs/PERFORMANCE.md 12zg): the
// synthetic descriptions are mixed from the real sentences of a category,
// so they repeat as a collection's product lines do, while the names are
// almost all distinct. SYNTH_N sets how many resources are counted
// (200,000 by default); -v prints the counts.
func TestTextsRepeatAsInACollection(t *testing.T) {
	n := synth.Size(t, "SYNTH_N", 200000)
	gen, err := synth.New(shareddata.Root(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	names, en, sv := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for from := 0; from < n; from += 10000 {
		rs, err := gen.Resources(from, min(10000, n-from))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			names[r.NameSV], en[r.DescriptionEN], sv[r.DescriptionSV] = true, true, true
		}
	}
	t.Logf("%d resources: %d distinct Swedish names, %d English and %d Swedish descriptions", n, len(names), len(en), len(sv))
	if len(en) > n/10 || len(sv) > n/10 {
		t.Errorf("descriptions repeat less than a collection's: %d English, %d Swedish among %d", len(en), len(sv), n)
	}
	if len(names) < n*9/10 {
		t.Errorf("names repeat: %d distinct among %d", len(names), n)
	}
}
