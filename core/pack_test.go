package core

import (
	"testing"
	"unsafe"
)

// TestPackCopiesIntoOneString: packed ids keep their values, no longer
// point into the text they were cut from (which they would keep alive),
// and lie one after the other in one allocation.
func TestPackCopiesIntoOneString(t *testing.T) {
	row := "#T000001;Produkt 1;#T000002;Produkt 2;;#T000003"
	ids := []string{row[0:8], row[19:27], "", row[len(row)-8:]}
	want := []string{"#T000001", "#T000002", "", "#T000003"}
	Pack(ids, func(s *string) *string { return s })
	start := uintptr(unsafe.Pointer(unsafe.StringData(row)))
	var next uintptr
	for i, id := range ids {
		if id != want[i] {
			t.Fatalf("id %d is %q after packing, want %q", i, id, want[i])
		}
		if id == "" {
			continue
		}
		at := uintptr(unsafe.Pointer(unsafe.StringData(id)))
		if at >= start && at < start+uintptr(len(row)) {
			t.Errorf("%q still points into the row", id)
		}
		if next != 0 && at != next {
			t.Errorf("%q is not next to the id before it", id)
		}
		next = at + uintptr(len(id))
	}
}

func TestRefsAreKeyStrings(t *testing.T) {
	ids := []string{"a", "", "sv-123", "#T000002"}
	refs := Refs("dkbr", ids)
	if len(refs) != len(ids) {
		t.Fatalf("%d refs for %d ids", len(refs), len(ids))
	}
	for i, id := range ids {
		if want := (Key{Catalog: "dkbr", ID: id}).String(); refs[i] != want {
			t.Errorf("ref %d is %q, want %q", i, refs[i], want)
		}
	}
}
