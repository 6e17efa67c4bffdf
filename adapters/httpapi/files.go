package httpapi

import (
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

// readUpload reads the multipart form and its optional `file` part within
// the upload limit. The file is nil when the form has none.
func (a *API) readUpload(c *gin.Context) (form *multipart.Form, filename string, data []byte, ok bool) {
	limit := a.d.MaxUpload
	if limit <= 0 {
		limit = core.DefaultMaxUpload
	}
	// The form's other fields are small; allow 1 MiB over the file limit.
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit+1<<20)
	if !strings.HasPrefix(c.ContentType(), "multipart/form-data") {
		writeError(c, http.StatusUnsupportedMediaType, "send multipart/form-data with a field named file, got "+strconv.Quote(c.ContentType()))
		return nil, "", nil, false
	}
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(c, http.StatusRequestEntityTooLarge, "upload exceeds "+strconv.FormatInt(limit>>20, 10)+" MiB (SERVICE_MAX_UPLOAD)")
			return nil, "", nil, false
		}
		writeError(c, http.StatusBadRequest, "unreadable multipart form: "+err.Error())
		return nil, "", nil, false
	}
	form = c.Request.MultipartForm
	fhs := form.File["file"]
	if len(fhs) == 0 {
		return form, "", nil, true
	}
	if len(fhs) > 1 {
		writeError(c, http.StatusBadRequest, "send one file per request")
		return nil, "", nil, false
	}
	fh := fhs[0]
	if fh.Size > limit {
		writeError(c, http.StatusRequestEntityTooLarge, "file exceeds "+strconv.FormatInt(limit>>20, 10)+" MiB (SERVICE_MAX_UPLOAD)")
		return nil, "", nil, false
	}
	f, err := fh.Open()
	if err != nil {
		writeError(c, http.StatusBadRequest, "unreadable file part: "+err.Error())
		return nil, "", nil, false
	}
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	f.Close()
	// Read: the form lets go of its own copy (in memory, or a temporary
	// file), so an ingest holds the file's bytes once, not twice.
	_ = form.RemoveAll()
	delete(form.File, "file")
	if err != nil {
		writeError(c, http.StatusBadRequest, "unreadable file part: "+err.Error())
		return nil, "", nil, false
	}
	if int64(len(data)) > limit {
		writeError(c, http.StatusRequestEntityTooLarge, "file exceeds "+strconv.FormatInt(limit>>20, 10)+" MiB (SERVICE_MAX_UPLOAD)")
		return nil, "", nil, false
	}
	return form, fh.Filename, data, true
}

func formValue(form *multipart.Form, key string) string {
	if vs := form.Value[key]; len(vs) > 0 {
		return strings.TrimSpace(vs[0])
	}
	return ""
}

func (a *API) ingestPreview(c *gin.Context) {
	if !checkParams(c, "sheet") {
		return
	}
	form, name, data, ok := a.readUpload(c)
	if !ok {
		return
	}
	defer form.RemoveAll()
	if data == nil {
		writeError(c, http.StatusBadRequest, "no file: send the spreadsheet in the multipart field file")
		return
	}
	sheet := c.Query("sheet")
	if v := formValue(form, "sheet"); v != "" {
		sheet = v
	}
	p, err := a.d.Files.Preview(c, name, data, sheet)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, p)
}

func (a *API) ingestFile(c *gin.Context) {
	if !checkParams(c, "catalog", "dry_run", "version", "sheet") {
		return
	}
	if c.Query("catalog") == "" {
		writeError(c, http.StatusBadRequest, "catalog is required, e.g. ?catalog=dkbr")
		return
	}
	cat, err := core.ParseCatalog(c.Query("catalog"))
	if err != nil {
		writeError(c, http.StatusBadRequest, err.Error())
		return
	}
	dry, ok := parseBool(c, "dry_run")
	if !ok {
		return
	}
	form, name, data, ok := a.readUpload(c)
	if !ok {
		return
	}
	defer form.RemoveAll()
	req := core.FileRequest{Catalog: cat, Filename: name, Data: data, DryRun: dry,
		PreviewID: formValue(form, "preview_id"), Version: firstNonEmpty(formValue(form, "version"), c.Query("version")),
		Sheet: firstNonEmpty(formValue(form, "sheet"), c.Query("sheet")), Mapping: map[string]string{}}
	for k, vs := range form.Value {
		if field, ok := strings.CutPrefix(k, "map."); ok && len(vs) > 0 && strings.TrimSpace(vs[0]) != "" {
			req.Mapping[field] = strings.TrimSpace(vs[0])
		}
	}
	res, err := a.d.Files.IngestFile(c, req)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
