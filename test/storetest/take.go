package storetest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/adapters/console"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// TakeKV reads and deletes in one step: of takers racing for one key, one
// gets the value; a taken key is gone for GetKV and TakeKV; an expired
// value is not taken; after Close it fails as unavailable.
func testKVTake(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t)
	t.Cleanup(func() { _ = s.Close() })

	if _, ok, err := s.TakeKV(ctx, "never-there"); err != nil || ok {
		t.Fatalf("TakeKV of an absent key = %v, %v", ok, err)
	}
	must(t, s.PutTTL(ctx, "forever", []byte("v0"), 0))
	if v, ok, err := s.TakeKV(ctx, "forever"); err != nil || !ok || string(v) != "v0" {
		t.Fatalf("TakeKV of a value without TTL = %q, %v, %v", v, ok, err)
	}

	for round := range 5 {
		must(t, s.PutTTL(ctx, "once", []byte("secret"), time.Hour))
		const takers = 8
		var got atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range takers {
			wg.Go(func() {
				<-start
				v, ok, err := s.TakeKV(ctx, "once")
				if err != nil {
					t.Errorf("round %d: TakeKV: %v", round, err)
					return
				}
				if ok {
					if string(v) != "secret" {
						t.Errorf("round %d: took %q", round, v)
					}
					got.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if n := got.Load(); n != 1 {
			t.Fatalf("round %d: %d of %d racing takers got the value", round, n, takers)
		}
		if _, ok, err := s.GetKV(ctx, "once"); err != nil || ok {
			t.Fatalf("GetKV after TakeKV = %v, %v", ok, err)
		}
		if _, ok, err := s.TakeKV(ctx, "once"); err != nil || ok {
			t.Fatalf("a second TakeKV = %v, %v", ok, err)
		}
	}

	// An expired value is not taken (PostgreSQL keeps its row until a
	// later expiring write purges it: the take must not return it).
	must(t, s.PutTTL(ctx, "short", []byte("v1"), time.Second))
	waitExpired(t, s, "short")
	if v, ok, err := s.TakeKV(ctx, "short"); err != nil || ok {
		t.Fatalf("TakeKV of an expired value = %q, %v, %v", v, ok, err)
	}

	must(t, s.PutTTL(ctx, "kept", []byte("v"), 0))
	must(t, s.Close())
	if _, _, err := s.TakeKV(ctx, "kept"); core.KindOf(err) != core.KindUnavailable {
		t.Fatalf("TakeKV after Close = %v; want an unavailable error", err)
	}
	s = open(t, b)
	if v, ok, err := s.TakeKV(ctx, "kept"); err != nil || !ok || string(v) != "v" {
		t.Fatalf("TakeKV after reopen = %q, %v, %v", v, ok, err)
	}
}

// destinations is the webhooks service the consoles of a test share, in
// memory (the flashes are what is under test): a new destination gets a
// new secret, shown by its answer once and masked by Get.
type destinations struct {
	ports.Webhooks
	mu     sync.Mutex
	m      map[string]core.Destination
	secret string
}

func (d *destinations) Create(_ context.Context, in core.DestinationInput) (core.Destination, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dst := core.Destination{ID: fmt.Sprintf("wh_%d", len(d.m)+1), URL: *in.URL, Secret: "whsec_" + rand.Text(), Enabled: true}
	d.m[dst.ID], d.secret = dst, dst.Secret
	return dst, nil
}

func (d *destinations) Get(_ context.Context, id string) (core.Destination, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dst, ok := d.m[id]
	if !ok {
		return dst, core.NotFoundf("no webhook destination %s", id)
	}
	dst.Secret = dst.Secret[:10] + "…"
	return dst, nil
}

func (d *destinations) Deliveries(_ context.Context, id string, _ int) (core.DeliveryLog, error) {
	return core.DeliveryLog{DestinationID: id}, nil
}

func (d *destinations) lastSecret() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.secret
}

// noOverview is a Status whose overview (every page's header) is empty.
type noOverview struct{ ports.Status }

func (noOverview) Overview(context.Context) ([]core.CatalogStatus, error) { return nil, nil }

// newFlashConsole is one console instance (one replica's) over a store,
// with the webhooks service hooks.
func newFlashConsole(t *testing.T, s Store, hooks ports.Webhooks) operatorConsole {
	t.Helper()
	gin.SetMode(gin.TestMode)
	c, err := console.New(console.Deps{AdminToken: consoleToken, Sessions: s, Webhooks: hooks, Status: noOverview{}})
	if err != nil {
		t.Fatal(err)
	}
	e := gin.New()
	c.Mount(e)
	return operatorConsole{c: c, h: e}
}

// get opens path on the console as a browser that does not follow
// redirects.
func (oc operatorConsole) get(path string, ck *http.Cookie) (int, string) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if ck != nil {
		req.AddCookie(ck)
	}
	w := httptest.NewRecorder()
	oc.h.ServeHTTP(w, req)
	return w.Code, w.Body.String()
}

// The console keeps its flashes in the store: the outcome of a form posted
// to one console (a webhook destination added, its secret) is shown by
// another over the same store (the redirected GET served by another
// replica), once, and only to the session that posted it; a reopened store
// keeps a flash not yet shown.
func testConsoleFlashes(t *testing.T, b Backend) {
	s := b.Open(t)
	t.Cleanup(func() { _ = s.Close() })
	hooks := &destinations{m: map[string]core.Destination{}}
	a, other := newFlashConsole(t, s, hooks), newFlashConsole(t, s, hooks)
	ck := a.signIn(t)

	add := func() (loc, secret string) {
		t.Helper()
		res := a.post("/webhooks", url.Values{"url": {"https://receiver.example/hook"}}, ck)
		loc = res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "?flash=") {
			t.Fatalf("adding a destination answered %d to %q", res.StatusCode, loc)
		}
		return loc, hooks.lastSecret()
	}
	loc, secret := add()
	stranger := other.signIn(t)
	if code, body := other.get(loc, stranger); code != http.StatusOK || strings.Contains(body, secret) {
		t.Fatalf("another session opening the flash's URL: %d, secret shown: %v", code, strings.Contains(body, secret))
	}
	if code, body := other.get(loc, ck); code != http.StatusOK || !strings.Contains(body, secret) || !strings.Contains(body, "Destination added.") {
		t.Fatalf("the second console does not show the first's flash: %d", code)
	}
	for _, c := range []operatorConsole{a, other} {
		if code, body := c.get(loc, ck); code != http.StatusOK || strings.Contains(body, secret) {
			t.Fatalf("the secret is shown again: %d", code)
		}
	}

	loc, secret = add()
	must(t, s.Close())
	s = open(t, b)
	again := newFlashConsole(t, s, hooks)
	if code, body := again.get(loc, ck); code != http.StatusOK || !strings.Contains(body, secret) {
		t.Fatalf("a flash did not survive reopening the store: %d", code)
	}
	if _, body := again.get(loc, ck); strings.Contains(body, secret) {
		t.Fatal("the secret is shown again after reopening the store")
	}
}
