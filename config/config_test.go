package config

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaults(t *testing.T) {
	c, err := Load(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.DataDir != "./data" || c.UpstreamURL != DefaultUpstreamURL || c.OriginBase != DefaultOriginBase ||
		c.IngestInterval != 168*time.Hour || !c.BootIngest || c.AdminToken != "" || c.UpstreamVer != "latest" || c.StartTimeout != 15*time.Second || c.MemoryLimit != MemoryAuto {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestFlagsWinOverEnvironment(t *testing.T) {
	c, err := Load([]string{"-addr", "127.0.0.1:9999", "-ingest-interval=0"}, env(map[string]string{
		"SERVICE_ADDR": "0.0.0.0:1", "SERVICE_INGEST_INTERVAL": "24h", "SERVICE_ADMIN_TOKEN": "t",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9999" || c.IngestInterval != 0 || c.AdminToken != "t" {
		t.Fatalf("%+v", c)
	}
}

func TestInvalidConfigurationIsOneClearLine(t *testing.T) {
	cases := map[string]struct {
		args []string
		env  map[string]string
		want string
	}{
		"addr":      {nil, map[string]string{"SERVICE_ADDR": "localhost"}, "SERVICE_ADDR"},
		"port":      {nil, map[string]string{"SERVICE_ADDR": "127.0.0.1:99999"}, "port"},
		"interval":  {nil, map[string]string{"SERVICE_INGEST_INTERVAL": "weekly"}, "SERVICE_INGEST_INTERVAL"},
		"negative":  {[]string{"-ingest-interval=-1h"}, nil, "-ingest-interval"},
		"tiny":      {nil, map[string]string{"SERVICE_INGEST_INTERVAL": "5s"}, "at least 1m"},
		"url":       {nil, map[string]string{"SERVICE_UPSTREAM_URL": "ftp://x"}, "SERVICE_UPSTREAM_URL"},
		"origin":    {nil, map[string]string{"SERVICE_ORIGIN_BASE": "klimatdatabasen"}, "SERVICE_ORIGIN_BASE"},
		"log":       {nil, map[string]string{"SERVICE_LOG_FORMAT": "xml"}, "SERVICE_LOG_FORMAT"},
		"bool":      {nil, map[string]string{"SERVICE_BOOT_INGEST": "sometimes"}, "SERVICE_BOOT_INGEST"},
		"start":     {nil, map[string]string{"SERVICE_START_TIMEOUT": "0"}, "SERVICE_START_TIMEOUT"},
		"startneg":  {[]string{"-start-timeout=-1s"}, nil, "-start-timeout"},
		"startfmt":  {nil, map[string]string{"SERVICE_START_TIMEOUT": "soon"}, "SERVICE_START_TIMEOUT"},
		"flag":      {[]string{"-colour"}, nil, "colour"},
		"arg":       {[]string{"serve"}, nil, "unexpected argument"},
		"store":     {nil, map[string]string{"SERVICE_STORE": "mysql://u:hunter2@db/x"}, "SERVICE_STORE"},
		"storehost": {[]string{"-store=postgres:///x"}, nil, "no host"},
		"lease":     {nil, map[string]string{"SERVICE_WEBHOOK_TIMEOUT": "1m"}, "SERVICE_WEBHOOK_LEASE"},
		"memory":    {nil, map[string]string{"SERVICE_MEMORY_LIMIT": "lots"}, "SERVICE_MEMORY_LIMIT"},
		"rows":      {nil, map[string]string{"SERVICE_MAX_ROWS": "1"}, "SERVICE_MAX_ROWS"},
		"rowsexcel": {[]string{"-max-rows=2000000"}, nil, "-max-rows"},
		"memoryneg": {[]string{"-memory-limit=-1GiB"}, nil, "-memory-limit"},
	}
	for name, tc := range cases {
		_, err := Load(tc.args, env(tc.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v (want one line containing %q)", name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the store's password: %v", name, err)
		}
	}
}

// TestMemoryLimits: auto by default, off, or a size.
func TestMemoryLimits(t *testing.T) {
	for v, want := range map[string]int64{"auto": MemoryAuto, "off": 0, "1536MiB": 1536 << 20, "2GiB": 2 << 30} {
		c, err := Load(nil, env(map[string]string{"SERVICE_MEMORY_LIMIT": v}), io.Discard)
		if err != nil || c.MemoryLimit != want {
			t.Errorf("%s: %d, %v (want %d)", v, c.MemoryLimit, err, want)
		}
	}
}

// TestStoreURLs: badger by default, PostgreSQL by URL (with a socket
// directory too).
func TestStoreURLs(t *testing.T) {
	for _, u := range []string{"", "postgres://cs:pw@127.0.0.1:5432/cs", "postgresql://cs@db.internal/cs?sslmode=require", "postgres:///cs?host=/run/postgresql"} {
		c, err := Load(nil, env(map[string]string{"SERVICE_STORE": u}), io.Discard)
		if err != nil {
			t.Errorf("%q: %v", u, err)
			continue
		}
		if c.SharedStore() != (u != "") {
			t.Errorf("%q: SharedStore %v", u, c.SharedStore())
		}
	}
}

// TestREADMEListsEverySetting keeps the configuration table true.
func TestREADMEListsEverySetting(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Table() {
		row := "| `" + r.Env + "` | `" + r.Flag + "` |"
		if !strings.Contains(string(b), row) {
			t.Errorf("README configuration table lacks %s (%s)", r.Env, r.Flag)
		}
	}
}
