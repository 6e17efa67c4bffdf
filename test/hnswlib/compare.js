// Builds an hnswlib-node index on the vectors adapters/hnsw exports
// (TestExportVectors) and measures what BenchmarkBuild measures on ours:
// build rate, then query p50 (5 rounds of the queries, one at a time) and
// recall@10 against the exact answers at each efSearch. Prints one JSON line.
//
//   node compare.js DIR SET [M] [EF_CONSTRUCTION] [EF_SEARCH,...]
//
// 'ip' space: distance 1 - dot, the vectors are already normalised, as ours.
'use strict';
const fs = require('fs');
const path = require('path');
const { HierarchicalNSW } = require('hnswlib-node');

const [dir, set, mArg, efcArg, efsArg] = process.argv.slice(2);
if (!dir || !set) {
  console.error('usage: node compare.js DIR SET [M] [EF_CONSTRUCTION] [EF_SEARCH,...]');
  process.exit(2);
}
const M = Number(mArg || 16);
const efC = Number(efcArg || 200);
const efs = (efsArg || '64,128,256').split(',').map(Number);

const meta = JSON.parse(fs.readFileSync(path.join(dir, `${set}.json`)));
const rows = (file) => {
  const buf = fs.readFileSync(path.join(dir, file));
  const f = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  const out = [];
  for (let i = 0; i < f.length; i += meta.dim) out.push(Array.from(f.subarray(i, i + meta.dim)));
  return out;
};
const base = rows(`${set}.base.f32`);
const queries = rows(`${set}.query.f32`);
const tbuf = fs.readFileSync(path.join(dir, `${set}.truth.u32`));
const truth = new Uint32Array(tbuf.buffer, tbuf.byteOffset, tbuf.byteLength / 4);

const index = new HierarchicalNSW('ip', meta.dim);
index.initIndex({ maxElements: meta.n, m: M, efConstruction: efC, randomSeed: 100 });
let t0 = process.hrtime.bigint();
for (let i = 0; i < base.length; i++) index.addPoint(base[i], i);
const buildSec = Number(process.hrtime.bigint() - t0) / 1e9;

const out = { set, n: meta.n, M, efConstruction: efC, vectorsPerSec: Math.round(meta.n / buildSec), ef: {} };
for (const ef of efs) {
  index.setEf(ef);
  const lat = [];
  let hit = 0;
  for (let round = 0; round < 5; round++) {
    queries.forEach((q, qi) => {
      const s = process.hrtime.bigint();
      const r = index.searchKnn(q, meta.k);
      lat.push(Number(process.hrtime.bigint() - s) / 1e3);
      if (round === 0) {
        const want = new Set(truth.subarray(qi * meta.k, (qi + 1) * meta.k));
        for (const n of r.neighbors) if (want.has(n)) hit++;
      }
    });
  }
  lat.sort((a, b) => a - b);
  out.ef[ef] = { p50us: Math.round(lat[lat.length >> 1]), recall: hit / (meta.k * queries.length) };
}
console.log(JSON.stringify(out));
