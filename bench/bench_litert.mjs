// LiteRT.js (XNNPack, one thread) latency per model on the same input as
// bench_tfl_models (xs1): median and minimum ms per inference over N runs.
//   node bench/bench_litert.mjs N MODEL.tflite...
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadLiteRt, compile, makeInput } from '../tests/oracle/litert.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [n, ...models] = process.argv.slice(2);
const rt = await loadLiteRt(root);
for (const m of models) {
  const c = await compile(rt, fs.readFileSync(m));
  const input = makeInput('xs1', c.inBytes);
  await c.run(input);
  const t = [];
  for (let k = 0; k < Number(n); k++) {
    const t0 = process.hrtime.bigint();
    await c.run(input);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  t.sort((a, b) => a - b);
  console.log(`litert ${path.basename(m).padEnd(32)} n=${n} median_ms=${t[t.length >> 1].toFixed(4)} min_ms=${t[0].toFixed(4)}`);
}
