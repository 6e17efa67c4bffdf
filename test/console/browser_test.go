package consoletest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/climatesearch/climatesearch/test/testbin"
)

// chromiumPath is Debian's chromium, the browser the tests drive.
const chromiumPath = "/usr/bin/chromium"

// browser is one headless chromium with a fresh profile and one tab, and
// everything the tab did since it opened.
type browser struct {
	t   *testing.T
	svc *service
	ctx context.Context // the tab; actions derive a bounded context from it

	mu       sync.Mutex
	allowed  map[string]bool     // hosts the tab may reach: the service's own
	requests []string            // every URL the tab asked for
	foreign  []string            // requests to another host
	problems []problem           // console errors, exceptions, CSP violations, blocked loads
	docs     []docResponse       // main documents, in order
	output   *testbin.SyncBuffer // chromium's own stdout and stderr
}

// problem is something the browser reported; URL is set for a failed load.
type problem struct {
	Text, NetworkURL string
}

type docResponse struct {
	URL    string
	Status int64
}

// cspProbe reports CSP violations as console errors, so the console watch
// sees them even when a browser build logs them only at a lower level.
const cspProbe = `document.addEventListener("securitypolicyviolation", function (e) {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber);
});`

// newBrowser starts chromium for svc. Only svc's host may be reached;
// extraHosts adds others (a test's own foreign page).
func newBrowser(t *testing.T, svc *service, extraHosts ...string) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Debian's chromium is not installed at %s (%v): run test/suite.sh, or `apt-get install chromium`", chromiumPath, err)
	}
	b := &browser{t: t, svc: svc, allowed: map[string]bool{}, output: &testbin.SyncBuffer{}}
	b.allowed[svc.Addr] = true
	for _, h := range extraHosts {
		b.allowed[h] = true
	}
	profile := t.TempDir() // removed after the browser has exited (cleanups run last-in first-out)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(profile),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		// chromedp v0.23 does not follow a page restored from the
		// back/forward cache (no load event, a stale document), so Back
		// reloads the page as it did before that cache existed.
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints,BackForwardCache"),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(b.output),
	)
	ctx, cancelCtx := chromedp.NewContext(allocCtx, chromedp.WithListener(b.listen))
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc() // waits for chromium to exit
	})
	b.ctx = ctx
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v\n%s", chromiumPath, err, tail(b.output.String(), 20))
	}
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspProbe})
		return err
	}))
	t.Cleanup(func() {
		if t.Failed() {
			b.failureScreenshot()
		}
	})
	return b
}

// listen runs in the tab's event loop: it only records.
func (b *browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		u := ev.Request.URL
		b.requests = append(b.requests, u)
		if p, err := url.Parse(u); err != nil || ((p.Scheme == "http" || p.Scheme == "https" || p.Scheme == "ws" || p.Scheme == "wss") && !b.allowed[p.Host]) ||
			(p.Scheme != "http" && p.Scheme != "https" && p.Scheme != "data" && p.Scheme != "about" && p.Scheme != "blob") {
			b.foreign = append(b.foreign, u)
		}
	case *network.EventResponseReceived:
		if ev.Type == network.ResourceTypeDocument && ev.Response != nil {
			b.docs = append(b.docs, docResponse{URL: ev.Response.URL, Status: ev.Response.Status})
		}
	case *network.EventLoadingFailed:
		if ev.BlockedReason != "" {
			b.problems = append(b.problems, problem{Text: fmt.Sprintf("load blocked (%s): request %s", ev.BlockedReason, ev.RequestID)})
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg += " " + d.Exception.Description
		}
		b.problems = append(b.problems, problem{Text: fmt.Sprintf("uncaught exception at %s:%d: %s", d.URL, d.LineNumber+1, msg)})
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range ev.Args {
				if a.Value != nil {
					var s string
					if json.Unmarshal(a.Value, &s) == nil {
						parts = append(parts, s)
						continue
					}
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			b.problems = append(b.problems, problem{Text: "console." + string(ev.Type) + ": " + strings.Join(parts, " ")})
		}
	case *cdplog.EventEntryAdded:
		e := ev.Entry
		if e != nil && (e.Level == cdplog.EntryLevelError || e.Source == cdplog.EntrySourceSecurity || e.Source == cdplog.EntrySourceViolation && strings.Contains(e.Text, "Content Security Policy")) {
			pr := problem{Text: fmt.Sprintf("browser log (%s, %s): %s %s", e.Source, e.Level, e.Text, e.URL)}
			if e.Source == cdplog.EntrySourceNetwork {
				pr.NetworkURL = e.URL
			}
			b.problems = append(b.problems, pr)
		}
	}
}

// --- what the tab did --------------------------------------------------------------

// checkClean fails the test when the tab reached another host or reported
// a console error, an exception or a CSP violation since it opened.
func (b *browser) checkClean() {
	b.t.Helper()
	foreign, problems := b.findings()
	b.mu.Lock()
	n := len(b.requests)
	b.mu.Unlock()
	if len(foreign) > 0 {
		b.t.Errorf("the browser asked hosts other than %v:\n  %s", keys(b.allowed), strings.Join(foreign, "\n  "))
	}
	if len(problems) > 0 {
		b.t.Errorf("the pages reported problems:\n  %s", strings.Join(problems, "\n  "))
	}
	if n == 0 {
		b.t.Error("the network watch saw no request at all: it is not watching")
	}
}

// findings are the requests to other hosts and the problems reported so far.
func (b *browser) findings() (foreign, problems []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	foreign = append([]string(nil), b.foreign...)
	// A page answered with an error status is logged as a failed load;
	// the tests assert those statuses themselves.
	docs := map[string]bool{}
	for _, d := range b.docs {
		docs[d.URL] = true
	}
	for _, p := range b.problems {
		if p.NetworkURL == "" || !docs[p.NetworkURL] {
			problems = append(problems, p.Text)
		}
	}
	return foreign, problems
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// lastDoc is the last main document the tab received.
func (b *browser) lastDoc() docResponse {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.docs) == 0 {
		return docResponse{}
	}
	return b.docs[len(b.docs)-1]
}

// --- actions -----------------------------------------------------------------------------

// bounded is the tab's context with the safety limit.
func (b *browser) bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, patience)
}

// do runs actions and fails the test on an error, saying where the tab was.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("at %s: %v", b.location(), err)
	}
}

// get runs one action that returns a value.
func get[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("at %s: %v", b.location(), err)
	}
	return v
}

// open navigates to a path of the service (or an absolute URL) and
// returns the status of the page it lands on.
func (b *browser) open(path string) int64 {
	b.t.Helper()
	u := path
	if strings.HasPrefix(path, "/") {
		u = b.svc.URL + path
	}
	resp := get(b, chromedp.NavigateResponse(u))
	if resp == nil {
		b.t.Fatalf("no response for %s", u)
	}
	return resp.Status
}

// submit clicks a button or control that makes the page navigate, waits
// for the new page and returns its status.
func (b *browser) submit(sel string) int64 {
	b.t.Helper()
	ctx, cancel := b.bounded()
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("at %s: clicking %s: %v", b.location(), sel, err)
	}
	if resp == nil {
		b.t.Fatalf("clicking %s loaded no page", sel)
	}
	return resp.Status
}

// text is the visible text of the first element matching sel (waiting
// for it to be there).
func (b *browser) text(sel string) string {
	b.t.Helper()
	return strings.TrimSpace(get(b, chromedp.Text(chromedp.CSS(sel))))
}

// texts is the text content of every element matching sel, now.
func (b *browser) texts(sel string) []string {
	b.t.Helper()
	nodes := get(b, chromedp.Nodes(chromedp.CSSAll(sel), chromedp.AtLeast(0)))
	var out []string
	for _, n := range nodes {
		out = append(out, strings.TrimSpace(get(b, chromedp.TextContent(chromedp.NodeIDs{n.NodeID}))))
	}
	return out
}

// count is the number of elements matching sel, now (no wait).
func (b *browser) count(sel string) int {
	b.t.Helper()
	return len(get(b, chromedp.Nodes(chromedp.CSSAll(sel), chromedp.AtLeast(0))))
}

func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	r := get(b, chromedp.AttributeValue(chromedp.CSS(sel), name))
	return r.Value
}

func (b *browser) value(sel string) string {
	b.t.Helper()
	return get(b, chromedp.Value(chromedp.CSS(sel)))
}

func (b *browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, patience)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return "(unknown: " + err.Error() + ")"
	}
	return loc
}

// waitFor polls a JavaScript condition (evaluated by DevTools, so it works
// with the page's script disabled) until it holds; errors while a page
// is replaced count as not yet.
func (b *browser) waitFor(what, cond string) {
	b.t.Helper()
	var last error
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ctx, cancel := b.bounded()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
	}
	b.t.Fatalf("waiting for %s: not within the safety limit (last error: %v); at %s", what, last, b.location())
}

// path is the path and query of the current page.
func (b *browser) path() string {
	b.t.Helper()
	u, err := url.Parse(b.location())
	if err != nil {
		b.t.Fatal(err)
	}
	return u.RequestURI()
}

// --- artifacts -----------------------------------------------------------------------------

// screenshot saves a full-page PNG of the current page as name.png.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	png := get(b, chromedp.FullScreenshot(100))
	p := filepath.Join(screenshotDir(b.t), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", p)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// failureScreenshot keeps what the page looked like when a test failed.
func (b *browser) failureScreenshot() {
	ctx, cancel := context.WithTimeout(b.ctx, patience)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return
	}
	p := filepath.Join(screenshotDir(b.t), "FAILED-"+unsafeName.ReplaceAllString(b.t.Name(), "_")+".png")
	if os.WriteFile(p, png, 0o644) == nil {
		b.t.Logf("the page at the failure (%s): %s", b.location(), p)
	}
}
