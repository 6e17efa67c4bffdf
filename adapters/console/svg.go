package console

import (
	"math"
	"strconv"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// The charts are drawn on the server as inline SVG: no script, no library,
// readable without JavaScript, and every mark carries a <title> tooltip.
// Geometry is computed here; the templates only print it.

// --- compare: two bars ----------------------------------------------------

type barChart struct {
	Width, Height float64
	ZeroX         float64
	Bars          []bar
	Unit          string
}

type bar struct {
	Label      string
	Ref        string
	Value      string
	X, Y, W, H float64
	TextX      float64
	Lower      bool
}

func newBarChart(cmp core.Comparison) *barChart {
	const width, left, right, barH, gap, top = 640.0, 150.0, 90.0, 28.0, 14.0, 8.0
	vals := []float64{cmp.ValueA, cmp.ValueB}
	maxAbs, neg := 0.0, false
	for _, v := range vals {
		maxAbs = math.Max(maxAbs, math.Abs(v))
		neg = neg || v < 0
	}
	plotW := width - left - right
	zero := left
	scale := 0.0
	if maxAbs > 0 {
		scale = plotW / maxAbs
		if neg {
			scale = plotW / 2 / maxAbs
			zero = left + plotW/2
		}
	}
	ch := &barChart{Width: width, Height: top*2 + 2*barH + gap, ZeroX: zero, Unit: cmp.Unit}
	for i, v := range vals {
		r := cmp.A
		label := "A"
		if i == 1 {
			r, label = cmp.B, "B"
		}
		w := math.Abs(v) * scale
		x := zero
		if v < 0 {
			x = zero - w
		}
		b := bar{Label: label + " · " + truncate(r.Name, 16), Ref: r.Ref(), Value: num(v), X: x, Y: top + float64(i)*(barH+gap), W: math.Max(w, 1), H: barH,
			Lower: cmp.LowerImpactID != "" && cmp.LowerImpactID == r.ID}
		b.TextX = x + b.W + 6
		if v < 0 {
			b.TextX = zero + 6
		}
		ch.Bars = append(ch.Bars, b)
	}
	return ch
}

// --- resources per category: horizontal bars -------------------------------

type countChart struct {
	Width, Height float64
	Rows          []countRow
	More          int
}

type countRow struct {
	Label, Title string
	Count        int
	Y, W         float64
	Href         string
}

const maxCountRows = 30

func newCountChart(cats []core.CategoryStats, hrefFor func(core.CategoryStats) string) *countChart {
	const width, left, right, rowH = 720.0, 260.0, 50.0, 18.0
	rows := cats
	ch := &countChart{Width: width}
	if len(rows) > maxCountRows {
		ch.More = len(rows) - maxCountRows
		rows = rows[:maxCountRows]
	}
	most := 1
	for _, c := range rows {
		most = max(most, c.Count)
	}
	for i, c := range rows {
		ch.Rows = append(ch.Rows, countRow{Label: truncate(c.Category, 38), Title: c.Category + ": " + strconv.Itoa(c.Count) + " resources",
			Count: c.Count, Y: float64(i) * rowH, W: math.Max(1, float64(c.Count)/float64(most)*(width-left-right)), Href: hrefFor(c)})
	}
	ch.Height = float64(len(rows))*rowH + 4
	return ch
}

// --- spread of A1-A3 per category and unit, log scale ---------------------------

type spreadRow struct {
	Label  string
	Spread core.UnitSpread
}

type stripChart struct {
	Width, Height float64
	Left, Right   float64
	Ticks         []tick
	Rows          []stripRow
	Hidden        int // values <= 0, which a log scale cannot show
}

type tick struct {
	X     float64
	Label string
}

type stripRow struct {
	Label                    string
	Title                    string
	Y                        float64
	Min, Q1, Median, Q3, Max float64
	HasBox                   bool
	Points                   []stripPoint
	Hidden                   int
}

type stripPoint struct {
	X     float64
	Title string
	Href  string
	Mark  bool
}

const stripRowH = 26.0

func newStripChart(rows []spreadRow, mark string) *stripChart {
	const width, left, right = 720.0, 240.0, 20.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		for _, p := range r.Spread.Points {
			if p.Value > 0 {
				lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
			}
		}
	}
	ch := &stripChart{Width: width, Left: left, Right: width - right}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi <= dlo {
		dhi = dlo + 1
	}
	x := func(v float64) float64 {
		return left + (math.Log10(v)-dlo)/(dhi-dlo)*(ch.Right-left)
	}
	for d := dlo; d <= dhi; d++ {
		ch.Ticks = append(ch.Ticks, tick{X: x(math.Pow(10, d)), Label: num(math.Pow(10, d))})
	}
	for i, r := range rows {
		sr := stripRow{Label: truncate(r.Label, 36), Title: r.Label + ": " + strconv.Itoa(r.Spread.N) + " values, median " + num(r.Spread.Median),
			Y: 20 + float64(i)*stripRowH}
		for _, p := range r.Spread.Points {
			if p.Value <= 0 {
				sr.Hidden++
				continue
			}
			sr.Points = append(sr.Points, stripPoint{X: x(p.Value), Title: p.Name + " (" + p.Ref + "): " + num(p.Value) + " kg CO2e/" + r.Spread.Unit,
				Href: resourceLink(p.Ref), Mark: p.Ref == mark})
		}
		s := r.Spread
		if s.Min > 0 && s.N >= 3 {
			sr.HasBox = true
			sr.Min, sr.Q1, sr.Median, sr.Q3, sr.Max = x(s.Min), x(s.Q1), x(s.Median), x(s.Q3), x(s.Max)
		}
		ch.Hidden += sr.Hidden
		ch.Rows = append(ch.Rows, sr)
	}
	ch.Height = 20 + float64(len(rows))*stripRowH + 8
	return ch
}

// num prints a value with at most 4 significant digits, no exponent for
// ordinary magnitudes.
func num(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', max(0, 3-int(math.Floor(math.Log10(a)))), 64)
		// trim trailing zeros of the fraction
		if dot := strings.IndexByte(s, '.'); dot >= 0 {
			for s[len(s)-1] == '0' {
				s = s[:len(s)-1]
			}
			if s[len(s)-1] == '.' {
				s = s[:len(s)-1]
			}
		}
		return s
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
