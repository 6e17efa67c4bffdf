package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// Sessions of signed-in operators. The cookie holds a random session id,
// never the admin token; sessions live in memory, so a restart signs
// everyone out (the token is all it takes to sign in again).
const (
	sessionCookie = "cs_session"
	sessionTTL    = 8 * time.Hour
	maxSessions   = 1000
)

type sessions struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]time.Time // session id -> expiry
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, m: map[string]time.Time{}}
}

func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

func (s *sessions) create() (string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for id, exp := range s.m {
		if !now.Before(exp) {
			delete(s.m, id)
		}
	}
	if len(s.m) >= maxSessions { // drop the one closest to expiry
		var oldest string
		for id, exp := range s.m {
			if oldest == "" || exp.Before(s.m[oldest]) {
				oldest = id
			}
		}
		delete(s.m, oldest)
	}
	id := randomID()
	exp := now.Add(sessionTTL)
	s.m[id] = exp
	return id, exp
}

func (s *sessions) valid(id string) bool {
	if id == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.m[id]
	if ok && !s.now().Before(exp) {
		delete(s.m, id)
		return false
	}
	return ok
}

func (s *sessions) end(id string) {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

func (c *Console) signedIn(g *gin.Context) bool { return c.SignedIn(g.Request) }

// SignedIn tells whether a request carries a signed-in operator's session
// (the hosted build's guard lets only operators use the console).
func (c *Console) SignedIn(r *http.Request) bool {
	ck, err := r.Cookie(sessionCookie)
	return err == nil && c.sessions.valid(ck.Value)
}

// requireAdmin sends a visitor without a session to the sign-in page when
// an admin token is configured; without one the console is as open as the
// rest of the self-hosted build.
func (c *Console) requireAdmin(g *gin.Context) {
	if c.d.AdminToken == "" || c.signedIn(g) {
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
	id, exp := c.sessions.create()
	http.SetCookie(g.Writer, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", Expires: exp,
		MaxAge: int(sessionTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: g.Request.TLS != nil})
	redirect(g, next)
}

func (c *Console) signout(g *gin.Context) {
	if id, err := g.Cookie(sessionCookie); err == nil {
		c.sessions.end(id)
	}
	http.SetCookie(g.Writer, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: g.Request.TLS != nil})
	redirect(g, "/")
}

// --- flashes ------------------------------------------------------------

// A flash carries the outcome of a POST to the page the browser is sent to
// next (post/redirect/get): an ingest result, a new secret, a test answer.
// Flashes live in memory for flashTTL under a random id; one that holds a
// secret is handed out once.
const (
	flashTTL   = 10 * time.Minute
	maxFlashes = 1000
)

type flash struct {
	Notice string
	Error  string
	// Secret is shown once.
	Secret string
	Data   any
	exp    time.Time
}

type flashes struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*flash
}

func newFlashes(now func() time.Time) *flashes {
	return &flashes{now: now, m: map[string]*flash{}}
}

func (f *flashes) put(fl flash) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	for id, x := range f.m {
		if !now.Before(x.exp) {
			delete(f.m, id)
		}
	}
	if len(f.m) >= maxFlashes {
		for id := range f.m { // any one: the map is full of fresh ones
			delete(f.m, id)
			break
		}
	}
	id := randomID()[:32]
	fl.exp = now.Add(flashTTL)
	f.m[id] = &fl
	return id
}

// getFor returns the flash when its Data is nil or a T, so a flash id
// carried to another page never meets a template that cannot show it.
func getFor[T any](f *flashes, id string) (*flash, bool) {
	fl, ok := f.get(id)
	if !ok {
		return nil, false
	}
	if fl.Data != nil {
		if _, ok := fl.Data.(T); !ok {
			return nil, false
		}
	}
	return &fl, true
}

// get returns the flash; a flash with a secret is removed as it is read.
func (f *flashes) get(id string) (flash, bool) {
	if id == "" {
		return flash{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.m[id]
	if !ok || !f.now().Before(fl.exp) {
		delete(f.m, id)
		return flash{}, false
	}
	out := *fl
	if fl.Secret != "" {
		delete(f.m, id)
	}
	return out, true
}
