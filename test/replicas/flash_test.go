package replicas

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// shownSecret is the secret a console page shows once.
var shownSecret = regexp.MustCompile(`id="secret">(whsec_[^<]+)<`)

// A console flash lives in the shared store: a webhook destination added
// through A's form, behind a load balancer without sticky sessions, has
// its redirected page served by B, which shows the new secret; reloading
// on C shows it no more, nor does A. The flash's URL shows nothing to
// another operator's session, and a secret rotated through C is shown by
// A once. (Before flashes lived in the store, B had no flash to show: the
// secret was made but never shown.)
func TestConsoleFlashOnAnotherReplica(t *testing.T) {
	c := newCluster(t, nil, nil)
	a, b, cr := c.reps[0], c.reps[1], c.reps[2]
	rc := newReceiver(t)
	signIn := func(r *replica) *http.Cookie {
		t.Helper()
		ans := r.console(t, http.MethodPost, "/signin", url.Values{"token": {adminToken}, "next": {"/webhooks"}}, nil)
		for _, x := range ans.cookies {
			if x.Name == "cs_session" && ans.status == http.StatusSeeOther {
				return x
			}
		}
		t.Fatalf("sign-in on %s: %d: %.300s", r.name, ans.status, ans.body)
		return nil
	}
	// open GETs path on r and returns the secret the page shows, "" when
	// it shows none.
	open := func(r *replica, path string, ck *http.Cookie, notice string) string {
		t.Helper()
		ans := r.console(t, http.MethodGet, path, nil, ck)
		if ans.status != http.StatusOK || !strings.Contains(ans.body, "<h1>Destination") {
			t.Fatalf("GET %s on %s: %d to %q: %.300s", path, r.name, ans.status, ans.location, ans.body)
		}
		m := shownSecret.FindStringSubmatch(ans.body)
		if m == nil {
			if strings.Contains(ans.body, notice) {
				t.Fatalf("%s shows the notice %q without its secret", r.name, notice)
			}
			return ""
		}
		if !strings.Contains(ans.body, notice) {
			t.Fatalf("%s shows a secret without the notice %q", r.name, notice)
		}
		return m[1]
	}

	ck := signIn(a)
	ans := a.console(t, http.MethodPost, "/webhooks", url.Values{"url": {rc.URL + "/hook"}, "kind": {"auto"},
		"enabled": {"on"}, "description": {"flash across replicas"}}, ck)
	if ans.status != http.StatusSeeOther || !strings.HasPrefix(ans.location, "/webhooks/wh_") || !strings.Contains(ans.location, "?flash=") {
		t.Fatalf("adding a destination on A: %d to %q: %.300s", ans.status, ans.location, ans.body)
	}
	loc := ans.location
	id := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/webhooks/")

	other := signIn(b)
	if s := open(b, loc, other, "Destination added."); s != "" {
		t.Fatal("another operator's session is shown the secret by the flash's URL")
	}
	secret := open(b, loc, ck, "Destination added.")
	if len(secret) < len("whsec_")+32 {
		t.Fatalf("B shows the secret of a destination added on A as %q", secret)
	}
	for _, r := range []*replica{cr, a, b} {
		if s := open(r, loc, ck, "Destination added."); s != "" {
			t.Fatalf("reloading on %s shows the secret again", r.name)
		}
	}
	if d := a.get(t, "/admin/webhooks/"+id); d.status != http.StatusOK || strings.Contains(string(d.body), secret) {
		t.Fatalf("GET /admin/webhooks/%s: %d (the secret shown unmasked: %v)", id, d.status, strings.Contains(string(d.body), secret))
	}

	ans = cr.console(t, http.MethodPost, "/webhooks/"+id+"/rotate", url.Values{}, ck)
	if ans.status != http.StatusSeeOther || !strings.HasPrefix(ans.location, "/webhooks/"+id+"?flash=") {
		t.Fatalf("rotating on C: %d to %q: %.300s", ans.status, ans.location, ans.body)
	}
	const rotated = "Secret rotated"
	rotatedSecret := open(a, ans.location, ck, rotated)
	if rotatedSecret == "" || rotatedSecret == secret {
		t.Fatalf("A shows the secret rotated on C as %q (the first was %q)", rotatedSecret, secret)
	}
	for _, r := range []*replica{b, cr} {
		if s := open(r, ans.location, ck, rotated); s != "" {
			t.Fatalf("reloading on %s shows the rotated secret again", r.name)
		}
	}
}
