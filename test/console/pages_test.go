package consoletest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// axeViolation is the part of an axe-core result the report prints.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	URL    string `json:"helpUrl"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		HTML    string `json:"html"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

// axe runs the pinned axe-core on the current page and fails the test on
// a serious or critical violation, printing every violation it finds.
func (b *browser) axe(page, source string) {
	b.t.Helper()
	for _, v := range b.axeViolations(source) {
		var sb strings.Builder
		fmt.Fprintf(&sb, "axe on %s: %s (%s): %s %s", page, v.ID, v.Impact, v.Help, v.URL)
		for _, n := range v.Nodes {
			fmt.Fprintf(&sb, "\n    %v %s\n      %s", n.Target, n.HTML, strings.ReplaceAll(n.Summary, "\n", "\n      "))
		}
		if v.Impact == "serious" || v.Impact == "critical" {
			b.t.Error(sb.String())
		} else {
			b.t.Log(sb.String())
		}
	}
}

// axeViolations injects axe-core into the current page and runs it.
func (b *browser) axeViolations(source string) []axeViolation {
	b.t.Helper()
	b.do(chromedp.Evaluate[chromedp.Void](source))
	return get(b, chromedp.Evaluate[[]axeViolation](
		`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
		  nodes: v.nodes.map(n => ({target: n.target, html: n.html, failureSummary: n.failureSummary}))})))`,
		chromedp.EvalAwaitPromise))
}

// TestEveryPage opens every console page in the state a person sees it
// in (results, a resource, a preview and a dry run, a comparison, a
// destination with its log) and checks each: it answers 200, axe-core
// finds no serious or critical violation, and a full-page screenshot is
// saved. Over the whole visit the browser asks no host but the service
// and reports no console error and no CSP violation.
func TestEveryPage(t *testing.T) {
	axeJS := axeSource(t)
	rcv := newReceiver(t)
	svc := startService(t, map[string]string{"SERVICE_WEBHOOK_ALLOW_PRIVATE": "true"})
	b := newBrowser(t, svc)

	// check checks the page the browser is on; shot names its screenshot
	// ("" for a state whose picture would repeat another's).
	check := func(name string, status int64, shot bool) {
		t.Helper()
		if status != http.StatusOK {
			t.Errorf("%s (%s) answered %d", name, b.path(), status)
		}
		b.axe(name+" "+b.path(), axeJS)
		if shot {
			b.screenshot(name)
		}
	}

	// The Danish workbook first, so every later page shows both catalogs.
	b.uploadWorkbook()
	check("ingest-preview", 200, true)
	b.chooseDKBR()
	b.dryRun()
	check("ingest", 200, true)
	if up, _ := b.apply(); up == 0 {
		t.Error("apply upserted nothing")
	}
	check("ingest-applied", 200, false)

	check("query-empty", b.open("/"), true)
	refs := b.search("spånskiva")
	if len(refs) < 2 {
		t.Fatalf("spånskiva finds %v", refs)
	}
	check("query-results", 200, false)
	check("query", b.submit("#run-inspector"), true)
	// MCP search always uses vectors, so with REST's defaults the lists may
	// differ for that reason only; they must never simply disagree.
	if v := b.text("#verdict"); !strings.HasPrefix(v, "REST and MCP agree") && !strings.Contains(v, "REST asked with MCP's settings agrees hit for hit") {
		t.Errorf("the inspector says %q", v)
	}

	check("resource", b.open("/resources/national:6000000000"), true)

	check("data", b.open("/data"), true)
	check("compare", b.open("/compare?a=national:6000000000&b=national:6000000168"), true)
	if b.text("#words") == "" {
		t.Error("the comparison has no sentence")
	}
	check("connect", b.open("/connect"), true)

	id, _ := b.addDestination(rcv.URL + "/hook")
	if st := b.submit("#send-test"); st != http.StatusOK {
		t.Fatalf("send a test: %d", st)
	}
	check("webhook", b.open("/webhooks/"+id), true)
	if b.count("#delivery-log tbody tr") == 0 {
		t.Error("the destination's page shows no attempt")
	}
	check("webhooks", b.open("/webhooks"), true)

	b.checkClean()
}

// TestTheWatchesAreNotBlind: the checks TestEveryPage relies on see what
// they are meant to see. On a console page, an image from another host, an
// inline style and an image without a text alternative are reported as a
// foreign request, CSP violations and an axe violation.
func TestTheWatchesAreNotBlind(t *testing.T) {
	axeJS := axeSource(t)
	svc := startService(t, nil)
	b := newBrowser(t, svc)
	if st := b.open("/connect"); st != http.StatusOK {
		t.Fatalf("/connect answered %d", st)
	}
	if foreign, problems := b.findings(); len(foreign)+len(problems) != 0 {
		t.Fatalf("a clean page is reported: %v %v", foreign, problems)
	}
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("main").insertAdjacentHTML("beforeend",
	  '<img src="http://192.0.2.1/pixel.png"><p style="color: red">inline</p>')`))
	var foreign, problems []string
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if foreign, problems = b.findings(); len(foreign) > 0 && len(problems) >= 2 {
			break
		}
	}
	if len(foreign) != 1 || foreign[0] != "http://192.0.2.1/pixel.png" {
		t.Errorf("the request to another host is reported as %v", foreign)
	}
	all := strings.Join(problems, "\n")
	if !strings.Contains(all, "img-src") || !strings.Contains(all, "style-src") {
		t.Errorf("the CSP violations are reported as:\n%s", all)
	}
	found := false
	for _, v := range b.axeViolations(axeJS) {
		if v.ID == "image-alt" && (v.Impact == "serious" || v.Impact == "critical") {
			found = true
		}
	}
	if !found {
		t.Error("axe-core does not report the image without alt")
	}
}
