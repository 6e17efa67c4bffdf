package core

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// PreviewTTL is how long an uploaded file stays usable through its preview_id.
const PreviewTTL = 30 * time.Minute

// DefaultMaxUpload is the default upload limit of file ingests.
const DefaultMaxUpload = 32 << 20

// FileTable describes an uploaded file as read: its format, its headers and
// a sample of its rows as strings.
type FileTable struct {
	Format           string     `json:"format"`
	Sheets           []string   `json:"sheets,omitempty"`
	Sheet            string     `json:"sheet,omitempty"`
	Headers          []string   `json:"headers"`
	Sample           [][]string `json:"sample"`
	Rows             int        `json:"rows"`
	Delimiter        string     `json:"delimiter,omitempty"`
	DecimalSeparator string     `json:"decimal_separator,omitempty"`
	Encoding         string     `json:"encoding,omitempty"`
}

// SchemaField is one mappable Resource field of an ingest preview.
type SchemaField struct {
	Field string `json:"field"`
	Label string `json:"label"`
}

// IngestPreview answers POST /admin/ingest/preview.
type IngestPreview struct {
	PreviewID string        `json:"preview_id"`
	Filename  string        `json:"filename"`
	Headers   []string      `json:"headers"`
	Sample    [][]string    `json:"sample"`
	Schema    []SchemaField `json:"schema"`
	// Beyond the specification: how the file was read, and a suggested map.
	Format           string            `json:"format"`
	Sheets           []string          `json:"sheets,omitempty"`
	Sheet            string            `json:"sheet,omitempty"`
	Delimiter        string            `json:"delimiter,omitempty"`
	DecimalSeparator string            `json:"decimal_separator,omitempty"`
	Encoding         string            `json:"encoding,omitempty"`
	Rows             int               `json:"rows"`
	SuggestedMap     map[string]string `json:"suggested_map,omitempty"`
	ExpiresAt        time.Time         `json:"expires_at"`
}

// FileProblem is one reason a file cannot be loaded as mapped.
type FileProblem struct {
	Row    int    `json:"row,omitempty"`
	Column string `json:"column,omitempty"`
	Msg    string `json:"message"`
}

// String reads `row 3, column "A1-A3": message`, leaving out what is unknown.
func (p FileProblem) String() string {
	var b strings.Builder
	if p.Row > 0 {
		fmt.Fprintf(&b, "row %d", p.Row)
	}
	if p.Column != "" {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "column %q", p.Column)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// StashedFile is an uploaded file kept for a later apply.
type StashedFile struct {
	Filename string `json:"filename"`
	Data     []byte `json:"data"`
	// StashedAt dates the upload; the stash keeps it PreviewTTL from then.
	StashedAt time.Time `json:"stashed_at,omitzero"`
}

// FileRequest asks to ingest a file, uploaded now or stashed by a preview.
type FileRequest struct {
	Catalog   CatalogID
	Version   string
	Sheet     string
	PreviewID string
	Filename  string
	Data      []byte
	Mapping   map[string]string
	DryRun    bool
}

// ResourceChange names what an ingest changes in one resource.
type ResourceChange struct {
	Ref    string   `json:"id"`
	New    bool     `json:"new,omitempty"`
	Fields []string `json:"fields,omitempty"`
}

// ChangedFields lists the JSON names of the content fields that differ
// between two versions of a resource (what the content hash covers).
func ChangedFields(old, new *Resource) []string {
	a, b := contentFields(old), contentFields(new)
	var out []string
	for k, v := range b {
		if string(a[k]) != string(v) {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// notContent are Resource JSON fields outside the content hash.
var notContent = map[string]bool{"id": true, "catalog": true, "name": true, "description": true,
	"version": true, "source": true, "origin": true, "category_code": true, "withdrawn": true}

func contentFields(r *Resource) map[string]json.RawMessage {
	b, _ := json.Marshal(r) // plain data: cannot fail
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	for k := range m {
		if notContent[k] {
			delete(m, k)
		}
	}
	return m
}

// MoreProblems is what to add to msg, an error message that names the
// first of the problems, to list the others: "; p2; p3", each once, ten at
// most, then "; and more".
func MoreProblems(msg string, ps []FileProblem) string {
	var b strings.Builder
	seen := map[string]bool{}
	for i, p := range ps {
		s := p.String()
		if i == 0 || seen[s] || strings.Contains(msg, s) || strings.Contains(b.String(), s) {
			seen[s] = true
			continue
		}
		if len(seen) == 10 {
			b.WriteString("; and more")
			break
		}
		seen[s] = true
		b.WriteString("; " + s)
	}
	return b.String()
}
