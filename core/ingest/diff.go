package ingest

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/climatesearch/climatesearch/core"
	"github.com/climatesearch/climatesearch/core/parallel"
	"github.com/climatesearch/climatesearch/ports"
)

// A feed hands the resources of a release to the diff in chunks, in the
// release's order: a release's own slice (chunksOf), or a file's rows
// mapped as they are read (Files.IngestFile), so that a million-row file
// is never held as a million resources before its diff. A feed that fails
// (a file with problems) makes the apply fail and changes nothing: the
// apply writes once the whole feed is diffed, or, chunk by chunk
// (applyChunked), in a change the store rolls back.
type feed func(add func([]core.Resource) error) error

// chunksOf feeds rs in chunks of at most n.
func chunksOf(rs []core.Resource, n int) feed {
	return func(add func([]core.Resource) error) error {
		for len(rs) > 0 {
			k := min(len(rs), n)
			if err := add(rs[:k:k]); err != nil {
				return err
			}
			rs = rs[k:]
		}
		return nil
	}
}

// pulled is a feed taken one chunk at a time (iter.Pull), so an apply can
// look at the first chunks before it decides how to write them.
type pulled struct {
	next func() ([]core.Resource, bool)
	stop func()
	err  error // the feed's, once next has returned false
}

var errPullStopped = errors.New("ingest: feed no longer read")

func pull(in feed) *pulled {
	p := &pulled{}
	p.next, p.stop = iter.Pull(func(yield func([]core.Resource) bool) {
		p.err = in(func(chunk []core.Resource) error {
			if !yield(chunk) {
				return errPullStopped
			}
			return nil
		})
	})
	return p
}

// addRest diffs every chunk left in p.
func (d *diff) addRest(ctx context.Context, p *pulled) error {
	for {
		chunk, ok := p.next()
		if !ok {
			return p.err
		}
		if err := d.add(ctx, chunk); err != nil {
			return err
		}
	}
}

// take hands over what the diff has to write so far: the puts and the
// indexes in them of the new and changed resources.
func (d *diff) take() (puts []ports.StoredResource, changed []int) {
	puts, changed = d.puts, d.changed
	d.puts, d.changed = nil, nil
	return puts, changed
}

// diff compares a release with what the store holds, chunk by chunk, and
// collects what the apply writes (puts) and reports (res, changes).
type diff struct {
	s      *Service
	cat    core.CatalogID
	source string
	dryRun bool
	owned  bool // chunks may be moved from (see applyMode), else cloned
	// versioned: the first resource was seen (see add); res.Version is
	// the release's version.
	versioned bool

	// whole is the stored catalog, read once for a complete release (what
	// it lacks is withdrawn); a partial one (a batch, a file) reads each
	// chunk's own ids, so it costs its size, not the catalog's, and never
	// holds a large file's stored twins all at once.
	whole map[string]ports.StoredResource

	res      core.IngestResult
	added    int // new resources
	revived  int // withdrawn ones back
	puts     []ports.StoredResource
	changes  []core.ResourceChange
	changed  []int // indexes in puts of the new and changed resources
	toRemove []core.Key
	seen     map[string]bool
}

func (s *Service) newDiff(ctx context.Context, rel core.Release, size int, dryRun, owned bool) (*diff, error) {
	d := &diff{s: s, cat: rel.Catalog, source: core.CatalogInfo(rel.Catalog).Source, dryRun: dryRun, owned: owned,
		seen: make(map[string]bool, max(size, 0))}
	if !dryRun {
		// Sized once for a release of known size: grown by appends, the
		// puts of a batch of 10,000 allocated five times their size.
		d.puts = make([]ports.StoredResource, 0, max(size, 0))
	}
	d.res = core.IngestResult{Catalog: rel.Catalog, Origin: rel.Origin, Version: rel.Version, Rejected: rel.Rejected, Seen: rel.Rejected}
	if rel.Complete {
		d.whole = map[string]ports.StoredResource{}
		err := s.store.Scan(ctx, rel.Catalog, func(sr ports.StoredResource) error {
			d.whole[sr.Resource.ID] = sr
			return nil
		})
		if err != nil {
			return nil, core.Unavailablef(err, "store unavailable")
		}
	}
	return d, nil
}

// existing returns the stored resources of a chunk's ids.
func (d *diff) existing(ctx context.Context, chunk []core.Resource) (map[string]ports.StoredResource, error) {
	if d.whole != nil {
		return d.whole, nil
	}
	keys := make([]core.Key, 0, len(chunk))
	for _, r := range chunk {
		keys = append(keys, core.Key{Catalog: d.cat, ID: core.CleanText(r.ID)})
	}
	srs, err := d.s.store.GetMany(ctx, keys)
	if err != nil {
		return nil, core.Unavailablef(err, "store unavailable")
	}
	out := make(map[string]ports.StoredResource, len(srs))
	for _, sr := range srs {
		out[sr.Resource.ID] = sr
	}
	return out, nil
}

// normalized returns a chunk's resources as they are stored: in the
// diff's catalog, normalised, with ids of their own. A release the diff
// owns is normalised in place, another's copied. This and the hashes run
// on every core: the diff holds the catalog's write lock and the vectors
// wait for it, so one core would otherwise idle.
func (d *diff) normalized(chunk []core.Resource) []core.Resource {
	rs := chunk
	if !d.owned {
		rs = make([]core.Resource, len(chunk))
	}
	parallel.Each(len(chunk), func(i int) {
		r := &rs[i]
		if !d.owned {
			*r = chunk[i].Clone()
		}
		r.Catalog, r.Source, r.Withdrawn = d.cat, d.source, false
		r.Name, r.Description = "", ""
		r.Normalize()
	})
	// The ids outlive the chunk (seen, the vectors' queue): their own
	// bytes, not slices of a file's whole rows, which they would keep alive
	// (70 MB of a million-row file's lines), packed in one string.
	core.Pack(rs, func(r *core.Resource) *string { return &r.ID })
	return rs
}

// add diffs one chunk.
func (d *diff) add(ctx context.Context, chunk []core.Resource) error {
	existing, err := d.existing(ctx, chunk)
	if err != nil {
		return err
	}
	res := &d.res
	res.Seen += len(chunk)
	rs := d.normalized(chunk)
	taken := make([]bool, len(rs))
	var changed []string // the ids of the new and changed resources, for res.Changed
	for i := range rs {
		r := &rs[i]
		if !d.versioned {
			// A release without a version takes its first resource's (a
			// file's mapped version column, a batch's items).
			d.versioned = true
			if res.Version == "" {
				res.Version = r.Version
			}
		}
		if r.ID == "" || d.seen[r.ID] {
			res.Rejected++ // sources drop these already; a duplicate keeps its first row
			*r = core.Resource{}
			continue
		}
		d.seen[r.ID] = true
		taken[i] = true
		if r.Version == "" {
			r.Version = res.Version
		}
		old, had := existing[r.ID]
		if r.CategoryCode == "" && had && old.Resource.Category == r.Category {
			r.CategoryCode = old.Resource.CategoryCode // the workbooks carry no codes
		}
		r.Origin = d.s.originOf(r)
	}
	// A JSON encoding and a SHA-256 each: most of a batch's diff, on every
	// core (see normalized).
	hashes := make([]string, len(rs))
	parallel.Each(len(rs), func(i int) {
		if taken[i] {
			hashes[i] = core.ContentHash(&rs[i])
		}
	})
	for i := range rs {
		if !taken[i] {
			continue
		}
		r, hash := &rs[i], hashes[i]
		old, had := existing[r.ID]
		switch {
		case !had || old.Hash != hash || old.Resource.Withdrawn:
			res.Upserted++
			switch {
			case !had:
				d.added++
			case old.Resource.Withdrawn:
				d.revived++
			}
			changed = append(changed, r.ID)
			d.changed = append(d.changed, len(d.puts)) // r is put below
			// Field names cost two encodings; a dry run lists every
			// change, an event only the first MaxEventChanges.
			if d.dryRun || len(d.changes) < core.MaxEventChanges {
				ch := core.ResourceChange{Ref: r.Ref(), New: !had}
				if had {
					was := old.Resource // only here on the heap: a few per change
					ch.Fields = core.ChangedFields(&was, r)
					if old.Resource.Withdrawn {
						ch.Fields = append(ch.Fields, "withdrawn")
					}
				}
				d.changes = append(d.changes, ch)
			}
		default:
			res.Unchanged++
			if sameStored(old.Resource, *r) {
				*r = core.Resource{}
				continue // nothing to write
			}
		}
		// A dry run writes nothing: the resource goes now, not with the
		// whole release (a million-row file's dry run held them all).
		if !d.dryRun {
			d.puts = append(d.puts, ports.StoredResource{Resource: *r, Hash: hash})
		}
		// Moved, not copied: the release and the write never hold a
		// large file's resources twice.
		*r = core.Resource{}
	}
	// The answer lists every changed ref, a million for a million-row file.
	res.Changed = append(res.Changed, core.Refs(d.cat, changed)...)
	return nil
}

// result is the diff's answer for an ingest that started and finished then.
func (d *diff) result(started, finished time.Time) core.IngestResult {
	res := d.res
	res.Skipped = res.Unchanged + res.Rejected
	res.StartedAt, res.FinishedAt = started.UTC(), finished.UTC()
	return res
}

// counted returns the catalog's counts after the diff's change, given those
// before it.
func (d *diff) counted(before core.CatalogCounts) *core.CatalogCounts {
	return &core.CatalogCounts{
		Live:      before.Live + d.added + d.revived - d.res.Withdrawn,
		Withdrawn: before.Withdrawn - d.revived + d.res.Withdrawn,
	}
}

// withdrawMissing withdraws, for a complete release, every stored resource
// it lacks; it is called once the whole release has been added.
func (d *diff) withdrawMissing() {
	for id, old := range d.whole {
		if d.seen[id] || old.Resource.Withdrawn {
			continue
		}
		w := old
		w.Resource.Withdrawn = true
		d.puts = append(d.puts, w)
		d.toRemove = append(d.toRemove, w.Resource.Key())
		d.res.Withdrawn++
		if d.dryRun || len(d.changes) < core.MaxEventChanges {
			d.changes = append(d.changes, core.ResourceChange{Ref: w.Resource.Ref(), Fields: []string{"withdrawn"}})
		}
	}
	d.whole, d.seen = nil, nil
}
