package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// CORS lets browser front ends on other origins read the public API
// (SERVICE_CORS_ORIGINS): /api/*, /openapi.yaml, /openapi.json, /healthz
// and /readyz. /admin/*, the console, /docs and MCP never get CORS headers
// (the console and /admin act with an operator's rights; MCP checks the
// Origin of its own requests against DNS rebinding).
//
// It wraps the whole handler, outside the hosted build's guard: a
// preflight (OPTIONS with Access-Control-Request-Method) carries no
// credentials and is answered here without reaching the guard, and the
// guard's refusals (401, 402 with its challenge) carry the CORS headers so
// the front end can read them. Reads stay paid: the actual request goes
// through the guard as before.
type CORS struct {
	any     bool
	origins map[string]bool
}

// corsMethods and corsHeaders are what a cross-origin request may use.
const (
	corsMethods = "GET, HEAD"
	corsHeaders = "Authorization, X-Request-Id, If-None-Match, If-Modified-Since, Accept-Language, Content-Type"
	corsExpose  = "ETag, Last-Modified, X-Request-Id, Retry-After, WWW-Authenticate, Payment-Receipt, Location"
	corsMaxAge  = "600"
)

// ParseOrigins checks SERVICE_CORS_ORIGINS: comma-separated origins
// (scheme://host[:port], no path) or *.
func ParseOrigins(list string) ([]string, error) {
	var out []string
	for o := range strings.SplitSeq(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o == "*" {
			out = append(out, o)
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("%q is not an origin: want scheme://host[:port] (e.g. https://app.example.com) or *", o)
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	return out, nil
}

// NewCORS returns the policy of the origins (nil: CORS stays off).
func NewCORS(origins []string) *CORS {
	if len(origins) == 0 {
		return nil
	}
	c := &CORS{origins: map[string]bool{}}
	for _, o := range origins {
		if o == "*" {
			c.any = true
		}
		c.origins[strings.ToLower(o)] = true
	}
	return c
}

// corsPath tells whether a path may be read from another origin.
func corsPath(p string) bool {
	switch p {
	case "/openapi.yaml", "/openapi.json", "/healthz", "/readyz", "/api":
		return true
	}
	return strings.HasPrefix(p, "/api/")
}

// Wrap puts the policy in front of next; a nil policy returns next.
func (c *CORS) Wrap(next http.Handler) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !corsPath(r.URL.Path) {
			if r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != "" {
				corsRefuse(w, r.URL.Path+" is not open to other origins (only /api/*, /openapi.yaml, /healthz and /readyz are)")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		allowed := origin != "" && (c.any || c.origins[strings.ToLower(origin)])
		if r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
			if !allowed {
				corsRefuse(w, "origin "+origin+" is not allowed; SERVICE_CORS_ORIGINS lists the origins that are")
				return
			}
			if m := r.Header.Get("Access-Control-Request-Method"); m != http.MethodGet && m != http.MethodHead {
				corsRefuse(w, "method "+m+" is not allowed from other origins; the public API is read with "+corsMethods)
				return
			}
			c.allow(h, origin)
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allowed {
			c.allow(h, origin)
			h.Set("Access-Control-Expose-Headers", corsExpose)
		}
		next.ServeHTTP(w, r)
	})
}

func (c *CORS) allow(h http.Header, origin string) {
	if c.any {
		h.Set("Access-Control-Allow-Origin", "*")
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
}

// corsRefuse answers a refused preflight: 403 without CORS headers (the
// browser then refuses the request) and an Error body for whoever looks.
func corsRefuse(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	_ = json.NewEncoder(w).Encode(errorBody{Error: msg})
}
