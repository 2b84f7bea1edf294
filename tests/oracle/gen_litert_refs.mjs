// Generate the LiteRT.js reference outputs that tests/unit/test_tfl_oracle.c
// compares ergon's interpreter against:
//   node tests/oracle/gen_litert_refs.mjs [MODELS_DIR] > tests/oracle/litert_refs.txt
// One line per (model, input): "<model> <input-kind> <n-bytes> <hex bytes>".
// Needs `npm install @litertjs/core` in the repository root (not at test time).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadLiteRt, compile, makeInput, INPUT_KINDS } from './litert.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = process.argv[2] ?? path.join(root, '..', 'shared', 'fixtures', 'models');
const MODELS = ['ad01_int8.tflite', 'kws_ref_model.tflite', 'pretrainedResnet_quant.tflite',
                'vww_96_int8.tflite'];
const rt = await loadLiteRt(root);
const pkg = JSON.parse(fs.readFileSync(
  path.join(root, 'node_modules', '@litertjs', 'core', 'package.json'), 'utf8'));
process.stdout.write(`# LiteRT.js ${pkg.version} (@litertjs/core), accelerator wasm, 1 thread\n`);
for (const name of MODELS) {
  const c = await compile(rt, fs.readFileSync(path.join(dir, name)));
  for (const kind of INPUT_KINDS) {
    const out = await c.run(makeInput(kind, c.inBytes));
    process.stdout.write(`${name} ${kind} ${out.length} ${Buffer.from(out).toString('hex')}\n`);
  }
}
