package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// Sessions of signed-in operators. The cookie holds a random session id,
// never the admin token. Sessions are kept in the store (ports.KV), under
// the SHA-256 of the id, so a leaked store row signs nobody in: every
// replica over a shared store honours a session created on any other, a
// sign-out on one ends it on all at once (nothing is cached), and a restart
// keeps them. A console request reads its session once (the hosted build's
// guard reads it once more); the expiry is the value, checked by the
// reading replica's clock, and the store forgets the row after it.
const (
	sessionCookie = "cs_session"
	sessionTTL    = 8 * time.Hour
	sessionPrefix = "session/"
	// maxSessions bounds the values (sessions, flashes) each memKV keeps
	// when no store is given.
	maxSessions = 1000
)

type sessions struct {
	kv  ports.KV
	now func() time.Time
}

// newSessions keeps sessions in kv; in memory when kv is nil (tests).
func newSessions(kv ports.KV, now func() time.Time) *sessions {
	if kv == nil {
		kv = &memKV{now: now, m: map[string]memValue{}}
	}
	return &sessions{kv: kv, now: now}
}

func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// sessionKey is where the session is kept: the hash of its id.
func sessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return sessionPrefix + hex.EncodeToString(sum[:])
}

// wellFormed tells whether id can be a session id (64 hex digits), so a
// made-up cookie costs no store read.
func wellFormed(id string) bool {
	if len(id) != 64 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// create starts a session; the store keeps its expiry as the value (read by
// the console's clock) and forgets it after sessionTTL.
func (s *sessions) create(ctx context.Context) (string, time.Time, error) {
	id := randomID()
	exp := s.now().Add(sessionTTL)
	err := s.kv.PutTTL(ctx, sessionKey(id), []byte(exp.UTC().Format(time.RFC3339Nano)), sessionTTL)
	return id, exp, err
}

func (s *sessions) valid(ctx context.Context, id string) (bool, error) {
	if !wellFormed(id) {
		return false, nil
	}
	v, ok, err := s.kv.GetKV(ctx, sessionKey(id))
	if err != nil || !ok {
		return false, err
	}
	exp, err := time.Parse(time.RFC3339Nano, string(v))
	return err == nil && s.now().Before(exp), nil
}

func (s *sessions) end(ctx context.Context, id string) error {
	if !wellFormed(id) {
		return nil
	}
	return s.kv.DeleteKV(ctx, sessionKey(id))
}

// memKV is a ports.KV in memory, for a console given no store.
type memKV struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]memValue
}

type memValue struct {
	v   []byte
	exp time.Time
}

func (m *memKV) PutTTL(_ context.Context, key string, value []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, x := range m.m {
		if !now.Before(x.exp) {
			delete(m.m, k)
		}
	}
	if len(m.m) >= maxSessions { // drop the one closest to expiry
		var oldest string
		for k, x := range m.m {
			if oldest == "" || x.exp.Before(m.m[oldest].exp) {
				oldest = k
			}
		}
		delete(m.m, oldest)
	}
	exp := now.Add(ttl)
	if ttl <= 0 {
		exp = now.Add(100 * 365 * 24 * time.Hour)
	}
	m.m[key] = memValue{v: append([]byte(nil), value...), exp: exp}
	return nil
}

func (m *memKV) GetKV(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	x, ok := m.m[key]
	if !ok || !m.now().Before(x.exp) {
		return nil, false, nil
	}
	return append([]byte(nil), x.v...), true, nil
}

func (m *memKV) DeleteKV(_ context.Context, key string) error {
	m.mu.Lock()
	delete(m.m, key)
	m.mu.Unlock()
	return nil
}

func (m *memKV) TakeKV(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	x, ok := m.m[key]
	if !ok || !m.now().Before(x.exp) {
		return nil, false, nil
	}
	delete(m.m, key)
	return x.v, true, nil
}

// signedIn tells whether the request carries a valid session, asking the
// store once per request (the layout and requireAdmin both ask).
func (c *Console) signedIn(g *gin.Context) bool {
	ok, _ := c.session(g)
	return ok
}

const sessionCheckKey = "console.session"

type sessionCheck struct {
	ok  bool
	err error
}

func (c *Console) session(g *gin.Context) (bool, error) {
	if v, ok := g.Get(sessionCheckKey); ok {
		sc := v.(sessionCheck)
		return sc.ok, sc.err
	}
	ok, err := c.checkSession(g.Request)
	g.Set(sessionCheckKey, sessionCheck{ok, err})
	return ok, err
}

func (c *Console) checkSession(r *http.Request) (bool, error) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return false, nil
	}
	ok, err := c.sessions.valid(r.Context(), ck.Value)
	if err != nil {
		c.d.Log.Warn("console session not checked", zap.String("request_id", core.RequestID(r.Context())), zap.Error(err))
	}
	return ok, err
}

// SignedIn tells whether a request carries a signed-in operator's session
// (the hosted build's guard lets only operators use the console); false
// when the store cannot say.
func (c *Console) SignedIn(r *http.Request) bool {
	ok, _ := c.checkSession(r)
	return ok
}

// requireAdmin sends a visitor without a session to the sign-in page when
// an admin token is configured; without one the console is as open as the
// rest of the self-hosted build.
func (c *Console) requireAdmin(g *gin.Context) {
	if c.d.AdminToken == "" {
		return
	}
	ok, err := c.session(g)
	if err != nil { // the store cannot say: not a reason to ask for the token again
		c.failErr(g, err)
		return
	}
	if ok {
		return
	}
	next := g.Request.URL.RequestURI()
	if g.Request.Method != http.MethodGet {
		next = "/" // a POST cannot be replayed after signing in
		if ref := g.Request.Referer(); ref != "" {
			next = refererPath(ref)
		}
	}
	redirect(g, "/signin?next="+url.QueryEscape(next))
}

type signinPage struct {
	layout
	Next  string
	Error string
}

func (c *Console) signinPage(g *gin.Context) {
	if c.d.AdminToken == "" {
		redirect(g, localPath(g.Query("next")))
		return
	}
	c.render(g, http.StatusOK, "signin", signinPage{layout: c.layout(g, "Sign in", ""), Next: localPath(g.Query("next"))})
}

func (c *Console) signin(g *gin.Context) {
	next := localPath(g.PostForm("next"))
	if c.d.AdminToken == "" {
		redirect(g, next)
		return
	}
	got := sha256.Sum256([]byte(g.PostForm("token")))
	want := sha256.Sum256([]byte(c.d.AdminToken))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		c.render(g, http.StatusUnauthorized, "signin", signinPage{layout: c.layout(g, "Sign in", ""), Next: next,
			Error: "That is not the admin token (SERVICE_ADMIN_TOKEN). Nothing was changed."})
		return
	}
	id, exp, err := c.sessions.create(g.Request.Context())
	if err != nil {
		status, msg := statusOf(err)
		c.d.Log.Error("console session not stored", zap.String("request_id", core.RequestID(g.Request.Context())), zap.Error(err))
		c.render(g, status, "signin", signinPage{layout: c.layout(g, "Sign in", ""), Next: next,
			Error: "The token is right, but the session could not be stored: " + msg})
		return
	}
	http.SetCookie(g.Writer, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", Expires: exp,
		MaxAge: int(sessionTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: g.Request.TLS != nil})
	redirect(g, next)
}

func (c *Console) signout(g *gin.Context) {
	if id, err := g.Cookie(sessionCookie); err == nil {
		if err := c.sessions.end(g.Request.Context(), id); err != nil {
			c.failErr(g, err) // the cookie stays, so signing out can be tried again
			return
		}
	}
	http.SetCookie(g.Writer, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: g.Request.TLS != nil})
	redirect(g, "/")
}
