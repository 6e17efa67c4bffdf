package blugeindex

import (
	"maps"
	"slices"
	"sync"
	"unicode/utf8"
)

// Typo tolerance. A query word of minFuzzy letters or more is compared with
// the words of the catalog's names, synonyms and categories (not the long
// descriptions, whose vocabulary would mostly add noise): "glassull" finds
// "glasull", "gipskiva" "gipsskiva", "betnog" "betong". Neighbours within
// maxEdits edits (insert, delete, substitute, swap two adjacent letters) are
// added to the query as terms of a fraction of the weight of the typed word,
// so a resource that matches the word as typed always ranks above one that
// only matches a neighbour.
//
// Lookup uses a deletion index (the symmetric-delete method): every word is
// stored under the strings left after deleting up to maxFuzzyEdits of its
// letters, and a query word finds its candidates by looking up its own
// deletions, a few dozen map look-ups instead of comparing it with every
// word of the catalog. Candidates are then checked with the true distance.

const (
	minFuzzy      = 5 // letters of a query word corrected at all
	minFuzzy2     = 8 // letters of a query word that may be two edits off
	maxFuzzyEdits = 2
)

// maxEdits is how many edits a query word of n letters may be off.
func maxEdits(n int) int {
	switch {
	case n >= minFuzzy2:
		return 2
	case n >= minFuzzy:
		return 1
	}
	return 0
}

// storedEdits is how many deletions of a stored word of n letters the index
// keeps: enough for every query word that may be corrected to it.
func storedEdits(n int) int {
	switch {
	case n >= minFuzzy2-maxFuzzyEdits:
		return 2
	case n >= minFuzzy-1:
		return 1
	}
	return 0
}

// fuzzyIndex is the typo vocabulary of one language: the label words with
// the number of resources holding each, and their deletion index.
type fuzzyIndex struct {
	df  map[string]int
	idx *deletionIndex
}

// trusted tells whether w is spelt as in at least trustDF resources' labels:
// such a word is taken as meant, not as a typo ("betong", "stenull"). A word
// of one resource may itself be the typo ("Hård gipskiva" in a synonym
// list), so "gipskiva" still reaches the "Gipsskiva" resources.
func (fx *fuzzyIndex) trusted(w string) bool { return fx.df[w] >= trustDF }

const trustDF = 2

// newFuzzyIndex indexes the words of df. The deletion index of prev is
// shared when it holds the same words; a new one is built on first use, so a
// write pays nothing for it and a search only once.
func newFuzzyIndex(df map[string]int, prev *fuzzyIndex) *fuzzyIndex {
	if prev != nil && len(prev.df) == len(df) {
		same := true
		for w := range df {
			if _, ok := prev.df[w]; !ok {
				same = false
				break
			}
		}
		if same {
			return &fuzzyIndex{df: df, idx: prev.idx}
		}
	}
	words := slices.Sorted(maps.Keys(df))
	return &fuzzyIndex{df: df, idx: &deletionIndex{words: words}}
}

// deletionIndex maps the deletion variants of words to the words, built
// once on first use.
type deletionIndex struct {
	once    sync.Once
	words   []string
	deletes map[string][]int32 // deletion variant -> indexes into words
}

func (dx *deletionIndex) get() map[string][]int32 {
	dx.once.Do(func() {
		dx.deletes = make(map[string][]int32, len(dx.words)*16)
		for i, w := range dx.words {
			deletions(w, storedEdits(runeLen(w)), func(v []byte) {
				// Words are added in order: a repeat of this word's own
				// variant (deleting either of two equal letters) is last.
				if l := dx.deletes[string(v)]; len(l) == 0 || l[len(l)-1] != int32(i) {
					dx.deletes[string(v)] = append(l, int32(i))
				}
			})
		}
	})
	return dx.deletes
}

// deletions calls fn with w and with every string left after deleting one,
// or (k >= 2) two of its runes. The slice is reused between calls.
func deletions(w string, k int, fn func(v []byte)) {
	b := []byte(w)
	fn(b)
	if k == 0 {
		return
	}
	starts := make([]int, 0, len(b)+1)
	for i := range w {
		starts = append(starts, i)
	}
	starts = append(starts, len(b))
	n := len(starts) - 1
	buf := make([]byte, 0, len(b))
	for i := 0; i < n; i++ {
		buf = append(append(buf[:0], b[:starts[i]]...), b[starts[i+1]:]...)
		fn(buf)
		if k < 2 {
			continue
		}
		for j := i + 1; j < n; j++ {
			buf = append(append(append(buf[:0], b[:starts[i]]...), b[starts[i+1]:starts[j]]...), b[starts[j+1]:]...)
			fn(buf)
		}
	}
}

// neighbours calls fn with each word within maxEdits(len(q)) edits of q (q
// itself excluded) and its distance.
func (fx *fuzzyIndex) neighbours(q string, fn func(word string, dist int)) {
	if fx == nil || len(fx.df) == 0 {
		return
	}
	r := []rune(q)
	k := maxEdits(len(r))
	if k == 0 {
		return
	}
	deletes, words := fx.idx.get(), fx.idx.words
	var seen map[int32]bool
	deletions(q, k, func(v []byte) {
		for _, i := range deletes[string(v)] {
			if seen[i] {
				continue
			}
			if seen == nil {
				seen = map[int32]bool{}
			}
			seen[i] = true
			w := words[i]
			if w == q {
				continue
			}
			if d := osaDistance(r, []rune(w), k); d <= k {
				fn(w, d)
			}
		}
	})
}

// osaDistance is the optimal-string-alignment distance of a and b (the
// Levenshtein distance with swaps of adjacent letters counting one edit), or
// more than k when it exceeds k.
func osaDistance(a, b []rune, k int) int {
	if d := len(a) - len(b); d > k || -d > k {
		return k + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > k {
			return k + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }
