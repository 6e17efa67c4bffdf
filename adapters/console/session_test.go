package console

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// sessionKV counts the store's session reads and fails when told to.
type sessionKV struct {
	memKV
	reads atomic.Int64
	down  atomic.Bool
}

var errDown = core.Unavailablef(errors.New("connection refused"), "store: unreachable")

func (k *sessionKV) PutTTL(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if k.down.Load() {
		return errDown
	}
	return k.memKV.PutTTL(ctx, key, v, ttl)
}

func (k *sessionKV) GetKV(ctx context.Context, key string) ([]byte, bool, error) {
	k.reads.Add(1)
	if k.down.Load() {
		return nil, false, errDown
	}
	return k.memKV.GetKV(ctx, key)
}

func (k *sessionKV) DeleteKV(ctx context.Context, key string) error {
	if k.down.Load() {
		return errDown
	}
	return k.memKV.DeleteKV(ctx, key)
}

func (k *sessionKV) TakeKV(ctx context.Context, key string) ([]byte, bool, error) {
	if k.down.Load() {
		return nil, false, errDown
	}
	return k.memKV.TakeKV(ctx, key)
}

// noCatalogs is a Status whose overview is empty (every page's header).
type noCatalogs struct{ ports.Status }

func (noCatalogs) Overview(context.Context) ([]core.CatalogStatus, error) { return nil, nil }

func sessionConsole(t *testing.T) (*sessionKV, http.Handler) {
	t.Helper()
	gin.SetMode(gin.TestMode)
	kv := &sessionKV{memKV: memKV{now: time.Now, m: map[string]memValue{}}}
	c, err := New(Deps{AdminToken: "tok", Sessions: kv, Status: noCatalogs{}})
	if err != nil {
		t.Fatal(err)
	}
	e := gin.New()
	c.Mount(e)
	return kv, e
}

func serve(h http.Handler, method, path string, form url.Values, ck *http.Cookie) *http.Response {
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	if ck != nil {
		req.AddCookie(ck)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func sessionCookieOf(res *http.Response) *http.Cookie {
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookie {
			return ck
		}
	}
	return nil
}

// A page that needs sign-in reads the session once, though both the
// sign-in check and the page's header ask; a made-up cookie costs no read.
func TestSessionReadOncePerRequest(t *testing.T) {
	kv, h := sessionConsole(t)
	ck := sessionCookieOf(serve(h, http.MethodPost, "/signin", url.Values{"token": {"tok"}}, nil))
	if ck == nil {
		t.Fatal("no session cookie")
	}
	kv.reads.Store(0)
	if res := serve(h, http.MethodGet, "/ingest", nil, ck); res.StatusCode != http.StatusOK {
		t.Fatalf("GET /ingest signed in: %d", res.StatusCode)
	}
	if n := kv.reads.Load(); n != 1 {
		t.Fatalf("%d session reads for one page", n)
	}
	kv.reads.Store(0)
	res := serve(h, http.MethodGet, "/ingest", nil, &http.Cookie{Name: sessionCookie, Value: "made-up"})
	if res.StatusCode != http.StatusSeeOther || kv.reads.Load() != 0 {
		t.Fatalf("a made-up cookie: %d after %d reads", res.StatusCode, kv.reads.Load())
	}
}

// When the store cannot be reached, a signed-in operator gets 503, not the
// sign-in form; signing in says the session could not be stored and sets
// no cookie; signing out fails and keeps the cookie, so it can be tried
// again.
func TestSessionsWhenTheStoreIsDown(t *testing.T) {
	kv, h := sessionConsole(t)
	ck := sessionCookieOf(serve(h, http.MethodPost, "/signin", url.Values{"token": {"tok"}}, nil))
	kv.down.Store(true)
	if res := serve(h, http.MethodGet, "/ingest", nil, ck); res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("GET /ingest with the store down: %d", res.StatusCode)
	}
	res := serve(h, http.MethodPost, "/signin", url.Values{"token": {"tok"}}, nil)
	if res.StatusCode != http.StatusServiceUnavailable || sessionCookieOf(res) != nil {
		t.Fatalf("sign-in with the store down: %d, cookie %v", res.StatusCode, sessionCookieOf(res))
	}
	res = serve(h, http.MethodPost, "/signout", nil, ck)
	if res.StatusCode != http.StatusServiceUnavailable || sessionCookieOf(res) != nil {
		t.Fatalf("sign-out with the store down: %d, cookie %v", res.StatusCode, sessionCookieOf(res))
	}
	kv.down.Store(false)
	if res := serve(h, http.MethodPost, "/signout", nil, ck); res.StatusCode != http.StatusSeeOther || sessionCookieOf(res).MaxAge >= 0 {
		t.Fatalf("sign-out: %d", res.StatusCode)
	}
	if res := serve(h, http.MethodGet, "/ingest", nil, ck); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("GET /ingest after sign-out: %d", res.StatusCode)
	}
}
