package filereader

import (
	"math"
	"strconv"
	"strings"
)

// numForm is how a text reads as a number.
type numForm int

const (
	notNumber numForm = iota
	plainNumber
	dotDecimal   // one '.', unambiguously a decimal point
	commaDecimal // one ',', unambiguously a decimal comma
	// ambiguous: one separator followed by exactly three digits after one
	// to three leading digits (1.234 / 1,234): a decimal or a thousands
	// separator, decided by the file's decimal separator.
	ambiguousDot
	ambiguousComma
)

// classify tells whether s (already trimmed) is a number and which
// separator it uses. Accepted: an optional sign (also U+2212), digits with at
// most one decimal separator ('.' or ','), an optional exponent. Thousands
// separators, spaces inside, currency and percent signs are not numbers.
func classify(s string) (numForm, string) {
	if s == "" || len(s) > 64 {
		return notNumber, ""
	}
	if strings.HasPrefix(s, "\u2212") {
		s = "-" + s[len("\u2212"):]
	}
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intDigits := i - intStart
	sep := byte(0)
	fracDigits := 0
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		sep = s[i]
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracDigits = i - fs
	}
	if intDigits+fracDigits == 0 {
		return notNumber, ""
	}
	hasExp := false
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		es := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == es {
			return notNumber, ""
		}
		hasExp = true
	}
	if i != len(s) {
		return notNumber, ""
	}
	norm := s
	if sep == ',' {
		norm = strings.Replace(s, ",", ".", 1)
	}
	switch {
	case sep == 0:
		return plainNumber, norm
	case !hasExp && fracDigits == 3 && intDigits >= 1 && intDigits <= 3 && s[intStart] != '0':
		if sep == '.' {
			return ambiguousDot, norm
		}
		return ambiguousComma, norm
	case sep == '.':
		return dotDecimal, norm
	default:
		return commaDecimal, norm
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseNumber reads s as a number in a file whose decimal separator is dec
// ('.' or ','). ambiguous reports a 1,234-style text in a file that uses the
// other separator for decimals: it is not read (thousands or decimals?).
func parseNumber(s string, dec byte) (v float64, ok, ambiguous bool) {
	form, norm := classify(s)
	switch form {
	case notNumber:
		return 0, false, false
	case ambiguousDot:
		if dec != '.' {
			return 0, false, true
		}
	case ambiguousComma:
		if dec != ',' {
			return 0, false, true
		}
	}
	v, err := strconv.ParseFloat(norm, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false, false
	}
	return clean(v), true, false
}

// clean removes binary float artefacts (309.10000000000002 -> 309.1) by
// rounding to 12 significant digits. Whole numbers below 1e15 stay exact,
// so numeric ids and codes are not altered.
func clean(v float64) float64 {
	if v == 0 {
		return 0 // also turns -0 into 0
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// formatNum is the display text of a number: the shortest form that reads
// back to v, without an exponent in the usual range.
func formatNum(v float64) string {
	a := math.Abs(v)
	if a == 0 || (a >= 1e-6 && a < 1e15) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
