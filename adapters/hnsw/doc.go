// Package hnsw is an in-memory approximate nearest-neighbour index of unit
// vectors (HNSW: Malkov & Yashunin, "Efficient and robust approximate
// nearest neighbor search using Hierarchical Navigable Small World
// graphs"). Scores are dot products, so cosines for L2-normalised vectors
// (to about 0.001: the stored vectors are rounded to int8, see below).
// It is written here, standard library only, because
// github.com/coder/hnsw reached recall@10 ≈ 0.04 and panicked on delete and
// re-add.
//
// # Choices
//
//   - The graph is the paper's, as hnswlib builds it: M links per node on the
//     upper layers and 2M on layer 0, levels drawn with multiplier 1/ln M,
//     insertion with a beam of EfConstruction, links chosen by the neighbour
//     heuristic (Algorithm 4). A neighbour whose list is full prunes it with
//     the same heuristic applied incrementally (see addLink).
//   - Below ExactBelow live vectors Search is Exact: scanning is then as fast
//     and exact. The catalogs hold a few thousand vectors, so today most
//     searches are exact scans.
//   - Equal scores are ordered by id, in Search and Exact alike, and both use
//     the same dot product bit for bit, so Exact is a true oracle.
//   - Locking, as hnswlib's parallel build: searches, inserts and deletes
//     all share one RWMutex's read lock; only growing the arrays and each
//     step of a vacuum take the write lock. An insert searches the graph
//     while others link theirs: link lists are written under one of 1,024
//     striped mutexes (one list at a time, so no lock order) and read with
//     atomic loads, which cost a search nothing on amd64. A reader racing a
//     rewrite may see some old and some new links, all valid nodes; the
//     new node's own lists are written before any link to it, and it is
//     pending (walked, never returned) until linked both ways. The top
//     level is raised under a mutex held for that insert only. AddBatch
//     runs GOMAXPROCS inserts at once; Add may be called from several
//     goroutines to the same effect. Writers never block searches except
//     while the arrays grow (AddBatch grows them once) and during vacuum
//     steps.
//   - Deletion: Delete leaves a tombstone. Tombstones still route searches,
//     so nothing is lost while they stay, but they are never returned nor
//     given new links. Once a tenth of the nodes are tombstones, a vacuum
//     (run by the Add or Delete that crossed the line, in write-locked steps
//     of 1 ms) relinks every node that pointed to one, from the tombstone's
//     own neighbours as FreshDiskANN does, and frees the slots for reuse.
//     Repairing each delete at once would need the in-links, which HNSW does
//     not keep; tombstones alone (hnswlib's markDelete) grow without bound
//     when an ingest replaces vectors, as every changed resource is deleted
//     and re-added. Repaired nodes get their links both ways and keep their
//     number of links: without that, deleting a whole region (a catalog
//     whose vectors sit together) cut recall next to it to 0.94; with it,
//     0.998. A vacuum costs about 140 µs per node (1.4 s at 10,000).
//   - A replaced vector becomes a tombstone when its successor starts to be
//     inserted, so for that insert (a millisecond at 100,000 vectors) the
//     id has no vector to find; an id never has two.
//   - Determinism: the same Seed and the same sequence of calls from one
//     goroutine give the same graph and answers (AddBatch with GOMAXPROCS
//     1 too); concurrent inserts give a graph that depends on scheduling.
//   - Vectors are kept as int8 codes with a scale each, after a fixed
//     random rotation (dot.go, rotate.go): a quarter of float32's memory
//     (0.33 GB at a million 320-dimension vectors instead of 1.28 GB), and
//     a graph search, which waits on memory, is faster for it. Queries stay
//     float32. The rounding costs recall against float32's exact answers
//     (about 0.01 at 100,000; docs/PERFORMANCE.md 12s), and Exact, the
//     tests' oracle, scans the same codes, so it is exact for the codes.
//
// # Measured
//
// go test -run '^$' -bench . -benchtime=200x ./adapters/hnsw/ on the 2-core
// AMD EPYC machine (load average about 4 from other work, so times vary by
// ±30% between runs), defaults M 16, EfConstruction 200, k = 10, 100
// queries, recall against Exact. "Skewed" vectors have coordinate variances
// 1/(j+1), concentrated in a few dozen directions like real text
// embeddings; "uniform" ones are uniform on the sphere.
//
//	set            ef   recall@10  p50      similarities/query  build (AddBatch, 2 cores)
//	skewed 10k     64   0.987      0.40 ms  1,043               6,757 vectors/s (3,010 with 1)
//	skewed 10k     128  0.999      0.50 ms  1,635
//	skewed 100k    64   0.889      0.83 ms  1,438               2,136 vectors/s (1,113 with 1)
//	skewed 100k    128  0.952      1.49 ms  2,444
//	skewed 100k    256  0.980      2.46 ms  4,146
//	uniform 10k    128  0.657      1.10 ms  2,881               834 vectors/s (Add, before)
//	uniform 10k    256  0.836      1.90 ms  4,720
//	Exact 10k / 100k: 2.9 ms / 34 ms
//
// The build rates are medians of 3 rounds on a quiet machine
// (test/hnswlib/compare.sh, BenchmarkBuild), where the p50s of the same
// graphs were 0.13 / 0.25 / 0.39 ms at 10k and 0.42 / 0.76 / 1.33 ms at
// 100k (ef 64 / 128 / 256). On the same vectors hnswlib-node builds 3,950
// and 1,342 vectors/s (its addPoint is single-threaded) and answers about
// 10% (3-22%) faster at equal recall at 100k (SSE and prefetching, which
// plain Go lacks); docs/PERFORMANCE.md 7a has the table.
//
// Graph and exact search cross over (BenchmarkCrossover) between 1,000 and
// 2,000 vectors on skewed data and between 2,000 and 3,000 on uniform data,
// hence DefaultExactBelow 2,000. DefaultEfSearch 128 gives ≥ 0.99 up to
// 20,000 skewed vectors; at 100,000, set EfSearch 256 for 0.98. With one
// goroutine replacing vectors non-stop (tombstones, vacuums), searches on
// 10,000 take 0.76 ms at the median and 2.4 ms at p99 (BenchmarkSearchWhileWriting).
//
// Uniform vectors are the worst case of any graph index: in 320 dimensions
// a point's neighbours are barely closer than the rest of the set, so the
// search must look at most of it. At 5,000 of them, recall@10 is 0.62 at
// ef 64, 0.81 at 128 and 0.995 at 512, by when it scores 90% of the set;
// Exact is faster there.
//
// The table above is of the float32 build. With the int8 codes (2026-11-28,
// BenchmarkBuild, two rounds interleaved with the float32 build on a busy
// machine; recall against float32's exact answers): at 100,000, 2,630
// vectors/s (float32 1,709–1,905), p50 483 µs at ef 128 for recall 0.941
// (float32 767–977 µs, 0.951), 967 µs at ef 256 for 0.967 (float32
// 1,302–1,687 µs, 0.979); at 10,000, recall 0.992 at ef 128 (float32
// 0.999). Graph search waits on memory, and a vector is now 320 bytes to
// fetch instead of 1,280.
package hnsw
