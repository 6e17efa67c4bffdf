package boverkettest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/climatesearch/climatesearch/adapters/boverket/boverkettest"
)

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestServer(t *testing.T) {
	s := boverkettest.NewServer(t)
	s.SetJSON("sv", []byte(`{"sv":1}`))
	s.SetExcel("en-GB", []byte("xlsx"))
	if code, b := get(t, s.URL+"/api/Klimat/v2/GetAllResources/latest/sv/json"); code != 200 || string(b) != `{"sv":1}` {
		t.Errorf("sv export: %d %q", code, b)
	}
	if code, _ := get(t, s.URL+"/api/Klimat/v2/GetAllResources/02.07.000/en/json"); code != 404 {
		t.Errorf("unset en export: %d", code)
	}
	if code, b := get(t, s.ExcelURL("en")); code != 200 || string(b) != "xlsx" {
		t.Errorf("en workbook: %d %q", code, b)
	}
	s.FailJSON(503)
	if code, _ := get(t, s.URL+"/api/Klimat/v2/GetAllResources/latest/sv/json"); code != 503 {
		t.Errorf("FailJSON: %d", code)
	}
	s.FailJSON(0)
	s.FailExcel(500)
	if code, _ := get(t, s.ExcelURL("en")); code != 500 {
		t.Errorf("FailExcel: %d", code)
	}
	if code, _ := get(t, s.URL+"/api/Klimat/v2/GetAllResources/latest/sv/json"); code != 200 {
		t.Errorf("FailJSON(0) did not restore: %d", code)
	}
	if n := s.Requests(boverkettest.JSONPathPrefix); n != 4 {
		t.Errorf("%d export requests, want 4", n)
	}
	if n := s.Requests(boverkettest.ExcelPathPrefix); n != 2 {
		t.Errorf("%d workbook requests, want 2", n)
	}
	if v := s.Versions(); !reflect.DeepEqual(v, []string{"latest", "02.07.000", "latest", "latest"}) {
		t.Errorf("versions %v", v)
	}
}

func TestServerHangEndsWithTheClient(t *testing.T) {
	s := boverkettest.NewServer(t)
	s.Hang(true)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.ExcelURL("sv"), nil)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("a hanging server answered")
	}
	s.Close() // must not block on the hanging handler
}

func TestMutateExportRoundTrip(t *testing.T) {
	orig := boverkettest.LoadExport(t, boverkettest.Export0206SV)
	same := boverkettest.MutateExport(t, orig, nil, "")
	if !reflect.DeepEqual(decode(t, orig), decode(t, same)) {
		t.Error("an identity mutation changed the export")
	}
	bumped := decode(t, boverkettest.MutateExport(t, orig, func(rs []map[string]any) []map[string]any { return rs[1:] }, "02.06.001"))
	res := bumped["Resources"].([]any)
	if bumped["Version"] != "02.06.001" || len(res) != 227 || res[0].(map[string]any)["Version"] != "02.06.001" {
		t.Errorf("version %v, %d resources", bumped["Version"], len(res))
	}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}
