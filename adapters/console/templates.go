package console

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

var pageNames = []string{"query", "resource", "compare", "connect", "data", "ingest", "webhooks", "webhook", "webhook_delete", "signin", "error", "outcome"}

var funcs = template.FuncMap{
	"num": num,
	"nump": func(p *float64) string {
		if p == nil {
			return ""
		}
		return num(*p)
	},
	"f1": func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		d := time.Since(t)
		if d < 0 {
			return "in " + roundDur(-d)
		}
		return roundDur(d) + " ago"
	},
	"dur": func(a, b time.Time) string {
		if a.IsZero() || b.IsZero() {
			return ""
		}
		return formatDuration(b.Sub(a))
	},
	"join": strings.Join,
	"joinEvents": func(es []core.EventType) string {
		if len(es) == 0 {
			return "every event"
		}
		s := make([]string, len(es))
		for i, e := range es {
			s[i] = string(e)
		}
		return strings.Join(s, ", ")
	},
	"pct": func(a, b int) string {
		if b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f%%", float64(a)/float64(b)*100)
	},
	"query":          url.QueryEscape,
	"path":           url.PathEscape,
	"add":            func(a, b int) int { return a + b },
	"addf":           func(a, b float64) float64 { return a + b },
	"subf":           func(a, b float64) float64 { return a - b },
	"plural":         plural,
	"impactName":     impactName,
	"conversionUsed": conversionUsed,
	"ref":            refOf,
	"rlink":          resourceLink,
	"has":            func(m map[core.CatalogID]bool, id core.CatalogID) bool { return m[id] },
	"lower":          strings.ToLower,
	"eventClass": func(s string) string {
		switch s {
		case string(core.DeliveryDelivered):
			return "ok"
		case string(core.DeliveryFailed):
			return "bad"
		}
		return "warn"
	},
}

func roundDur(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/charts.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// refOf is the prefixed id of a resource, whatever wraps it (templates
// cannot call pointer methods on values).
func refOf(v any) string {
	switch r := v.(type) {
	case core.Resource:
		return r.Ref()
	case *core.Resource:
		return r.Ref()
	case core.Hit:
		return r.Ref()
	case core.ResourceRow:
		return r.Ref()
	}
	return ""
}

// resourceLink is the console path of a resource: its prefixed id,
// path-escaped (Danish ids start with '#').
func resourceLink(v any) string {
	ref, ok := v.(string)
	if !ok {
		ref = refOf(v)
	}
	return "/resources/" + url.PathEscape(ref)
}
