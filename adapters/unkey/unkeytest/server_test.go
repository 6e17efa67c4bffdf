package unkeytest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/adapters/unkey/unkeytest"
)

func post(t *testing.T, s *unkeytest.Server, auth, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+unkeytest.VerifyPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("answer %q is not JSON: %v", raw, err)
	}
	return resp.StatusCode, out
}

// The stand-in's wire format, read without the adapter.
func TestWireFormat(t *testing.T) {
	s := unkeytest.NewServer(t, "root_ok")
	s.AddRootKey("root_weak", false)
	s.AddKey("sk_1", unkeytest.Key{Name: "acme", KeyID: "key_1"})
	s.AddKey("sk_2", unkeytest.Key{Code: unkeytest.RateLimited, Ratelimits: []unkeytest.Ratelimit{{Name: "requests", Exceeded: true, Reset: 1764000000000}}})

	code, out := post(t, s, "Bearer root_ok", `{"key":"sk_1"}`)
	data, _ := out["data"].(map[string]any)
	meta, _ := out["meta"].(map[string]any)
	if code != 200 || data["valid"] != true || data["code"] != "VALID" || data["name"] != "acme" || data["keyId"] != "key_1" || meta["requestId"] == "" {
		t.Errorf("valid key: %d %v", code, out)
	}
	code, out = post(t, s, "Bearer root_ok", `{"key":"sk_2"}`)
	data, _ = out["data"].(map[string]any)
	rls, _ := data["ratelimits"].([]any)
	if code != 200 || data["valid"] != false || data["code"] != "RATE_LIMITED" || len(rls) != 1 || rls[0].(map[string]any)["reset"] != float64(1764000000000) {
		t.Errorf("rate-limited key: %d %v", code, out)
	}
	code, out = post(t, s, "Bearer root_ok", `{"key":"sk_unknown"}`)
	data, _ = out["data"].(map[string]any)
	if code != 200 || data["valid"] != false || data["code"] != "NOT_FOUND" || data["keyId"] != nil {
		t.Errorf("unknown key: %d %v", code, out)
	}

	for _, tc := range []struct {
		auth, body string
		status     int
	}{
		{"", `{"key":"sk_1"}`, 400},
		{"Bearer root_wrong", `{"key":"sk_1"}`, 401},
		{"Bearer root_weak", `{"key":"sk_1"}`, 403},
		{"Bearer root_ok", `{}`, 400},
		{"Bearer root_ok", `{"key":""}`, 400},
	} {
		code, out := post(t, s, tc.auth, tc.body)
		e, _ := out["error"].(map[string]any)
		if code != tc.status || e == nil || e["status"] != float64(tc.status) || e["detail"] == "" {
			t.Errorf("%q %s: %d %v, want %d with an error envelope", tc.auth, tc.body, code, out, tc.status)
		}
	}
	if s.Calls() != 8 {
		t.Errorf("%d calls, want 8", s.Calls())
	}
	s.Fail(503)
	if code, out := post(t, s, "Bearer root_ok", `{"key":"sk_1"}`); code != 503 || out["error"] == nil {
		t.Errorf("Fail(503): %d %v", code, out)
	}
}
