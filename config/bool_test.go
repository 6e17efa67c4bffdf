package config

import (
	"io"
	"strings"
	"testing"
)

// TestBooleanFlags: boolean settings are real boolean flags: -boot-ingest
// alone means true, -boot-ingest=false means false, the flag wins over the
// environment, and the environment still works without the flag.
func TestBooleanFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want bool
	}{
		{"default", nil, nil, true},
		{"bare flag", []string{"-boot-ingest"}, map[string]string{"SERVICE_BOOT_INGEST": "false"}, true},
		{"double dash", []string{"--boot-ingest=false"}, nil, false},
		{"flag false", []string{"-boot-ingest=false"}, map[string]string{"SERVICE_BOOT_INGEST": "true"}, false},
		{"env false", nil, map[string]string{"SERVICE_BOOT_INGEST": "false"}, false},
		{"env 0", nil, map[string]string{"SERVICE_BOOT_INGEST": "0"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.args, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if c.BootIngest != tc.want {
				t.Errorf("BootIngest = %v, want %v", c.BootIngest, tc.want)
			}
		})
	}
	// A bare boolean flag followed by another flag keeps both.
	c, err := Load([]string{"-keep-answers=false", "-mcp-allow-any-host", "-addr=127.0.0.1:9"}, func(string) (string, bool) { return "", false }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.KeepAnswers || !c.MCPAllowAnyHost || c.Addr != "127.0.0.1:9" {
		t.Errorf("got keep-answers %v, mcp-allow-any-host %v, addr %s", c.KeepAnswers, c.MCPAllowAnyHost, c.Addr)
	}
	// A bad value names the flag.
	_, err = Load([]string{"-boot-ingest=maybe"}, func(string) (string, bool) { return "", false }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-boot-ingest") || !strings.Contains(err.Error(), "maybe") {
		t.Errorf("error = %v, want one naming -boot-ingest and maybe", err)
	}
	// Only the boolean settings are boolean flags.
	for _, s := range settings {
		isBool := s.isBool()
		if want := s.def == "true" || s.def == "false"; isBool != want {
			t.Errorf("%s: boolean flag %v, want %v", s.flag, isBool, want)
		}
	}
}
