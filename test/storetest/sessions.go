package storetest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/adapters/console"
	"github.com/climatesearch/climatesearch/core"
)

// DeleteKV removes a value at once and for good; an absent key is no
// error; after Close it fails as unavailable.
func testKVDelete(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t)
	must(t, s.PutTTL(ctx, "gone", []byte("v"), time.Hour))
	must(t, s.PutTTL(ctx, "kept", []byte("v"), 0))
	must(t, s.DeleteKV(ctx, "gone"))
	must(t, s.DeleteKV(ctx, "gone"))
	must(t, s.DeleteKV(ctx, "never-there"))
	if _, ok, err := s.GetKV(ctx, "gone"); err != nil || ok {
		t.Fatalf("GetKV after DeleteKV = %v, %v", ok, err)
	}
	must(t, s.Close())
	if err := s.DeleteKV(ctx, "kept"); core.KindOf(err) != core.KindUnavailable {
		t.Fatalf("DeleteKV after Close = %v; want an unavailable error", err)
	}
	s = open(t, b)
	if _, ok, err := s.GetKV(ctx, "gone"); err != nil || ok {
		t.Fatalf("GetKV of a deleted key after reopen = %v, %v", ok, err)
	}
	if v, ok, err := s.GetKV(ctx, "kept"); err != nil || !ok || string(v) != "v" {
		t.Fatalf("GetKV of a kept key after reopen = %q, %v, %v", v, ok, err)
	}
}

const consoleToken = "storetest-admin-token"

// operatorConsole is one console instance (one replica's) over a store.
type operatorConsole struct {
	c *console.Console
	h http.Handler
}

func newOperatorConsole(t *testing.T, s Store, now func() time.Time) operatorConsole {
	t.Helper()
	gin.SetMode(gin.TestMode)
	c, err := console.New(console.Deps{AdminToken: consoleToken, Sessions: s, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	e := gin.New()
	c.Mount(e)
	return operatorConsole{c: c, h: e}
}

func (oc operatorConsole) post(path string, form url.Values, ck *http.Cookie) *http.Response {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if ck != nil {
		req.AddCookie(ck)
	}
	w := httptest.NewRecorder()
	oc.h.ServeHTTP(w, req)
	return w.Result()
}

// signIn posts the admin token to the sign-in form and returns the
// session cookie.
func (oc operatorConsole) signIn(t *testing.T) *http.Cookie {
	t.Helper()
	res := oc.post("/signin", url.Values{"token": {consoleToken}, "next": {"/webhooks"}}, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/webhooks" {
		t.Fatalf("sign-in answered %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	for _, ck := range res.Cookies() {
		if ck.Name == "cs_session" {
			if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.MaxAge != 8*3600 ||
				len(ck.Value) != 64 || strings.Contains(ck.Value, consoleToken) {
				t.Fatalf("session cookie %+v", ck)
			}
			return ck
		}
	}
	t.Fatal("sign-in set no session cookie")
	return nil
}

func (oc operatorConsole) signedIn(ck *http.Cookie) bool {
	req := httptest.NewRequest(http.MethodGet, "/webhooks", nil)
	req.AddCookie(ck)
	return oc.c.SignedIn(req)
}

// The console keeps its sessions in the store: a session made through one
// console is honoured by another over the same store (another replica), a
// sign-out on either ends it for both, a reopened store keeps it, and an
// expired one is refused.
func testConsoleSessions(t *testing.T, b Backend) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := b.Open(t)
	a, other := newOperatorConsole(t, s, clock), newOperatorConsole(t, s, clock)

	ck := a.signIn(t)
	if !a.signedIn(ck) || !other.signedIn(ck) {
		t.Fatal("a fresh session is not honoured by both consoles")
	}
	forged := *ck
	forged.Value = strings.Repeat("0", 64)
	if a.signedIn(&forged) {
		t.Fatal("a made-up session id signs in")
	}
	if res := other.post("/signout", nil, ck); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out answered %d", res.StatusCode)
	}
	if a.signedIn(ck) || other.signedIn(ck) {
		t.Fatal("a session signed out on one console is still valid")
	}

	ck = a.signIn(t)
	kept := other.signIn(t)
	must(t, s.Close())
	s = open(t, b)
	again := newOperatorConsole(t, s, clock)
	if !again.signedIn(ck) || !again.signedIn(kept) {
		t.Fatal("a session did not survive reopening the store")
	}

	mu.Lock()
	now = now.Add(8*time.Hour - time.Second)
	mu.Unlock()
	if !again.signedIn(ck) {
		t.Fatal("a session expired early")
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if again.signedIn(ck) || again.signedIn(kept) {
		t.Fatal("an expired session is still valid")
	}
}
