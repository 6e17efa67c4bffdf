//go:build hosted

package app

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/adapters/console"
	"github.com/climatesearch/climatesearch/adapters/guard"
	"github.com/climatesearch/climatesearch/adapters/httpapi"
	"github.com/climatesearch/climatesearch/adapters/keyfile"
	"github.com/climatesearch/climatesearch/adapters/tempo"
	"github.com/climatesearch/climatesearch/adapters/unkey"
	"github.com/climatesearch/climatesearch/config"
	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/access"
	"github.com/climatesearch/climatesearch/core/payment"
	"github.com/climatesearch/climatesearch/ports"
	"github.com/climatesearch/climatesearch/web"
)

// Hosted tells which build this is: the hosted one puts the guard in front
// of /api, MCP, /admin and the console.
const Hosted = true

// CheckConfig refuses a hosted configuration that cannot work (no admin
// token, an incomplete payment setup, two key sources).
func CheckConfig(cfg config.Config) error { return cfg.ValidateHosted() }

// HostedExtras are the hosted build's optional parts tests may replace
// (e.g. a payment method that only tests accept).
type HostedExtras struct {
	// Methods are payment methods beyond the configured one.
	Methods []ports.PaymentMethod
}

// buildParts provides the hosted build's optional parts (none by default;
// tests decorate them).
func buildParts() fx.Option {
	return fx.Options(fx.Provide(func() *HostedExtras { return &HostedExtras{Methods: testMethods} }), httpConventions())
}

// testMethods are payment methods compiled in only for the end-to-end tests
// of the payment flow (-tags hosted,paymenttest; see hosted_paymenttest.go).
// The hosted binary has none.
var testMethods []ports.PaymentMethod

// newRoot wraps the API engine (with MCP and the console) in the guard.
// While the index loads after a start, charged calls are refused before
// any payment is taken.
func newRoot(cfg config.Config, api *httpapi.API, c *console.Console, ledger ports.PaymentLedger, vis *core.Visibility, log *zap.Logger, extras *HostedExtras, it internalToken, _ *observed) (Root, error) {
	d := guard.Deps{
		AdminToken: cfg.AdminToken, AdminUnlocksAPI: cfg.AdminUnlocksAPI, Realm: cfg.PaymentRealm,
		Operator: c.SignedIn, Internal: string(it), Log: log.Named("guard"),
		Loading: func() error { return vis.Loaded(nil) },
	}
	var verifier ports.KeyVerifier
	switch {
	case cfg.UnkeyRootKey != "":
		v, err := unkey.New(unkey.Config{BaseURL: cfg.UnkeyURL, RootKey: cfg.UnkeyRootKey})
		if err != nil {
			return Root{}, err
		}
		verifier = v
	case cfg.APIKeysFile != "":
		f, err := keyfile.Open(keyfile.Config{Path: cfg.APIKeysFile, Log: log.Named("keyfile")})
		if err != nil {
			return Root{}, err
		}
		verifier = f
	}
	if verifier != nil {
		d.Keys = access.New(verifier, access.Config{})
	}
	if cfg.PaymentSecret != "" {
		p, err := newPayments(cfg, ledger, extras, log)
		if err != nil {
			return Root{}, err
		}
		d.Payments = p
		if d.Discovery, err = discovery(cfg); err != nil {
			return Root{}, err
		}
	}
	log.Info("hosted build: the guard is on", zap.Bool("keys", d.Keys != nil), zap.Bool("payment", d.Payments != nil),
		zap.Bool("admin_unlocks_api", cfg.AdminUnlocksAPI))
	// The request id, the access log and the HTTP metrics wrap the guard,
	// so its refusals are logged and counted too.
	return Root{Handler: api.Observe(guard.New(d).Wrap(api.Engine()))}, nil
}

// newPayments is the Payment scheme with the configured method (tempo
// verifies payments on its chain) and the ledger of spent credentials in
// the store.
func newPayments(cfg config.Config, ledger ports.PaymentLedger, extras *HostedExtras, log *zap.Logger) (ports.Payments, error) {
	var methods []ports.PaymentMethod
	if cfg.PaymentMethod == "tempo" {
		m, err := tempo.New(tempo.Config{RPCURL: cfg.PaymentRPCURL})
		if err != nil {
			return nil, err
		}
		methods = append(methods, m)
	}
	methods = append(methods, extras.Methods...)
	svc, err := payment.New(payment.Config{
		Secret: []byte(cfg.PaymentSecret), Realm: cfg.PaymentRealm, Method: cfg.PaymentMethod,
		Amount: cfg.PaymentAmount, Currency: cfg.PaymentCurrency, Recipient: cfg.PaymentRecipient,
	}, methods, ledger)
	if err != nil {
		return nil, fmt.Errorf("SERVICE_PAYMENT_METHOD %s: %w", cfg.PaymentMethod, err)
	}
	return svc, nil
}

// discovery is the OpenAPI document with the price on every paid operation
// (x-payment-info), for payment clients that discover what a server sells
// at /openapi.json.
func discovery(cfg config.Config) ([]byte, error) {
	doc, err := web.OpenAPIJSON()
	if err != nil {
		return nil, err
	}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		if !strings.HasPrefix(path, "/api/") {
			continue
		}
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			if o, ok := op.(map[string]any); ok && method == "get" {
				o["x-payment-info"] = map[string]any{"amount": cfg.PaymentAmount, "currency": cfg.PaymentCurrency,
					"intent": "charge", "method": cfg.PaymentMethod, "description": "one call of " + path}
			}
		}
	}
	doc["x-service-info"] = map[string]any{"categories": []string{"data"}, "docs": map[string]any{"apiReference": "/docs", "homepage": "/"}}
	return json.Marshal(doc)
}
