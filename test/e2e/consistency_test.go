package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// slowStore is the store with writes that take 50 ms more to return after
// they are committed (a slow disk's fsync): it widens the moment between a
// write reaching the store and reaching the index, so a reader that is not
// held back during a publication would see one without the other.
type slowStore struct{ ports.ResourceStore }

func (s slowStore) Apply(ctx context.Context, c core.CatalogID, ch ports.Changes) error {
	err := s.ResourceStore.Apply(ctx, c, ch)
	time.Sleep(50 * time.Millisecond)
	return err
}

// tag is the word only release k has: four letters, too short for typo
// correction, and no compound of another release's word.
func tag(k int) string { return string([]byte{'q', byte('a' + k%26), 'x', byte('a' + (k*7+3)%26)}) }

// TestNoMixedOrEmptyAnswersDuringIngest writes release after release of
// the same 200 dkbr resources (release k names every resource "Prøvesten
// TAG model i", TAG a word of its own, and sets its A1-A3 value to k) while readers list and
// search them. Every answer must come from one release (all values equal,
// every name of that release), a listing must hold all 200 resources (no
// empty or partial window while a release is written), and once a listing
// shows release k, a search for the word only release k has must find it
// unless a later listing shows that the next release has landed meanwhile.
// The writer checks that an ingest answers only once its change is
// searchable. The store is slowStore.
func TestNoMixedOrEmptyAnswersDuringIngest(t *testing.T) {
	e := newEnv(t, nil, fx.Decorate(func(s ports.ResourceStore) ports.ResourceStore { return slowStore{s} }))
	const n, releases = 200, 20
	batch := func(k int) []byte {
		b := core.ResourceBatch{Catalog: "dkbr", Version: fmt.Sprintf("R%d", k)}
		for i := range n {
			v := float64(k)
			b.Resources = append(b.Resources, core.BatchItem{
				ID: fmt.Sprintf("#P%04d", i), Name: fmt.Sprintf("Prøvesten %s model %d", tag(k), i),
				Unit: "kg", A1A3: &v,
			})
		}
		body, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	type item struct {
		ID     string   `json:"id"`
		NameDA string   `json:"name_da"`
		A1A3   *float64 `json:"a1a3"`
	}
	// read returns the release an answer comes from (0 when it has no
	// resources) and how many resources it holds, or an error saying what
	// is wrong with it.
	read := func(path, field string) (release, count int, err error) {
		resp, err := http.Get(e.URL + path)
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		var ans map[string]json.RawMessage
		var items []item
		if err := json.Unmarshal(body, &ans); err != nil {
			return 0, 0, err
		}
		if err := json.Unmarshal(ans[field], &items); err != nil {
			return 0, 0, err
		}
		for _, it := range items {
			k := int(*it.A1A3)
			if release != 0 && k != release {
				return 0, 0, fmt.Errorf("GET %s mixes releases %d and %d", path, release, k)
			}
			if !strings.Contains(it.NameDA, " "+tag(k)+" ") {
				return 0, 0, fmt.Errorf("GET %s: %s of release %d is named %q", path, it.ID, k, it.NameDA)
			}
			release = k
		}
		return release, len(items), nil
	}
	const list = "/api/resources?databases=dkbr"
	search := func(k int) string { return "/api/search?databases=dkbr&limit=100&q=" + tag(k) }

	post := func(k int) {
		r := e.do(http.MethodPost, "/admin/resources", batch(k), nil)
		if r.Status != http.StatusOK {
			t.Fatalf("release %d: %d %s", k, r.Status, r.Body)
		}
	}
	post(1)

	var done atomic.Bool
	var readers sync.WaitGroup
	errs := make(chan error, 64)
	var pairs atomic.Int64
	for range 3 {
		readers.Go(func() {
			for !done.Load() {
				listed, count, err := read(list, "resources")
				if err == nil && count != n {
					err = fmt.Errorf("the listing holds %d resources, want %d", count, n)
				}
				if err != nil {
					errs <- err
					return
				}
				found, hits, err := read(search(listed), "results")
				if err != nil {
					errs <- err
					return
				}
				again, _, err := read(list, "resources")
				if err != nil {
					errs <- err
					return
				}
				if again == listed && (found != listed || hits != 100) {
					errs <- fmt.Errorf("the listing showed release %d before and after a search for its word, which found %d hits of release %d", listed, hits, found)
					return
				}
				pairs.Add(1)
			}
		})
	}
	for k := 2; k <= releases; k++ {
		post(k)
		// The ingest has answered: its change is searchable.
		if got, hits, err := read(search(k), "results"); err != nil || got != k || hits != 100 {
			t.Errorf("right after release %d answered, its search finds %d hits of release %d (%v)", k, hits, got, err)
		}
	}
	done.Store(true)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d listing-search-listing rounds during %d releases", pairs.Load(), releases-1)
}

// TestKeptAnswersFollowWrites asks the same search, lookup, listing and
// comparison before and after a write of the resource they show: answers
// are kept between writes (adapters/httpapi/answers.go), and a write must
// never leave an old one served.
func TestKeptAnswersFollowWrites(t *testing.T) {
	e := newEnv(t, nil)
	write := func(name string, a1a3 float64) {
		body := fmt.Sprintf(`{"catalog":"dkbr","version":"T","resources":[{"id":"#K1","name":%q,"unit":"kg","a1a3":%g},{"id":"#K2","name":"Kalksten referenceblok","unit":"kg","a1a3":1}]}`, name, a1a3)
		if r := e.do(http.MethodPost, "/admin/resources", []byte(body), nil); r.Status != http.StatusOK {
			t.Fatalf("batch: %d %s", r.Status, r.Body)
		}
	}
	paths := []string{
		"/api/search?databases=dkbr&q=kalksten",
		"/api/resources/" + url.PathEscape("dkbr:#K1"),
		"/api/resources?databases=dkbr",
		"/api/resources/compare?a=" + q("dkbr:#K1") + "&b=" + q("dkbr:#K2") + "&unit=kg",
	}
	write("Kalksten blok", 2)
	for _, p := range paths {
		for range 2 { // the second answer is the kept one
			if r := e.get(p); r.Status != http.StatusOK || !contains(string(r.Body), "Kalksten blok") || !contains(string(r.Body), "2") {
				t.Fatalf("GET %s before the write: %d %.300s", p, r.Status, r.Body)
			}
		}
	}
	write("Kalksten plade", 7.5)
	for _, p := range paths {
		r := e.get(p)
		if r.Status != http.StatusOK || contains(string(r.Body), "Kalksten blok") || !contains(string(r.Body), "Kalksten plade") || !contains(string(r.Body), "7.5") {
			t.Errorf("GET %s after the write still shows the old resource: %d %.300s", p, r.Status, r.Body)
		}
	}
}
