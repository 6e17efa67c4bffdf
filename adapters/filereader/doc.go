// Package filereader reads operator-supplied files (CSV, XLSX, XLS) into a
// Table and maps a Table's columns onto Resource fields, producing a partial
// core.Release of origin "file". It is the file half of file ingest: the HTTP
// layer stores the upload, shows a preview (Table.Headers, Table.Sample,
// Fields, Suggest) and applies a column map (MappingFromForm, Map); the
// ingest service stores the release.
//
// Reading (Read) never trusts the file:
//   - the format is detected from the content (zip magic: xlsx, OLE2 magic:
//     xls, else CSV text); the extension only sharpens error messages.
//   - CSV: comma, semicolon, tab or pipe, detected from the first records (an
//     Excel "sep=;" first line is honoured); UTF-8 with or without BOM,
//     UTF-16 with BOM, else Windows-1252; quoted fields with line breaks;
//     numbers with '.' or ',' decimals (see Table.DecimalSeparator); a number
//     such as 1,234 that could carry a thousands separator is not read as a
//     number unless the file uses that separator for decimals.
//   - XLSX (excelize): raw cell values, formula cells by their cached value
//     (never evaluated, never their formula text). The package is inspected
//     before excelize opens it: declared sizes bound the inflated total
//     (Limits.MaxUnzipBytes) and the shared-string table (a quarter of it),
//     and every part is inflated once to check its size and CRC, so a zip
//     bomb is refused without inflating it and a lying entry is refused
//     instead of read short.
//   - XLS (BIFF8, Excel 97-2003): a bounded reader written here, not
//     github.com/extrame/xls (see readXLS for why).
//   - Limits (bytes, rows, columns, cell length, cells, inflated size)
//     answer errors that wrap ErrLimit; every error is core.KindInvalid.
//   - Floats lose binary artefacts: 309.10000000000002 reads as 309.1
//     (12 significant digits; whole numbers stay exact).
//
// Mapping (Map) follows the Danish Tabel 7 conventions and refuses the whole
// file on any problem; see Map for the rules.
package filereader
