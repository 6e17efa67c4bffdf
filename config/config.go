// Package config reads the process configuration from flags and the
// environment. Flags win over environment variables, which win over defaults.
// Invalid configuration is reported as one error line and stops the process.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/climatesearch/climatesearch/core"
)

// MemoryAuto is Config.MemoryLimit's value for "auto".
const MemoryAuto = -1

// Config is everything the process can be told.
type Config struct {
	Addr    string
	DataDir string
	// Store is "" for badger under DataDir, or a postgres:// URL of a
	// PostgreSQL database that several replicas share.
	Store          string
	UpstreamURL    string
	UpstreamVer    string
	UpstreamKey    string
	ExcelURLSV     string
	ExcelURLEN     string
	OriginBase     string
	IngestInterval time.Duration
	IngestTimeout  time.Duration
	BootIngest     bool
	AdminToken     string
	// AdminTimeout bounds an admin ingest over REST (upload, apply,
	// answer) in place of the server's read and write timeouts.
	AdminTimeout  time.Duration
	LogFormat     string
	LogLevel      string
	ShutdownGrace time.Duration
	// StartTimeout bounds the start hooks (opening the store, listening);
	// the search index loads after it, in the background.
	StartTimeout time.Duration
	// KeepAnswers serves repeated reads from answers kept until the next
	// write (adapters/httpapi/answers.go).
	KeepAnswers bool

	MaxUpload int64
	// MaxRows bounds the rows of an uploaded file, header included.
	MaxRows int
	// MemoryLimit is the Go heap's soft limit in bytes: MemoryAuto for 90 %
	// of the cgroup's memory limit when one is set, 0 for none
	// (cmd/climatesearch/app/memlimit.go).
	MemoryLimit int64
	// BulkGC is GOGC while a large change is applied; 0: off.
	BulkGC          int
	Embedder        string
	VectorWeight    string
	VectorFloor     string
	EmbedderURL     string
	EmbedderModel   string
	EmbedderKey     string
	EmbedderTimeout time.Duration
	Reranker        string
	RerankerURL     string
	RerankerModel   string
	RerankerKey     string
	RerankerFlavor  string
	RerankerTimeout time.Duration

	// MCPAllowAnyHost turns off the DNS-rebinding protection of /mcp.
	MCPAllowAnyHost bool
	// CORSOrigins may read the public API from a browser (empty: no CORS).
	CORSOrigins []string

	// MetricsAddr, when set, serves /metrics there instead of on Addr;
	// PprofAddr, when set, serves net/http/pprof (config/observability.go).
	MetricsAddr, PprofAddr string

	WebhookURLs         []string
	WebhookSecret       string
	WebhookAllowPrivate bool
	WebhookTimeout      time.Duration
	WebhookBackoff      time.Duration
	WebhookRetryFor     time.Duration
	WebhookLease        time.Duration

	// Hosted build only (-tags hosted): customer keys and per-call payment.
	PaymentSecret    string
	PaymentRealm     string
	PaymentMethod    string
	PaymentAmount    string
	PaymentCurrency  string
	PaymentRecipient string
	PaymentRPCURL    string
	UnkeyURL         string
	UnkeyRootKey     string
	APIKeysFile      string
	// AdminUnlocksAPI lets the admin token also call /api and MCP without a
	// key or payment (off: the admin token is for /admin and the console).
	AdminUnlocksAPI bool

	// given marks the settings set by a flag or the environment.
	given map[string]bool
	// from records where each setting came from (env name -> "-flag" or
	// the env name), so errors name what the user actually set.
	from map[string]string
}

// name is how an error should call a setting: the flag when a flag set it.
func (c Config) name(env string) string {
	if f, ok := c.from[env]; ok {
		return f
	}
	return env
}

// Defaults of the publisher's endpoints.
const (
	DefaultUpstreamURL = "https://api.boverket.se/klimatdatabas"
	DefaultExcelURLSV  = "https://www.boverket.se/contentassets/4668ed4cc3da447385788ed30bff7d49/boverkets-klimatdatabas-version-02.07.000-sv-se.xlsx"
	DefaultExcelURLEN  = "https://www.boverket.se/contentassets/4668ed4cc3da447385788ed30bff7d49/boverkets-climate-database-version-02.07.000-en-gb.xlsx"
	DefaultOriginBase  = "https://klimatdatabasen.boverket.se"
)

// MaxFileRows is the most SERVICE_MAX_ROWS takes: the rows of an Excel
// worksheet.
const MaxFileRows = 1 << 20

// setting is one row of the configuration table: a flag, its variable, its
// default and how to parse it. The README table is generated from the same list.
type setting struct {
	flag, env, def, help string
	set                  func(c *Config, v string) error
}

func str(p func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *p(c) = v; return nil }
}

func dur(p func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("want a non-negative duration such as 168h or 30s, got %q", v)
		}
		*p(c) = d
		return nil
	}
}

// size parses a byte size such as 32MiB, 500KiB or 1048576.
func size(p func(*Config) *int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		num, mul := v, int64(1)
		for _, u := range []struct {
			suffix string
			mul    int64
		}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
			if n, ok := strings.CutSuffix(v, u.suffix); ok {
				num, mul = strings.TrimSpace(n), u.mul
				break
			}
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n <= 0 || n > (1<<40)/mul {
			return fmt.Errorf("want a positive size such as 32MiB, got %q", v)
		}
		*p(c) = n * mul
		return nil
	}
}

// errWantBool marks a boolean setting's parse error; Load probes each
// setting with a non-boolean value to find the boolean ones, which become
// real boolean flags (-boot-ingest, -boot-ingest=false).
var errWantBool = errors.New("want true or false")

func boolean(p func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%w, got %q", errWantBool, v)
		}
		*p(c) = b
		return nil
	}
}

var settings = []setting{
	{"addr", "SERVICE_ADDR", "127.0.0.1:8080", "HTTP listen address (host:port)", str(func(c *Config) *string { return &c.Addr })},
	{"metrics-addr", "SERVICE_METRICS_ADDR", "", "serve /metrics on this separate host:port instead of the main listener (none: on the main listener)", str(func(c *Config) *string { return &c.MetricsAddr })},
	{"pprof-addr", "SERVICE_PPROF_ADDR", "", "serve net/http/pprof on this host:port (a bare :port binds 127.0.0.1); none: off", str(func(c *Config) *string { return &c.PprofAddr })},
	{"data-dir", "SERVICE_DATA_DIR", "./data", "directory of the badger store and of the search index", str(func(c *Config) *string { return &c.DataDir })},
	{"store", "SERVICE_STORE", "", "where the data lives: empty for badger under SERVICE_DATA_DIR (one process); a postgres://user:password@host:port/database URL for PostgreSQL shared by several replicas (docs/SCALING.md)", str(func(c *Config) *string { return &c.Store })},
	{"upstream-url", "SERVICE_UPSTREAM_URL", DefaultUpstreamURL, "base URL of the publisher's JSON API", str(func(c *Config) *string { return &c.UpstreamURL })},
	{"upstream-version", "SERVICE_UPSTREAM_VERSION", "latest", "release asked of the JSON API (latest or e.g. 02.07.000)", str(func(c *Config) *string { return &c.UpstreamVer })},
	{"upstream-key", "SERVICE_UPSTREAM_KEY", "", "optional Ocp-Apim-Subscription-Key for the publisher's API", str(func(c *Config) *string { return &c.UpstreamKey })},
	{"excel-url-sv", "SERVICE_EXCEL_URL_SV", DefaultExcelURLSV, "publisher's Swedish workbook (fallback when the JSON fails)", str(func(c *Config) *string { return &c.ExcelURLSV })},
	{"excel-url-en", "SERVICE_EXCEL_URL_EN", DefaultExcelURLEN, "publisher's English workbook (fallback when the JSON fails)", str(func(c *Config) *string { return &c.ExcelURLEN })},
	{"origin-base", "SERVICE_ORIGIN_BASE", DefaultOriginBase, "host of the official product sheets (origin links)", str(func(c *Config) *string { return &c.OriginBase })},
	{"ingest-interval", "SERVICE_INGEST_INTERVAL", "168h", "period of the scheduled upstream ingest; 0 turns the schedule off", dur(func(c *Config) *time.Duration { return &c.IngestInterval })},
	{"ingest-timeout", "SERVICE_INGEST_TIMEOUT", "60s", "bound on one upstream request (JSON or workbook)", dur(func(c *Config) *time.Duration { return &c.IngestTimeout })},
	{"boot-ingest", "SERVICE_BOOT_INGEST", "true", "run an upstream ingest at boot", boolean(func(c *Config) *bool { return &c.BootIngest })},
	{"admin-token", "SERVICE_ADMIN_TOKEN", "", "when set, /admin/* requires header X-Admin-Token with this value", str(func(c *Config) *string { return &c.AdminToken })},
	{"admin-timeout", "SERVICE_ADMIN_TIMEOUT", "1h", "bound on one admin ingest over REST (POST /admin/ingest/file, /admin/ingest/preview, /admin/resources, /admin/ingest/run): its upload, its apply and its answer; every other request has 60s to send its body and 10m to be answered", dur(func(c *Config) *time.Duration { return &c.AdminTimeout })},
	{"log-format", "SERVICE_LOG_FORMAT", "auto", "json, console, or auto (console on a terminal, json otherwise)", str(func(c *Config) *string { return &c.LogFormat })},
	{"log-level", "SERVICE_LOG_LEVEL", "info", "debug, info, warn or error", str(func(c *Config) *string { return &c.LogLevel })},
	{"shutdown-grace", "SERVICE_SHUTDOWN_GRACE", "10s", "time in-flight requests get on SIGINT/SIGTERM", dur(func(c *Config) *time.Duration { return &c.ShutdownGrace })},
	{"start-timeout", "SERVICE_START_TIMEOUT", "15s", "bound on the start (opening the store, listening); the search index loads after it, in the background, whatever the catalog size", dur(func(c *Config) *time.Duration { return &c.StartTimeout })},
	{"keep-answers", "SERVICE_KEEP_ANSWERS", "true", "serve a repeated search (full text), lookup, listing or comparison from its answer kept until the next write (at most 4,096 answers, 64 MB); false computes every answer", boolean(func(c *Config) *bool { return &c.KeepAnswers })},
	{"max-upload", "SERVICE_MAX_UPLOAD", "32MiB", "largest spreadsheet accepted by /admin/ingest/preview and /admin/ingest/file (e.g. 32MiB, 500KiB)", size(func(c *Config) *int64 { return &c.MaxUpload })},
	{"max-rows", "SERVICE_MAX_ROWS", "200000", "most rows (header included) of a file accepted by /admin/ingest/preview and /admin/ingest/file, up to Excel's 1048576; a larger file answers 413. The parsed rows stay in memory until the apply is done", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 || n > MaxFileRows {
			return fmt.Errorf("want a row count from 2 to %d, got %q", MaxFileRows, v)
		}
		c.MaxRows = n
		return nil
	}},
	{"memory-limit", "SERVICE_MEMORY_LIMIT", "auto", "soft limit of the Go heap: the garbage collector works harder near it instead of letting the heap grow (e.g. 1536MiB); auto = 90% of the container's (cgroup's) memory limit when there is one, otherwise none; off = none. A GOMEMLIMIT in the environment wins", func(c *Config, v string) error {
		switch v {
		case "auto":
			c.MemoryLimit = MemoryAuto
			return nil
		case "off":
			c.MemoryLimit = 0
			return nil
		}
		if err := size(func(c *Config) *int64 { return &c.MemoryLimit })(c, v); err != nil {
			return fmt.Errorf("want auto, off or a size such as 1536MiB, got %q", v)
		}
		return nil
	}},
	{"bulk-gc", "SERVICE_BULK_GC", "50", "the garbage collector's target (GOGC) while a file is ingested or a release or change of more than 10,000 resources (one batch, indexed as one part) is applied: the heap grows by this percent of what is live between collections instead of the process's own (100 unless GOGC says otherwise), which keeps a bulk load's peak memory lower for more CPU; never raises a lower GOGC; off = the process's own throughout", func(c *Config, v string) error {
		if v == "off" {
			c.BulkGC = 0
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 || n > 1000 {
			return fmt.Errorf("want off or a percent from 10 to 1000, got %q", v)
		}
		c.BulkGC = n
		return nil
	}},
	{"embedder", "SERVICE_EMBEDDER", "hash", "vectors: hash (offline, lexical n-grams), openai (an OpenAI-compatible /v1/embeddings server) or none", str(func(c *Config) *string { return &c.Embedder })},
	{"vector-weight", "SERVICE_VECTOR_WEIGHT", "auto", "weight of the vector list in the fusion (1 = plain RRF); auto = 0.5 for the lexical hash embedder, 1 for a model", str(func(c *Config) *string { return &c.VectorWeight })},
	{"vector-floor", "SERVICE_VECTOR_FLOOR", "auto", "relevance floor: a hit found only by vectors needs at least this cosine similarity; auto = 0.30 for the hash embedder, 0 (none) for a model", str(func(c *Config) *string { return &c.VectorFloor })},
	{"embedder-url", "SERVICE_EMBEDDER_URL", "", "base URL of the embeddings server (openai), e.g. http://127.0.0.1:8000/v1", str(func(c *Config) *string { return &c.EmbedderURL })},
	{"embedder-model", "SERVICE_EMBEDDER_MODEL", "", "model name sent to the embeddings server (openai); it must support dimensions=320", str(func(c *Config) *string { return &c.EmbedderModel })},
	{"embedder-key", "SERVICE_EMBEDDER_KEY", "", "bearer key of the embeddings server, if it needs one", str(func(c *Config) *string { return &c.EmbedderKey })},
	{"embedder-timeout", "SERVICE_EMBEDDER_TIMEOUT", "10s", "bound on one embeddings request", dur(func(c *Config) *time.Duration { return &c.EmbedderTimeout })},
	{"reranker", "SERVICE_RERANKER", "none", "reranker: none or http (the /rerank API of TEI, Cohere, Jina)", str(func(c *Config) *string { return &c.Reranker })},
	{"reranker-url", "SERVICE_RERANKER_URL", "", "base URL of the reranker (the part before /rerank)", str(func(c *Config) *string { return &c.RerankerURL })},
	{"reranker-model", "SERVICE_RERANKER_MODEL", "", "model name sent to the reranker", str(func(c *Config) *string { return &c.RerankerModel })},
	{"reranker-key", "SERVICE_RERANKER_KEY", "", "bearer key of the reranker, if it needs one", str(func(c *Config) *string { return &c.RerankerKey })},
	{"reranker-flavor", "SERVICE_RERANKER_FLAVOR", "cohere", "wire flavour of /rerank: cohere (documents; also Jina) or tei (texts)", str(func(c *Config) *string { return &c.RerankerFlavor })},
	{"reranker-timeout", "SERVICE_RERANKER_TIMEOUT", "5s", "bound on one rerank request", dur(func(c *Config) *time.Duration { return &c.RerankerTimeout })},
	{"webhook-url", "SERVICE_WEBHOOK_URL", "", "comma-separated webhook URLs that receive every event, on top of the destinations stored with /admin/webhooks", func(c *Config, v string) error {
		c.WebhookURLs = nil
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				c.WebhookURLs = append(c.WebhookURLs, u)
			}
		}
		return nil
	}},
	{"webhook-secret", "SERVICE_WEBHOOK_SECRET", "", "signing secret of the SERVICE_WEBHOOK_URL destinations: whsec_ followed by base64 of 24-64 random bytes", str(func(c *Config) *string { return &c.WebhookSecret })},
	{"webhook-allow-private", "SERVICE_WEBHOOK_ALLOW_PRIVATE", "false", "true lets webhooks reach loopback, private, link-local and metadata addresses (refused by default, also at delivery time)", boolean(func(c *Config) *bool { return &c.WebhookAllowPrivate })},
	{"webhook-timeout", "SERVICE_WEBHOOK_TIMEOUT", "10s", "bound on one webhook delivery attempt", dur(func(c *Config) *time.Duration { return &c.WebhookTimeout })},
	{"webhook-backoff", "SERVICE_WEBHOOK_BACKOFF", "5s", "delay before the first retry of a failed delivery; doubles per attempt up to 1h, with jitter", dur(func(c *Config) *time.Duration { return &c.WebhookBackoff })},
	{"webhook-retry-for", "SERVICE_WEBHOOK_RETRY_FOR", "24h", "how long a failed delivery is retried at least before it is marked failed", dur(func(c *Config) *time.Duration { return &c.WebhookRetryFor })},
	{"webhook-lease", "SERVICE_WEBHOOK_LEASE", "1m", "how long a delivery claimed by a replica stays its own; a replica that dies mid-attempt delays that delivery by up to this (at least 4/3 of SERVICE_WEBHOOK_TIMEOUT)", dur(func(c *Config) *time.Duration { return &c.WebhookLease })},
	{"payment-secret", "SERVICE_PAYMENT_SECRET", "", "hosted: HMAC key of payment challenge ids (at least 32 bytes); per-call payment is offered only when set", str(func(c *Config) *string { return &c.PaymentSecret })},
	{"payment-realm", "SERVICE_PAYMENT_REALM", "", "hosted: realm of payment challenges (default: the request's host name)", str(func(c *Config) *string { return &c.PaymentRealm })},
	{"payment-method", "SERVICE_PAYMENT_METHOD", "tempo", "hosted: payment method of challenges", str(func(c *Config) *string { return &c.PaymentMethod })},
	{"payment-amount", "SERVICE_PAYMENT_AMOUNT", "", "hosted: price of one call in the currency's base units (a decimal integer)", str(func(c *Config) *string { return &c.PaymentAmount })},
	{"payment-currency", "SERVICE_PAYMENT_CURRENCY", "", "hosted: currency of the price (for tempo: the TIP-20 token address)", str(func(c *Config) *string { return &c.PaymentCurrency })},
	{"payment-recipient", "SERVICE_PAYMENT_RECIPIENT", "", "hosted: address that receives payments", str(func(c *Config) *string { return &c.PaymentRecipient })},
	{"payment-rpc-url", "SERVICE_PAYMENT_RPC_URL", "", "hosted: JSON-RPC endpoint of the payment chain (tempo) that verifies payments", str(func(c *Config) *string { return &c.PaymentRPCURL })},
	{"unkey-url", "SERVICE_UNKEY_URL", "https://api.unkey.com", "hosted: base URL of the Unkey API that verifies customer keys", str(func(c *Config) *string { return &c.UnkeyURL })},
	{"unkey-root-key", "SERVICE_UNKEY_ROOT_KEY", "", "hosted: Unkey root key (verifies customer keys with keys.verifyKey)", str(func(c *Config) *string { return &c.UnkeyRootKey })},
	{"api-keys-file", "SERVICE_API_KEYS_FILE", "", "hosted: file of customer keys, one `name sha256:<hex>` per line, re-read when it changes (instead of Unkey)", str(func(c *Config) *string { return &c.APIKeysFile })},
	{"admin-unlocks-api", "SERVICE_ADMIN_UNLOCKS_API", "false", "hosted: true lets X-Admin-Token also call /api and MCP without a key or payment", boolean(func(c *Config) *bool { return &c.AdminUnlocksAPI })},
	{"cors-origins", "SERVICE_CORS_ORIGINS", "", "comma-separated origins (https://app.example.com) whose browser front ends may read /api/*, /openapi.yaml, /healthz and /readyz (CORS; * for any); empty sends no CORS headers; /admin, the console, /docs and MCP are never opened", func(c *Config, v string) error {
		c.CORSOrigins = nil
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o == "" {
				continue
			}
			if o != "*" {
				u, err := url.Parse(o)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
					return fmt.Errorf("%q is not an origin: want scheme://host[:port] (e.g. https://app.example.com) or *", o)
				}
			}
			c.CORSOrigins = append(c.CORSOrigins, o)
		}
		return nil
	}},
	{"mcp-allow-any-host", "SERVICE_MCP_ALLOW_ANY_HOST", "false", "true turns off the DNS-rebinding protection of /mcp (a request arriving over loopback must carry a localhost Host, 403 otherwise); only behind a reverse proxy on the same host that forwards the public Host", boolean(func(c *Config) *bool { return &c.MCPAllowAnyHost })},
}

// isBool tells a boolean setting: its parser refuses a non-boolean value
// with errWantBool.
func (s setting) isBool() bool {
	var probe Config
	return errors.Is(s.set(&probe, "not-a-boolean"), errWantBool)
}

// boolFlag is a boolean flag (-x means -x=true) whose value is checked, with
// the environment's, after parsing, so an error names where it came from.
type boolFlag struct{ v string }

func (b *boolFlag) String() string     { return b.v }
func (b *boolFlag) Set(v string) error { b.v = v; return nil }
func (b *boolFlag) IsBoolFlag() bool   { return true }

// Load parses args (without the program name) over the environment given by
// lookup (os.LookupEnv in production). help receives -h output.
func Load(args []string, lookup func(string) (string, bool), help io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("climatesearch", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned as one line; only -h prints usage
	flagVals := map[string]*string{}
	for _, s := range settings {
		usage := fmt.Sprintf("%s (env %s, default %q)", s.help, s.env, s.def)
		if s.isBool() {
			v := &boolFlag{}
			fs.Var(v, s.flag, usage)
			flagVals[s.flag] = &v.v
			continue
		}
		flagVals[s.flag] = fs.String(s.flag, "", usage)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(help)
			fmt.Fprintln(help, "Usage of climatesearch (flags win over environment variables):")
			fs.PrintDefaults()
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.from = map[string]string{}
	c.given = map[string]bool{}
	setFlags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { setFlags[f.Name] = true })
	for _, s := range settings {
		v, src := s.def, "default"
		if ev, ok := lookup(s.env); ok && ev != "" {
			v, src = ev, s.env
		}
		if setFlags[s.flag] {
			v, src = *flagVals[s.flag], "-"+s.flag
		}
		c.from[s.env] = src
		c.given[s.env] = src != "default"
		if src == "default" {
			c.from[s.env] = s.env
		}
		if err := s.set(&c, strings.TrimSpace(v)); err != nil {
			return c, fmt.Errorf("invalid %s: %v", src, err)
		}
	}
	return c, c.validate()
}

func (c Config) validate() error {
	if err := c.validateObservability(); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("invalid %s %q: want host:port such as 127.0.0.1:8080", c.name("SERVICE_ADDR"), c.Addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("invalid %s %q: port must be 0-65535", c.name("SERVICE_ADDR"), c.Addr)
	}
	_ = host
	if c.DataDir == "" {
		return fmt.Errorf("invalid %s: must not be empty", c.name("SERVICE_DATA_DIR"))
	}
	if err := c.validateStore(); err != nil {
		return err
	}
	for _, u := range []struct{ name, v string }{
		{"SERVICE_UPSTREAM_URL", c.UpstreamURL}, {"SERVICE_EXCEL_URL_SV", c.ExcelURLSV},
		{"SERVICE_EXCEL_URL_EN", c.ExcelURLEN}, {"SERVICE_ORIGIN_BASE", c.OriginBase},
	} {
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("invalid %s %q: want an absolute http(s) URL", c.name(u.name), u.v)
		}
	}
	if c.UpstreamVer == "" || strings.ContainsAny(c.UpstreamVer, "/?#") {
		return fmt.Errorf("invalid %s %q: want latest or a release such as 02.07.000", c.name("SERVICE_UPSTREAM_VERSION"), c.UpstreamVer)
	}
	if c.IngestInterval != 0 && c.IngestInterval < time.Minute {
		return fmt.Errorf("invalid %s %s: use 0 (off) or at least 1m, the publisher updates weekly at most", c.name("SERVICE_INGEST_INTERVAL"), c.IngestInterval)
	}
	if c.StartTimeout <= 0 {
		return fmt.Errorf("invalid %s: must be positive", c.name("SERVICE_START_TIMEOUT"))
	}
	if c.IngestTimeout <= 0 {
		return fmt.Errorf("invalid %s: must be positive", c.name("SERVICE_INGEST_TIMEOUT"))
	}
	if c.AdminTimeout < time.Minute {
		return fmt.Errorf("invalid %s %s: at least 1m (the answer of a large apply must not be cut)", c.name("SERVICE_ADMIN_TIMEOUT"), c.AdminTimeout)
	}
	switch c.Embedder {
	case "hash", "none":
	case "openai":
		if c.EmbedderURL == "" || c.EmbedderModel == "" {
			return fmt.Errorf("invalid %s openai: set SERVICE_EMBEDDER_URL and SERVICE_EMBEDDER_MODEL too", c.name("SERVICE_EMBEDDER"))
		}
	default:
		return fmt.Errorf("invalid %s %q: use hash, openai or none", c.name("SERVICE_EMBEDDER"), c.Embedder)
	}
	if c.VectorWeight != "auto" {
		if w, err := strconv.ParseFloat(c.VectorWeight, 64); err != nil || w <= 0 || w > 10 {
			return fmt.Errorf("invalid %s %q: use auto or a number in (0, 10]", c.name("SERVICE_VECTOR_WEIGHT"), c.VectorWeight)
		}
	}
	if c.VectorFloor != "auto" {
		if f, err := strconv.ParseFloat(c.VectorFloor, 64); err != nil || f < 0 || f > 1 {
			return fmt.Errorf("invalid %s %q: use auto or a number in [0, 1]", c.name("SERVICE_VECTOR_FLOOR"), c.VectorFloor)
		}
	}
	switch c.Reranker {
	case "none":
	case "http":
		if c.RerankerURL == "" {
			return fmt.Errorf("invalid %s http: set SERVICE_RERANKER_URL too", c.name("SERVICE_RERANKER"))
		}
	default:
		return fmt.Errorf("invalid %s %q: use none or http", c.name("SERVICE_RERANKER"), c.Reranker)
	}
	if c.RerankerFlavor != "cohere" && c.RerankerFlavor != "tei" {
		return fmt.Errorf("invalid %s %q: use cohere or tei", c.name("SERVICE_RERANKER_FLAVOR"), c.RerankerFlavor)
	}
	for _, u := range c.WebhookURLs {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("invalid %s %q: want absolute http(s) URLs separated by commas", c.name("SERVICE_WEBHOOK_URL"), u)
		}
	}
	if len(c.WebhookURLs) > 0 || c.WebhookSecret != "" {
		if _, err := core.ParseSecret(c.WebhookSecret); err != nil {
			return fmt.Errorf("invalid %s: %v (required with SERVICE_WEBHOOK_URL: receivers verify signatures with it)", c.name("SERVICE_WEBHOOK_SECRET"), err)
		}
	}
	if c.WebhookTimeout <= 0 || c.WebhookTimeout > 5*time.Minute {
		return fmt.Errorf("invalid %s %s: use a duration in (0, 5m]", c.name("SERVICE_WEBHOOK_TIMEOUT"), c.WebhookTimeout)
	}
	if c.WebhookBackoff <= 0 || c.WebhookBackoff > time.Hour {
		return fmt.Errorf("invalid %s %s: use a duration in (0, 1h]", c.name("SERVICE_WEBHOOK_BACKOFF"), c.WebhookBackoff)
	}
	if c.WebhookRetryFor <= 0 {
		return fmt.Errorf("invalid %s: must be positive", c.name("SERVICE_WEBHOOK_RETRY_FOR"))
	}
	// An attempt is cut off at three quarters of its lease (core/webhooks).
	if c.WebhookLease < c.WebhookTimeout*4/3 {
		return fmt.Errorf("invalid %s %s: must be at least 4/3 of %s (%s), so an attempt ends inside its lease",
			c.name("SERVICE_WEBHOOK_LEASE"), c.WebhookLease, c.name("SERVICE_WEBHOOK_TIMEOUT"), c.WebhookTimeout*4/3)
	}
	switch c.LogFormat {
	case "auto", "json", "console":
	default:
		return fmt.Errorf("invalid %s %q: use json, console or auto", c.name("SERVICE_LOG_FORMAT"), c.LogFormat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("invalid %s %q: use debug, info, warn or error", c.name("SERVICE_LOG_LEVEL"), c.LogLevel)
	}
	return nil
}

// HostedSettings names the hosted-only settings that were given, so the
// self-hosted binary can say once that it ignores them.
func (c Config) HostedSettings() []string {
	var out []string
	for _, s := range settings {
		if strings.HasPrefix(s.help, "hosted: ") && c.given[s.env] {
			out = append(out, s.env)
		}
	}
	return out
}

var evmAddress = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// ValidateHosted checks what the hosted build needs on top of validate: an
// admin token, a complete payment setup when payment is offered, one key
// source at most. The self-hosted build never calls it.
func (c Config) ValidateHosted() error {
	if c.AdminToken == "" {
		return fmt.Errorf("invalid %s: the hosted build requires an admin token (it guards /admin and the console)", c.name("SERVICE_ADMIN_TOKEN"))
	}
	if c.UnkeyRootKey != "" && c.APIKeysFile != "" {
		return fmt.Errorf("invalid %s with %s: choose one source of customer keys", c.name("SERVICE_UNKEY_ROOT_KEY"), c.name("SERVICE_API_KEYS_FILE"))
	}
	if c.UnkeyRootKey != "" {
		p, err := url.Parse(c.UnkeyURL)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("invalid %s %q: want an absolute http(s) URL", c.name("SERVICE_UNKEY_URL"), c.UnkeyURL)
		}
	}
	if c.PaymentSecret == "" {
		for _, env := range []string{"SERVICE_PAYMENT_AMOUNT", "SERVICE_PAYMENT_RECIPIENT", "SERVICE_PAYMENT_RPC_URL"} {
			if c.given[env] {
				return fmt.Errorf("invalid %s without SERVICE_PAYMENT_SECRET: payment is offered only with a secret", c.name(env))
			}
		}
		if c.UnkeyRootKey == "" && c.APIKeysFile == "" {
			return fmt.Errorf("the hosted build needs SERVICE_PAYMENT_SECRET, SERVICE_UNKEY_ROOT_KEY or SERVICE_API_KEYS_FILE: with none, nobody could call /api")
		}
		return nil
	}
	if len(c.PaymentSecret) < 32 {
		return fmt.Errorf("invalid %s: use at least 32 random bytes (e.g. openssl rand -hex 32)", c.name("SERVICE_PAYMENT_SECRET"))
	}
	if n, err := strconv.ParseUint(c.PaymentAmount, 10, 64); err != nil || n == 0 {
		return fmt.Errorf("invalid %s %q: the price of one call in base units, a positive whole number", c.name("SERVICE_PAYMENT_AMOUNT"), c.PaymentAmount)
	}
	if c.PaymentCurrency == "" || c.PaymentRecipient == "" {
		return fmt.Errorf("invalid payment setup: set SERVICE_PAYMENT_CURRENCY and SERVICE_PAYMENT_RECIPIENT with SERVICE_PAYMENT_SECRET")
	}
	if c.PaymentMethod == "tempo" {
		for _, a := range []struct{ env, v string }{{"SERVICE_PAYMENT_CURRENCY", c.PaymentCurrency}, {"SERVICE_PAYMENT_RECIPIENT", c.PaymentRecipient}} {
			if !evmAddress.MatchString(a.v) {
				return fmt.Errorf("invalid %s %q: the tempo method takes a 0x address of 40 hex digits", c.name(a.env), a.v)
			}
		}
		p, err := url.Parse(c.PaymentRPCURL)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("invalid %s %q: the tempo method verifies payments through the chain's JSON-RPC endpoint, an absolute http(s) URL", c.name("SERVICE_PAYMENT_RPC_URL"), c.PaymentRPCURL)
		}
	}
	return nil
}

// Row is one line of the configuration table.
type Row struct{ Flag, Env, Default, Help string }

// Table lists every setting, for the README and -h.
func Table() []Row {
	rows := make([]Row, len(settings))
	for i, s := range settings {
		rows[i] = Row{"-" + s.flag, s.env, s.def, s.help}
	}
	return rows
}

// HashVectorFloor is the relevance floor of the hash embedder, chosen on the
// dev golden set (docs/SEARCH.md, "Relevance floor").
const HashVectorFloor = 0.30

// VectorFloorValue resolves SERVICE_VECTOR_FLOOR for the configured embedder.
func (c Config) VectorFloorValue() float64 {
	if f, err := strconv.ParseFloat(c.VectorFloor, 64); err == nil {
		return f
	}
	if c.Embedder == "hash" {
		return HashVectorFloor
	}
	return 0
}

// VectorWeightValue resolves SERVICE_VECTOR_WEIGHT for the configured embedder.
func (c Config) VectorWeightValue() float64 {
	if w, err := strconv.ParseFloat(c.VectorWeight, 64); err == nil {
		return w
	}
	if c.Embedder == "hash" {
		return 0.5
	}
	return 1
}

// validateStore accepts an empty SERVICE_STORE (badger) or a PostgreSQL
// URL. The URL may carry a password: errors show it redacted.
func (c Config) validateStore() error {
	if c.Store == "" {
		return nil
	}
	u, err := url.Parse(c.Store)
	if err != nil {
		return fmt.Errorf("invalid %s: not a URL; want postgres://user:password@host:port/database (or empty for badger)", c.name("SERVICE_STORE"))
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("invalid %s %q: want postgres://user:password@host:port/database (or empty for badger)", c.name("SERVICE_STORE"), u.Redacted())
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return fmt.Errorf("invalid %s %q: no host (postgres://host:port/database, or ?host=/path/of/a/socket/directory)", c.name("SERVICE_STORE"), u.Redacted())
	}
	return nil
}

// SharedStore tells whether the data lives in a store several replicas share.
func (c Config) SharedStore() bool { return c.Store != "" }
