// Prints the table of compare.sh from the raw outputs in DIR: medians over
// the rounds of build rate, and of query p50 and recall@10 at each ef.
//   node summary.js DIR [BASE]
'use strict';
const fs = require('fs');
const path = require('path');
const [dir, base] = process.argv.slice(2);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

// rows[size][variant] = [{rate, ef: {64: {p50, recall}}}...], one per round
const rows = {};
const add = (size, variant, r) => ((rows[size] ||= {})[variant] ||= []).push(r);

for (const f of fs.readdirSync(dir).sort()) {
  let m = f.match(/^(ours|base)-(\w+)-(\d+)\.txt$/);
  if (m) {
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      const b = line.match(/^BenchmarkBuild\/(\w+)\/([\w-]+?)(-\d+)?\s+\d+\s+(.*)$/);
      if (!b) continue;
      const vals = {};
      const parts = b[4].trim().split(/\s+/);
      for (let i = 0; i + 1 < parts.length; i += 2) vals[parts[i + 1]] = Number(parts[i]);
      const r = { rate: vals['vectors/s'], ef: {} };
      for (const ef of [64, 128, 256]) r.ef[ef] = { p50: vals[`p50-µs-ef${ef}`], recall: vals[`recall-ef${ef}`] };
      const name = m[1] === 'ours' ? `ours ${b[2]}` : `${base || 'base'} ${b[2]}`;
      add(m[2], name, r);
    }
    continue;
  }
  m = f.match(/^hnswlib-(\w+)-(\d+)\.json$/);
  if (m) {
    const j = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    const r = { rate: j.vectorsPerSec, ef: {} };
    for (const [ef, v] of Object.entries(j.ef)) r.ef[ef] = { p50: v.p50us, recall: v.recall };
    add(m[1], 'hnswlib-node addPoint', r);
  }
}

const label = {
  'add-1': 'Add, 1 goroutine',
  'add-2': 'Add, 2 goroutines',
  batch: 'AddBatch, 2 goroutines',
};
const nameOf = (v) => v.replace(/ (add-1|add-2|batch)$/, (_, k) => ` ${label[k]}`);
console.log('| set | variant | rounds | build vectors/s (median; each) | query p50 µs ef 64 / 128 / 256 | recall@10 ef 64 / 128 / 256 |');
console.log('|---|---|---|---|---|---|');
for (const size of Object.keys(rows)) {
  for (const [variant, rs] of Object.entries(rows[size])) {
    const rate = median(rs.map((r) => r.rate));
    const each = rs.map((r) => Math.round(r.rate)).join(' · ');
    const p50 = [64, 128, 256].map((ef) => Math.round(median(rs.map((r) => r.ef[ef].p50)))).join(' / ');
    const rec = [64, 128, 256].map((ef) => median(rs.map((r) => r.ef[ef].recall)).toFixed(3)).join(' / ');
    console.log(`| ${size} | ${nameOf(variant)} | ${rs.length} | ${Math.round(rate)} (${each}) | ${p50} | ${rec} |`);
  }
}
