package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/climatesearch/climatesearch/core"
)

// TestVisibilityLoading: reads of a loading catalog answer KindLoading with
// the progress or the failure, other catalogs are served, readiness lists
// what is left, and each catalog loaded moves the generation.
func TestVisibilityLoading(t *testing.T) {
	v := core.NewVisibility()
	if !v.Readiness().Ready || v.Loaded(nil) != nil {
		t.Fatal("a new gate is not ready")
	}
	v.BeginLoading(core.National, core.DKBR)
	v.SetProgress(core.National, 10000, 30000)
	err := v.Read([]core.CatalogID{core.National}, func() error { t.Error("read ran while loading"); return nil })
	if core.KindOf(err) != core.KindLoading || !strings.Contains(err.Error(), "national: 10000 of 30000") {
		t.Errorf("read of a loading catalog: %v", err)
	}
	g := v.Generation()
	v.MarkLoaded(core.National)
	if v.Generation() == g {
		t.Error("loading a catalog did not move the generation")
	}
	ran := false
	if err := v.Read([]core.CatalogID{core.National}, func() error { ran = true; return nil }); err != nil || !ran {
		t.Errorf("read of a loaded catalog: %v, ran %v", err, ran)
	}
	v.MarkFailed(core.DKBR, errors.New("disk on fire"))
	r := v.Readiness()
	if r.Ready || len(r.Loading) != 1 || r.Loading[0].Error != "disk on fire" || !strings.Contains(r.Reason, "loading failed (disk on fire)") {
		t.Errorf("readiness after a failed load: %+v", r)
	}
	if err := v.Loaded(nil); core.KindOf(err) != core.KindLoading || !strings.Contains(err.Error(), "a restart loads it again") {
		t.Errorf("read of a failed catalog: %v", err)
	}
	gen := v.Generation()
	if err := v.Publish(func() error { return nil }); err != nil || v.Generation() != gen+1 {
		t.Errorf("publish: %v, generation %d -> %d", err, gen, v.Generation())
	}
}
