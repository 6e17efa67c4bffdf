package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// sampleRows is how many rows a preview shows.
const sampleRows = 10

// Files previews and applies uploaded files through the one apply path.
type Files struct {
	ingest *Service
	parser ports.FileParser
	stash  ports.FileStash
}

var _ ports.FileIngester = (*Files)(nil)

// NewFiles returns the file ingest service.
func NewFiles(in *Service, parser ports.FileParser, stash ports.FileStash) *Files {
	return &Files{ingest: in, parser: parser, stash: stash}
}

// Preview reads a file, stashes it for PreviewTTL and answers its headers,
// a sample, the mappable fields and a suggested column map.
func (f *Files) Preview(ctx context.Context, filename string, data []byte, sheet string) (core.IngestPreview, error) {
	t, err := f.parser.Parse(filename, data, sheet)
	if err != nil {
		return core.IngestPreview{}, err
	}
	id, err := newPreviewID()
	if err != nil {
		return core.IngestPreview{}, err
	}
	now := f.ingest.now()
	if err := f.stash.Stash(ctx, id, core.StashedFile{Filename: filename, Data: data, StashedAt: now}, core.PreviewTTL); err != nil {
		return core.IngestPreview{}, core.Unavailablef(err, "stashing the file failed")
	}
	return f.preview(id, filename, t, now), nil
}

// Reopen answers the preview of a stashed file again, for as long as the
// stash keeps it; sheet picks another sheet of a workbook.
func (f *Files) Reopen(ctx context.Context, previewID, sheet string) (core.IngestPreview, error) {
	st, err := f.stashed(ctx, previewID)
	if err != nil {
		return core.IngestPreview{}, err
	}
	t, err := f.parser.Parse(st.Filename, st.Data, sheet)
	if err != nil {
		return core.IngestPreview{}, err
	}
	at := st.StashedAt
	if at.IsZero() {
		at = f.ingest.now() // a stash written before StashedAt existed
	}
	return f.preview(previewID, st.Filename, t, at), nil
}

func (f *Files) stashed(ctx context.Context, previewID string) (core.StashedFile, error) {
	if !validPreviewID(previewID) {
		return core.StashedFile{}, core.Invalidf("preview_id %q is not one this service issues", previewID)
	}
	st, found, err := f.stash.Stashed(ctx, previewID)
	if err != nil {
		return core.StashedFile{}, core.Unavailablef(err, "reading the stashed file failed")
	}
	if !found {
		return core.StashedFile{}, core.NotFoundf("preview %s is unknown or expired (previews last %s); upload the file again", previewID, core.PreviewTTL)
	}
	return st, nil
}

func (f *Files) preview(id, filename string, t core.FileTable, stashedAt time.Time) core.IngestPreview {
	sample := t.Sample
	if len(sample) > sampleRows {
		sample = sample[:sampleRows]
	}
	return core.IngestPreview{
		PreviewID: id, Filename: filename, Headers: t.Headers, Sample: sample, Schema: f.parser.Schema(),
		Format: t.Format, Sheets: t.Sheets, Sheet: t.Sheet, Delimiter: t.Delimiter,
		DecimalSeparator: t.DecimalSeparator, Encoding: t.Encoding, Rows: t.Rows,
		SuggestedMap: f.parser.Suggest(t.Headers), ExpiresAt: stashedAt.Add(core.PreviewTTL).UTC(),
	}
}

// IngestFile maps a file (uploaded now or stashed by a preview) and applies
// it whole, or reports what it would do (DryRun). A file with any problem is
// refused whole and changes nothing.
func (f *Files) IngestFile(ctx context.Context, req core.FileRequest) (res core.IngestResult, err error) {
	if !req.DryRun {
		start := time.Now()
		defer func() { f.ingest.observe(req.Catalog, string(core.OriginFile), err, start) }()
	}
	if len(req.Data) == 0 && req.PreviewID == "" {
		return core.IngestResult{}, core.Invalidf("send a file (multipart field file) or the preview_id of a preview")
	}
	if len(req.Data) > 0 && req.PreviewID != "" {
		return core.IngestResult{}, core.Invalidf("send either a file or a preview_id, not both")
	}
	if req.PreviewID != "" {
		st, err := f.stashed(ctx, req.PreviewID)
		if err != nil {
			return core.IngestResult{}, err
		}
		req.Filename, req.Data = st.Filename, st.Data
	}
	if len(req.Mapping) == 0 {
		return core.IngestResult{}, core.Invalidf("no column map: send map.<field>=<header> fields, at least map.id, map.name and map.a1a3")
	}
	// A file is read, mapped and diffed whole before anything is indexed:
	// a large one peaks there as much as in its apply, so the whole of it
	// runs at the bulk target (a small file takes milliseconds either way).
	f.ingest.bulk.enter()
	defer f.ingest.bulk.leave()
	// The file's rows are mapped as the diff takes them, a chunk at a time
	// (ports.FileParser.Map): a dry run never holds the file's resources,
	// an apply only those it writes. A file with problems fails the feed
	// before any chunk is handed over: nothing is diffed or written.
	filename, data := req.Filename, req.Data
	req.Data = nil // read by the feed: the apply holds the resources, not the file's bytes
	in := func(add func([]core.Resource) error) error {
		// Handed over, not kept: the reader lets go of the bytes once it
		// has its table, while the file is still being applied.
		b := data
		data = nil
		problems, err := f.parser.Map(filename, b, req.Sheet, req.Catalog, req.Mapping, strings.TrimSpace(req.Version), f.ingest.cfg.IndexChunk, add)
		if err != nil {
			return err
		}
		if len(problems) > 0 {
			msgs := make([]string, 0, 3)
			for _, p := range problems[:min(3, len(problems))] {
				msgs = append(msgs, p.String())
			}
			return &core.Error{Kind: core.KindInvalid, Problems: problems,
				Msg: fmt.Sprintf("file refused, nothing stored: %d problem(s), first: %s", len(problems), strings.Join(msgs, "; "))}
		}
		return nil
	}
	rel := core.Release{Catalog: req.Catalog, Origin: core.OriginFile, Version: strings.TrimSpace(req.Version)}
	return f.ingest.applyModeFed(ctx, rel, in, -1, f.ingest.now(), req.DryRun, true)
}

func newPreviewID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "pv_" + hex.EncodeToString(b), nil
}

func validPreviewID(id string) bool {
	h, ok := strings.CutPrefix(id, "pv_")
	if !ok || len(h) != 32 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}
