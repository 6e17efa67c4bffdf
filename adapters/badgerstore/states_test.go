package badgerstore

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// stateOf reads the withdrawn flag as the last field of the resource's
// JSON: a field added after it would make withdrawn resources read as
// live.
func TestWithdrawnIsTheResourcesLastField(t *testing.T) {
	rt := reflect.TypeFor[core.Resource]()
	last := rt.Field(rt.NumField() - 1)
	if last.Name != "Withdrawn" || last.Tag.Get("json") != "withdrawn,omitempty" {
		t.Fatalf("core.Resource ends with %s `%s`: stateOf (store.go) reads withdrawn as the JSON's last field", last.Name, last.Tag)
	}
}

// TestScanStatesReadsWhatScanDecodes: the hash and withdrawn flag read
// from the end of each record are those of the decoded record, whatever
// the resource's texts hold (the tags stateOf looks for, quoted, escaped)
// and whatever the hash holds (a quote or a backslash: decoded whole).
func TestScanStatesReadsWhatScanDecodes(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	defer s.Close()
	texts := []string{``, `"withdrawn":true`, `x},"hash":"y`, `a\"withdrawn\":true`, `"withdrawn":true}`, `ø "quoted" \ back`}
	hashes := []string{core.ContentHash(&core.Resource{ID: "h"}), "", `with "quote"`, `back\slash`, "older-content"}
	var puts []ports.StoredResource
	for i := range 60 {
		sr := full(core.National, fmt.Sprintf("r%02d", i))
		sr.Resource.Withdrawn = i%3 == 0
		sr.Resource.Origin = texts[i%len(texts)]
		sr.Resource.NameSV = texts[(i+1)%len(texts)]
		if i%4 == 0 {
			sr.Resource.Origin = "" // omitted: the field before withdrawn is another
		}
		sr.Hash = hashes[i%len(hashes)]
		puts = append(puts, sr)
	}
	if err := s.Apply(ctx, core.National, ports.Changes{Put: puts}); err != nil {
		t.Fatal(err)
	}
	var want, got []ports.ResourceState
	must(t, s.Scan(ctx, core.National, func(sr ports.StoredResource) error {
		want = append(want, ports.ResourceState{ID: sr.Resource.ID, Hash: sr.Hash, Withdrawn: sr.Resource.Withdrawn})
		return nil
	}))
	must(t, s.ScanStates(ctx, core.National, func(st ports.ResourceState) error {
		got = append(got, st)
		return nil
	}))
	if len(want) != 60 || !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanStates:\n%+v\nScan:\n%+v", got, want)
	}
	withdrawn := 0
	for _, st := range got {
		if st.Withdrawn {
			withdrawn++
		}
	}
	if withdrawn != 20 {
		t.Fatalf("%d withdrawn, want 20", withdrawn)
	}
	for _, h := range []string{`with "quote"`, `back\slash`} {
		if _, _, ok := stateOf([]byte(`{"resource":{},"hash":` + fmt.Sprintf("%q", h) + `}`)); ok {
			t.Errorf("hash %q read from the tail instead of decoded", h)
		}
	}

	// The vectors' hashes, without their coordinates.
	vs := []ports.StoredVector{{Key: core.Key{Catalog: core.National, ID: "r01"}, Hash: "a", Vec: []float32{1, 2}},
		{Key: core.Key{Catalog: core.DKBR, ID: "#G/1"}, Hash: strings.Repeat("h", 64), Vec: []float32{3}}}
	must(t, s.PutVectors(ctx, "emb", vs))
	for _, v := range vs {
		var seen []string
		must(t, s.ScanVectorHashes(ctx, "emb", v.Key.Catalog, func(id, h string) error { seen = append(seen, id, h); return nil }))
		if len(seen) != 2 || seen[0] != v.Key.ID || seen[1] != v.Hash {
			t.Fatalf("vector hashes of %s: %q", v.Key.Catalog, seen)
		}
	}
}

// BenchmarkScanStates: reading every resource's state from the end of its
// record against decoding every record (the coverage count's two ways), as
// in a catalog larger than the decoded cache.
func BenchmarkScanStates(b *testing.B) {
	defer func(n int64) { maxDecoded = n }(maxDecoded)
	maxDecoded = 0
	ctx := context.Background()
	s, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var puts []ports.StoredResource
	for i := range 5000 {
		puts = append(puts, full(core.National, fmt.Sprintf("r%05d", i)))
	}
	if err := s.Apply(ctx, core.National, ports.Changes{Put: puts}); err != nil {
		b.Fatal(err)
	}
	b.Run("decoded", func(b *testing.B) {
		for b.Loop() {
			if err := s.Scan(ctx, core.National, func(ports.StoredResource) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("states", func(b *testing.B) {
		for b.Loop() {
			if err := s.ScanStates(ctx, core.National, func(ports.ResourceState) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
