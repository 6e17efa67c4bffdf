package boverket_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/boverket"
	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

var (
	_ ports.CatalogSource = (*boverket.JSONSource)(nil)
	_ ports.CatalogSource = (*boverket.ExcelSource)(nil)
)

// publisher serves the real 02.06 sv and 02.07 en exports.
func publisher(t *testing.T) *boverkettest.Server {
	t.Helper()
	s := boverkettest.NewServer(t)
	s.SetJSON("sv", boverkettest.LoadExport(t, boverkettest.Export0206SV))
	s.SetJSON("en", boverkettest.LoadExport(t, boverkettest.Export0207EN))
	return s
}

func TestJSONSourceFetch(t *testing.T) {
	t.Parallel()
	s := publisher(t)
	src := boverket.NewJSONSource(boverket.Config{BaseURL: s.URL + "/", SubscriptionKey: "k3y", Timeout: 10 * time.Second})
	if src.Name() != "boverket-json" {
		t.Errorf("name %q", src.Name())
	}
	rel, err := src.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rel.Catalog != core.National || rel.Origin != core.OriginJSON || !rel.Complete || rel.Version != "02.07.000" || rel.Rejected != 0 {
		t.Errorf("release %s %s complete=%v version %q rejected %d", rel.Catalog, rel.Origin, rel.Complete, rel.Version, rel.Rejected)
	}
	if len(rel.Resources) != 235 {
		t.Fatalf("%d resources, want 235", len(rel.Resources))
	}
	got := byID(rel.Resources)
	for _, want := range want0206sv0207en {
		for _, d := range diffResource(got[want.ID], want) {
			t.Errorf("%s %s", want.ID, d)
		}
	}
	if n := s.Requests(boverkettest.JSONPathPrefix); n != 2 {
		t.Errorf("%d export requests, want 2", n)
	}
	if v := s.Versions(); len(v) != 2 || v[0] != "latest" || v[1] != "latest" {
		t.Errorf("versions asked %v, want latest twice", v)
	}
	if k := s.LastHeader(boverkettest.JSONPathPrefix, "Ocp-Apim-Subscription-Key"); k != "k3y" {
		t.Errorf("subscription key header %q", k)
	}
	if a := s.LastHeader(boverkettest.JSONPathPrefix, "Accept"); a != "application/json" {
		t.Errorf("accept header %q", a)
	}
}

func TestJSONSourceAsksForTheConfiguredVersionWithoutKey(t *testing.T) {
	t.Parallel()
	s := publisher(t)
	src := boverket.NewJSONSource(boverket.Config{BaseURL: s.URL, Version: "02.07.000"})
	if _, err := src.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := s.Versions(); len(v) != 2 || v[0] != "02.07.000" {
		t.Errorf("versions asked %v", v)
	}
	if k := s.LastHeader(boverkettest.JSONPathPrefix, "Ocp-Apim-Subscription-Key"); k != "" {
		t.Errorf("key sent though none configured: %q", k)
	}
	if u := src.URL("sv"); u != s.URL+"/api/Klimat/v2/GetAllResources/02.07.000/sv/json" {
		t.Errorf("URL %q", u)
	}
}

func TestJSONSourceFailures(t *testing.T) {
	t.Parallel()
	svBody := boverkettest.LoadExport(t, boverkettest.Export0206SV)
	enBody := boverkettest.LoadExport(t, boverkettest.Export0207EN)
	empty := boverkettest.MutateExport(t, enBody, func([]map[string]any) []map[string]any { return nil }, "")
	cases := []struct {
		name    string
		setup   func(s *boverkettest.Server)
		cfg     func(c *boverket.Config)
		culture string // whose URL the error names; "" = either
		cause   string
	}{
		{"http 500", func(s *boverkettest.Server) { s.FailJSON(http.StatusInternalServerError) }, nil, "", "HTTP 500"},
		{"timeout", func(s *boverkettest.Server) { s.Hang(true) }, func(c *boverket.Config) { c.Timeout = 100 * time.Millisecond }, "", "timed out after 100ms"},
		{"unparsable body", func(s *boverkettest.Server) { s.SetJSON("en", []byte(`{"Resources": [`)) }, nil, "en", "unparsable body"},
		{"html instead of json", func(s *boverkettest.Server) { s.SetJSON("sv", []byte("<html>maintenance</html>")) }, nil, "sv", "unparsable body"},
		{"zero resources", func(s *boverkettest.Server) { s.SetJSON("en", empty) }, nil, "en", "no resources"},
		{"English missing", func(s *boverkettest.Server) { s.SetJSON("en", nil) }, nil, "en", "HTTP 404"},
		{"Swedish missing", func(s *boverkettest.Server) { s.SetJSON("sv", nil) }, nil, "sv", "HTTP 404"},
		{"wrong culture", func(s *boverkettest.Server) { s.SetJSON("sv", enBody) }, nil, "sv", `culture is "en-gb"`},
		{"body over the cap", nil, func(c *boverket.Config) { c.MaxBodyBytes = 1 << 20 }, "", "exceeds the cap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := boverkettest.NewServer(t)
			s.SetJSON("sv", svBody)
			s.SetJSON("en", enBody)
			if c.setup != nil {
				c.setup(s)
			}
			cfg := boverket.Config{BaseURL: s.URL, Timeout: 5 * time.Second}
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			src := boverket.NewJSONSource(cfg)
			start := time.Now()
			rel, err := src.Fetch(context.Background())
			if err == nil {
				t.Fatalf("no error; release of %d resources", len(rel.Resources))
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.Contains(msg, c.cause) || !strings.Contains(msg, "boverket-json") {
				t.Errorf("error %q does not name the source and cause %q", msg, c.cause)
			}
			wantURL := s.URL + "/api/Klimat/v2/GetAllResources/latest/"
			if c.culture != "" {
				wantURL = src.URL(c.culture)
			}
			if !strings.Contains(msg, wantURL) {
				t.Errorf("error %q does not name the URL %s", msg, wantURL)
			}
			if core.KindOf(err) != core.KindUnavailable {
				t.Errorf("kind %v, want unavailable", core.KindOf(err))
			}
			if len(rel.Resources) != 0 {
				t.Errorf("a failed fetch returned %d resources", len(rel.Resources))
			}
		})
	}
}

func TestJSONSourceTimeoutIsDeadlineExceeded(t *testing.T) {
	t.Parallel()
	s := publisher(t)
	s.Hang(true)
	_, err := boverket.NewJSONSource(boverket.Config{BaseURL: s.URL, Timeout: 50 * time.Millisecond}).Fetch(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v is not a deadline", err)
	}
}

func TestJSONSourceHonoursCallerCancel(t *testing.T) {
	t.Parallel()
	s := publisher(t)
	s.Hang(true)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := boverket.NewJSONSource(boverket.Config{BaseURL: s.URL, Timeout: time.Minute}).Fetch(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v is not a cancellation", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancel took %v", time.Since(start))
	}
}

func TestJSONSourceCountsRejectedRows(t *testing.T) {
	t.Parallel()
	noID := func(rs []map[string]any) []map[string]any {
		for _, r := range rs {
			if boverkettest.ResourceID(r) == "6000000000" {
				delete(r, "ResourceId")
			}
		}
		return rs
	}
	s := boverkettest.NewServer(t)
	s.SetJSON("sv", boverkettest.MutateExport(t, boverkettest.LoadExport(t, boverkettest.Export0206SV), noID, ""))
	s.SetJSON("en", boverkettest.MutateExport(t, boverkettest.LoadExport(t, boverkettest.Export0207EN), noID, ""))
	rel, err := boverket.NewJSONSource(boverket.Config{BaseURL: s.URL}).Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rel.Rejected != 2 || len(rel.Resources) != 234 {
		t.Errorf("rejected %d, %d resources; want 2 and 234", rel.Rejected, len(rel.Resources))
	}
}

// The API key must not follow a redirect to another host.
func TestJSONSourceKeepsTheKeyOnItsHost(t *testing.T) {
	t.Parallel()
	s := publisher(t)
	var gotKey []string
	var mu sync.Mutex
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotKey = append(gotKey, r.Header.Get("Ocp-Apim-Subscription-Key"))
		mu.Unlock()
		http.Redirect(w, r, s.URL+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(front.Close)
	rel, err := boverket.NewJSONSource(boverket.Config{BaseURL: front.URL, SubscriptionKey: "k3y"}).Fetch(context.Background())
	if err != nil || len(rel.Resources) != 235 {
		t.Fatalf("fetch through a redirect: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gotKey) != 2 || gotKey[0] != "k3y" || gotKey[1] != "k3y" {
		t.Errorf("keys seen by the API host: %q", gotKey)
	}
	if k := s.LastHeader(boverkettest.JSONPathPrefix, "Ocp-Apim-Subscription-Key"); k != "" {
		t.Errorf("the key followed the redirect to another host: %q", k)
	}
}
