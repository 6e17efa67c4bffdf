package ports

import "time"

// Metrics is the driven port the services report what they did through;
// an adapter turns the observations into counters and histograms. Every
// method must be cheap and safe for concurrent use: it runs on the request
// path. Label values are bounded sets (modes, catalogs, origins, outcomes,
// tool names, route templates), never user input.
type Metrics interface {
	// ObserveHTTP records one HTTP request: the route template (gin's
	// FullPath, "unmatched" for no route), the method, the status and how
	// long the answer took.
	ObserveHTTP(route, method string, status int, d time.Duration)
	// ObserveSearch records one answered search: its mode (SearchFullText,
	// SearchHybrid, SearchReranked), its result count and duration.
	ObserveSearch(mode string, results int, d time.Duration)
	// ObserveIngest records one ingest: the catalog, where its data came
	// from (json, excel, fixture, file; "upstream" when no source answered),
	// the outcome (OutcomeOK, OutcomeRefused, OutcomeFailed) and duration.
	ObserveIngest(catalog, origin, outcome string, d time.Duration)
	// ObserveToolCall records one MCP tool call by tool and outcome
	// (OutcomeOK, OutcomeToolError, OutcomeFailed).
	ObserveToolCall(tool, outcome string)
	// ObserveWebhookAttempt records one delivery attempt by its outcome
	// (delivered, retrying, failed).
	ObserveWebhookAttempt(outcome string)
}

// Search modes of Metrics.ObserveSearch.
const (
	SearchFullText = "fulltext"
	SearchHybrid   = "hybrid"
	SearchReranked = "reranked"
)

// Outcomes of Metrics observations.
const (
	OutcomeOK = "ok"
	// OutcomeRefused: the caller's request was refused (invalid, busy,
	// loading, too large); nothing was attempted.
	OutcomeRefused = "refused"
	// OutcomeToolError: an MCP tool answered a tool error (isError).
	OutcomeToolError = "tool_error"
	OutcomeFailed    = "failed"
)

// NoMetrics observes nothing; the default of every service.
type NoMetrics struct{}

func (NoMetrics) ObserveHTTP(string, string, int, time.Duration)      {}
func (NoMetrics) ObserveSearch(string, int, time.Duration)            {}
func (NoMetrics) ObserveIngest(string, string, string, time.Duration) {}
func (NoMetrics) ObserveToolCall(string, string)                      {}
func (NoMetrics) ObserveWebhookAttempt(string)                        {}

// MetricsOrNone returns m, or NoMetrics when m is nil.
func MetricsOrNone(m Metrics) Metrics {
	if m == nil {
		return NoMetrics{}
	}
	return m
}
