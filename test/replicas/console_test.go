package replicas

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// consoleAnswer is a console answer as a browser sees it before following
// a redirect.
type consoleAnswer struct {
	status   int
	location string
	cookies  []*http.Cookie
	body     string
}

// noRedirects is a client that, like the test's browser, shows each
// redirect instead of following it, and sends no admin token: only the
// session cookie signs it in.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (r *replica) console(t testing.TB, method, path string, form url.Values, ck *http.Cookie) consoleAnswer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, r.p.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Origin", r.p.URL) // a form posted from the console's own page
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if ck != nil {
		req.AddCookie(ck)
	}
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s on %s: %v", method, path, r.name, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return consoleAnswer{status: res.StatusCode, location: res.Header.Get("Location"), cookies: res.Cookies(), body: string(b)}
}

// A console session lives in the shared store: signed in through A's form,
// the cookie opens a page that needs sign-in on B and C, a restart of A
// keeps it, and a sign-out on C ends it on every replica.
func TestConsoleSessionOnEveryReplica(t *testing.T) {
	c := newCluster(t, nil, nil)
	a, b, cr := c.reps[0], c.reps[1], c.reps[2]
	const page = "/webhooks"
	signinPage := "/signin?next=" + url.QueryEscape(page)
	open := func(r *replica, ck *http.Cookie) bool {
		t.Helper()
		ans := r.console(t, http.MethodGet, page, nil, ck)
		switch {
		case ans.status == http.StatusOK && strings.Contains(ans.body, "<h1>Webhooks</h1>"):
			return true
		case ans.status == http.StatusSeeOther && ans.location == signinPage:
			return false
		}
		t.Fatalf("GET %s on %s: %d to %q: %.300s", page, r.name, ans.status, ans.location, ans.body)
		return false
	}
	for _, r := range c.reps {
		if open(r, nil) {
			t.Fatalf("%s opens %s without a session", r.name, page)
		}
	}

	if ans := a.console(t, http.MethodPost, "/signin", url.Values{"token": {"not-the-token"}, "next": {page}}, nil); ans.status != http.StatusUnauthorized || len(ans.cookies) != 0 {
		t.Fatalf("a wrong token: %d, cookies %v", ans.status, ans.cookies)
	}
	ans := a.console(t, http.MethodPost, "/signin", url.Values{"token": {adminToken}, "next": {page}}, nil)
	if ans.status != http.StatusSeeOther || ans.location != page {
		t.Fatalf("sign-in on A: %d to %q: %.300s", ans.status, ans.location, ans.body)
	}
	var ck *http.Cookie
	for _, x := range ans.cookies {
		if x.Name == "cs_session" {
			ck = x
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.MaxAge != 8*3600 || strings.Contains(ck.Value, adminToken) {
		t.Fatalf("session cookie from A: %+v", ck)
	}
	for _, r := range []*replica{b, cr, a} {
		if !open(r, ck) {
			t.Fatalf("%s does not honour the session made on A", r.name)
		}
	}

	c.restart(a)
	if !open(a, ck) {
		t.Fatal("A restarted forgot the session")
	}

	if ans := cr.console(t, http.MethodPost, "/signout", nil, ck); ans.status != http.StatusSeeOther {
		t.Fatalf("sign-out on C: %d: %.300s", ans.status, ans.body)
	}
	for _, r := range []*replica{a, b, cr} {
		if open(r, ck) {
			t.Fatalf("%s still honours a session signed out on C", r.name)
		}
	}
}
