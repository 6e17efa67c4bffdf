package consoletest

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/climatesearch/climatesearch/test/shareddata"
)

// --- steps a person takes, shared by the tests ---------------------------------

// search types q into the query page's search box with exactly the given
// catalogs ticked, submits, and returns the refs of the hits in order.
func (b *browser) search(q string, catalogs ...string) []string {
	b.t.Helper()
	if st := b.open("/"); st != http.StatusOK {
		b.t.Fatalf("/ answered %d", st)
	}
	b.do(chromedp.SendKeys(chromedp.CSS("#q"), q))
	if got := b.value("#q"); got != q {
		b.t.Fatalf("the search box holds %q after typing %q", got, q)
	}
	if len(catalogs) > 0 {
		want := map[string]bool{}
		for _, c := range catalogs {
			want[c] = true
		}
		for _, c := range []string{"national", "dkbr"} {
			sel := `input[name=databases][value=` + c + `]`
			checked := get(b, chromedp.JavascriptAttribute[bool](chromedp.CSS(sel), "checked"))
			if checked != want[c] {
				b.do(chromedp.Click(chromedp.CSS(sel)))
			}
			if get(b, chromedp.JavascriptAttribute[bool](chromedp.CSS(sel), "checked")) != want[c] {
				b.t.Fatalf("clicking the %s box did not make it %v", c, want[c])
			}
		}
	}
	if st := b.submit(`form.search button[type=submit]`); st != http.StatusOK {
		b.t.Fatalf("searching %q: status %d: %s", q, st, b.text("main"))
	}
	if !strings.Contains(b.text("p.meta"), q) {
		b.t.Fatalf("the results do not restate the question %q: %q", q, b.text("p.meta"))
	}
	return b.hitRefs()
}

// hitRefs reads the id column of the result table.
func (b *browser) hitRefs() []string {
	b.t.Helper()
	return b.texts(`table.hits tbody tr td.mono a`)
}

// workbook is the real Danish BR25 Tabel 7.
func workbook(t *testing.T) string {
	t.Helper()
	return shareddata.Path(t, "data", "dkbr", "br25-tabel7-2025.xlsx")
}

// uploadWorkbook chooses the BR25 workbook in /ingest's file input and
// previews it; the page then shows its headers, sample rows and the
// suggested column map.
func (b *browser) uploadWorkbook() {
	b.t.Helper()
	if st := b.open("/ingest"); st != http.StatusOK {
		b.t.Fatalf("/ingest answered %d", st)
	}
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{workbook(b.t)}))
	if st := b.submit("#upload"); st != http.StatusOK {
		b.t.Fatalf("preview: status %d: %s", st, b.text("main"))
	}
	if p := b.path(); !strings.HasPrefix(p, "/ingest?preview=") {
		b.t.Fatalf("after the upload the browser is at %s, not the preview", p)
	}
	if h := b.text("#pv"); h != "br25-tabel7-2025.xlsx" {
		b.t.Errorf("the preview is titled %q", h)
	}
	if n := b.count("#sample tbody tr"); n == 0 {
		b.t.Error("the preview shows no sample rows")
	}
	// The suggested map is preselected for the required fields.
	for _, f := range []string{"id", "name", "a1a3"} {
		if v := b.value("#map-" + f); v == "" {
			b.t.Errorf("the column map suggests nothing for the required field %s", f)
		}
	}
}

// chooseDKBR picks the catalog and the DatasetVersion on the apply form.
func (b *browser) chooseDKBR() {
	b.t.Helper()
	b.do(chromedp.SetValue(chromedp.CSS("#catalog"), "dkbr"))
	b.do(chromedp.Clear(chromedp.CSS("#version")), chromedp.SendKeys(chromedp.CSS("#version"), "BR25"))
	if c, v := b.value("#catalog"), b.value("#version"); c != "dkbr" || v != "BR25" {
		b.t.Fatalf("the apply form holds catalog %q version %q", c, v)
	}
}

// dryRun presses Dry run and checks the result says nothing was stored,
// with new resources counted; it returns how many would be new.
func (b *browser) dryRun() int {
	b.t.Helper()
	if st := b.submit("#dry-run"); st != http.StatusOK {
		b.t.Fatalf("dry run: status %d: %s", st, b.text("main"))
	}
	if h := b.text("#res"); h != "Dry run: nothing was stored" {
		b.t.Fatalf("the dry run's result is titled %q; the page says %s", h, b.text("main"))
	}
	news := 0
	for _, what := range b.texts("#result table.changes tbody tr td:nth-child(2)") {
		if what == "new" {
			news++
		}
	}
	if news == 0 {
		b.t.Fatalf("the dry run counts no new resource: %s", b.text("#result"))
	}
	if h := b.text("#result h3"); !strings.HasPrefix(h, "Would change (") {
		b.t.Errorf("the dry run's change list is titled %q", h)
	}
	return news
}

// apply presses Apply and returns the upserted count the result shows.
func (b *browser) apply() (upserted, unchanged int) {
	b.t.Helper()
	if st := b.submit("#apply"); st != http.StatusOK {
		b.t.Fatalf("apply: status %d: %s", st, b.text("main"))
	}
	if h := b.text("#res"); h != "Applied" {
		b.t.Fatalf("the apply result is titled %q: %s", h, b.text("main"))
	}
	return atoi(b.t, b.text("#r-upserted")), atoi(b.t, b.text("#r-unchanged"))
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("%q is not a count", s)
	}
	return n
}

// count of a catalog's live resources, asked of REST.
func (s *service) catalogSize(catalog string) int {
	s.t.Helper()
	status, body := s.api(http.MethodGet, "/api/resources?databases="+catalog, "", nil)
	if status != http.StatusOK {
		s.t.Fatalf("/api/resources?databases=%s: %d %s", catalog, status, body)
	}
	var list struct {
		Resources []json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		s.t.Fatal(err)
	}
	return len(list.Resources)
}

// resourceValues are the A1-A3 values REST gives for a ref.
func (s *service) resourceValues(ref string) (typical, conservative *float64, name string) {
	s.t.Helper()
	status, body := s.api(http.MethodGet, "/api/resources/"+url.PathEscape(ref), "", nil)
	if status != http.StatusOK {
		s.t.Fatalf("/api/resources/%s: %d %s", ref, status, body)
	}
	var r struct {
		Name         string   `json:"name"`
		A1A3         *float64 `json:"a1a3"`
		Conservative *float64 `json:"a1a3_conservative"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		s.t.Fatal(err)
	}
	return r.A1A3, r.Conservative, r.Name
}

// sameNumber tells whether a value the page shows (4 significant digits)
// is the API's value.
func sameNumber(t *testing.T, shown string, want float64) bool {
	t.Helper()
	got, err := strconv.ParseFloat(strings.TrimSpace(shown), 64)
	if err != nil {
		t.Errorf("%q is not a number", shown)
		return false
	}
	return math.Abs(got-want) <= 1e-3*math.Max(math.Abs(want), 1e-9)
}

// disableScript turns JavaScript off in the tab, for every page it loads
// from now on.
func (b *browser) disableScript() {
	b.t.Helper()
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
}

// --- 1. search, a resource, a comparison ----------------------------------------------

// TestSearchOpenAndCompare: search spånskiva, open the first hit and see
// its A1-A3 values; back on the results, tick two hits and land on their
// comparison.
func TestSearchOpenAndCompare(t *testing.T) {
	svc := startService(t, nil)
	b := newBrowser(t, svc)

	refs := b.search("spånskiva")
	if len(refs) < 2 {
		t.Fatalf("spånskiva finds %d hits: %v", len(refs), refs)
	}
	for _, r := range refs {
		if !strings.HasPrefix(r, "national:") {
			t.Errorf("hit %s is not of the national catalog", r)
		}
	}
	firstName := b.text(`table.hits tbody tr:first-child td:nth-child(3) a`)
	resultsPath := b.path()

	// Open the first hit.
	if st := b.submit(`table.hits tbody tr:first-child td:nth-child(3) a`); st != http.StatusOK {
		t.Fatalf("the first hit's page answered %d", st)
	}
	if p := b.path(); !strings.HasPrefix(p, "/resources/"+refs[0]) {
		t.Errorf("the first hit opened %s, not /resources/%s", p, refs[0])
	}
	if h := b.text("h1"); h != firstName {
		t.Errorf("the resource page is titled %q, the hit was %q", h, firstName)
	}
	typ, cons, _ := svc.resourceValues(refs[0])
	if typ == nil || cons == nil {
		t.Fatalf("REST gives no A1-A3 for %s", refs[0])
	}
	values := map[string]string{}
	for _, row := range get(b, chromedp.Nodes(chromedp.CSSAll("table.values tbody tr"), chromedp.AtLeast(2))) {
		label := strings.TrimSpace(get(b, chromedp.TextContent(chromedp.CSS("th"), chromedp.FromNode(row))))
		values[label] = strings.TrimSpace(get(b, chromedp.TextContent(chromedp.CSS("td.n"), chromedp.FromNode(row))))
	}
	if v := values["A1-A3 typical"]; !sameNumber(t, v, *typ) {
		t.Errorf("A1-A3 typical shows %q, REST gives %v", v, *typ)
	}
	if v := values["A1-A3 conservative"]; !sameNumber(t, v, *cons) {
		t.Errorf("A1-A3 conservative shows %q, REST gives %v", v, *cons)
	}

	// Back on the results, tick two hits: the page goes to their comparison.
	b.do(chromedp.NavigateBack())
	if p := b.path(); p != resultsPath {
		t.Fatalf("back leads to %s, not the results %s", p, resultsPath)
	}
	b.do(chromedp.Click(chromedp.CSS(`table.hits tbody tr:nth-child(1) input.pick`)))
	// The script answers the tick (the page stays).
	b.waitFor(`"Tick 1 more." after one tick`, `document.getElementById("pick-status").textContent === "Tick 1 more."`)
	if st := b.submit(`table.hits tbody tr:nth-child(2) input.pick`); st != http.StatusOK {
		t.Fatalf("the comparison answered %d: %s", st, b.text("main"))
	}
	if p := b.path(); !strings.HasPrefix(p, "/compare?") {
		t.Fatalf("ticking two hits leads to %s", p)
	}
	b.checkComparison(svc, refs[0], refs[1])
	b.checkClean()
}

// checkComparison reads the comparison of a and b on /compare and checks
// it against REST: both values, the delta, the sentence.
func (b *browser) checkComparison(svc *service, a, bb string) {
	b.t.Helper()
	status, body := svc.api(http.MethodGet, "/api/resources/compare?a="+url.QueryEscape(a)+"&b="+url.QueryEscape(bb), "", nil)
	if status != http.StatusOK {
		b.t.Fatalf("REST compare %s %s: %d %s", a, bb, status, body)
	}
	var cmp struct {
		ValueA    float64 `json:"value_a"`
		ValueB    float64 `json:"value_b"`
		Delta     float64 `json:"delta_a1a3"`
		Unit      string  `json:"unit"`
		LowerID   string  `json:"lower_impact_id"`
		Incompare bool    `json:"incomparable"`
	}
	if err := json.Unmarshal(body, &cmp); err != nil {
		b.t.Fatal(err)
	}
	rows := b.texts("table.cmp tbody tr td .mono")
	if len(rows) != 2 || rows[0] != a || rows[1] != bb {
		b.t.Errorf("the comparison is of %v, not of %s and %s", rows, a, bb)
	}
	if v := b.text("#value-a"); !sameNumber(b.t, v, cmp.ValueA) {
		b.t.Errorf("A shows %q, REST gives %v", v, cmp.ValueA)
	}
	if v := b.text("#value-b"); !sameNumber(b.t, v, cmp.ValueB) {
		b.t.Errorf("B shows %q, REST gives %v", v, cmp.ValueB)
	}
	if v := b.text("#delta"); !sameNumber(b.t, v, cmp.Delta) {
		b.t.Errorf("the delta shows %q, REST gives %v", v, cmp.Delta)
	}
	words := b.text("#words")
	if words == "" {
		b.t.Error("the comparison has no sentence")
	}
	if cmp.Incompare {
		return
	}
	if cmp.Delta != 0 && !strings.Contains(words, "lower") && !strings.Contains(words, "higher") {
		b.t.Errorf("the sentence does not say which is lower: %q", words)
	}
	if cmp.LowerID != "" && b.count("table.cmp tr.lower") != 1 {
		b.t.Errorf("the lower side is not marked (REST: %s)", cmp.LowerID)
	}
}

// --- 2. ingest the BR25 workbook, then find it ---------------------------------------

// TestIngestWorkbookThenSearch: upload br25-tabel7-2025.xlsx, keep the
// suggested mapping, choose dkbr and BR25, dry run (nothing stored, new
// resources counted), apply (upserted), then find tagsten with only dkbr
// ticked.
func TestIngestWorkbookThenSearch(t *testing.T) {
	svc := startService(t, nil)
	b := newBrowser(t, svc)

	b.uploadWorkbook()
	b.chooseDKBR()
	news := b.dryRun()
	if n := svc.catalogSize("dkbr"); n != 0 {
		t.Errorf("the dry run stored %d dkbr resources", n)
	}
	t.Logf("the dry run would add %d resources", news)

	upserted, _ := b.apply()
	if upserted <= 0 {
		t.Fatalf("apply upserted %d", upserted)
	}
	if upserted != news {
		t.Errorf("apply upserted %d, the dry run announced %d new", upserted, news)
	}
	if n := svc.catalogSize("dkbr"); n != upserted {
		t.Errorf("REST lists %d dkbr resources after %d were upserted", n, upserted)
	}

	refs := b.search("tagsten", "dkbr")
	if len(refs) == 0 {
		t.Fatalf("tagsten finds nothing in dkbr: %s", b.text("main"))
	}
	for _, r := range refs {
		if !strings.HasPrefix(r, "dkbr:") {
			t.Errorf("with only dkbr ticked the hits include %s", r)
		}
	}
	names := strings.ToLower(strings.Join(b.texts(`table.hits tbody tr td:nth-child(3) a`), " | "))
	if !strings.Contains(names, "tagsten") {
		t.Errorf("no dkbr hit is named tagsten: %s", names)
	}
	b.checkClean()
}

// --- 5. without JavaScript ----------------------------------------------------------------

// TestFlowsWithoutJavaScript: with script execution disabled, search,
// compare (tick two and press the button) and ingest (upload, dry run,
// apply) still work.
func TestFlowsWithoutJavaScript(t *testing.T) {
	svc := startService(t, nil)
	b := newBrowser(t, svc)
	b.disableScript()

	refs := b.search("spånskiva")
	if len(refs) < 2 {
		t.Fatalf("spånskiva finds %d hits without script", len(refs))
	}
	// Ticking two does nothing by itself without the script...
	b.do(chromedp.Click(chromedp.CSS(`table.hits tbody tr:nth-child(1) input.pick`)),
		chromedp.Click(chromedp.CSS(`table.hits tbody tr:nth-child(2) input.pick`)))
	if p := b.path(); !strings.HasPrefix(p, "/?") {
		t.Fatalf("with script off, ticking two left the results for %s: the script ran", p)
	}
	if s := b.text("#pick-status"); s != "Tick two hits." {
		t.Errorf("with script off the status reads %q: the script ran", s)
	}
	// ...the button does it.
	if st := b.submit("#compare-picked"); st != http.StatusOK {
		t.Fatalf("compare: %d %s", st, b.text("main"))
	}
	b.checkComparison(svc, refs[0], refs[1])

	b.uploadWorkbook()
	b.chooseDKBR()
	news := b.dryRun()
	upserted, _ := b.apply()
	if upserted != news || upserted == 0 {
		t.Errorf("apply upserted %d, the dry run announced %d new", upserted, news)
	}
	if n := svc.catalogSize("dkbr"); n != upserted {
		t.Errorf("REST lists %d dkbr resources after %d were upserted", n, upserted)
	}
	b.checkClean()
}
