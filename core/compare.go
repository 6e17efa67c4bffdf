package core

// Impact selects which climate value a comparison uses.
type Impact string

const (
	ImpactTypical      Impact = "typical"
	ImpactConservative Impact = "conservative"
	ImpactA4           Impact = "a4"
	ImpactA51          Impact = "a5_1"
)

// ParseImpact validates an impact parameter; empty means typical.
func ParseImpact(s string) (Impact, error) {
	switch Impact(s) {
	case "", ImpactTypical:
		return ImpactTypical, nil
	case ImpactConservative, ImpactA4, ImpactA51:
		return Impact(s), nil
	}
	return "", Invalidf("unknown impact %q: use typical, conservative, a4 or a5_1", s)
}

// Value returns the resource's value for the impact, and whether it is published.
func (i Impact) Value(r *Resource) (float64, bool) {
	var p *float64
	switch i {
	case ImpactConservative:
		p = r.A1A3Conservative
	case ImpactA4:
		p = r.A4
	case ImpactA51:
		p = r.A51
	default:
		p = r.A1A3
	}
	if p == nil {
		return 0, false
	}
	return *p, true
}

// Field is the Resource JSON field that holds the impact.
func (i Impact) Field() string {
	switch i {
	case ImpactConservative:
		return "a1a3_conservative"
	case ImpactA4:
		return "a4"
	case ImpactA51:
		return "a5_1"
	}
	return "a1a3"
}

// CompareRequest asks to compare two resources.
type CompareRequest struct {
	A, B   string // prefixed or bare ids
	Unit   string // optional shared unit
	Impact Impact
	Lang   Lang
}

// Comparison states two resources in one unit. Every field is always present:
// when the two cannot be restated in a shared unit, Incomparable is true, Unit
// is empty and DeltaA1A3, ValueA and ValueB are 0.
type Comparison struct {
	Source string   `json:"source"`
	A      Resource `json:"a"`
	B      Resource `json:"b"`
	Unit   string   `json:"unit"`
	Impact Impact   `json:"impact"`
	ValueA float64  `json:"value_a"`
	ValueB float64  `json:"value_b"`
	// DeltaA1A3 is ValueA - ValueB for the chosen impact, per Unit; negative
	// means a has the lower impact. The name is the specification's.
	DeltaA1A3 float64 `json:"delta_a1a3"`
	// LowerImpactID is the id of the side with the lower value, or ""
	// when the values are equal or incomparable.
	LowerImpactID string `json:"lower_impact_id"`
	Incomparable  bool   `json:"incomparable"`
}
