package filereader

import (
	"errors"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/ports"
)

// previewSample is how many rows a preview table carries.
const previewSample = 10

// Parser implements ports.FileParser with the readers of this package.
type Parser struct {
	Limits Limits
}

var _ ports.FileParser = Parser{}

// Parse reads a file for a preview.
func (p Parser) Parse(filename string, data []byte, sheet string) (core.FileTable, error) {
	lim := p.Limits
	lim.KeepRows = previewSample // a preview shows the first rows and counts the rest
	t, err := Read(filename, data, sheet, lim)
	if err != nil {
		return core.FileTable{}, limitKind(err)
	}
	return core.FileTable{
		Format: t.Format, Sheets: t.Sheets, Sheet: t.Sheet, Headers: t.Headers, Sample: t.Sample(previewSample),
		Rows: t.Total, Delimiter: t.Delimiter, DecimalSeparator: t.DecimalSeparator, Encoding: t.Encoding,
	}, nil
}

// Map reads a file and maps its rows to resources, handing them to each in
// chunks of n as they are made (MapEach); the table read from the file is
// let go of row by row.
func (p Parser) Map(filename string, data []byte, sheet string, catalog core.CatalogID, mapping map[string]string, version string, n int, each func([]core.Resource) error) ([]core.FileProblem, error) {
	t, err := Read(filename, data, sheet, p.Limits)
	if err != nil {
		return nil, limitKind(err)
	}
	rep, err := MapEach(t, catalog, mapping, version, n, each)
	if len(rep.Problems) > 0 {
		return rep.Problems, nil
	}
	return nil, err
}

// Schema lists the mappable fields.
func (Parser) Schema() []core.SchemaField {
	fs := Fields()
	out := make([]core.SchemaField, len(fs))
	for i, f := range fs {
		out[i] = core.SchemaField{Field: f.Field, Label: f.Label}
	}
	return out
}

// Suggest proposes a column map.
func (Parser) Suggest(headers []string) map[string]string { return Suggest(headers) }

// limitKind turns an exceeded limit into a 413-kind error.
func limitKind(err error) error {
	var ce *core.Error
	if errors.Is(err, ErrLimit) && errors.As(err, &ce) {
		c := *ce
		c.Kind = core.KindTooLarge
		return &c
	}
	return err
}
