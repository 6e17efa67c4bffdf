package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/climatesearch/climatesearch/adapters/restclient"
	"github.com/climatesearch/climatesearch/cmd/climatesearch/app"
	"github.com/climatesearch/climatesearch/cmd/climatesearch/buildinfo"
	"github.com/climatesearch/climatesearch/config"
)

// Exit codes of the subcommands.
const (
	exitOK    = 0
	exitFail  = 1 // the work failed (the service refused, a file was bad, the directory is locked)
	exitUsage = 2 // wrong flags or arguments
)

// command is one subcommand of the binary.
type command struct {
	name, args, summary string
	run                 func(args []string, stdout, stderr io.Writer) int
}

// commands are the subcommands; without one the binary serves.
var commands []command

func init() {
	commands = []command{
		{"version", "[--json]", "print the version, VCS revision and time, Go version", runVersion},
		{"healthcheck", "[--url URL] [--ready]", "exit 0 when the service answers /healthz (or /readyz), 1 otherwise: a container health check without curl", runHealthcheck},
		{"export", "[--catalog C] [--format csv|json|jsonl] [--lang sv|en] [--out FILE] [--url URL]", "write the live resources, with the source attribution", runExport},
		{"ingest", "FILE --catalog dkbr --version V [--map field=header ...] [--dry-run] [--url URL] | --upstream [--catalog national]", "load a spreadsheet (CSV, XLSX, XLS) or the publisher's release", runIngest},
		{"backup", "FILE [--url URL]", "write a consistent online backup of the running service's store", runBackup},
		{"restore", "FILE [--data-dir DIR]", "load a backup into an empty data directory (the server stopped)", runRestore},
		{"mcp", "--stdio [--url URL]", "serve the MCP tools over stdio, calling the running service", runMCP},
		{"eval", "[--golden FILE] [--vector] [--rerank] [--json] [--url URL]", "score a golden query set through the search", runEval},
		{"help", "", "list the subcommands and the server's flags", nil},
	}
}

// runCommand runs the subcommand named by args[0], if any.
func runCommand(args []string, stdout, stderr io.Writer) (int, bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "-version", "--version":
		return runVersion(args[1:], stdout, stderr), true
	case "help", "-help", "--help", "-h":
		printUsage(stdout)
		return exitOK, true
	}
	for _, c := range commands {
		if c.name == args[0] && c.run != nil {
			return c.run(args[1:], stdout, stderr), true
		}
	}
	return 0, false
}

// printUsage lists the subcommands and the server's flags.
func printUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: climatesearch [flags]            serve REST, MCP and the console")
	fmt.Fprintln(w, "       climatesearch COMMAND [flags]    (climatesearch COMMAND --help for its flags)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands that take --url work against a running service (the admin token from SERVICE_ADMIN_TOKEN);")
	fmt.Fprintln(w, "without --url, export, ingest and eval open the data directory (SERVICE_DATA_DIR or --data-dir) of a stopped server.")
	fmt.Fprintln(w)
	_, _ = config.Load([]string{"-h"}, func(string) (string, bool) { return "", false }, w)
}

// newFlags is a subcommand's flag set; parseArgs prints its errors (one
// line on stderr) and its --help (on stdout).
func newFlags(name string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// printHelp prints a subcommand's usage and flags.
func printHelp(fs *flag.FlagSet, w io.Writer) {
	for _, c := range commands {
		if c.name == fs.Name() {
			fmt.Fprintf(w, "Usage: climatesearch %s %s\n  %s\n\nFlags (-flag or --flag):\n", c.name, c.args, c.summary)
		}
	}
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// parseArgs parses flags placed before, between and after positional
// arguments (climatesearch ingest FILE --catalog dkbr). It returns the
// positional arguments, or an exit code when parsing ended the command
// (0 for --help).
func parseArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) ([]string, int, bool) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				// Help goes to stdout: it was asked for.
				printHelp(fs, stdout)
				return nil, exitOK, false
			}
			return nil, fail(stderr, fs.Name(), exitUsage, "%v (see climatesearch %s --help)", err, fs.Name()), false
		}
		if fs.NArg() == 0 {
			return pos, 0, true
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// fail prints one line and returns code.
func fail(stderr io.Writer, name string, code int, format string, a ...any) int {
	fmt.Fprintf(stderr, "climatesearch %s: %s\n", name, fmt.Sprintf(format, a...))
	return code
}

// defaultURL is the service the commands call without --url: the one this
// configuration would serve (SERVICE_ADDR, 127.0.0.1:8080 by default), over
// loopback.
func defaultURL() string {
	addr := os.Getenv("SERVICE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// urlFlag adds --url; usage says what it defaults to.
func urlFlag(fs *flag.FlagSet, def string) *string {
	what := "base URL of a running service"
	if def == "" {
		what += "; without it the command opens the data directory of a stopped server"
	}
	return fs.String("url", def, what)
}

// client calls the service at base with the admin token of the environment.
func newClient(base string, timeout time.Duration) (*restclient.Client, error) {
	return restclient.New(base, os.Getenv("SERVICE_ADMIN_TOKEN"), timeout)
}

// localConfig is the configuration of a command that opens the data
// directory: the environment, with --data-dir when given.
func localConfig(dataDir string) (config.Config, error) {
	var args []string
	if dataDir != "" {
		args = append(args, "-data-dir="+dataDir)
	}
	return config.Load(args, os.LookupEnv, io.Discard)
}

// cliLogger logs warnings and errors of the core services to stderr, in
// the configured format.
func cliLogger(cfg config.Config, stderr io.Writer) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.EncodeLevel = zapcore.CapitalLevelEncoder
	var e zapcore.Encoder = zapcore.NewConsoleEncoder(enc)
	if cfg.LogFormat == "json" {
		e = zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	}
	return zap.New(zapcore.NewCore(e, zapcore.AddSync(stderr), zapcore.WarnLevel))
}

// openLocal opens the core services over the data directory; when a server
// holds it, the error says in one line what to do.
func openLocal(ctx context.Context, cfg config.Config, stderr io.Writer) (*app.Local, error) {
	log := cliLogger(cfg, stderr)
	app.SetMemoryLimit(cfg, log)
	l, err := app.OpenLocal(ctx, cfg, log)
	if errors.Is(err, app.ErrLocked) {
		return nil, fmt.Errorf("the data directory %s is in use by a running server: stop it, or pass --url %s to work through it", cfg.DataDir, defaultURL())
	}
	return l, err
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", stderr)
	asJSON := fs.Bool("json", false, "print the build information as JSON")
	if _, code, ok := parseArgs(fs, args, stdout, stderr); !ok {
		return code
	}
	i := buildinfo.Get()
	if *asJSON {
		return printJSON(stdout, i)
	}
	fmt.Fprintln(stdout, i.String())
	return exitOK
}

func runHealthcheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("healthcheck", stderr)
	base := urlFlag(fs, defaultURL())
	ready := fs.Bool("ready", false, "check /readyz (every catalog loaded) instead of /healthz (alive)")
	timeout := fs.Duration("timeout", 5*time.Second, "bound on the check")
	pos, code, ok := parseArgs(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return fail(stderr, "healthcheck", exitUsage, "unexpected argument %q", pos[0])
	}
	c, err := newClient(*base, *timeout)
	if err != nil {
		return fail(stderr, "healthcheck", exitUsage, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	check, what := c.Health, "healthy"
	if *ready {
		check, what = c.Ready, "ready"
	}
	if err := check(ctx); err != nil {
		return fail(stderr, "healthcheck", exitFail, "%s is not %s: %v", *base, what, err)
	}
	fmt.Fprintln(stdout, what)
	return exitOK
}

// printCommands lists the subcommands after the server's flags (-h).
func printCommands(w io.Writer) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands (climatesearch COMMAND --help for each):")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
}
