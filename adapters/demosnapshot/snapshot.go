// Package demosnapshot is the project's own small snapshot of the national
// catalog, embedded in the binary so a first start without the publisher
// still serves something. The ingest loads it only when the publisher is
// unreachable and the store is empty; the release is marked incomplete, so it
// never withdraws anything, and the next successful upstream ingest replaces
// it.
//
// snapshot.json holds every resource of the current release, 02.07.000
// (230, Swedish names and categories from 02.06.000), with facts only: ids,
// names, values, units, factors, conversions, categories, transports and the
// search synonyms; the publisher's descriptions and applicability notes are
// left out. It is written
// by gen.go (go run gen.go ../../../shared/data/boverket) from the real
// exports; do not edit it by hand.
package demosnapshot

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/climatesearch/climatesearch/core"
)

//go:embed snapshot.json
var snapshotJSON []byte

// file is the layout of snapshot.json.
type file struct {
	About     string          `json:"about"`
	Version   string          `json:"version"`
	From      []string        `json:"from"`
	Resources []core.Resource `json:"resources"`
}

// Source delivers the embedded snapshot. It implements ports.CatalogSource.
type Source struct{}

// Name identifies the source in logs and errors.
func (Source) Name() string { return "demo-snapshot" }

// Fetch returns the snapshot as an incomplete release of the national
// catalog. Each call decodes afresh, so callers may modify what they get.
func (Source) Fetch(ctx context.Context) (core.Release, error) {
	if err := ctx.Err(); err != nil {
		return core.Release{}, err
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(snapshotJSON))
	dec.DisallowUnknownFields() // a renamed field would otherwise load as empty
	if err := dec.Decode(&f); err != nil {
		return core.Release{}, fmt.Errorf("demo-snapshot: decoding the embedded snapshot: %w", err)
	}
	for i := range f.Resources {
		r := &f.Resources[i]
		// The catalog and attribution are the snapshot's by definition, not
		// whatever the file says.
		r.Catalog, r.Source = core.National, core.SourceNational
		r.Normalize()
	}
	return core.Release{
		Catalog:   core.National,
		Origin:    core.OriginFixture,
		Version:   f.Version,
		Resources: f.Resources,
		// Not the whole catalog: resources missing from it must not be withdrawn.
		Complete: false,
	}, nil
}
