// Package guard is the access guard of the hosted build (go build -tags
// hosted): one HTTP middleware in front of /api, MCP, /admin and the
// console. It decides, in this order: a customer API key (Authorization:
// Bearer, verified by the key service), a payment credential
// (Authorization: Payment, draft-httpauth-payment-01 with the charge
// intent), else a 402 challenge (or 401 when payment is not offered).
// /admin and the console never take a key or a payment: they need the
// admin token. /healthz, /readyz, /openapi.yaml and /docs stay public.
// While the search index loads after a start, charged calls answer 503
// before any key is counted or payment taken.
//
// Every file but this one is compiled only with -tags hosted, so the
// self-hosted binary has no guard code path. docs/HOSTED.md describes the
// wire format of every answer.
package guard

// InternalHeader carries the per-process token with which the console's
// inspector calls its own /api and /mcp through the guard (Deps.Internal).
// It is here, outside the hosted-only files, so the wiring of both builds
// names one header.
const InternalHeader = "X-Climatesearch-Internal"
