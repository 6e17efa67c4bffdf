// Command climatesearch serves Sweden's national climate-declaration
// database and the Danish building-regulation generic data: search, lookup,
// comparison and ingestion over REST and MCP. Without a subcommand it
// serves; its subcommands (cli.go: version, healthcheck, export, ingest,
// backup, restore, mcp --stdio, eval) do the data work. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"go.uber.org/dig"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/cmd/climatesearch/app"
	"github.com/climatesearch/climatesearch/config"
)

func main() {
	if code, ok := runCommand(os.Args[1:], os.Stdout, os.Stderr); ok {
		os.Exit(code)
	}
	cfg, err := config.Load(os.Args[1:], os.LookupEnv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		printCommands(os.Stderr)
		return
	}
	if err == nil {
		err = app.CheckConfig(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "climatesearch: "+err.Error())
		os.Exit(2)
	}
	log, err := app.NewLogger(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "climatesearch: "+err.Error())
		os.Exit(2)
	}
	// The log's info lines are buffered (app.NewLogger): every way out of
	// main flushes them (os.Exit skips deferred calls; an error line is
	// written at once, with the lines before it).
	defer log.Sync() //nolint:errcheck // nowhere to report it
	app.SetMemoryLimit(cfg, log)

	// Nothing slow runs in a start hook (the index loads in the
	// background), so the bound holds whatever the catalog size.
	a := fx.New(app.Options(cfg, log), fx.StartTimeout(cfg.StartTimeout))
	// Signals are caught before the start: the server listens during it,
	// and a SIGTERM sent as soon as it answers must stop it gracefully.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	startCtx, cancel := context.WithTimeout(context.Background(), a.StartTimeout())
	defer cancel()
	if err := a.Start(startCtx); err != nil {
		_ = log.Sync() // the lines before it first
		// One line naming what failed (opening the store, listening), not
		// fx's chain of the constructors that needed it.
		msg := strings.Join(strings.Fields(dig.RootCause(err).Error()), " ")
		fmt.Fprintln(os.Stderr, "climatesearch: "+msg)
		os.Exit(1)
	}
	s := <-sig
	log.Info("shutting down", zap.String("signal", s.String()))
	stopCtx, cancel2 := context.WithTimeout(context.Background(), cfg.ShutdownGrace+a.StopTimeout())
	defer cancel2()
	if err := a.Stop(stopCtx); err != nil {
		log.Error("shutdown", zap.Error(err))
		os.Exit(1)
	}
}
