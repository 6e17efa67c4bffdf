package blugeindex

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// The tests of this file pin the retrieval behaviour the search issue asks
// for, on the real merged catalog (loadCatalog) where the behaviour is about
// real products, on small made-up catalogs where it is about a mechanism.

// realIndex is one index of the real catalog shared by the tests of this
// file (searches only; building it takes a moment under -race).
func realIndex(t *testing.T) *Index {
	t.Helper()
	realOnce.Do(func() {
		x, err := New()
		if err != nil {
			realErr = err
			return
		}
		realErr = x.Upsert(context.Background(), loadCatalog(t))
		realIdx = x
	})
	if realErr != nil {
		t.Fatal(realErr)
	}
	return realIdx
}

var (
	realOnce sync.Once
	realIdx  *Index
	realErr  error
)

// national ids of the results, best first.
func nationalIDs(t *testing.T, x *Index, text string, lang core.Lang, limit int) []string {
	t.Helper()
	hits := search(t, x, core.TextQuery{Text: text, Lang: lang, Limit: limit})
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Key.ID
	}
	return out
}

// rank is the 1-based position of id in ids, 0 when absent.
func rank(ids []string, id string) int { return slices.Index(ids, id) + 1 }

type firstCase struct {
	q    string
	lang core.Lang
	want string
}

func checkFirst(t *testing.T, x *Index, cases []firstCase) {
	t.Helper()
	for _, c := range cases {
		got := nationalIDs(t, x, c.q, c.lang, core.DefaultLimit)
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("%q (lang %s): want %s first, got %v", c.q, c.lang, c.want, got)
		}
	}
}

// before asserts that a ranks above b (b may be absent).
func before(t *testing.T, x *Index, q string, lang core.Lang, a, b string) {
	t.Helper()
	got := nationalIDs(t, x, q, lang, core.MaxLimit)
	ra, rb := rank(got, a), rank(got, b)
	if ra == 0 || (rb != 0 && rb < ra) {
		t.Errorf("%q: want %s (rank %d) above %s (rank %d): %v", q, a, ra, b, rb, got)
	}
}

// TestIssueExamples runs the queries the issue quotes.
func TestIssueExamples(t *testing.T) {
	x := realIndex(t)
	checkFirst(t, x, []firstCase{
		{"glasull lösull vindsbjälklag", core.Swedish, "6000000005"},
		{"stone wool roof board", core.English, "6000000127"},
		{"KL-trä", core.Swedish, "6000000167"},
		{"betong C30/37", core.Swedish, "6000000032"},
	})
	// "gipskiva" is a typo of gipsskiva (and one resource's synonym list
	// carries the same typo): all six gypsum boards come first.
	got := nationalIDs(t, x, "gipskiva", core.Swedish, 6)
	gypsum := []string{"6000000015", "6000000016", "6000000018", "6000000019", "6000000020", "6000000021"}
	if !sameSet(got, gypsum) {
		t.Errorf("gipskiva: want the six gypsum boards %v first, got %v", gypsum, got)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestFieldsAndWeights: every text field is searchable, in its language, and
// a name outranks synonyms, which outrank the category, which outranks the
// long texts.
func TestFieldsAndWeights(t *testing.T) {
	x := newIndex(t, []core.Resource{
		{ID: "name", Catalog: core.National, NameSV: "Tegel"},
		{ID: "synonym", Catalog: core.National, NameSV: "Block", Synonyms: "Tegel, murblock"},
		{ID: "category", Catalog: core.National, NameSV: "Balk", Category: "Tegel"},
		{ID: "description", Catalog: core.National, NameSV: "Platta", DescriptionSV: "Plattan ersätter tegel i fasader av tegel."},
		{ID: "applicability", Catalog: core.National, NameSV: "Puts", ApplicabilitySV: "Används på tegel."},
		{ID: "en", Catalog: core.National, NameSV: "Sten", NameEN: "Stone", DescriptionEN: "Used for masonry walls.", ApplicabilityEN: "Chimneys."},
		{ID: "bk04", Catalog: core.National, NameSV: "Stav", BK04: "01102 Murverk"},
		{ID: "da", Catalog: core.DKBR, NameDA: "Mursten", DescriptionDA: "Teglværk til facader", Synonyms: "Teglsten", Category: "Murværk"},
	})
	got := ids(search(t, x, core.TextQuery{Text: "tegel", Lang: core.Swedish}))
	want := []string{"national:name", "national:synonym", "national:category"}
	if len(got) < 5 || !slices.Equal(got[:3], want) || !sameSet(got[3:5], []string{"national:description", "national:applicability"}) {
		t.Errorf("tegel: want %v then the long texts, got %v", want, got)
	}
	for q, want := range map[string]string{
		"masonry": "national:en", "chimney": "national:en", "murverk": "national:bk04",
		"mursten": "dkbr:da", "teglsten": "dkbr:da", "murværk": "dkbr:da", "facade": "dkbr:da",
	} {
		if got := ids(search(t, x, core.TextQuery{Text: q})); len(got) == 0 || got[0] != want {
			t.Errorf("%q: want %s first, got %v", q, want, got)
		}
	}
}

// TestLanguageAnalysis: Swedish text gets Swedish stemming and stop words,
// English text English ones.
func TestLanguageAnalysis(t *testing.T) {
	x := realIndex(t)
	checkFirst(t, x, []firstCase{
		{"spånskivor", core.Swedish, "6000000000"},                // plural of Spånskiva
		{"glasull för vindsbjälklag", core.Swedish, "6000000005"}, // "för" is a stop word
		{"particle boards", core.English, "6000000000"},           // plural of board
		{"the particle board", core.English, "6000000000"},        // "the" is a stop word
		{"copper pipes", core.English, "6000000164"},              // ties with the 100 % pipe: lower key
		{"hollowcore floors climate-improved", core.English, "6000000060"},
	})
	// Each language stems its own plurals.
	sv, en := languageOf(core.Swedish), languageOf(core.English)
	if sv.stemOf("skivor") != sv.stemOf("skiva") || en.stemOf("boards") != en.stemOf("board") {
		t.Error("each language stems its own plurals")
	}
}

// TestSwedishCompounds: compound words reach their parts and the parts reach
// the compounds, with the whole word still ranking first.
func TestSwedishCompounds(t *testing.T) {
	x := realIndex(t)

	// mineralull reaches glass and stone wool through their BK04 class
	// ("01301 Mineralull"), every one of the fourteen.
	mineral := []string{"6000000001", "6000000002", "6000000003", "6000000004", "6000000005", "6000000006", "6000000123",
		"6000000124", "6000000125", "6000000126", "6000000127", "6000000128", "6000000129", "6000000130"}
	got := nationalIDs(t, x, "mineralull", core.Swedish, len(mineral))
	if !sameSet(got, mineral) {
		t.Errorf("mineralull: want the fourteen glass and stone wools, got %v", got)
	}

	// hampa is only ever a part: Hampaisolering (two) and Hampabetongblock.
	if got := nationalIDs(t, x, "hampa", core.Swedish, 3); !sameSet(got, []string{"6000000201", "6000000202", "6000000208"}) {
		t.Errorf("hampa: want the hemp products first, got %v", got)
	}

	// skiva reaches a name that only holds it in a compound (Glasull,
	// fasadskivor), among the many boards; fasadskiva ranks it high.
	if got := nationalIDs(t, x, "skiva", core.Swedish, core.MaxLimit); rank(got, "6000000002") == 0 {
		t.Errorf("skiva does not reach Glasull, fasadskivor: %v", got)
	}
	if got := nationalIDs(t, x, "fasadskiva", core.Swedish, core.DefaultLimit); rank(got, "6000000002") == 0 {
		t.Errorf("fasadskiva: want Glasull, fasadskivor in the top 10, got %v", got)
	}

	// sandwichvägg: the whole word (Sandwichväggar) first, the compound that
	// holds it (Halvsandwichväggar) found too.
	got = nationalIDs(t, x, "sandwichvägg", core.Swedish, core.DefaultLimit)
	if len(got) == 0 || got[0] != "6000000058" {
		t.Errorf("sandwichvägg: want Sandwichväggar, W first, got %v", got)
	}
	for _, id := range []string{"6000000055", "6000000056", "6000000057"} {
		if rank(got, id) == 0 {
			t.Errorf("sandwichvägg: want %s in the top 10, got %v", id, got)
		}
	}
	before(t, x, "sandwichvägg", core.Swedish, "6000000058", "6000000055")
	// armeringsstål (armering-s-stål) reaches Rostfri stålarmering through
	// its parts, below the exact word.
	before(t, x, "armeringsstål", core.Swedish, "6000000154", "6000000156")
	if got := nationalIDs(t, x, "armeringsstål", core.Swedish, core.DefaultLimit); rank(got, "6000000156") == 0 {
		t.Errorf("armeringsstål: want Rostfri stålarmering in the top 10, got %v", got)
	}
}

// TestDanishCompounds: Danish texts (the dkbr catalog) get Danish analysis
// and their own compound dictionary.
func TestDanishCompounds(t *testing.T) {
	x := newIndex(t, []core.Resource{
		{ID: "1", Catalog: core.DKBR, NameDA: "Betonelement, vægge", NameEN: "Precast concrete walls"},
		{ID: "2", Catalog: core.DKBR, NameDA: "Beton, fabriksblandet"},
		{ID: "3", Catalog: core.DKBR, NameDA: "Element, træ"},
		{ID: "4", Catalog: core.DKBR, NameDA: "Mursten", DescriptionDA: "Mursten af brændt ler"},
	})
	for q, want := range map[string][]string{
		"betonelementer": {"dkbr:1"},           // plural, Danish stemmer
		"element":        {"dkbr:3", "dkbr:1"}, // the word, then the compound
		"beton":          {"dkbr:2", "dkbr:1"}, // idem
		"brændte ler":    {"dkbr:4"},           // the description, Danish stemmer
		"concrete walls": {"dkbr:1"},           // English name of a Danish row
	} {
		if got := ids(search(t, x, core.TextQuery{Text: q})); !slices.Equal(got, want) {
			t.Errorf("%q: want %v, got %v", q, want, got)
		}
	}
}

// TestGermanNames: a Tabel 7 row's German (ÖKOBAUDAT) name is found by its
// words in either language, without being an English name: an English query
// that only stems like a German word does not reach it.
func TestGermanNames(t *testing.T) {
	x := newIndex(t, []core.Resource{
		{ID: "#G0008", Catalog: core.DKBR, NameDA: "Tæppeflise", NameDE: "Getuftete Teppichfliesen"},
		{ID: "#G0740", Catalog: core.DKBR, NameDA: "Betonrør, armeret", NameDE: "Betonrohr, bewehrt"},
		{ID: "#D1", Catalog: core.DKBR, NameDA: "Tæppe", NameEN: "Carpet"},
	})
	for _, lang := range []core.Lang{core.Swedish, core.English} {
		for q, want := range map[string][]string{
			"Teppichfliesen": {"dkbr:#G0008"},
			"betonrohr":      {"dkbr:#G0740"},
			"tæppeflise":     {"dkbr:#G0008"},
		} {
			if got := ids(search(t, x, core.TextQuery{Text: q, Lang: lang})); !slices.Equal(got, want) {
				t.Errorf("%s %q: want %v, got %v", lang, q, want, got)
			}
		}
	}
	// "bewehrte" would stem like "bewehrt" in a German or English analysis;
	// German names are not analysed, so only the very word finds them.
	if got := ids(search(t, x, core.TextQuery{Text: "bewehrte", Lang: core.English})); len(got) != 0 {
		t.Errorf("bewehrte: want nothing, got %v", got)
	}
}

// TestCompoundDictionary pins the splitting on a small vocabulary.
func TestCompoundDictionary(t *testing.T) {
	words := map[string]bool{}
	for _, w := range strings.Fields("glas sten lös glasull stenull lösull armering stål armeringsstål golv skiva golvskiva " +
		"betong betongens väggar sandwichväggar halvsandwichväggar vägg väggarna tak takskiva") {
		words[w] = true
	}
	d := buildCompoundDict(languageOf(core.Swedish), words)
	for w, want := range map[string]string{
		"glasull":            "glas ull",             // "ull" learned: it follows glas and sten
		"mineralull":         "",                     // "mineral" is no word of the vocabulary
		"armeringsstål":      "armering stål",        // linking s
		"golvskiva":          "golv skiva",           // not golvs-kiva
		"betongens":          "",                     // an inflection, not a compound
		"väggarna":           "",                     // idem
		"halvsandwichväggar": "halv sandwich väggar", // "sandwich" and "halv" learned
		"takskiva":           "tak skiva",
		"stentak":            "sten tak", // not in the vocabulary: parts are
	} {
		if got := strings.Join(d.split(w), " "); got != want {
			t.Errorf("split(%q) = %q, want %q", w, got, want)
		}
	}
}

// TestDictionaryFollowsResources: the compound dictionary is rebuilt from
// the live resources on every write, and documents whose analysis it
// changes are re-indexed.
func TestDictionaryFollowsResources(t *testing.T) {
	ctx := context.Background()
	half := core.Resource{ID: "half", Catalog: core.National, NameSV: "Halvsandwichväggar"}
	whole := core.Resource{ID: "whole", Catalog: core.National, NameSV: "Sandwichväggar"}
	x := newIndex(t, []core.Resource{half})
	if got := ids(search(t, x, core.TextQuery{Text: "sandwichväggar"})); len(got) != 0 {
		t.Fatalf("without the word sandwichväggar nothing splits: got %v", got)
	}
	if err := x.Upsert(ctx, []core.Resource{whole}); err != nil {
		t.Fatal(err)
	}
	if got := ids(search(t, x, core.TextQuery{Text: "sandwichväggar"})); !slices.Equal(got, []string{"national:whole", "national:half"}) {
		t.Errorf("with the word, the compound splits: want whole then half, got %v", got)
	}
	if err := x.Remove(ctx, []core.Key{whole.Key()}); err != nil {
		t.Fatal(err)
	}
	if got := ids(search(t, x, core.TextQuery{Text: "sandwichväggar"})); len(got) != 0 {
		t.Errorf("after the word left, the compound is whole again: got %v", got)
	}
}

// TestTypos: misspelt words find their resources; a word as typed always
// outranks a neighbour.
func TestTypos(t *testing.T) {
	x := realIndex(t)
	glasull := []string{"6000000001", "6000000002", "6000000003", "6000000004", "6000000005", "6000000006"}
	if got := nationalIDs(t, x, "glassull", core.Swedish, 6); !sameSet(got, glasull) {
		t.Errorf("glassull: want the six glass wools first, got %v", got)
	}
	// betnog (swapped letters) finds concrete: every result of the first
	// page has betong in its Swedish name or category.
	byID := map[string]core.Resource{}
	for _, r := range loadCatalog(t) {
		byID[r.ID] = r
	}
	got := nationalIDs(t, x, "betnog", core.Swedish, core.DefaultLimit)
	if len(got) < core.DefaultLimit {
		t.Errorf("betnog: want a full page of concrete, got %v", got)
	}
	for _, id := range got {
		r := byID[id]
		if !strings.Contains(strings.ToLower(r.NameSV+" "+r.Synonyms), "betong") && r.Category != "Betong" {
			t.Errorf("betnog: %s %q is no concrete", id, r.NameSV)
		}
	}
	checkFirst(t, x, []firstCase{
		{"tegle", core.Swedish, "6000000082"},     // Tegelsten
		{"plywod", core.English, "6000000023"},    // Plywood
		{"fjärrvärm", core.Swedish, "6000000014"}, // a letter short
	})
	if got := nationalIDs(t, x, "konstruktionstål", core.Swedish, 2); !sameSet(got, []string{"6000000150", "6000000151"}) {
		t.Errorf("konstruktionstål: want the two structural steels first, got %v", got)
	}
	// Short words are not corrected: too many neighbours.
	if got := nationalIDs(t, x, "stål", core.Swedish, 1); len(got) == 0 {
		t.Error("stål finds steel")
	}
	if n := maxEdits(len([]rune("stal"))); n != 0 {
		t.Errorf("a four-letter word gets %d edits, want 0", n)
	}
}

func TestExactOutranksFuzzy(t *testing.T) {
	x := newIndex(t, []core.Resource{
		{ID: "right", Catalog: core.National, NameSV: "Gipsskiva"},
		{ID: "typo", Catalog: core.National, NameSV: "Gipskiva"},
		{ID: "other", Catalog: core.National, NameSV: "Kalkputs"},
	})
	for q, want := range map[string][]string{
		"gipsskiva": {"national:right", "national:typo"},
		"gipskiva":  {"national:typo", "national:right"},
	} {
		got := search(t, x, core.TextQuery{Text: q})
		if !slices.Equal(ids(got), want) || got[0].Score <= got[1].Score {
			t.Errorf("%q: want %v, the exact match strictly first, got %v", q, want, got)
		}
	}
	// A word that two resources spell so is trusted: it is not corrected,
	// so its neighbours stay out.
	y := newIndex(t, []core.Resource{
		{ID: "1", Catalog: core.National, NameSV: "Betong"},
		{ID: "2", Catalog: core.National, NameSV: "Betong, klimatförbättrad"},
		{ID: "3", Catalog: core.National, NameSV: "Betang"},
	})
	if got := ids(search(t, y, core.TextQuery{Text: "betong"})); !slices.Equal(got, []string{"national:1", "national:2"}) {
		t.Errorf("betong: want the exact matches only, got %v", got)
	}
	if got := ids(search(t, y, core.TextQuery{Text: "betang"})); len(got) == 0 || got[0] != "national:3" {
		t.Errorf("betang: want Betang first, got %v", got)
	}
}

// TestCrossLingual: a query is matched against both languages; lang only
// boosts its own.
func TestCrossLingual(t *testing.T) {
	x := realIndex(t)
	checkFirst(t, x, []firstCase{
		{"particle board", core.Swedish, "6000000000"},
		{"particle board", core.English, "6000000000"},
		{"spånskiva", core.English, "6000000000"},
		{"glulam", core.Swedish, "6000000168"},
		{"limträ", core.English, "6000000168"},
		{"district heating", core.Swedish, "6000000014"},
	})
	y := newIndex(t, []core.Resource{
		{ID: "sv", Catalog: core.National, NameSV: "Kalk"},
		{ID: "en", Catalog: core.National, NameEN: "Kalk"},
	})
	for lang, want := range map[core.Lang][]string{
		core.Swedish: {"national:sv", "national:en"},
		core.English: {"national:en", "national:sv"},
	} {
		if got := ids(search(t, y, core.TextQuery{Text: "kalk", Lang: lang})); !slices.Equal(got, want) {
			t.Errorf("lang %s: want %v, got %v", lang, want, got)
		}
	}
}

// TestCodesAndNumbers: codes match as written, spaced and joined.
func TestCodesAndNumbers(t *testing.T) {
	x := realIndex(t)
	var cases []firstCase
	for _, q := range []string{"C30/37", "C30 37", "c3037", "c30-37", "betong C30 37"} {
		cases = append(cases, firstCase{q, core.Swedish, "6000000032"})
	}
	for _, q := range []string{"97 %", "97%", "kopparplåt 97%"} {
		cases = append(cases, firstCase{q, core.Swedish, "6000000163"})
	}
	for _, q := range []string{"mono-Si", "mono Si", "monoSi"} {
		cases = append(cases, firstCase{q, core.Swedish, "6000000203"})
	}
	for _, q := range []string{"CEM II", "cement CEM II/A-LL", "42,5", "42.5"} {
		cases = append(cases, firstCase{q, core.Swedish, "6000000193"})
	}
	cases = append(cases, firstCase{"HVO", core.Swedish, "6000000017"}, firstCase{"HD/F", core.Swedish, "6000000059"})
	checkFirst(t, x, cases)
	for _, q := range []string{"3-glas", "fönster 3-glas"} {
		got := nationalIDs(t, x, q, core.Swedish, 1)
		if len(got) == 0 || !strings.Contains(nameOf(t, got[0]), "3-glas") {
			t.Errorf("%q: want a 3-glas window first, got %v", q, got)
		}
	}
	// Spaced, "3 glas" also reads as the triple-glazed unit ("treglas",
	// "3-isolerglas"); the 3-glas windows follow.
	if got := nationalIDs(t, x, "3 glas", core.Swedish, 3); len(got) < 3 || !strings.Contains(nameOf(t, got[1]), "3-glas") {
		t.Errorf("3 glas: want 3-glas windows in the top 3, got %v", got)
	}
}

func nameOf(t *testing.T, id string) string {
	for _, r := range loadCatalog(t) {
		if r.ID == id {
			return r.NameSV
		}
	}
	return ""
}

// TestSiblings: the sibling whose name the query covers wins.
func TestSiblings(t *testing.T) {
	x := realIndex(t)
	checkFirst(t, x, []firstCase{
		{"fabriksbetong C25/30", core.Swedish, "6000000029"},
		{"klimatförbättrad fabriksbetong C25/30", core.Swedish, "6000000028"},
		{"fabriksbetong C25/30 klimatförbättrad", core.Swedish, "6000000028"},
		{"ready-mix concrete C25/30", core.English, "6000000029"},
		{"ready-mix concrete C25/30 climate-improved", core.English, "6000000028"},
		{"klimatförbättrad betong C30/37", core.Swedish, "6000000033"},
		{"hålbjälklag", core.Swedish, "6000000059"},
	})
	before(t, x, "fabriksbetong C25/30", core.Swedish, "6000000029", "6000000028")
	before(t, x, "fabriksbetong C25/30", core.Swedish, "6000000029", "6000000032")
	before(t, x, "klimatförbättrad fabriksbetong C25/30", core.Swedish, "6000000028", "6000000029")
	before(t, x, "betong C30/37", core.Swedish, "6000000032", "6000000033")
}

// TestThesaurus: a synonym's resource brings its relatives by name.
func TestThesaurus(t *testing.T) {
	x := realIndex(t)
	got := nationalIDs(t, x, "kryssfaner", core.Swedish, core.DefaultLimit)
	if len(got) == 0 || got[0] != "6000000023" || rank(got, "6000000169") == 0 {
		t.Errorf("kryssfaner: want Plywood first and Formskiva (phenol-coated plywood) found, got %v", got)
	}
}

// TestChunksAndTerms pins the tokenisation of codes and numbers.
func TestChunksAndTerms(t *testing.T) {
	var got []string
	for _, c := range splitChunks("Fabriksbetong, C30/37 KL-trä 97 % 97% mono-Si (4-16-4) Falu's E30 - EW30") {
		got = append(got, strings.Join(c.pieces, "|"))
	}
	want := []string{"fabriksbetong", "c30|37", "kl|trä", "97", "97", "mono|si", "4|16|4", "falu", "e30", "ew30"}
	if !slices.Equal(got, want) {
		t.Errorf("chunks: got %v, want %v", got, want)
	}
	var terms []string
	for _, tm := range languageOf(core.Swedish).analyze("C30/37 HVO100 och", nil) {
		terms = append(terms, tm.text)
	}
	if want := []string{"c3037", "c30", "37", "hvo100", "hvo"}; !slices.Equal(terms, want) {
		t.Errorf("terms: got %v, want %v", terms, want)
	}
}

// TestChunksLowerCasedLikeEachPiece holds splitChunks, which lower-cases
// a text once and cuts its pieces from that, to what lower-casing each
// piece on its own gives, also where lower case changes a character's
// length (the Kelvin sign, the dotted I, an invalid byte, Ⱥ) before, among
// and after ordinary capitals.
func TestChunksLowerCasedLikeEachPiece(t *testing.T) {
	for _, text := range []string{
		"Fabriksbetong ÅÄÖ Glasull", "\u212A-värde KL-trä Sten", "İsolering Ytter",
		"Mineral\xffull OCH Skiva", "ÉTANCHÉITÉ ẞTRASSE", "Ωmega Σίγμα", "",
		// As long lower-cased as it is, but the Kelvin sign's two bytes
		// fewer are the two Latin letters' byte more each, after it.
		"\u212Aelvin Ⱥbc Ⱦde Fgh",
	} {
		var got, want []string
		for _, c := range splitChunks(text) {
			got = append(got, c.pieces...)
		}
		walkChunks(text, func(start, end int) { want = append(want, strings.ToLower(text[start:end])) }, func() {})
		if !slices.Equal(got, want) {
			t.Errorf("%q: pieces %q, want %q", text, got, want)
		}
	}
}

func TestOSADistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"betong", "betnog", 1}, {"glasull", "glassull", 1}, {"gipsskiva", "gipskiva", 1},
		{"stenull", "glasull", 3}, {"abc", "abc", 0}, {"kalk", "kalksten", 3}, // 3: more than 2
	} {
		if got := osaDistance([]rune(c.a), []rune(c.b), 2); min(got, 3) != c.want {
			t.Errorf("osaDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestNameCoverage pins the coverage of a name by a query.
func TestNameCoverage(t *testing.T) {
	r := &core.Resource{ID: "1", Catalog: core.National, NameSV: "Fabriksbetong, husbyggnad klimatförbättrad C25/30"}
	lex := newLexicon()
	dl, err := lex.prepare(map[core.Key]*core.Resource{r.Key(): r}, func([]core.Key) (map[core.Key]*core.Resource, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	lex.apply(dl)
	d := lex.docs[r.Key()]
	names := groupsOf(d.names())
	if len(names) != 1 || names[core.Swedish] == nil {
		t.Fatalf("names %+v", names)
	}
	if got, want := lex.nameTexts(names[core.Swedish]), []nameUnit{{head: "fabriksbetong"}, {head: "husbyggn"},
		{head: "klimatförbättr"}, {head: "c2530", parts: []string{"c25", "30"}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("name units %+v, want %+v", got, want)
	}
	for q, want := range map[string]float64{
		"fabriksbetong husbyggnad klimatförbättrad C25/30": 1,
		"fabriksbetong C25/30":                             0.5,
		"C30/37":                                           0,
	} {
		tq := analyzeQuery(q, lex)
		if got := coverage(d, newCoverQuery(tq, lex), new([]uint32)); got != want {
			t.Errorf("%q covers %.3f of the name, want %.3f", q, got, want)
		}
	}
}
