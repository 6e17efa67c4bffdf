package blugeindex

import (
	"encoding/json"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"unique"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/parallel"
)

// lexicon is what the index knows about its vocabulary and its live
// documents, kept up to date change by change: a write costs its own size
// plus, when it brings or drops words, the size of the vocabulary, never the
// size of the catalog (except when a new word changes how words already
// indexed split into compound parts: the documents holding those words are
// analysed again). It is mutated only by a commit, which holds the index's
// lock exclusively, so a search reads one consistent lexicon together with
// the matching bluge snapshot.
type lexicon struct {
	// langs are the compound dictionaries and stems, by language.
	langs map[core.Lang]*langLex
	// words counts, per language, the live documents holding each word:
	// the material of the compound dictionary.
	words map[core.Lang]map[string]int32
	// df counts, per field of textFields, the documents holding each term,
	// by the term's string table id (docFreq): a query term absent from a
	// field gets no clause there, and BM25's idf is computed from it. Keyed
	// by string, a million-row file's numbers (a term each in three fields)
	// held 157 MB of map slots; by id a third of that, the strings being
	// the table's (names hold them anyway).
	df []map[uint32]int32
	// fieldDocs and fieldLen are, per field of textFields, the live
	// documents holding the field and the sum of their lengths in terms:
	// BM25's collection statistics over live documents only (bluge's own
	// count documents replaced or deleted until a merge drops them, so
	// scores would depend on the ingest history).
	fieldDocs []int64
	fieldLen  []int64
	// labels counts, per language, the documents whose label fields hold
	// each word (letters only, long enough to correct); fuzzy indexes them.
	labels map[core.Lang]map[string]int
	fuzzy  map[core.Lang]*fuzzyIndex
	// docs is the analysis of every live resource.
	docs map[core.Key]*docAnalysis
	// thes is the catalog's thesaurus: synonym entries and name heads.
	thes *thesaurus
	// ids counts the live resources under each prefixed key, by its
	// fingerprint (keyHash): idCount derives from it how many an id term
	// matches, and a query that is no id needs no id clause.
	ids map[idHash]int32
	// catalogs counts the live resources of each catalog: a search of
	// every catalog the index holds needs no catalog filter.
	catalogs map[core.CatalogID]int
	// strs is the string table of what indexed documents keep (words,
	// name terms, thesaurus heads) and of the terms df counts: one copy of
	// each, and none of them a slice of a whole lower-cased text. It only
	// grows, with the vocabulary.
	strs  map[string]uint32
	strOf []string
	// memo is what the index has analysed of its long texts (memo.go),
	// shared with the lexicon's copies.
	memo *fieldMemo
	// entries is where add and remove unpack a document's synonym
	// entries. Only a commit changes the lexicon, one document at a time
	// (apply).
	entries []uint32
}

// packBufs are the buffers compact packs a document through.
type packBufs struct {
	words, names, entries, heads []uint32
	packed                       []byte
}

// docAnalysis is one resource as the index sees it. From its analysis
// until it is indexed it holds the whole analysis (full); an indexed
// document keeps only what searches and the next changes need: its words
// as ids of the lexicon's string table (to find the documents a new
// dictionary splits differently), its name units (for the name coverage)
// and its hash, the ids and units flat in one slice (kept). The terms,
// chunks and thesaurus entries are most of an analysis's memory; when a
// document is replaced or removed, its old analysis is computed again from
// its resource, read from the index (Index.sources; the dictionary it was
// analysed with is the current one: a dictionary that splits one of its
// words differently re-analyses it).
type docAnalysis struct {
	// kept holds an indexed document's words, names and part of the
	// thesaurus (see words, names, entries and heads), packed as varints
	// in one slice (kept.go): a slice per part and language made the
	// headers and small arrays over a gigabyte at a million documents, and
	// the values as uint32 were three times the bytes.
	kept []byte
	// hash fingerprints the terms, so a new dictionary re-indexes only the
	// resources whose analysis it changed.
	hash  uint64
	*full // nil once indexed
}

// entries returns an indexed document's synonym entries (string table
// ids of entryKey) in increasing order, none for the many without
// synonyms.
func (d *docAnalysis) entries() []uint32 { return d.appendEntries(nil) }

// heads returns the heads of an indexed document's names, kept by the
// documents with synonym entries only: groups of one language as in names
// (its index in analysed, the count, string ids).
func (d *docAnalysis) heads() []uint32 {
	hs, _ := appendHeads(nil, d.kept)
	return hs
}

func (d *docAnalysis) appendEntries(dst []uint32) []uint32 {
	dst, _ = appendEntries(dst, d.kept)
	return dst
}

// words returns an indexed document's words, unpacked: per language its
// index in languages, the number of words, their string table ids in
// increasing order.
func (d *docAnalysis) words() []uint32 { return d.appendWords(nil) }

// names returns an indexed document's name units, unpacked: per name its
// language's index in analysed, its length, its units (flatNames).
// segmentNames keeps them in the same layout.
func (d *docAnalysis) names() []uint32 { return d.appendNames(nil) }

// appendWords and appendNames append words and names to dst. What the
// lexicon packed itself unpacks (a snapshot's is checked as it is read).
func (d *docAnalysis) appendWords(dst []uint32) []uint32 {
	dst, _ = appendWords(dst, d.kept)
	return dst
}

func (d *docAnalysis) appendNames(dst []uint32) []uint32 {
	dst, _ = appendNames(dst, d.kept)
	return dst
}

// full is the part of an analysis kept only until the document is indexed.
type full struct {
	*docWords
	// distinct lists each field's terms once with how often the field
	// holds it: document frequencies, and the terms bluge indexes.
	distinct [][]termFreq
	// lens are the lengths of the fields of textFields, in terms.
	lens []int32
	// synonyms and heads are the resource's part of the thesaurus.
	synonyms  []langPhrase
	headTerms []langTerms
	// fields holds the terms of each field of textFields (nil when empty).
	fields [][]term
	// nameUnits are the names' word units as text, until compact turns
	// them into names.
	nameUnits []textNames
	// source is the resource as JSON, stored with the document.
	source []byte
}

// textNames are the word units of a name in one language, as text.
type textNames struct {
	lang  core.Lang
	units []nameUnit
}

// newLexicon returns the lexicon of an empty index.
func newLexicon() *lexicon {
	lex := &lexicon{
		langs:     map[core.Lang]*langLex{},
		words:     map[core.Lang]map[string]int32{},
		df:        make([]map[uint32]int32, len(textFields)),
		fieldDocs: make([]int64, len(textFields)),
		fieldLen:  make([]int64, len(textFields)),
		labels:    map[core.Lang]map[string]int{},
		fuzzy:     map[core.Lang]*fuzzyIndex{},
		docs:      map[core.Key]*docAnalysis{},
		thes:      newThesaurus(),
		ids:       map[idHash]int32{},
		catalogs:  map[core.CatalogID]int{},
		strs:      map[string]uint32{},
		memo:      newFieldMemo(),
	}
	for i := range lex.df {
		lex.df[i] = map[uint32]int32{}
	}
	for _, la := range languages {
		lex.langs[la.lang] = newLangLex(la, map[string]bool{}, nil, nil)
		lex.words[la.lang] = map[string]int32{}
		lex.labels[la.lang] = map[string]int{}
		lex.fuzzy[la.lang] = newFuzzyIndex(lex.labels[la.lang], nil)
	}
	return lex
}

// delta is a prepared change of the lexicon: the new analysis of every
// resource it touches (nil: no longer live), and what the change does to the
// vocabulary. Preparing reads the lexicon without changing it; apply then
// changes it in time proportional to the delta.
type delta struct {
	next map[core.Key]*docAnalysis
	// prev is the analysis, computed again, of the indexed version of each
	// key of next that has one: what the change counts out.
	prev map[core.Key]*docAnalysis
	// words and labels are the changes of the counts, per language.
	words  map[core.Lang]map[string]int32
	labels map[core.Lang]map[string]int
	// langs replaces the dictionaries of languages whose words changed;
	// relabel lists the languages whose label words changed.
	langs   map[core.Lang]*langLex
	relabel map[core.Lang]bool
	// df, fieldDocs and fieldLen are the changes of the lexicon's term
	// and field counts, per field of textFields (termCounts); stage keys
	// df's terms by their string table ids (dfIDs) and drops df, so apply
	// looks no string up.
	df                  []map[string]int32
	dfIDs               []map[uint32]int32
	fieldDocs, fieldLen []int64
	// strs are the strings new to the string table that the documents
	// of next, compacted by stage, and dfIDs have ids of; nil before
	// stage.
	strs *stagedStrs
}

// stagedStrs numbers strings for documents compacted before their change
// is applied: the string table's own ids, and for strings it lacks ids
// after its last, which apply then adds in the same order. The lexicon is
// only read meanwhile: every change holds the index's write lock from
// prepare to apply, so no other change adds strings in between.
type stagedStrs struct {
	lex  *lexicon
	base int // len(lex.strOf) when staged
	// mu guards ids and of: stage compacts on every core. The string
	// table itself is only read.
	mu  sync.Mutex
	ids map[string]uint32
	of  []string
}

func (st *stagedStrs) intern(s string) uint32 {
	if id, ok := st.lex.strs[s]; ok {
		return id
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	id, ok := st.ids[s]
	if !ok {
		id = uint32(st.base + len(st.of))
		s = strings.Clone(s)
		st.ids[s] = id
		st.of = append(st.of, s)
	}
	return id
}

// stage compacts the new analyses of a prepared change (after its bluge
// documents were made of them) and keys its term counts by string id,
// beside searches, so apply, which searches wait for, has only to count
// them in. It runs on every core, each with
// its own scratch: the change holds the index's write lock and the
// vectors wait, so one core would otherwise idle (68-81 ms of a batch of
// 10,000). The ids of new strings then follow the order the workers meet
// them in, as they followed the map's order before.
func (lex *lexicon) stage(dl *delta) {
	st := &stagedStrs{lex: lex, base: len(lex.strOf), ids: map[string]uint32{}}
	docs := make([]*docAnalysis, 0, len(dl.next))
	for _, d := range dl.next {
		if d != nil && d.full != nil {
			docs = append(docs, d)
		}
	}
	parallel.Parts(len(docs), func(from, to int) {
		var buf packBufs
		for _, d := range docs[from:to] {
			compact(d, st.intern, &buf)
		}
	})
	dl.dfIDs = make([]map[uint32]int32, len(dl.df))
	for i, df := range dl.df {
		dl.dfIDs[i] = make(map[uint32]int32, len(df))
		for t, c := range df {
			dl.dfIDs[i][st.intern(t)] = c
		}
	}
	dl.df = nil
	dl.strs = st
}

// prepare works out the change that gives the keys of target their new
// resources (nil: removed). The analysis runs on every core for large
// changes. Indexed documents keep no resource: sources reads the indexed
// versions the change analyses again.
func (lex *lexicon) prepare(target map[core.Key]*core.Resource, sources func([]core.Key) (map[core.Key]*core.Resource, error)) (*delta, error) {
	dl := &delta{
		next:    make(map[core.Key]*docAnalysis, len(target)),
		prev:    make(map[core.Key]*docAnalysis, len(target)),
		words:   map[core.Lang]map[string]int32{},
		labels:  map[core.Lang]map[string]int{},
		langs:   map[core.Lang]*langLex{},
		relabel: map[core.Lang]bool{},
	}
	keys := make([]core.Key, 0, len(target))
	var indexed []core.Key
	for k, r := range target {
		if lex.docs[k] == nil {
			if r == nil {
				continue // removing what is not there
			}
		} else {
			indexed = append(indexed, k)
		}
		keys = append(keys, k)
	}
	olds, err := sources(indexed)
	if err != nil {
		return nil, err
	}
	// Words first: the dictionary depends on them. The indexed versions
	// are analysed again with the dictionary they were indexed with.
	texts := make([]*docWords, len(keys))
	prev := make([]*docAnalysis, len(keys))
	memo := lex.memo
	memo.begin(lex.langs)
	parallel.Each(len(keys), func(i int) {
		if r := target[keys[i]]; r != nil {
			texts[i] = wordsOf(fieldChunks(r, memo))
		}
		if old := olds[keys[i]]; old != nil {
			prev[i] = analyze(lex.langs, old, wordsOf(fieldChunks(old, memo)))
		}
	})
	for i, k := range keys {
		if prev[i] != nil {
			dl.prev[k] = prev[i]
			dl.count(prev[i].docWords, -1)
		}
		if texts[i] != nil {
			dl.count(texts[i], 1)
		}
	}
	// A language whose set of words changed gets a new dictionary; the
	// documents holding a word it splits differently are analysed again.
	resplit := map[core.Lang]map[string]bool{}
	for _, la := range languages {
		old := lex.words[la.lang]
		if !crosses(old, dl.words[la.lang]) {
			continue
		}
		// Words that come or go without being in the dictionary's base
		// (numbers, codes, words shorter than a part: every product code
		// of a catalog) leave the dictionary as it is, and every split
		// with it: the language keeps its langLex, whose memo lacks the
		// new words, until the vocabulary has grown by a quarter of what
		// it memoised. Rebuilding it for each change made a bulk load
		// quadratic (each chunk split every word of the catalog again).
		prev := lex.langs[la.lang]
		baseKept, size := vocabAfter(old, dl.words[la.lang])
		if baseKept && size <= len(prev.words)+len(prev.words)/4 {
			continue
		}
		words := make(map[string]bool, len(old)+len(dl.words[la.lang]))
		for w, n := range old {
			if n+dl.words[la.lang][w] > 0 {
				words[w] = true
			}
		}
		for w, d := range dl.words[la.lang] {
			if old[w] == 0 && d > 0 {
				words[w] = true
			}
		}
		// A vocabulary grown past the memo without a word of the base
		// coming or going keeps the dictionary, and so every split: the
		// memo grows, nothing is analysed again.
		var dict *compoundDict
		if baseKept {
			dict = prev.dict
		}
		lx := newLangLex(la, words, prev, dict)
		dl.langs[la.lang] = lx
		if baseKept {
			continue
		}
		for w := range old { // the vocabulary, memoised by prev or not
			if lx.words[w] && !slices.Equal(prev.split(w), lx.splits[w]) {
				if resplit[la.lang] == nil {
					resplit[la.lang] = map[string]bool{}
				}
				resplit[la.lang][w] = true
			}
		}
	}
	for _, la := range languages {
		if crosses(lex.labels[la.lang], dl.labels[la.lang]) {
			dl.relabel[la.lang] = true
		}
	}
	langs := lex.langs
	if len(dl.langs) > 0 {
		langs = maps.Clone(lex.langs)
		maps.Copy(langs, dl.langs)
	}
	srcs := make([]*core.Resource, len(keys))
	for i, k := range keys {
		srcs[i] = target[k]
	}
	touched := len(keys)
	if ids := lex.idsOf(resplit); len(ids) > 0 {
		var again []core.Key
		var words []uint32
		for k, d := range lex.docs {
			if _, ok := target[k]; ok {
				continue
			}
			if words = d.appendWords(words[:0]); holdsAny(words, ids) {
				again = append(again, k)
			}
		}
		olds, err := sources(again)
		if err != nil {
			return nil, err
		}
		for _, k := range again {
			keys, texts, srcs = append(keys, k), append(texts, nil), append(srcs, olds[k])
		}
	}
	prev = append(prev, make([]*docAnalysis, len(keys)-touched)...)
	analyses := make([]*docAnalysis, len(keys))
	parallel.Each(len(keys), func(i int) {
		if srcs[i] == nil {
			return
		}
		if i >= touched { // resplit: the same words, a new dictionary
			texts[i] = wordsOf(fieldChunks(srcs[i], memo))
			old := analyze(lex.langs, srcs[i], texts[i])
			analyses[i] = analyze(langs, srcs[i], texts[i])
			prev[i] = old // written by this worker only; read after the wait
		} else {
			analyses[i] = analyze(langs, srcs[i], texts[i])
		}
		analyses[i].source, _ = json.Marshal(srcs[i]) // a Resource always encodes
	})
	for i := touched; i < len(keys); i++ {
		dl.prev[keys[i]] = prev[i]
	}
	for i, k := range keys {
		dl.next[k] = analyses[i]
	}
	dl.termCounts(keys)
	return dl, nil
}

// termCounts sums what the change does to the documents' term and field
// counts, one field per goroutine. It runs in prepare, beside searches,
// rather than in apply, which searches wait for: a re-ingested document
// mostly holds the terms it held, and a batch's documents share most of
// their terms, so what apply adds up is a fraction of what was counted.
func (dl *delta) termCounts(keys []core.Key) {
	n := len(textFields)
	dl.df, dl.fieldDocs, dl.fieldLen = make([]map[string]int32, n), make([]int64, n), make([]int64, n)
	field := func(i int) {
		df := map[string]int32{}
		count := func(d *docAnalysis, sign int32) {
			for _, tf := range d.distinct[i] {
				df[tf.text] += sign // canonical (analyze)
			}
			if d.lens[i] > 0 {
				dl.fieldDocs[i] += int64(sign)
				dl.fieldLen[i] += int64(sign) * int64(d.lens[i])
			}
		}
		for _, k := range keys {
			if old := dl.prev[k]; old != nil {
				count(old, -1)
			}
			if d := dl.next[k]; d != nil {
				count(d, 1)
			}
		}
		for t, c := range df {
			if c == 0 {
				delete(df, t)
			}
		}
		dl.df[i] = df
	}
	if len(keys) < parallel.Above {
		for i := range n {
			field(i)
		}
		return
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { field(i) })
	}
	wg.Wait()
}

// count adds (sign 1) or removes (-1) a resource's words and label words.
func (dl *delta) count(dw *docWords, sign int32) {
	for lang, ws := range dw.words {
		m := dl.words[lang]
		if m == nil {
			m = map[string]int32{}
			dl.words[lang] = m
		}
		for _, w := range ws {
			m[w] += sign // canonical (wordsOf)
		}
	}
	for lang, ws := range dw.labels {
		m := dl.labels[lang]
		if m == nil {
			m = map[string]int{}
			dl.labels[lang] = m
		}
		for _, w := range ws {
			m[w] += int(sign) // canonical (wordsOf)
		}
	}
}

// own returns the canonical copy of s, which keeps no other text alive.
// Words and terms are slices of their resource's whole cleaned text (and a
// file's fields are slices of one string per row), and Go's map
// assignment stores the key it is given even when the key was already
// there: a count kept by word would keep the whole text of the last
// resource that counted it alive (14 MB of the lexicon of a 100,000-row
// file). Every key of a count that outlives its change is canonical, so
// updates store the same string again. The analysis makes its words and
// terms canonical (wordsOf, analyze), on every core, so the counts, which
// are kept one change at a time, store them as they are.
func own(s string) string { return unique.Make(s).Value() }

// canonCache is an analysis worker's cache of canonical strings in front
// of own: a catalog's vocabulary is small beside its words, and a plain
// map skips unique.Make's weak pointer made strong for a word it has seen.
// unique.Make was 6 % of a bulk load's CPU; the cache's own look-ups cost
// most of that again, so it gains about 3 % (docs/PERFORMANCE.md 12zb).
// It holds only canonical strings, never a resource's text, and at most
// maxCanon of them.
type canonCache map[string]string

// maxCanon bounds a worker's cache (about 2 MB of entries besides the
// strings): a vocabulary larger than that starts a new cache rather than
// grows it.
const maxCanon = 1 << 15

var canonCaches = sync.Pool{New: func() any { return make(canonCache, 1024) }}

func (c canonCache) own(s string) string {
	if v, ok := c[s]; ok {
		return v
	}
	v := own(s)
	if len(c) >= maxCanon {
		clear(c)
	}
	c[v] = v
	return v
}

// crosses tells whether applying the changes d to the counts makes a word
// appear or disappear.
func crosses[N int | int32](counts, d map[string]N) bool {
	for w, n := range d {
		if n == 0 {
			continue
		}
		if before := counts[w]; (before > 0) != (before+n > 0) {
			return true
		}
	}
	return false
}

// vocabAfter tells whether the vocabulary counts after d keep the compound
// dictionary (no word of its base, inCompoundBase, appears or goes) and,
// when they do, the words the vocabulary held and those d brings: gone
// words still count, so a catalog whose codes are replaced, not added,
// has its memo rebuilt of the live ones too.
func vocabAfter(counts, d map[string]int32) (baseKept bool, size int) {
	size = len(counts)
	for w, n := range d {
		before := counts[w]
		if n == 0 || (before > 0) == (before+n > 0) {
			continue
		}
		if inCompoundBase(w) {
			return false, 0
		}
		if before == 0 {
			size++
		}
	}
	return true, size
}

// idsOf returns the string table ids of words, by language; a word without
// an id is held by no indexed document.
func (lex *lexicon) idsOf(words map[core.Lang]map[string]bool) map[core.Lang]map[uint32]bool {
	out := map[core.Lang]map[uint32]bool{}
	for lang, ws := range words {
		for w := range ws {
			if id, ok := lex.strs[w]; ok {
				if out[lang] == nil {
					out[lang] = map[uint32]bool{}
				}
				out[lang][id] = true
			}
		}
	}
	return out
}

// holdsAny tells whether an indexed resource's words (unpacked) hold one
// of the words, by language.
func holdsAny(words []uint32, ids map[core.Lang]map[uint32]bool) bool {
	for i := 0; i < len(words); {
		li, lw, next := unitAt(words, i) // a group has a unit's layout
		if set := ids[analysed[li].lang]; len(set) > 0 {
			for _, id := range lw {
				if set[id] {
					return true
				}
			}
		}
		i = next
	}
	return false
}

// apply makes the delta the lexicon's state, staging it first when the
// caller has not (a change stages it beside searches).
func (lex *lexicon) apply(dl *delta) {
	if dl.strs == nil {
		lex.stage(dl)
	}
	for _, s := range dl.strs.of { // numbered from st.base == len(lex.strOf)
		lex.strs[s] = uint32(len(lex.strOf))
		lex.strOf = append(lex.strOf, s)
	}
	maps.Copy(lex.langs, dl.langs)
	for lang, d := range dl.words {
		addCounts(lex.words[lang], d)
	}
	for lang, d := range dl.labels {
		addCounts(lex.labels[lang], d)
	}
	for lang := range dl.relabel {
		lex.fuzzy[lang] = newFuzzyIndex(lex.labels[lang], nil)
	}
	for i, df := range dl.dfIDs {
		for id, c := range df {
			if v := lex.df[i][id] + c; v > 0 {
				lex.df[i][id] = v
			} else {
				delete(lex.df[i], id)
			}
		}
		lex.fieldDocs[i] += dl.fieldDocs[i]
		lex.fieldLen[i] += dl.fieldLen[i]
	}
	for k, d := range dl.next {
		if dl.prev[k] != nil {
			lex.remove(k)
		}
		if d != nil {
			lex.add(k, d)
		}
	}
	lex.thes.settle(lex.docs)
}

// clone returns a copy of the lexicon that apply can change while
// searches go on reading this one (change.Extend): every map and slice a
// commit writes to is copied; what it only replaces or never changes (the
// languages' dictionaries, the analyses of indexed documents, the strings,
// the fuzzy indexes' deletion variants) is shared.
func (lex *lexicon) clone() *lexicon {
	c := &lexicon{
		langs:     maps.Clone(lex.langs),
		words:     make(map[core.Lang]map[string]int32, len(lex.words)),
		df:        make([]map[uint32]int32, len(lex.df)),
		fieldDocs: slices.Clone(lex.fieldDocs),
		fieldLen:  slices.Clone(lex.fieldLen),
		labels:    make(map[core.Lang]map[string]int, len(lex.labels)),
		fuzzy:     make(map[core.Lang]*fuzzyIndex, len(lex.fuzzy)),
		docs:      maps.Clone(lex.docs),
		thes:      lex.thes.clone(),
		ids:       maps.Clone(lex.ids),
		catalogs:  maps.Clone(lex.catalogs),
		strs:      maps.Clone(lex.strs),
		// Clipped: the copy's appends never write into the array this
		// one's readers index.
		strOf: slices.Clip(lex.strOf),
		memo:  lex.memo,
	}
	for lang, m := range lex.words {
		c.words[lang] = maps.Clone(m)
	}
	for i, m := range lex.df {
		c.df[i] = maps.Clone(m)
	}
	for lang, m := range lex.labels {
		c.labels[lang] = maps.Clone(m)
	}
	// A fuzzy index reads its language's label counts: the copy's reads
	// the copied counts, with the same words and so the same variants.
	for lang, fx := range lex.fuzzy {
		c.fuzzy[lang] = &fuzzyIndex{df: c.labels[lang], idx: fx.idx}
	}
	return c
}

// compact turns an analysis just indexed into what an indexed document
// keeps (see docAnalysis), its strings numbered by intern, packed through
// buf.
func compact(d *docAnalysis, intern func(string) uint32, buf *packBufs) {
	words, names := buf.words[:0], buf.names[:0]
	for li, la := range languages {
		ws := d.docWords.words[la.lang]
		if len(ws) == 0 {
			continue
		}
		words = append(words, uint32(li), uint32(len(ws)))
		at := len(words)
		for _, w := range ws {
			words = append(words, intern(w))
		}
		slices.Sort(words[at:])
	}
	for _, tn := range d.nameUnits { // of languages, never exact: in analysed
		at := len(names)
		names = append(names, uint32(langIndex(tn.lang)), 0)
		names = flatNames(names, tn.units, intern)
		names[at+1] = uint32(len(names) - at - 2)
	}
	entries, heads := buf.entries[:0], buf.heads[:0]
	if len(d.synonyms) > 0 {
		for _, e := range d.synonyms {
			entries = append(entries, intern(entryKey(e.lang, e.phrase)))
		}
		slices.Sort(entries) // an entry listed twice counts once
		entries = slices.Compact(entries)
		for _, h := range d.headTerms {
			heads = append(heads, uint32(langIndex(h.lang)), uint32(len(h.terms)))
			for _, term := range h.terms {
				heads = append(heads, intern(term))
			}
		}
	}
	d.kept, buf.packed = packKept(words, names, entries, heads, buf.packed)
	buf.words, buf.names, buf.entries, buf.heads = words, names, entries, heads
	d.full = nil
}

func addCounts[N int | int32](counts, d map[string]N) {
	for w, n := range d {
		if v := counts[w] + n; v > 0 {
			counts[w] = v
		} else {
			delete(counts, w)
		}
	}
}

// add and remove count one document in or out of the documents, the
// catalogs, the ids and the thesaurus; its terms and field lengths are
// counted with the whole change's (delta.termCounts).
func (lex *lexicon) add(k core.Key, d *docAnalysis) {
	lex.docs[k] = d // k's id is its own copy (targetOf)
	lex.catalogs[k.Catalog]++
	lex.ids[keyHash(k)]++ // d is compacted (apply staged it)
	lex.entries = d.appendEntries(lex.entries[:0])
	lex.thes.add(k, lex.entries)
}

func (lex *lexicon) remove(k core.Key) {
	if old := lex.docs[k]; old != nil {
		lex.entries = old.appendEntries(lex.entries[:0])
		lex.thes.remove(k, lex.entries)
	}
	delete(lex.docs, k)
	if lex.catalogs[k.Catalog]--; lex.catalogs[k.Catalog] <= 0 {
		delete(lex.catalogs, k.Catalog)
	}
	h := keyHash(k)
	if lex.ids[h]--; lex.ids[h] <= 0 {
		delete(lex.ids, h)
	}
}

// idCount is how many live resources the id term t (lower-cased) matches:
// those whose id it is, in any catalog, and the one whose prefixed key it
// is (idTerms). No resource is both: its key is longer than its id.
func (lex *lexicon) idCount(t string) int32 {
	n := lex.ids[hashOf(t)]
	for _, c := range core.Catalogs {
		n += lex.ids[hashOf(strings.ToLower(string(c)), ":", t)]
	}
	return n
}

// docWords are the words of a resource by language (stop words and
// numbers dropped, each once): the material of the compound dictionary and
// of the stems and splits a langLex memoises and, for the label fields, of
// typo correction. They depend on the text only. A number (isDigits) is
// none of these: it is its own stem, never split, never in a dictionary's
// base nor a label.
type docWords struct {
	chunks [][]chunk // per field of textFields
	// memo holds, per field of textFields, the lexicon's memo of its text
	// when the memo keeps it (nil: it keeps none of them).
	memo   []*memoEntry
	words  map[core.Lang][]string
	labels map[core.Lang][]string // letters only, long enough to correct
}

// fieldChunks cuts every field of a resource into chunks; those of a text
// the memo m keeps (nil: none) come from it, cut once.
func fieldChunks(r *core.Resource, m *fieldMemo) *docWords {
	dw := &docWords{chunks: make([][]chunk, len(textFields))}
	var buf [16]string // on the stack while textFields has 16 or fewer
	texts := buf[:0]
	size := 0
	for i, f := range textFields {
		v := f.value(r)
		if m != nil && remembered[i] && len(v) >= memoMinBytes {
			if dw.memo == nil {
				dw.memo = make([]*memoEntry, len(textFields))
			}
			dw.memo[i] = m.entry(i, v)
			dw.chunks[i] = dw.memo[i].chunks
			v = ""
		} else {
			v = core.CleanText(v)
		}
		texts = append(texts, v)
		size += len(v)
	}
	// The other fields' chunks and pieces share two slices, sized as
	// splitChunks sizes them, and each field's chunks are a capped window.
	out, pieces := make([]chunk, 0, size/bytesPerChunk+len(textFields)), make([]string, 0, size/bytesPerPiece+len(textFields))
	for i, v := range texts {
		if v != "" {
			from := len(out)
			out, pieces = appendChunks(out, pieces, v)
			dw.chunks[i] = out[from:len(out):len(out)]
		}
	}
	return dw
}

// wordsOf fills in the words and labels of dw from its chunks.
func wordsOf(dw *docWords) *docWords {
	cs := dw.chunks
	dw.words, dw.labels = map[core.Lang][]string{}, map[core.Lang][]string{}
	seen := seenWords.get()
	defer seenWords.put(seen)
	canon := canonCaches.Get().(canonCache)
	defer canonCaches.Put(canon)
	// Each language's lists get room for all its pieces at once rather
	// than growing a word at a time (a tenth of what the analysis
	// allocated); they live until the analysis is compacted.
	words, labels := map[core.Lang]int{}, map[core.Lang]int{} // pieces
	for i, f := range textFields {
		if f.lang == exact {
			continue
		}
		for _, c := range cs[i] {
			words[f.lang] += len(c.pieces)
			if f.label {
				labels[f.lang] += len(c.pieces)
			}
		}
	}
	add := func(lists map[core.Lang][]string, room map[core.Lang]int, lang core.Lang, w string) {
		ws := lists[lang]
		if ws == nil {
			ws = make([]string, 0, room[lang])
		}
		lists[lang] = append(ws, w)
	}
	for i, f := range textFields {
		if f.lang == exact || len(cs[i]) == 0 {
			continue
		}
		la := languageOf(f.lang)
		if dw.memo != nil && dw.memo[i] != nil {
			// A remembered text's words are listed once, in its memo.
			for _, w := range dw.memo[i].wordList(la, canon) {
				k := langWord{f.lang, w.text}
				had := seen[k]
				if had&seenWord == 0 {
					seen[k] = had | seenWord
					add(dw.words, words, f.lang, w.text)
				}
				if f.label && had&seenLabel == 0 && w.label {
					seen[k] |= seenLabel
					add(dw.labels, labels, f.lang, w.text)
				}
			}
			continue
		}
		for _, c := range cs[i] {
			for _, p := range c.pieces {
				if !la.isWord(p) {
					continue
				}
				k := langWord{f.lang, p}
				had := seen[k]
				if had&seenWord == 0 {
					seen[k] = had | seenWord
					p = canon.own(p)
					add(dw.words, words, f.lang, p)
				}
				if f.label && had&seenLabel == 0 && isLabel(p) {
					seen[k] |= seenLabel
					add(dw.labels, labels, f.lang, canon.own(p))
				}
			}
		}
	}
	return dw
}

// isLabel tells whether a word of a label field is one typo correction
// learns: letters only, long enough to correct.
func isLabel(p string) bool { return isLetters(p) && runeLen(p) >= minFuzzy-1 }

// langWord is a word of one language.
type langWord struct {
	lang core.Lang
	word string
}

// What wordsOf has seen of a word: listed among the words, the labels.
const (
	seenWord uint8 = 1 << iota
	seenLabel
)

// mapPool lends the analysis workers the scratch maps of one resource's
// analysis: a map per resource (two per language before) was a tenth of
// what a bulk load allocated.
type mapPool[K comparable, V any] struct{ pool sync.Pool }

var (
	seenWords  mapPool[langWord, uint8] // wordsOf
	termPlaces mapPool[string, int]     // analyze
)

func (p *mapPool[K, V]) get() map[K]V {
	if m, ok := p.pool.Get().(map[K]V); ok {
		return m
	}
	return make(map[K]V, 256)
}

// put takes back a map; one grown by an unusually long text is dropped
// rather than kept (clearing costs its capacity, not its length).
func (p *mapPool[K, V]) put(m map[K]V) {
	if len(m) > 4096 {
		return
	}
	clear(m)
	p.pool.Put(m)
}

// newLangLex builds the compound dictionary of a language and stems and
// splits every word of the catalog once, not once per occurrence. Stems
// depend on the word alone and are taken from prev when it has them;
// dict, when not nil, is the dictionary words build (prev's, whose base
// they share), and splits by it are taken from prev too.
func newLangLex(la *language, words map[string]bool, prev *langLex, dict *compoundDict) *langLex {
	if dict == nil {
		dict = buildCompoundDict(la, words)
	}
	// Neither map is sized by the vocabulary: few of its words split or
	// change when stemmed (a million-row file's numbers none), and a
	// map sized for all of them was a hundred megabytes of empty slots.
	lx := &langLex{
		words:  words,
		dict:   dict,
		stems:  make(map[string]string, len(dict.words)),
		splits: map[string][]string{},
	}
	stem := func(w string) string {
		if prev != nil {
			if s, ok := prev.stem(w); ok {
				return s
			}
		}
		return la.stemOf(w)
	}
	split := func(w string) []string {
		if prev != nil && prev.dict == dict && prev.words[w] {
			return prev.splits[w]
		}
		return dict.split(w)
	}
	for w := range words {
		if s := stem(w); s != w {
			lx.stems[w] = s
		}
		if parts := split(w); parts != nil {
			lx.splits[w] = parts
		}
	}
	for w := range dict.words {
		if !words[w] {
			lx.stems[w] = stem(w)
		}
	}
	return lx
}

// idf is BM25's inverse document frequency of a term in a field over the
// live documents, in bluge's own formula (so the scores of an index without
// replaced or deleted documents are bluge's to the bit).
// n is the term's docFreq, which the caller has looked up.
func (lex *lexicon) idf(field int, n int32) float64 {
	return bm25IDF(float64(n), float64(lex.fieldDocs[field]))
}

// bm25IDF is bluge's idf of a term held by n of docs documents.
func bm25IDF(n, docs float64) float64 { return math.Log(1.0 + (docs - n) + 0.5/(n+0.5)) }

// avgLen is the average length of a field in terms over the live documents
// holding it.
func (lex *lexicon) avgLen(field int) float64 {
	if lex.fieldDocs[field] == 0 {
		return 1
	}
	return float64(lex.fieldLen[field]) / float64(lex.fieldDocs[field])
}

// trusted tells whether w is a word the catalog spells so in the labels of
// several resources, in any language: a correct word of one language is no
// typo of another.
func (lex *lexicon) trusted(w string) bool {
	for _, fx := range lex.fuzzy {
		if fx.trusted(w) {
			return true
		}
	}
	return false
}

// docFreq is how many live documents hold term t in field.
func (lex *lexicon) docFreq(field int, t string) int32 {
	id, ok := lex.strs[t]
	if !ok {
		return 0
	}
	return lex.df[field][id]
}

// inVocab tells whether any field of the language holds the term.
func (lex *lexicon) inVocab(lang core.Lang, t string) bool {
	id, ok := lex.strs[t]
	if !ok {
		return false
	}
	for i, f := range textFields {
		if f.lang == lang && lex.df[i][id] > 0 {
			return true
		}
	}
	return false
}

// hasLang tells whether any resource has text in the language.
func (lex *lexicon) hasLang(lang core.Lang) bool {
	for i, f := range textFields {
		if f.lang == lang && len(lex.df[i]) > 0 {
			return true
		}
	}
	return false
}

// needsFilter tells whether a search of the given catalogs (none: all) must
// filter: only when the index holds resources of another catalog.
func (lex *lexicon) needsFilter(catalogs []core.CatalogID) bool {
	if len(catalogs) == 0 {
		return false
	}
	for c := range lex.catalogs {
		if !slices.Contains(catalogs, c) {
			return true
		}
	}
	return false
}

// analyze analyses every field of a resource (its words cut into chunks)
// with the dictionaries of langs.
func analyze(langs map[core.Lang]*langLex, r *core.Resource, dw *docWords) *docAnalysis {
	chunks := dw.chunks
	d := &docAnalysis{full: &full{docWords: dw, lens: make([]int32, len(textFields)), fields: make([][]term, len(textFields)), distinct: make([][]termFreq, len(textFields))}}
	h := fnv.New64a()
	at := termPlaces.get() // a term's place in distinct[i]
	defer termPlaces.put(at)
	canon := canonCaches.Get().(canonCache)
	defer canonCaches.Put(canon)
	for i, f := range textFields {
		if len(chunks[i]) == 0 {
			continue
		}
		la := languageOf(f.lang)
		if dw.memo != nil && dw.memo[i] != nil {
			d.fields[i], d.distinct[i] = dw.memo[i].analysed(la, langs[f.lang], at, canon)
		} else {
			d.fields[i] = la.analyzeChunks(chunks[i], langs[f.lang])
			d.distinct[i] = distinctTerms(d.fields[i], at, canon)
		}
		d.lens[i] = int32(len(d.fields[i]))
		if i == nameField[f.lang] && f.lang != exact {
			d.nameUnits = append(d.nameUnits, textNames{lang: f.lang, units: nameUnits(d.fields[i])})
		}
		for _, t := range d.fields[i] {
			_, _ = h.Write([]byte{byte(i), byte(t.kind), byte(t.unit), byte(t.unit >> 8), byte(t.unit >> 16)})
			_, _ = h.Write([]byte(t.text))
			_, _ = h.Write([]byte{0})
		}
	}
	d.hash = h.Sum64()
	d.synonyms, d.headTerms = thesaurusOf(r, langs, dw.memo)
	return d
}
