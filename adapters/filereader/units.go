package filereader

import "strings"

// unitSpellings maps the short unit texts (compared in lower case) to their
// display form. Anything else is kept as published.
var unitSpellings = map[string]string{
	"m": "m", "m2": "m²", "m²": "m²", "m3": "m³", "m³": "m³",
	"kg": "kg", "g": "g", "ton": "ton", "t": "t",
	"stk": "stk", "stk.": "stk", "st": "st", "st.": "st", "pcs": "pcs",
	"l": "l", "dm3": "dm³", "dm³": "dm³", "cm3": "cm³", "cm³": "cm³",
	"mm": "mm", "cm": "cm", "km": "km",
	"kwh": "kWh", "mwh": "MWh", "mj": "MJ", "gj": "GJ",
}

// NormalizeUnit gives a unit its display spelling: M3 and m3 become m³, M2
// m², KG kg, STK and stk. stk. A ratio (kg/m³, KG/M3) is normalised part by
// part. Longer texts ("m² with R=1 m²K/W", "m (12 mm)") are kept as
// published, apart from surrounding space.
func NormalizeUnit(u string) string {
	u = strings.Join(strings.Fields(u), " ")
	if u == "" {
		return ""
	}
	if s, ok := unitSpellings[strings.ToLower(u)]; ok {
		return s
	}
	parts := strings.Split(u, "/")
	if len(parts) < 2 {
		return u
	}
	for i, p := range parts {
		s, ok := unitSpellings[strings.ToLower(strings.TrimSpace(p))]
		if !ok {
			return u // a ratio of something other than plain units
		}
		parts[i] = s
	}
	return strings.Join(parts, "/")
}
