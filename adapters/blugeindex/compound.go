package blugeindex

import (
	"maps"
	"unicode/utf8"
)

// Compound splitting. Swedish and Danish write compounds as one word
// (glasull, fasadskivor, armeringsstål), so a user's "skiva" or "hampa" must
// reach "Fasadskivor" or "Hampaisolering", and "sandwichvägg" the
// "Halvsandwichväggar" too (below the exact "Sandwichväggar", which also
// matches the whole word).
//
// The dictionary is the catalog's own vocabulary, rebuilt whenever the
// indexed resources change: every word of the language's texts, plus
// compound parts the vocabulary itself attests (see buildCompoundDict). A
// word is split into dictionary words of at least minPart letters, possibly
// glued by a linking morpheme (konstruktion-s-stål); among the possible
// splits the one with the longest parts wins, and each part is split again
// so the terms are the smallest parts.

const (
	minPart     = 3 // letters of a compound part
	minCompound = 6 // letters of a word worth splitting (two parts)
	// minInduced is the length of a part learned from compounds (not seen
	// as a word of its own), and minAttest how many different known words
	// must precede a learned head.
	minInduced = 4
	minAttest  = 2
	// minModifierHead is the length of the known word after a learned
	// modifier: short words end many unrelated words (tegelb-lock).
	minModifierHead = 5
)

// compoundDict is an immutable compound dictionary of one language.
type compoundDict struct {
	words   map[string]bool
	induced map[string]bool // learned parts, never seen as words
	links   []string
}

// buildCompoundDict builds the dictionary of a language from its words (lower
// case, stop words removed). Beyond the words themselves it learns compound
// parts the vocabulary attests:
//
//   - a head (right part) that follows at least minAttest different known
//     words: glas-ull, sten-ull teach "ull", which never stands alone;
//   - a modifier (left part) of minInduced letters or more before a known
//     word of minModifierHead letters or more: "halvsandwichväggar" ends in
//     the word "sandwichväggar" and teaches "halv".
//
// A head that is an inflection or derivation (betong-ens, vägg-arna,
// använd-ning), which the language's suffix list or its stemmer recognise,
// that a linking morpheme explains (armering-s-stål, golv-skiva rather than
// golvs-kiva), or that opens with a linking morpheme (exponering-sklass:
// the split after the s teaches "klass"), is not learned.
func buildCompoundDict(la *language, words map[string]bool) *compoundDict {
	base := make(map[string]bool, len(words))
	for w := range words {
		if inCompoundBase(w) {
			base[w] = true
		}
	}
	known := func(a string) bool { return base[a] || linkedWord(base, a, la.links) }
	// Heads first: a learned head counts as a word for the modifiers.
	headBy := map[string]map[string]bool{}
	for w := range base {
		r := []rune(w)
		for i := minInduced; i <= len(r)-minPart; i++ {
			a, b := string(r[:i]), string(r[i:])
			if base[b] || !known(a) || la.suffixes[b] || la.explainedByLink(base, a, b) || startsWithLink(b, la.links) {
				continue
			}
			if la.stemOf(w) == la.stemOf(unlinked(base, a, la.links)) {
				continue // an inflected form of a, not a compound
			}
			if headBy[b] == nil {
				headBy[b] = map[string]bool{}
			}
			headBy[b][a] = true
		}
	}
	dict := make(map[string]bool, len(base)+len(headBy))
	for w := range base {
		dict[w] = true
	}
	for b, as := range headBy {
		if len(as) >= minAttest {
			dict[b] = true
		}
	}
	if la.induceModifiers {
		// Modifiers are learned before known words and heads only, never
		// before another learned modifier: learning from what was learned
		// in the same pass would depend on the order of the words (a map's),
		// and so would every analysis and score.
		modifiers := map[string]bool{}
		for w := range base {
			r := []rune(w)
			for i := minInduced; i <= len(r)-minModifierHead; i++ {
				a, b := string(r[:i]), string(r[i:])
				if !dict[b] || known(a) || la.suffixes[b] {
					continue
				}
				modifiers[a] = true
			}
		}
		maps.Copy(dict, modifiers)
	}
	induced := make(map[string]bool, len(dict)-len(base))
	for w := range dict {
		if !base[w] {
			induced[w] = true
		}
	}
	return &compoundDict{words: dict, induced: induced, links: la.links}
}

// inCompoundBase tells whether w is one of the words a compound dictionary
// is built from: the dictionary depends on these words of the vocabulary
// and on no other.
func inCompoundBase(w string) bool {
	return isLetters(w) && utf8.RuneCountInString(w) >= minPart
}

// startsWithLink tells whether b opens with a linking morpheme.
func startsWithLink(b string, links []string) bool {
	for _, l := range links {
		if _, ok := trimPrefix(b, l); ok {
			return true
		}
	}
	return false
}

// explainedByLink tells whether a split a|b is better read with a linking
// morpheme: armerings|stål is armering-s-stål (b starts with a link and the
// rest is a word), golvs|kiva is golv-skiva (a ends in a link that starts a
// word with b).
func (la *language) explainedByLink(base map[string]bool, a, b string) bool {
	for _, l := range la.links {
		if rest, ok := trimPrefix(b, l); ok && base[rest] {
			return true
		}
		if _, ok := trimSuffix(a, l); ok && base[l+b] {
			return true
		}
	}
	return false
}

// unlinked returns a without its linking morpheme when the rest is a known
// word, else a.
func unlinked(base map[string]bool, a string, links []string) string {
	for _, l := range links {
		if stem, ok := trimSuffix(a, l); ok && base[stem] {
			return stem
		}
	}
	return a
}

func trimPrefix(s, prefix string) (string, bool) {
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

func trimSuffix(s, suffix string) (string, bool) {
	if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return "", false
}

// linkedWord tells whether a is a known word followed by a linking morpheme.
func linkedWord(base map[string]bool, a string, links []string) bool {
	for _, l := range links {
		if stem, ok := trimSuffix(a, l); ok && base[stem] && utf8.RuneCountInString(stem) >= minInduced {
			return true
		}
	}
	return false
}

// split returns the smallest dictionary parts of w, or nil when w is not a
// compound of dictionary words. It is safe on a nil dictionary.
func (d *compoundDict) split(w string) []string {
	if d == nil || utf8.RuneCountInString(w) < minCompound || !isLetters(w) {
		return nil
	}
	return d.segment(w)
}

// segment splits w into at least two dictionary parts, preferring long
// parts (the sum of squared part lengths, halved for learned parts so a
// word seen on its own wins: tegel-block, not tegelb-lock), and splits each
// part again.
func (d *compoundDict) segment(w string) []string {
	// offs[i] is the byte offset of rune i; parts are substrings, so the
	// dictionary look-ups allocate nothing.
	offs := make([]int, 0, len(w)+1)
	for i := range w {
		offs = append(offs, i)
	}
	n := len(offs)
	if n < 2*minPart {
		return nil
	}
	offs = append(offs, len(w))
	// best[i] is the score of the best split of w[i:] (in runes); next[i]
	// where its first part ends, skip[i] the runes of the linking morpheme
	// after it.
	best := make([]int, 3*(n+1))
	next, skip := best[n+1:2*(n+1)], best[2*(n+1):]
	best = best[:n+1]
	for i := range best {
		best[i] = -1
	}
	best[n] = 0
	for i := n - minPart; i >= 0; i-- {
		for j := i + minPart; j <= n; j++ {
			if i == 0 && j == n {
				continue // the word itself is no split
			}
			part := w[offs[i]:offs[j]]
			if !d.words[part] {
				continue
			}
			gain := 2 * (j - i) * (j - i)
			if d.induced[part] {
				gain /= 2
			}
			if best[j] >= 0 {
				if s := gain + best[j]; s > best[i] {
					best[i], next[i], skip[i] = s, j, 0
				}
			}
			for _, l := range d.links {
				k := j + utf8.RuneCountInString(l)
				if k < n && w[offs[j]:offs[k]] == l && best[k] > 0 {
					if s := gain + best[k]; s > best[i] {
						best[i], next[i], skip[i] = s, j, k-j
					}
				}
			}
		}
	}
	if best[0] < 0 {
		return nil
	}
	var parts []string
	for i := 0; i < n; {
		j := next[i]
		part := w[offs[i]:offs[j]]
		if sub := d.segment(part); sub != nil {
			parts = append(parts, sub...)
		} else {
			parts = append(parts, part)
		}
		i = j + skip[i]
	}
	return parts
}
