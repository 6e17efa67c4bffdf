package app

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/filereader"
	"github.com/climatesearch/climatesearch/config"
)

// TestFileLimitsFollowMaxRows: SERVICE_MAX_ROWS above the default takes a
// file of that many rows of ten columns (the cells' limit grows with it),
// and refuses one row more.
func TestFileLimitsFollowMaxRows(t *testing.T) {
	const rows = 300_000 // header included; 3,000,000 cells, over the default 2,000,000
	var b bytes.Buffer
	b.WriteString("id,name,c3,c4,c5,c6,c7,c8,c9,c10\n")
	for i := 1; i < rows; i++ {
		fmt.Fprintf(&b, "%d,n%d,1,2,3,4,5,6,7,8\n", i, i)
	}
	cfg := config.Config{MaxUpload: 64 << 20, MaxRows: rows}
	tab, err := filereader.Parser{Limits: fileLimits(cfg)}.Parse("big.csv", b.Bytes(), "")
	if err != nil || tab.Rows != rows-1 {
		t.Fatalf("%d rows: %v", tab.Rows, err)
	}
	cfg.MaxRows = rows - 1
	_, err = filereader.Parser{Limits: fileLimits(cfg)}.Parse("big.csv", b.Bytes(), "")
	if err == nil || !strings.Contains(err.Error(), "rows") {
		t.Fatalf("one row over: %v", err)
	}
}
