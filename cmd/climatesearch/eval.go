package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/cmd/climatesearch/app"
	"github.com/climatesearch/climatesearch/config"
	"github.com/climatesearch/climatesearch/core/embedding"
	"github.com/climatesearch/climatesearch/core/evaluate"
	"github.com/climatesearch/climatesearch/core/ingest"
	"github.com/climatesearch/climatesearch/core/search"
)

// runEval scores a golden query set through the same core search the API
// uses, over the store in SERVICE_DATA_DIR (stop the server first: the store
// admits one process).
func runEval(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("climatesearch eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	golden := fs.String("golden", "../shared/eval/golden-dev.json", "golden query set (JSON)")
	vector := fs.Bool("vector", false, "also run with vector=true")
	rerank := fs.Bool("rerank", false, "also run with rerank=true")
	asJSON := fs.Bool("json", false, "print the reports as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := config.Load(nil, os.LookupEnv, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "climatesearch eval: "+err.Error())
		return 2
	}
	f, err := os.Open(*golden)
	if err != nil {
		fmt.Fprintln(stderr, "climatesearch eval: "+err.Error())
		return 2
	}
	defer f.Close()
	g, err := evaluate.Parse(f)
	if err != nil {
		fmt.Fprintln(stderr, "climatesearch eval: "+err.Error())
		return 2
	}
	ctx := context.Background()
	var reports []evaluate.Report
	run := func(in *ingest.Service, vec *embedding.Syncer, s *search.Service) error {
		if _, err := in.Rebuild(ctx); err != nil {
			return err
		}
		if _, _, err := vec.Boot(ctx); err != nil {
			return err
		}
		modes := [][2]bool{{false, false}}
		if *vector {
			modes = append(modes, [2]bool{true, false})
		}
		if *rerank {
			modes = append(modes, [2]bool{*vector, true})
		}
		for _, m := range modes {
			rep, err := evaluate.Run(ctx, s, g, m[0], m[1])
			if err != nil {
				return err
			}
			reports = append(reports, rep)
		}
		return nil
	}
	a := fx.New(app.Parts(cfg, zap.NewNop()), fx.NopLogger, fx.Invoke(run))
	if err := a.Err(); err != nil {
		fmt.Fprintln(stderr, "climatesearch eval: "+err.Error())
		return 1
	}
	if err := a.Stop(ctx); err != nil {
		fmt.Fprintln(stderr, "climatesearch eval: "+err.Error())
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(reports)
		return 0
	}
	for _, r := range reports {
		r.Print(stdout)
		fmt.Fprintln(stdout)
	}
	return 0
}
