package boverket

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// JSONSource reads the publisher's JSON API: one export per culture.
type JSONSource struct{ cfg Config }

// NewJSONSource returns the API source.
func NewJSONSource(cfg Config) *JSONSource { return &JSONSource{cfg: cfg} }

// Name identifies the source in logs and errors.
func (s *JSONSource) Name() string { return "boverket-json" }

// URL is the export address of a culture ("sv" or "en").
func (s *JSONSource) URL(culture string) string {
	return strings.TrimRight(s.cfg.BaseURL, "/") + "/api/Klimat/v2/GetAllResources/" +
		url.PathEscape(s.cfg.version()) + "/" + culture + "/json"
}

// Fetch downloads both cultures and merges them. Both are required: with one
// missing a language would silently vanish from every resource, so that is a
// failure and the caller falls back to the workbooks.
func (s *JSONSource) Fetch(ctx context.Context) (core.Release, error) {
	sv, en, err := both(ctx, s.fetchExport)
	if err != nil {
		return core.Release{}, unavailable(s.Name(), err)
	}
	m := Merge(sv, en)
	if len(m.Resources) == 0 {
		return core.Release{}, unavailable(s.Name(), errors.New("no resource has an id and an A1-A3 typical value"))
	}
	return core.Release{
		Catalog:   core.National,
		Origin:    core.OriginJSON,
		Version:   m.Version,
		Resources: m.Resources,
		Rejected:  m.Rejected,
		Complete:  true,
	}, nil
}

func (s *JSONSource) fetchExport(ctx context.Context, culture string) (*Export, error) {
	u := s.URL(culture)
	body, err := s.cfg.get(ctx, u, "application/json", s.cfg.SubscriptionKey)
	if err != nil {
		return nil, err
	}
	e, err := DecodeExport(body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: unparsable body: %w", u, err)
	}
	if len(e.Resources) == 0 {
		return nil, fmt.Errorf("GET %s: the export has no resources", u)
	}
	// An export of the wrong language would pass every other check and fill
	// the Swedish fields with English (or the reverse).
	if c := strings.ToLower(strings.TrimSpace(e.Culture)); c != "" && !strings.HasPrefix(c, culture) {
		return nil, fmt.Errorf("GET %s: export culture is %q, want %s", u, e.Culture, culture)
	}
	return e, nil
}
