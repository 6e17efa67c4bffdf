// Package boverket reads Sweden's national climate-declaration database
// (Boverket Klimatdatabas, catalog "national") from its publisher. It holds
// two ports.CatalogSource implementations:
//
//   - JSONSource ("boverket-json") asks the API for
//     {BaseURL}/api/Klimat/v2/GetAllResources/{Version}/sv/json and .../en/json
//     in parallel and merges the two cultures by ResourceId.
//   - ExcelSource ("boverket-excel") downloads the publisher's Swedish and
//     English workbooks, the fallback when the API fails.
//
// Both cultures are required by both sources: with one missing, a language
// would silently vanish from every resource, so that is a failure and the
// caller moves on to the next source.
//
// # Mapping
//
// Merge (exports) and MergeWorkbooks (workbooks) are pure functions; see
// Merge for which culture a field comes from. The category code, used by the
// core to build the product-sheet link, is the Code of the resource's first
// Boverket category when the export carries one (02.07.000 on), otherwise the
// Id of the leaf of the export's own Categories tree whose Title matches the
// category text. The codes were renumbered in 02.07.000, which is why the
// lookup uses the tree of the same export and never a fixed table.
//
// # Workbook headers
//
// The header row is the first row, within the first 20 of the first sheet,
// that holds a resource-id header. Headers are matched after folding case and
// dropping spaces, dashes and punctuation; a parenthesised suffix such as
// "(kg CO2e/kg)" is ignored. Numbers are read from raw cell values, with a
// decimal comma or point.
//
//	field               Swedish headers                                   English headers
//	id (required)       Resurs-ID, Resursid                               Resource ID, ResourceId
//	name (required)     Produktnamn, Namn, Resursnamn                     Product name, Name, Resource name
//	A1-A3 typical (req) Klimatpåverkan A1-A3 typiskt värde,               Climate impact A1-A3 typical value,
//	                    A1-A3 typiskt värde, A1-A3 typiskt                A1-A3 typical value, A1-A3 Typical
//	A1-A3 conservative  Klimatpåverkan A1-A3 konservativt värde,          Climate impact A1-A3 conservative value,
//	                    A1-A3 konservativt värde, A1-A3 konservativt      A1-A3 conservative value, A1-A3 Conservative
//	A4                  A4, Klimatpåverkan A4                             Climate impact A4
//	A5.1                A5.1, Klimatpåverkan A5.1                         Climate impact A5.1
//	category            Kategori, Produktkategori                         Category, Product category
//	category code       Kategori-ID, Kategorikod                          Category ID, Category code
//	GWP unit            Enhet för klimatpåverkan                          Unit for climate impact, Climate impact unit
//	declared unit       Deklarerad enhet, Enhet                           Declared unit, Unit
//	waste factor        Avfallsfaktor                                     Waste factor
//	synonyms            Synonymer                                         Synonyms
//	conversion factor   Omräkningsfaktor                                  Conversion factor
//	conversion unit     Enhet omräkningsfaktor, Omräkningsfaktor enhet    Conversion unit, Conversion factor unit
//	version             Version                                           Version
//	description         Beskrivning                                       Description
//
// Besides these, any header holding "A1-A3" with "typ" or "konserv"/"conserv"
// names the typical or conservative column.
//
// No real workbook of the publisher is reachable from this project's
// machines, so the headers above are the documented and likely names, not a
// verified copy of the publisher's sheet. The tests build workbooks with
// excelize from the real JSON exports (boverkettest.WorkbookFromExport) and
// check that they read back to the JSON mapping's values. A workbook carries
// no category tree, so CategoryCode is empty unless a category-code column
// exists; service life, transports, biogenic carbon and the conservative
// factor are not read from workbooks. The release version is the highest
// Version cell (empty without a Version column).
package boverket
