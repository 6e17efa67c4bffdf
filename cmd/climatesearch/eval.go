package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/climatesearch/climatesearch/core/evaluate"
	"github.com/climatesearch/climatesearch/ports"
)

// runEval scores a golden query set through the same core search the API
// uses: over HTTP against a running service (--url), or over the store in
// SERVICE_DATA_DIR of a stopped server (the store admits one process).
func runEval(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("eval", stderr)
	golden := fs.String("golden", "../shared/eval/golden-dev.json", "golden query set (JSON)")
	vector := fs.Bool("vector", false, "also run with vector=true")
	rerank := fs.Bool("rerank", false, "also run with rerank=true")
	asJSON := fs.Bool("json", false, "print the reports as JSON")
	base := urlFlag(fs, "")
	dataDir := fs.String("data-dir", "", "data directory of a stopped server (default SERVICE_DATA_DIR)")
	pos, code, ok := parseArgs(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return fail(stderr, "eval", exitUsage, "unexpected argument %q", pos[0])
	}
	f, err := os.Open(*golden)
	if err != nil {
		return fail(stderr, "eval", exitUsage, "%v", err)
	}
	defer f.Close()
	g, err := evaluate.Parse(f)
	if err != nil {
		return fail(stderr, "eval", exitUsage, "%v", err)
	}
	ctx := context.Background()
	var s ports.Searcher
	if *base != "" {
		c, err := newClient(*base, 0)
		if err != nil {
			return fail(stderr, "eval", exitUsage, "%v", err)
		}
		if err := c.Ready(ctx); err != nil {
			return fail(stderr, "eval", exitFail, "%s is not ready: %v", *base, err)
		}
		s = c
	} else {
		cfg, err := localConfig(*dataDir)
		if err != nil {
			return fail(stderr, "eval", exitUsage, "%v", err)
		}
		loc, err := openLocal(ctx, cfg, stderr)
		if err != nil {
			return fail(stderr, "eval", exitFail, "%v", err)
		}
		defer func() { _ = loc.Close(context.Background()) }()
		if err := loc.LoadIndex(ctx); err != nil {
			return fail(stderr, "eval", exitFail, "loading the store: %v", err)
		}
		s = loc.Search
	}
	modes := [][2]bool{{false, false}}
	if *vector {
		modes = append(modes, [2]bool{true, false})
	}
	if *rerank {
		modes = append(modes, [2]bool{*vector, true})
	}
	var reports []evaluate.Report
	for _, m := range modes {
		rep, err := evaluate.Run(ctx, s, g, m[0], m[1])
		if err != nil {
			return fail(stderr, "eval", exitFail, "%v", err)
		}
		reports = append(reports, rep)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(reports)
		return exitOK
	}
	for _, r := range reports {
		r.Print(stdout)
		fmt.Fprintln(stdout)
	}
	return exitOK
}
