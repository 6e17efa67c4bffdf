package mcpserver

import (
	"net/url"
	"strings"

	"github.com/climatesearch/climatesearch/core"
)

// detailsPrefix starts the details path of a hit (core.DetailsPath).
const detailsPrefix = "/api/resources/"

// resourceRef turns an id argument into the ref the lookup takes. Besides a
// prefixed or bare id it accepts a hit's details path, as it is or as a full
// URL (/api/resources/dkbr:%23G0740), and a percent-encoded ref
// (dkbr:%23G0740): both are decoded. A ref whose % does not start a valid
// escape is taken literally.
func resourceRef(s string) (string, error) {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, detailsPrefix); i >= 0 {
		p := s[i+len(detailsPrefix):]
		if j := strings.IndexAny(p, "?#"); j >= 0 {
			p = p[:j]
		}
		ref, err := url.PathUnescape(p)
		if err != nil || strings.TrimSpace(ref) == "" {
			return "", core.Invalidf("%q is not a resource's details path: expected /api/resources/<catalog>:<percent-encoded id>, e.g. /api/resources/dkbr:%%23G0740", s)
		}
		return ref, nil
	}
	if strings.Contains(s, "%") {
		if ref, err := url.PathUnescape(s); err == nil && strings.TrimSpace(ref) != "" {
			return ref, nil
		}
	}
	return s, nil
}
