// Generate the LiteRT.js reference outputs that tests/unit/test_tfl_oracle.c
// compares ergon's interpreter against:
//   node tests/oracle/gen_litert_refs.mjs [MODELS_DIR] > tests/oracle/litert_refs.txt
// One line per (model, input): "<model> <input-kind> <n-bytes> <hex bytes>";
// "<model>@<t>" lines hold tensor t (the logits feeding the final SOFTMAX),
// made by re-pointing the subgraph's output at it.
// Needs `npm install @litertjs/core` in the repository root (not at test time).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadLiteRt, compile, makeInput, INPUT_KINDS, withOutput } from './litert.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = process.argv[2] ?? path.join(root, '..', 'shared', 'fixtures', 'models');
// The tensor feeding each model's final SOFTMAX (`ergon model info --json`).
const LOGITS = { 'kws_ref_model.tflite': 33, 'pretrainedResnet_quant.tflite': 36,
                 'vww_96_int8.tflite': 87 };
const MODELS = ['ad01_int8.tflite', 'kws_ref_model.tflite', 'pretrainedResnet_quant.tflite',
                'vww_96_int8.tflite'];
const rt = await loadLiteRt(root);
const pkg = JSON.parse(fs.readFileSync(
  path.join(root, 'node_modules', '@litertjs', 'core', 'package.json'), 'utf8'));
process.stdout.write(`# LiteRT.js ${pkg.version} (@litertjs/core), accelerator wasm, 1 thread\n`);
for (const name of MODELS) {
  const bytes = fs.readFileSync(path.join(dir, name));
  const variants = [[name, bytes]];
  if (name in LOGITS)
    variants.push([`${name}@${LOGITS[name]}`, withOutput(bytes, LOGITS[name])]);
  for (const [label, b] of variants) {
    const c = await compile(rt, b);
    for (const kind of INPUT_KINDS) {
      const out = await c.run(makeInput(kind, c.inBytes));
      process.stdout.write(`${label} ${kind} ${out.length} ${Buffer.from(out).toString('hex')}\n`);
    }
  }
}
