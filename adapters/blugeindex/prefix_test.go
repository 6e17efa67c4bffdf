package blugeindex

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/blugelabs/bluge/index"
	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/climatesearch/climatesearch/core"
)

// samePrefix asks RankedPrefix for the first n entries of Search's list at
// several depths and checks them against the list itself: the entries are
// its first ones exactly (keys, scores, order), all of it when whole; the
// places of keys taken from the list (first, middle, last, just after the
// prefix), of matches past a shorter list, of resources that do not match
// and of unknown keys are their ranks and scores in the list, or none;
// asked with each of three keys of the prefix alone too.
// It returns how many answers it compared and how many of them held
// fewer entries than asked for (and than the list has).
func samePrefix(t *testing.T, x *Index, queries []string, catalogs [][]core.CatalogID, probe []core.Key) (n, short int) {
	t.Helper()
	ctx := context.Background()
	for _, text := range queries {
		for _, lang := range []core.Lang{core.Swedish, core.English} {
			for _, cats := range catalogs {
				// Matches past a shorter list, to place: the whole set's.
				all, err := x.search(ctx, core.TextQuery{Text: text, Lang: lang, Catalogs: cats, Limit: core.MaxMatchSet}, topK)
				if err != nil {
					t.Fatal(err)
				}
				for _, limit := range []int{20, 300, core.MaxMatchSet} {
					q := core.TextQuery{Text: text, Lang: lang, Catalogs: cats, Limit: limit}
					list, err := x.search(ctx, q, topK) // without the block cache RankedPrefix uses
					if err != nil {
						t.Fatal(err)
					}
					for _, want := range []int{1, 45} {
						keys := append([]core.Key{{Catalog: core.National, ID: "none"}}, probe...)
						for _, i := range []int{limit, limit + 1, 2 * limit, len(all) - 1} {
							if i >= 0 && i < len(all) {
								keys = append(keys, all[i].Key)
							}
						}
						for _, i := range []int{0, len(list) / 2, len(list) - 1, want, want + 1, 3 * want} {
							if i >= 0 && i < len(list) {
								keys = append(keys, list[i].Key)
							}
						}
						// Also each of three keys in the prefix alone:
						// the keys' places then decide less of the list.
						asks := [][]core.Key{keys}
						for _, i := range []int{0, want / 2, want - 1} {
							if i < len(list) {
								asks = append(asks, []core.Key{list[i].Key})
							}
						}
						shorter := false
						for _, keys := range asks {
							hits, whole, places, matched, err := x.RankedPrefix(ctx, q, want, keys)
							if err != nil {
								t.Fatal(err)
							}
							if count, err := x.Count(ctx, q); err != nil || matched != count {
								t.Fatalf("%q %s %v: %d matched, Count says %d (%v)", text, lang, cats, matched, count, err)
							}
							if len(hits) > len(list) || !slices.Equal(hits, list[:len(hits)]) {
								t.Fatalf("%q %s %v limit %d n %d keys %v: the prefix is not the list's start: %s", text, lang, cats, limit, want, keys, firstDifference(hits, list))
							}
							if whole && len(hits) != len(list) {
								t.Fatalf("%q %s %v limit %d n %d keys %v: whole with %d of %d", text, lang, cats, limit, want, keys, len(hits), len(list))
							}
							for i, k := range keys {
								at := slices.IndexFunc(list, func(s core.Scored) bool { return s.Key == k })
								wantPlace := core.ListPlace{}
								if at >= 0 {
									wantPlace = core.ListPlace{Rank: at + 1, Score: list[at].Score}
								}
								if places[i] != wantPlace {
									t.Fatalf("%q %s %v limit %d n %d: %s placed %+v, want %+v (prefix %d)", text, lang, cats, limit, want, k, places[i], wantPlace, len(hits))
								}
							}
							shorter = shorter || len(hits) < min(want, len(list))
						}
						if shorter {
							short++
						}
						n++
					}
				}
			}
		}
	}
	return n, short
}

// TestRankedPrefixIsTheListsStart on the real catalog (the dev golden set
// and probes of every resource) and on the synthetic catalog with a
// history of changes (large groups of equal scores, deleted documents,
// two catalogs).
func TestRankedPrefixIsTheListsStart(t *testing.T) {
	rs := loadCatalog(t)
	x := newIndex(t, rs)
	x.blocks.minLen = 1 // every list through the block cache, as long ones are
	queries := probeQueries(rs, 7)
	if raceEnabled {
		queries = queries[:40]
	}
	for _, g := range loadGolden(t) {
		queries = append(queries, g.Q)
	}
	probe := []core.Key{rs[0].Key(), rs[100].Key()}
	n, short := samePrefix(t, x, queries, [][]core.CatalogID{nil}, probe)
	t.Logf("real catalog: %d answers compared, %d shorter than asked", n, short)
	if short > 0 {
		// Allowed (a top rescored document outside the candidates), but
		// each makes a hybrid search ask again; these catalogs have none.
		t.Errorf("real catalog: %d of %d answers shorter than asked", short, n)
	}

	if raceEnabled {
		return // the ordinary run asks the synthetic catalog too
	}
	hx, hrs := historyIndex(t)
	hx.blocks.minLen = 1
	hx.split = 1 // the walks in two halves, as a large index's
	probe = []core.Key{hrs[0].Key(), hrs[1].Key(), hrs[4].Key(), hrs[2000].Key()}
	n, short = samePrefix(t, hx, probeQueries(hrs, 800), [][]core.CatalogID{nil, {core.National}, {core.DKBR}}, probe)
	t.Logf("synthetic catalog: %d answers compared, %d shorter than asked", n, short)
	if short > 0 {
		// Allowed (a top rescored document outside the candidates), but
		// each makes a hybrid search ask again; these catalogs have none.
		t.Errorf("synthetic catalog: %d of %d answers shorter than asked", short, n)
	}
}

func TestNthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 500; round++ {
		a := make([]float64, 1+rng.IntN(300))
		for i := range a {
			a[i] = float64(rng.IntN(1 + rng.IntN(40))) // many ties
		}
		sorted := slices.Clone(a)
		slices.SortFunc(sorted, func(x, y float64) int { return cmp.Compare(y, x) })
		n := 1 + rng.IntN(len(a))
		if got := nthLargest(a, n); got != sorted[n-1] {
			t.Fatalf("round %d: %d-th largest of %v: %v, want %v", round, n, sorted, got, sorted[n-1])
		}
	}
}

// The name units RankedPrefix rescores with are copied per segment
// (keycache.go): after resources are renamed (their coverage changes),
// withdrawn and added, between searches that copied them, the prefix is
// still the start of the list Search computes from the lexicon.
func TestRankedPrefixAcrossChanges(t *testing.T) {
	ctx := context.Background()
	rs := loadCatalog(t)
	x := newIndex(t, rs)
	queries := probeQueries(rs, 23)
	for _, g := range loadGolden(t)[:10] {
		queries = append(queries, g.Q)
	}
	probe := []core.Key{rs[0].Key(), rs[100].Key()}
	samePrefix(t, x, queries, [][]core.CatalogID{nil}, probe)
	var changed []core.Resource
	for i, r := range rs {
		switch i % 5 {
		case 0: // a longer name: less of it covered
			r.NameSV += " med extra ord"
			r.NameEN += " with extra words"
		case 1: // only the name's head: more of it covered
			r.NameSV, _, _ = strings.Cut(r.NameSV, ",")
			r.NameEN, _, _ = strings.Cut(r.NameEN, ",")
		case 2:
			if i%10 == 2 {
				r.Withdrawn = true
			}
		default:
			continue
		}
		changed = append(changed, r)
	}
	if err := x.Upsert(ctx, changed); err != nil {
		t.Fatal(err)
	}
	n, _ := samePrefix(t, x, queries, [][]core.CatalogID{nil}, probe)
	t.Logf("%d answers compared after %d changes", n, len(changed))
}

// The name units kept per segment belong to one lexicon: asked with
// another (as after Resume), they are copied from it.
func TestSegmentNamesFollowTheLexicon(t *testing.T) {
	ctx := context.Background()
	rs := loadCatalog(t)[:50]
	x := newIndex(t, rs)
	snap, err := snapshotOf(ctx, x.reader)
	if err != nil {
		t.Fatal(err)
	}
	ids, ok, err := x.ids.of(snap, x.lex)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	key, _ := parseKey(ids.id(0))
	_, name, _ := unitAt(x.lex.docs[key].names(), 0) // the first name
	tq := analyzeQuery(strings.Join(func() []string {
		var ws []string
		for _, u := range x.lex.nameTexts(name) {
			ws = append(ws, u.head)
		}
		return ws
	}(), " "), x.lex)
	cq := newCoverQuery(tq, x.lex)
	if got, want := ids.coverage(0, cq), coverage(x.lex.docs[key], cq, new([]uint32)); got != want || got == 0 {
		t.Fatalf("doc 0 (%s) covered %v, its analysis %v", key, got, want)
	}
	other := newLexicon()
	ids2, ok, err := x.ids.of(snap, other)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if got := ids2.coverage(0, newCoverQuery(tq, other)); got != 0 {
		t.Fatalf("with a lexicon without the document: covered %v, want 0", got)
	}
	if got := ids.coverage(0, cq); got == 0 {
		t.Fatal("the first snapshot's names changed")
	}
}

// inCandidates against ranked's definition, on lists with large groups of
// equal scores at the cut (as many alike names give): the depth best by
// score, then id, and the further ones scoring as the depth-th, at most
// 2*depth; also with the documents below the depth-th best left out.
func TestInCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 2000; round++ {
		n := 1 + rng.IntN(400)
		levels := 1 + rng.IntN(6) // few distinct scores: long ties
		bm25 := make([]scoredDoc, n)
		for i := range bm25 {
			bm25[i] = scoredDoc{doc: uint64(i), score: float64(1 + rng.IntN(levels))}
		}
		rng.Shuffle(n, func(i, j int) { bm25[i], bm25[j] = bm25[j], bm25[i] })
		id := func(doc uint64) string { return fmt.Sprintf("national/%06d", (doc*7919)%100003) }
		depth := 1 + rng.IntN(60)
		var docs []uint64
		for _, i := range rng.Perm(n)[:1+rng.IntN(min(n, 50))] {
			docs = append(docs, uint64(i))
		}

		sorted := slices.Clone(bm25)
		slices.SortFunc(sorted, func(a, b scoredDoc) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return strings.Compare(id(a.doc), id(b.doc))
		})
		want := map[uint64]bool{}
		for i, c := range sorted[:min(n, 2*depth)] {
			if i >= depth && c.score != sorted[depth-1].score {
				break
			}
			want[c.doc] = true
		}
		scoreOf := map[uint64]float64{}
		for _, c := range bm25 {
			scoreOf[c.doc] = c.score
		}
		if round%2 == 1 && n > depth {
			// As rescoredTop keeps it: without documents below a bound
			// under the depth-th best score (some of docs among them).
			cut := sorted[depth-1].score - float64(rng.IntN(2))
			bm25 = keepAbove(bm25, cut)
		}
		got := inCandidates(bm25, docs, depth, id)
		for i, d := range docs {
			if got[i] != want[d] {
				t.Fatalf("round %d (n %d, depth %d, %d levels): doc %d (score %v) in %v, want %v", round, n, depth, levels, d, scoreOf[d], got[i], want[d])
			}
		}
	}
}

// leastIDs decides the documents scoring as the depth-th best as
// inCandidates does when they are all of them (placeKeys): the same
// candidates, on lists with long ties at the cut.
func TestLeastIDsAreTheTiedCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 2000; round++ {
		n := 1 + rng.IntN(400)
		levels := 1 + rng.IntN(4)
		found := make([]scoredDoc, n)
		for i := range found {
			found[i] = scoredDoc{doc: uint64(i), score: float64(1 + rng.IntN(levels))}
		}
		rng.Shuffle(n, func(i, j int) { found[i], found[j] = found[j], found[i] })
		id := func(doc uint64) string { return fmt.Sprintf("national/%06d", (doc*7919)%100003) }
		depth := 1 + rng.IntN(min(n, 60))
		last := nthScore(found, depth)
		above, _ := around(found, last)
		var tied []uint64
		for _, f := range found {
			if f.score == last {
				tied = append(tied, f.doc)
			}
		}
		got, want := leastIDs(tied, 2*depth-above, id), inCandidates(found, tied, depth, id)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d (n %d, depth %d, %d above, %d tied): %v, inCandidates %v", round, n, depth, above, len(tied), got, want)
		}
	}
}

// TestSegmentIDsAreTheStoredIDs: the ids the key cache reads from doc values
// are the stored _id of every document number of every segment, replaced
// and withdrawn documents included while segments hold them, in memory and
// on disk.
func TestSegmentIDsAreTheStoredIDs(t *testing.T) {
	ctx := context.Background()
	rs := loadCatalog(t)
	for _, where := range []string{"memory", "disk"} {
		t.Run(where, func(t *testing.T) {
			x := openAt(t, where)
			for i := 0; i < len(rs); i += 60 {
				if err := x.Upsert(ctx, rs[i:min(len(rs), i+60)]); err != nil {
					t.Fatal(err)
				}
			}
			renamed := slices.Clone(rs[:30])
			for i := range renamed {
				renamed[i].NameSV += " ny"
			}
			if err := x.Upsert(ctx, renamed); err != nil {
				t.Fatal(err)
			}
			if err := x.Remove(ctx, []core.Key{rs[40].Key(), rs[100].Key()}); err != nil {
				t.Fatal(err)
			}
			snap, err := snapshotOf(ctx, x.reader)
			if err != nil {
				t.Fatal(err)
			}
			docs := 0
			for _, ss := range snap.(*index.Snapshot).Segments() {
				seg := ss.(interface{ Segment() segment.Segment }).Segment()
				got, err := segmentIDs(seg)
				if err != nil {
					t.Fatal(err)
				}
				stored, err := storedSegmentIDs(seg)
				if err != nil {
					t.Fatal(err)
				}
				if got.count() != len(stored) {
					t.Fatalf("%d ids from doc values, %d stored", got.count(), len(stored))
				}
				for n, want := range stored {
					if want == "" || got.id(uint64(n)) != want {
						t.Fatalf("document %d: doc values say %q, stored %q", n, got.id(uint64(n)), want)
					}
					docs++
				}
			}
			// Replaced and withdrawn versions stay until a merge drops
			// them, which runs in the background: only the live ones are
			// sure to be there.
			if live := len(rs) - 2; docs < live {
				t.Fatalf("%d documents read, want the %d live ones at least", docs, live)
			}
		})
	}
}

// BenchmarkSegmentIDs reads the ids of every document of an index of 20
// copies of the real catalog (4,700 documents, one segment per change of
// 5,000) from doc values (segmentIDs) and, for comparison, from the stored
// fields, as the key cache did before:
//
//	go test -run '^$' -bench SegmentIDs -count 5 ./adapters/blugeindex/
func BenchmarkSegmentIDs(b *testing.B) {
	ctx := context.Background()
	x := openAt(b, "disk")
	all := copies(b, 20)
	if err := x.Upsert(ctx, all); err != nil {
		b.Fatal(err)
	}
	snap, err := snapshotOf(ctx, x.reader)
	if err != nil {
		b.Fatal(err)
	}
	var segs []segment.Segment
	for _, ss := range snap.(*index.Snapshot).Segments() {
		segs = append(segs, ss.(interface{ Segment() segment.Segment }).Segment())
	}
	docValues := func(seg segment.Segment) (any, error) { return segmentIDs(seg) }
	stored := func(seg segment.Segment) (any, error) { return storedSegmentIDs(seg) }
	for _, c := range []struct {
		name string
		read func(segment.Segment) (any, error)
	}{{"docvalues", docValues}, {"stored", stored}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for _, seg := range segs {
					if _, err := c.read(seg); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(all)), "ns/doc")
		})
	}
}

// storedSegmentIDs reads the _id of every document of a segment from its
// stored fields, as the key cache did before doc values.
func storedSegmentIDs(seg segment.Segment) ([]string, error) {
	ids := make([]string, seg.Count())
	for n := range ids {
		err := seg.VisitStoredFields(uint64(n), func(field string, value []byte) bool {
			if field == "_id" {
				ids[n] = string(value)
				return false
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}
