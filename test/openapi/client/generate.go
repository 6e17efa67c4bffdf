// Package client is the Go client oapi-codegen v2 generates from
// web/openapi.yaml with its documented client configuration (cfg.yaml),
// committed so that the document is proven to generate a client that
// compiles and talks to the real binary (test/openapi). Do not edit
// client.gen.go: change web/openapi.yaml and run go generate here;
// test/openapi fails when the two drift apart.
package client

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config cfg.yaml ../../../web/openapi.yaml
