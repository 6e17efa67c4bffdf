// Package boverkettest is a stand-in for the publisher of the national
// catalog, for tests: an httptest server speaking the API's wire paths and
// serving workbooks, plus helpers that load the real exports from the shared
// reference data and derive changed releases and workbooks from them.
//
// It deliberately does not import package boverket: the workbooks it writes
// are built from the export by their own code, so a test that reads them
// back through boverket checks the reader against an independent writer.
package boverkettest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// JSONPathPrefix is the path prefix of the export endpoint.
const JSONPathPrefix = "/api/Klimat/v2/GetAllResources/"

// ExcelPathPrefix is the path prefix of the workbooks.
const ExcelPathPrefix = "/excel/"

// Server serves GET /api/Klimat/v2/GetAllResources/{version}/{sv|en}/json and
// GET /excel/{sv|en}.xlsx from bodies the test sets. Every method is safe for
// concurrent use.
type Server struct {
	// URL is the base URL (no trailing slash), the Config.BaseURL to use.
	URL string

	srv  *httptest.Server
	stop chan struct{}
	once sync.Once

	mu        sync.Mutex
	json      map[string][]byte
	excel     map[string][]byte
	failJSON  int
	failExcel int
	hang      bool
	paths     []string
	versions  []string
	headers   []http.Header
}

// NewServer starts a server that is closed when the test ends.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{
		stop:  make(chan struct{}),
		json:  map[string][]byte{},
		excel: map[string][]byte{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+JSONPathPrefix+"{version}/{culture}/json", s.serveJSON)
	mux.HandleFunc("GET "+ExcelPathPrefix+"{file}", s.serveExcel)
	s.srv = httptest.NewServer(s.record(mux))
	s.URL = s.srv.URL
	tb.Cleanup(s.Close)
	return s
}

// Close releases hanging handlers and shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.stop)
		s.srv.Close()
	})
}

// SetJSON sets the export served for a culture ("sv" or "en"); nil removes it
// (the endpoint then answers 404).
func (s *Server) SetJSON(culture string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if body == nil {
		delete(s.json, cultureKey(culture))
		return
	}
	s.json[cultureKey(culture)] = body
}

// SetExcel sets the workbook served for a culture; nil removes it.
func (s *Server) SetExcel(culture string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if body == nil {
		delete(s.excel, cultureKey(culture))
		return
	}
	s.excel[cultureKey(culture)] = body
}

// FailJSON makes the export endpoint answer status; 0 serves normally.
func (s *Server) FailJSON(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failJSON = status
}

// FailExcel makes the workbook endpoint answer status; 0 serves normally.
func (s *Server) FailExcel(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failExcel = status
}

// Hang makes every endpoint block until the client gives up (or the server
// closes), to exercise timeouts.
func (s *Server) Hang(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = on
}

// ExcelURL is the address of a culture's workbook.
func (s *Server) ExcelURL(culture string) string { return s.URL + ExcelPathPrefix + culture + ".xlsx" }

// Requests counts the requests whose path starts with pathPrefix ("" = all).
func (s *Server) Requests(pathPrefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.paths {
		if strings.HasPrefix(p, pathPrefix) {
			n++
		}
	}
	return n
}

// Versions lists the version segments the export endpoint was asked for, in
// order of arrival.
func (s *Server) Versions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.versions...)
}

// LastHeader returns a header of the most recent request whose path starts
// with pathPrefix, or "" when there is none.
func (s *Server) LastHeader(pathPrefix, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.paths) - 1; i >= 0; i-- {
		if strings.HasPrefix(s.paths[i], pathPrefix) {
			return s.headers[i].Get(name)
		}
	}
	return ""
}

// record counts the request, then hangs if told to, before routing.
func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.headers = append(s.headers, r.Header.Clone())
		hang := s.hang
		s.mu.Unlock()
		if hang {
			select {
			case <-r.Context().Done():
			case <-s.stop:
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) serveJSON(w http.ResponseWriter, r *http.Request) {
	culture := cultureKey(r.PathValue("culture"))
	s.mu.Lock()
	s.versions = append(s.versions, r.PathValue("version"))
	fail, body := s.failJSON, s.json[culture]
	s.mu.Unlock()
	if fail != 0 {
		http.Error(w, "simulated failure of the publisher", fail)
		return
	}
	if body == nil {
		http.Error(w, "no export for culture "+culture, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(body)
}

func (s *Server) serveExcel(w http.ResponseWriter, r *http.Request) {
	culture := cultureKey(strings.TrimSuffix(r.PathValue("file"), ".xlsx"))
	s.mu.Lock()
	fail, body := s.failExcel, s.excel[culture]
	s.mu.Unlock()
	if fail != 0 {
		http.Error(w, "simulated failure of the publisher", fail)
		return
	}
	if body == nil {
		http.Error(w, "no workbook for culture "+culture, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
	_, _ = w.Write(body)
}

// cultureKey accepts "sv", "sv-se", "SV-SE" alike.
func cultureKey(c string) string {
	c = strings.ToLower(c)
	if i := strings.IndexByte(c, '-'); i > 0 {
		c = c[:i]
	}
	return c
}
