package consoletest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// cookies are the browser's cookies for the service.
func (b *browser) cookies() []*network.Cookie {
	b.t.Helper()
	return get(b, func(ctx context.Context, tg *chromedp.Target) ([]*network.Cookie, error) {
		res, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{b.svc.URL + "/"}})
		return res.Cookies, err
	})
}

// attacker serves, from another origin, a page whose form posts itself to
// the service as soon as it loads: the classic cross-site request forgery.
func attacker(t *testing.T, host, action string, fields url.Values) (pageURL string) {
	t.Helper()
	var inputs strings.Builder
	for k, vs := range fields {
		for _, v := range vs {
			fmt.Fprintf(&inputs, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(v))
		}
	}
	body := `<!doctype html><html lang="en"><head><title>Win a prize</title></head><body>
<form id="f" method="post" action="` + html.EscapeString(action) + `">` + inputs.String() + `<button>Claim</button></form>
<script>document.getElementById("f").submit();</script></body></html>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// TestAdminTokenSignInAndForgery: with SERVICE_ADMIN_TOKEN set, /ingest
// asks to sign in, a wrong token is refused, the right one opens it (the
// upload and dry run work), the session cookie is HttpOnly, SameSite=Strict
// and not the token, and signing out ends it. A form posted to the
// service from another origin is refused and changes nothing.
func TestAdminTokenSignInAndForgery(t *testing.T) {
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	tok := "tok-" + hex.EncodeToString(token)
	rcv := newReceiver(t)
	svc := startService(t, map[string]string{"SERVICE_ADMIN_TOKEN": tok, "SERVICE_WEBHOOK_ALLOW_PRIVATE": "true"})

	// The forged form adds the receiver as a destination: exactly what
	// the console's own form would do, with a destination the service
	// would accept (private addresses are allowed in this run).
	forged := url.Values{"url": {rcv.URL + "/forged"}, "enabled": {"true"}}
	_, port, _ := net.SplitHostPort(svc.Addr)
	sameSite := attacker(t, "127.0.0.1", svc.URL+"/webhooks", forged)  // another port: another origin, the same site
	crossSite := attacker(t, "localhost", svc.URL+"/webhooks", forged) // another host name: another site
	if strings.Contains(sameSite, ":"+port+"/") {
		t.Fatal("the attacker got the service's port")
	}
	b := newBrowser(t, svc, hostOf(t, sameSite), hostOf(t, crossSite))

	// /ingest asks to sign in.
	if st := b.open("/ingest"); st != http.StatusOK {
		t.Fatalf("/ingest without a session lands on a page answered %d", st)
	}
	if p := b.path(); p != "/signin?next=%2Fingest" {
		t.Fatalf("/ingest without a session leads to %s, not the sign-in", p)
	}

	// A wrong token is refused.
	b.do(chromedp.SendKeys(chromedp.CSS("#token"), "not-the-token"))
	if st := b.submit(`form[action="/signin"] button[type=submit]`); st != http.StatusUnauthorized {
		t.Errorf("a wrong token answers %d", st)
	}
	if msg := b.text("p.error"); !strings.Contains(msg, "not the admin token") {
		t.Errorf("a wrong token says %q", msg)
	}
	if len(b.cookies()) != 0 {
		t.Error("a wrong token left a cookie")
	}

	// The right token opens /ingest.
	b.do(chromedp.SendKeys(chromedp.CSS("#token"), tok))
	if st := b.submit(`form[action="/signin"] button[type=submit]`); st != http.StatusOK {
		t.Fatalf("signing in answers %d: %s", st, b.text("main"))
	}
	if p := b.path(); p != "/ingest" {
		t.Fatalf("after signing in the browser is at %s, not /ingest", p)
	}
	cookies := b.cookies()
	if len(cookies) != 1 {
		t.Fatalf("after signing in the browser has %d cookies: %+v", len(cookies), cookies)
	}
	c := cookies[0]
	if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict {
		t.Errorf("the session cookie %s is HttpOnly=%v SameSite=%q", c.Name, c.HTTPOnly, c.SameSite)
	}
	if strings.Contains(c.Value, tok) || strings.Contains(c.Value, hex.EncodeToString(token)) {
		t.Error("the session cookie carries the admin token")
	}
	if js := get(b, chromedp.Evaluate[string](`document.cookie`)); js != "" {
		t.Errorf("the page's script can read cookies: %q", js)
	}
	b.uploadWorkbook()
	b.chooseDKBR()
	if news := b.dryRun(); news == 0 {
		t.Error("the dry run after signing in counts nothing new")
	}

	// Forged posts from another origin and from another site: refused
	// with 403, and nothing is added, although the browser is signed in.
	for _, page := range []string{sameSite, crossSite} {
		b.do(chromedp.Navigate(page))
		b.waitFor("the forged post to land", `location.href === `+jsString(svc.URL+"/webhooks")+` && document.readyState === "complete"`)
		if d := b.lastDoc(); d.URL != svc.URL+"/webhooks" || d.Status != http.StatusForbidden {
			t.Errorf("the post from %s answered %d at %s, not 403", page, d.Status, d.URL)
		}
		if msg := b.text("p.error"); !strings.Contains(msg, "came from another site") {
			t.Errorf("the refusal of the post from %s says %q", page, msg)
		}
	}
	status, body := svc.api(http.MethodGet, "/admin/webhooks", "", map[string]string{"X-Admin-Token": tok})
	var list struct {
		Destinations []json.RawMessage `json:"destinations"`
	}
	if err := json.Unmarshal(body, &list); status != http.StatusOK || err != nil {
		t.Fatalf("/admin/webhooks: %d %s", status, body)
	}
	if len(list.Destinations) != 0 || rcv.got() != 0 {
		t.Errorf("the forged posts added %d destinations; the receiver got %d requests", len(list.Destinations), rcv.got())
	}
	// The session still works: the refusal did not come from signing out.
	if st := b.open("/webhooks"); st != http.StatusOK || b.path() != "/webhooks" {
		t.Fatalf("after the forgeries /webhooks answers %d at %s", st, b.path())
	}
	if n := b.count("table.dests tbody tr"); n != 0 {
		t.Errorf("/webhooks lists %d destinations", n)
	}

	// Signing out ends the session.
	if st := b.submit(`header form[action="/signout"] button`); st != http.StatusOK {
		t.Fatalf("signing out answers %d", st)
	}
	if len(b.cookies()) != 0 {
		t.Error("signing out left the session cookie")
	}
	b.open("/ingest")
	if p := b.path(); p != "/signin?next=%2Fingest" {
		t.Errorf("after signing out /ingest leads to %s", p)
	}
	b.checkClean()
}

func hostOf(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Host
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
