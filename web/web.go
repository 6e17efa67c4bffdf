// Package web holds the static assets the HTTP adapter serves: the OpenAPI
// document of the REST API (/openapi.yaml) and the vendored Swagger UI that
// renders it (/docs). Everything is embedded, so /docs works offline.
package web

import (
	"embed"
	"encoding/json"
	"io/fs"

	"github.com/goccy/go-yaml"
)

//go:embed openapi.yaml
var openAPI []byte

//go:embed swaggerui/*
var swaggerUI embed.FS

// OpenAPI returns the OpenAPI 3.0.3 document (YAML) of the REST API. The
// slice is shared: callers must not modify it.
func OpenAPI() []byte { return openAPI }

// SwaggerUI returns the Swagger UI files, rooted so that index.html is at the
// top. index.html loads its assets from /docs/<file>, so serve this file
// system under /docs/.
func SwaggerUI() fs.FS {
	sub, err := fs.Sub(swaggerUI, "swaggerui")
	if err != nil { // cannot happen: the directory is embedded above
		panic(err)
	}
	return sub
}

// OpenAPIJSON returns the OpenAPI document as JSON, decoded into generic
// maps so a build can annotate it (the hosted build adds x-payment-info for
// payment clients' discovery at /openapi.json).
func OpenAPIJSON() (map[string]any, error) {
	b, err := yaml.YAMLToJSON(openAPI)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}
