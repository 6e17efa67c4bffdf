package binary

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// realCount is the number of national resources of the real 02.06 sv +
// 02.07 en releases: every id of either export with an A1-A3 typical value.
func realA1A3(t *testing.T) map[string]float64 {
	t.Helper()
	realExports(t)
	return mergeA1A3(a1a3Of(t, sv0206), a1a3Of(t, en0207))
}

// TestPublisherDownThenUpThenDown boots three times on one data directory:
//  1. empty store, publisher down: the demo snapshot is served;
//  2. publisher up: the real release replaces the snapshot;
//  3. publisher down again: the real data is kept, not the snapshot.
func TestPublisherDownThenUpThenDown(t *testing.T) {
	t.Parallel()
	want := realA1A3(t)
	dir := t.TempDir()
	const particleBoard = "6000000000"
	const notInSnapshot = "6000000157" // only in 02.06.000: not in the current release

	// 1. Empty store, publisher unreachable.
	down := downPublisher(t)
	env := baseEnv(dir)
	for k, v := range publisherEnv(down) {
		env[k] = v
	}
	p := start(t, env)
	var health struct{ Status string }
	p.getJSON("/healthz", &health)
	if health.Status != "ok" {
		t.Errorf("/healthz status %q, want ok", health.Status)
	}
	snap := p.pollNational("the demo snapshot (the 230 resources of 02.07.000)", func(m map[string]resource) bool { return len(m) >= 230 })
	if len(snap) >= len(want) {
		t.Fatalf("with the publisher down the store holds %d resources, as many as the real release (%d): not the snapshot", len(snap), len(want))
	}
	if _, ok := snap[notInSnapshot]; ok {
		t.Fatalf("national:%s is in the snapshot; pick another resource for this test", notInSnapshot)
	}
	if r, ok := snap[particleBoard]; !ok {
		t.Fatalf("the snapshot lacks national:%s", particleBoard)
	} else if r.DescriptionSV != "" {
		t.Fatalf("the snapshot holds a description of %s; the test relies on it being facts only", particleBoard)
	}
	// The index is updated just after the store commits, so the listing
	// can show the snapshot a moment before search finds it: poll.
	deadline := time.Now().Add(patience)
	for {
		var sr struct {
			Results []resource `json:"results"`
		}
		p.getJSON("/api/search?q="+url.QueryEscape("betong"), &sr)
		if len(sr.Results) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("search for betong over the snapshot never found anything")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if down.Requests("") == 0 {
		t.Errorf("the boot ingest never asked the publisher")
	}
	// The catalog says it serves the demo snapshot, not a release.
	var cats struct {
		Catalogs []struct {
			ID      string `json:"id"`
			Version string `json:"version"`
			Demo    bool   `json:"demo"`
			Live    int    `json:"live"`
		} `json:"catalogs"`
	}
	p.getJSON("/api/catalogs", &cats)
	if len(cats.Catalogs) == 0 || cats.Catalogs[0].ID != "national" || !cats.Catalogs[0].Demo ||
		!strings.HasPrefix(cats.Catalogs[0].Version, "demo-") || cats.Catalogs[0].Live != len(snap) {
		t.Errorf("/api/catalogs over the demo snapshot: %+v", cats.Catalogs)
	}
	p.stop()

	// 2. Same store, the publisher now serves the real exports.
	up := publisher(t)
	env = baseEnv(dir)
	for k, v := range publisherEnv(up) {
		env[k] = v
	}
	p = start(t, env)
	if l := p.bootIngestDone(); l.str("msg") != "ingest finished" {
		t.Fatalf("boot ingest against the real exports: %v", l)
	}
	got := p.national()
	checkReal(t, got, want)
	if got[particleBoard].DescriptionSV == "" || got[particleBoard].Synonyms == "" {
		t.Errorf("national:%s kept the snapshot's facts-only record: description %q, synonyms %q",
			particleBoard, got[particleBoard].DescriptionSV, got[particleBoard].Synonyms)
	}
	p.getJSON("/api/catalogs", &cats)
	if cats.Catalogs[0].Demo || cats.Catalogs[0].Version != "02.07.000" {
		t.Errorf("/api/catalogs after the real release: %+v", cats.Catalogs[0])
	}
	var one resource
	p.getJSON("/api/resources/national:"+particleBoard, &one)
	if one.DescriptionSV == "" {
		t.Errorf("GET national:%s has no description after the real ingest", particleBoard)
	}
	p.stop()

	// 3. Same store, publisher down again: the real data stays.
	down2 := downPublisher(t)
	env = baseEnv(dir)
	for k, v := range publisherEnv(down2) {
		env[k] = v
	}
	p = start(t, env)
	if l := p.bootIngestDone(); l.str("msg") != "ingest failed" {
		t.Fatalf("boot ingest with the publisher down ended with %v, want a failure", l)
	}
	if down2.Requests("") == 0 {
		t.Errorf("the boot ingest never asked the publisher")
	}
	got = p.national()
	checkReal(t, got, want)
	if _, ok := got[notInSnapshot]; !ok {
		t.Errorf("national:%s (not in the snapshot) vanished", notInSnapshot)
	}
	if got[particleBoard].DescriptionSV == "" {
		t.Errorf("national:%s lost its real description", particleBoard)
	}
	resp, err := client.Get(p.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz = %s with the publisher down", resp.Status)
	}
	p.stop()
}

// checkReal compares the listing with the values decoded from the exports.
func checkReal(t *testing.T, got map[string]resource, want map[string]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("the listing holds %d national resources, the real release %d", len(got), len(want))
	}
	bad := 0
	for id, w := range want {
		r, ok := got[id]
		switch {
		case !ok:
			t.Errorf("national:%s is missing", id)
		case r.A1A3 == nil || *r.A1A3 != w:
			t.Errorf("national:%s a1a3 = %v, want %v", id, deref(r.A1A3), w)
		default:
			continue
		}
		if bad++; bad > 10 {
			t.Fatal("too many differences")
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
