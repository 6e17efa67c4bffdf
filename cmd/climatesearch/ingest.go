package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// mapFlag collects repeated --map field=header.
type mapFlag map[string]string

func (m mapFlag) String() string {
	var s []string
	for k, v := range m {
		s = append(s, k+"="+v)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

func (m mapFlag) Set(v string) error {
	field, header, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(field) == "" || strings.TrimSpace(header) == "" {
		return fmt.Errorf("want field=header, got %q", v)
	}
	m[strings.TrimSpace(field)] = strings.TrimSpace(header)
	return nil
}

// ingester is what an ingest needs, from the running service
// (restclient) or from the core services over a stopped data directory.
type ingester interface {
	RunUpstream(ctx context.Context, catalog core.CatalogID) (core.IngestResult, error)
	Preview(ctx context.Context, filename string, data []byte, sheet string) (core.IngestPreview, error)
	IngestFile(ctx context.Context, req core.FileRequest) (core.IngestResult, error)
}

// localIngester is the server's own ingest services.
type localIngester struct {
	up interface {
		RunUpstream(ctx context.Context, catalog core.CatalogID) (core.IngestResult, error)
	}
	files interface {
		Preview(ctx context.Context, filename string, data []byte, sheet string) (core.IngestPreview, error)
		IngestFile(ctx context.Context, req core.FileRequest) (core.IngestResult, error)
	}
}

func (l localIngester) Preview(ctx context.Context, filename string, data []byte, sheet string) (core.IngestPreview, error) {
	return l.files.Preview(ctx, filename, data, sheet)
}

func (l localIngester) RunUpstream(ctx context.Context, c core.CatalogID) (core.IngestResult, error) {
	return l.up.RunUpstream(ctx, c)
}

func (l localIngester) IngestFile(ctx context.Context, req core.FileRequest) (core.IngestResult, error) {
	return l.files.IngestFile(ctx, req)
}

// runIngest loads a file (POST /admin/ingest/file) or the publisher's
// release (POST /admin/ingest/run) through the running service, or
// through the same core services on a stopped data directory.
func runIngest(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ingest", stderr)
	base := urlFlag(fs, "")
	dataDir := fs.String("data-dir", "", "data directory of a stopped server (default SERVICE_DATA_DIR)")
	catalog := fs.String("catalog", "", "catalog: dkbr (br25) for files; national for --upstream (default)")
	version := fs.String("version", "", "DatasetVersion of the file's release, e.g. BR25")
	sheet := fs.String("sheet", "", "worksheet of an XLSX/XLS file (default: the one that looks like data)")
	dry := fs.Bool("dry-run", false, "show what would change without writing")
	upstream := fs.Bool("upstream", false, "fetch the catalog from its publisher instead of a file")
	asJSON := fs.Bool("json", false, "print the whole ingest result as JSON")
	m := mapFlag{}
	fs.Var(m, "map", "column map `field=header` (repeatable), e.g. --map a1a3=\"A1-A3 typisk\"")
	pos, code, ok := parseArgs(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	var req core.FileRequest
	switch {
	case *upstream && len(pos) > 0:
		return fail(stderr, "ingest", exitUsage, "give a FILE or --upstream, not both")
	case *upstream:
		if *version != "" || *sheet != "" || *dry || len(m) > 0 {
			return fail(stderr, "ingest", exitUsage, "--version, --sheet, --map and --dry-run apply to files, not to --upstream")
		}
		if *catalog == "" {
			*catalog = string(core.National)
		}
	case len(pos) == 0:
		return fail(stderr, "ingest", exitUsage, "give the FILE to load (CSV, XLSX, XLS) or --upstream; see climatesearch ingest --help")
	case len(pos) > 1:
		return fail(stderr, "ingest", exitUsage, "one FILE at a time, got %d", len(pos))
	default:
		if *catalog == "" {
			return fail(stderr, "ingest", exitUsage, "--catalog is required with a file, e.g. --catalog dkbr")
		}
		data, err := os.ReadFile(pos[0])
		if err != nil {
			return fail(stderr, "ingest", exitUsage, "%v", err)
		}
		req = core.FileRequest{Filename: filepath.Base(pos[0]), Data: data, Version: *version, Sheet: *sheet, Mapping: m, DryRun: *dry}
	}
	cat, err := core.ParseCatalog(*catalog)
	if err != nil {
		return fail(stderr, "ingest", exitUsage, "invalid --catalog: %v", err)
	}
	req.Catalog = cat

	ctx := context.Background()
	var in ingester
	if *base != "" {
		c, err := newClient(*base, 0)
		if err != nil {
			return fail(stderr, "ingest", exitUsage, "%v", err)
		}
		in = c
	} else {
		cfg, err := localConfig(*dataDir)
		if err != nil {
			return fail(stderr, "ingest", exitUsage, "%v", err)
		}
		loc, err := openLocal(ctx, cfg, stderr)
		if err != nil {
			return fail(stderr, "ingest", exitFail, "%v", err)
		}
		defer func() { _ = loc.Close(context.Background()) }()
		// As after a server start: the index and vectors come from the
		// store, so the ingest's diff, index and vectors are the server's.
		if err := loc.LoadIndex(ctx); err != nil {
			return fail(stderr, "ingest", exitFail, "loading the store: %v", err)
		}
		in = localIngester{up: loc.Ingest, files: loc.Files}
	}
	start := time.Now()
	var res core.IngestResult
	if *upstream {
		res, err = in.RunUpstream(ctx, cat)
	} else {
		var mapOut io.Writer = stdout
		if *asJSON {
			mapOut = io.Discard
		}
		err = suggestMap(ctx, in, &req, mapOut)
		if err == nil {
			res, err = in.IngestFile(ctx, req)
		}
	}
	if err != nil {
		msg := err.Error()
		var ce *core.Error
		if errors.As(err, &ce) && len(ce.Problems) > 0 {
			msg += core.MoreProblems(msg, ce.Problems)
		}
		return fail(stderr, "ingest", exitFail, "%s", msg)
	}
	if *asJSON {
		printJSON(stdout, res)
	} else {
		what := "ingested"
		if res.DryRun {
			what = "dry run (nothing written)"
		}
		fmt.Fprintf(stdout, "%s: %s %s from %s: %d seen, %d upserted, %d unchanged, %d rejected, %d withdrawn (%s)\n",
			what, res.Catalog, res.Version, res.Origin, res.Seen, res.Upserted, res.Unchanged, res.Rejected, res.Withdrawn,
			time.Since(start).Round(time.Millisecond))
		for _, c := range res.Changes {
			fmt.Fprintf(stdout, "  %s", c.Ref)
			if c.New {
				fmt.Fprint(stdout, " (new)")
			}
			if len(c.Fields) > 0 {
				fmt.Fprintf(stdout, ": %s", strings.Join(c.Fields, ", "))
			}
			fmt.Fprintln(stdout)
		}
		for _, e := range res.Errors {
			fmt.Fprintf(stdout, "  note: %s\n", e)
		}
	}
	return exitOK
}

// suggestMap completes the column map with the one the preview suggests
// (what the console preselects) for the fields --map did not name, and says
// on w which map the ingest uses.
func suggestMap(ctx context.Context, in ingester, req *core.FileRequest, w io.Writer) error {
	p, err := in.Preview(ctx, req.Filename, req.Data, req.Sheet)
	if err != nil {
		return err
	}
	for field, header := range p.SuggestedMap {
		if _, given := req.Mapping[field]; !given {
			req.Mapping[field] = header
		}
	}
	fmt.Fprintf(w, "column map: %s\n", mapFlag(req.Mapping).String())
	return nil
}
