// Package restclient is a driven adapter that calls a running climatesearch
// service over its REST API: the command-line tools (eval, export, ingest,
// backup, healthcheck) use it to work against a running server instead of
// opening its data directory. It implements the same driver ports as the
// core services (ports.Searcher, listing, ingest), so a command runs the
// same code path whether it talks to the server or to a stopped store; it
// holds no business rules, only the wire format of the API.
package restclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// Client calls one service.
type Client struct {
	base       string
	adminToken string
	http       *http.Client
}

// New returns a client of the service at base (e.g. http://127.0.0.1:8080).
// adminToken, when set, is sent as X-Admin-Token on /admin calls only.
// timeout bounds each ordinary call (0: none; backups and ingests of large
// files take long).
func New(base, adminToken string, timeout time.Duration) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid service URL %q: want http(s)://host:port", base)
	}
	return &Client{base: strings.TrimRight(base, "/"), adminToken: adminToken, http: &http.Client{Timeout: timeout}}, nil
}

// URL is the service's base URL.
func (c *Client) URL() string { return c.base }

// Error is an answer other than 2xx; Message is the service's own error.
type Error struct {
	Status  int
	Message string
	// Problems are the rows and columns of a refused file.
	Problems []core.FileProblem
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("the service answered %d %s", e.Status, http.StatusText(e.Status))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the service answered %d: %s", e.Status, e.Message)
	b.WriteString(core.MoreProblems(b.String(), e.Problems))
	return b.String()
}

func (c *Client) do(ctx context.Context, method, path string, q url.Values, body io.Reader, contentType string) (*http.Response, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.adminToken != "" && strings.HasPrefix(path, "/admin/") {
		req.Header.Set("X-Admin-Token", c.adminToken)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The URL holds no secret; the token is in a header, never here.
		return nil, fmt.Errorf("calling %s: %w", c.base, unwrapURLError(err))
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var eb struct {
			Error    string             `json:"error"`
			Problems []core.FileProblem `json:"problems"`
		}
		_ = json.Unmarshal(b, &eb)
		return nil, &Error{Status: resp.StatusCode, Message: eb.Error, Problems: eb.Problems}
	}
	return resp, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (c *Client) getJSON(ctx context.Context, path string, q url.Values, out any) error {
	resp, err := c.do(ctx, http.MethodGet, path, q, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding the answer of %s: %w", path, err)
	}
	return nil
}

// Health is nil when /healthz answers 200 (the process is alive and reads
// its store).
func (c *Client) Health(ctx context.Context) error {
	resp, err := c.do(ctx, http.MethodGet, "/healthz", nil, nil, "")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Ready is nil when /readyz answers 200 (every catalog is in the search
// index).
func (c *Client) Ready(ctx context.Context) error {
	resp, err := c.do(ctx, http.MethodGet, "/readyz", nil, nil, "")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func catalogsParam(cs []core.CatalogID) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ",")
}

// Search calls GET /api/search (ports.Searcher). Filters of Refine are not
// sent: the commands do not use them.
func (c *Client) Search(ctx context.Context, req core.SearchRequest) (core.SearchResponse, error) {
	q := url.Values{"q": {req.Query}}
	if req.Lang != "" {
		q.Set("lang", string(req.Lang))
	}
	if len(req.Catalogs) > 0 {
		q.Set("databases", catalogsParam(req.Catalogs))
	}
	for name, v := range map[string]bool{"vector": req.Vector, "rerank": req.Rerank, "explain": req.Explain, "highlight": req.Highlight} {
		if v {
			q.Set(name, "true")
		}
	}
	if req.Limit > 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	if req.Offset > 0 {
		q.Set("offset", strconv.Itoa(req.Offset))
	}
	var out core.SearchResponse
	return out, c.getJSON(ctx, "/api/search", q, &out)
}

// List calls GET /api/resources: every live resource of the catalogs.
func (c *Client) List(ctx context.Context, req core.ListRequest) (core.ListResponse, error) {
	q := url.Values{}
	if req.Lang != "" {
		q.Set("lang", string(req.Lang))
	}
	if len(req.Catalogs) > 0 {
		q.Set("databases", catalogsParam(req.Catalogs))
	}
	var out core.ListResponse
	return out, c.getJSON(ctx, "/api/resources", q, &out)
}

// Get calls GET /api/resources/{ref}.
func (c *Client) Get(ctx context.Context, ref string, lang core.Lang) (core.Resource, error) {
	q := url.Values{}
	if lang != "" {
		q.Set("lang", string(lang))
	}
	var out core.Resource
	return out, c.getJSON(ctx, "/api/resources/"+url.PathEscape(ref), q, &out)
}

// CatalogList calls GET /api/catalogs.
func (c *Client) CatalogList(ctx context.Context) (core.CatalogList, error) {
	var out core.CatalogList
	return out, c.getJSON(ctx, "/api/catalogs", nil, &out)
}

// RunUpstream calls POST /admin/ingest/run: the service fetches the
// catalog from its publisher now.
func (c *Client) RunUpstream(ctx context.Context, catalog core.CatalogID) (core.IngestResult, error) {
	var out core.IngestResult
	resp, err := c.do(ctx, http.MethodPost, "/admin/ingest/run", url.Values{"catalog": {string(catalog)}}, nil, "")
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// Preview calls POST /admin/ingest/preview: the file's headers, a sample
// and the suggested column map.
func (c *Client) Preview(ctx context.Context, filename string, data []byte, sheet string) (core.IngestPreview, error) {
	var out core.IngestPreview
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if sheet != "" {
		_ = mw.WriteField("sheet", sheet)
	}
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		return out, err
	}
	_, _ = fw.Write(data)
	if err := mw.Close(); err != nil {
		return out, err
	}
	resp, err := c.do(ctx, http.MethodPost, "/admin/ingest/preview", nil, &body, mw.FormDataContentType())
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// IngestFile calls POST /admin/ingest/file with the file, its version,
// sheet and column map as a multipart form.
func (c *Client) IngestFile(ctx context.Context, req core.FileRequest) (core.IngestResult, error) {
	var out core.IngestResult
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if req.Version != "" {
		_ = mw.WriteField("version", req.Version)
	}
	if req.Sheet != "" {
		_ = mw.WriteField("sheet", req.Sheet)
	}
	if req.PreviewID != "" {
		_ = mw.WriteField("preview_id", req.PreviewID)
	}
	for field, header := range req.Mapping {
		_ = mw.WriteField("map."+field, header)
	}
	if req.Data != nil {
		fw, err := mw.CreateFormFile("file", req.Filename)
		if err != nil {
			return out, err
		}
		_, _ = fw.Write(req.Data)
	}
	if err := mw.Close(); err != nil {
		return out, err
	}
	q := url.Values{"catalog": {string(req.Catalog)}}
	if req.DryRun {
		q.Set("dry_run", "true")
	}
	resp, err := c.do(ctx, http.MethodPost, "/admin/ingest/file", q, &body, mw.FormDataContentType())
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// Backup streams GET /admin/backup (a consistent online backup of the
// store) into w and returns the bytes written.
func (c *Client) Backup(ctx context.Context, w io.Writer) (int64, error) {
	resp, err := c.do(ctx, http.MethodGet, "/admin/backup", nil, nil, "")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("reading the backup: %w", err)
	}
	// The service ends a complete backup with this trailer; a stream cut
	// short (the server failed half-way) has none.
	if resp.Trailer.Get(BackupTrailer) != "complete" {
		return n, errors.New("the backup stream ended early (the server logged why); the file is incomplete")
	}
	return n, nil
}

// BackupTrailer is the HTTP trailer the service sets to "complete" at the
// end of a whole backup.
const BackupTrailer = "X-Backup-Status"
