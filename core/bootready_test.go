package core

import (
	"errors"
	"testing"
)

// TestReadinessWaitsForTheBootIngest: with a boot ingest begun, readiness
// is false with "boot ingest running" even once every catalog is loaded;
// finished or failed, it is true and says which.
func TestReadinessWaitsForTheBootIngest(t *testing.T) {
	v := NewVisibility()
	if r := v.Readiness(); !r.Ready || r.BootIngest != "" || r.Reason != "" {
		t.Fatalf("no boot ingest, nothing loading: %+v", r)
	}
	v.BeginLoading(National)
	v.BeginBootIngest()
	if r := v.Readiness(); r.Ready || r.Reason != "loading the search index: national: reading the store; boot ingest running" {
		t.Fatalf("loading and booting: %+v", r)
	}
	v.MarkLoaded(National)
	if r := v.Readiness(); r.Ready || r.Reason != "boot ingest running" || r.BootIngest != BootIngestRunning {
		t.Fatalf("loaded, boot ingest running: %+v", r)
	}
	if err := v.Loaded(nil); err != nil {
		t.Fatalf("reads wait for the boot ingest: %v", err)
	}
	v.BootIngestDone(nil)
	if r := v.Readiness(); !r.Ready || r.Reason != "" || r.BootIngest != BootIngestFinished {
		t.Fatalf("boot ingest finished: %+v", r)
	}
	v.BeginBootIngest()
	v.BootIngestDone(errors.New("publisher down"))
	if r := v.Readiness(); !r.Ready || r.BootIngest != BootIngestFailed {
		t.Fatalf("boot ingest failed: %+v", r)
	}
}
