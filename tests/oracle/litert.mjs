// Load LiteRT.js (@litertjs/core, Google's TFLite runtime compiled to
// WebAssembly) in Node 20 and run int8 models through its low-level API.
// The package's own loader expects a browser worker (self, importScripts)
// and its high-level Tensor wrapper rejects int8 tensors, so this sets up
// the worker globals, evaluates the Emscripten glue itself and drives
// liteRt.liteRtWasm-level objects directly. CPU path: XNNPack, 1 thread.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';

export async function loadLiteRt(root) {
  const wasmDir = path.join(root, 'node_modules', '@litertjs', 'core', 'wasm');
  const glue = path.join(wasmDir, 'litert_wasm_compat_internal.js');
  if (!fs.existsSync(glue))
    throw new Error(`${glue} not found: run 'npm install @litertjs/core' in ${root}`);
  globalThis.self = globalThis;
  globalThis.require = createRequire(glue);
  globalThis.__filename = glue;
  globalThis.__dirname = wasmDir;
  globalThis.importScripts = (file) =>
    vm.runInThisContext(fs.readFileSync(file, 'utf8'), { filename: file });
  globalThis.importScripts(glue);
  if (typeof self.ModuleFactory !== 'function')
    throw new Error(`${glue} did not define ModuleFactory`);
  const wasm = await self.ModuleFactory({
    locateFile: (f) => path.join(wasmDir, f),
    print: () => {},
    printErr: () => {},
  });
  const env = wasm.LiteRtEnvironment.create(null);
  return { wasm, env };
}

// Compile one model; returns run(inputBytes) -> output bytes (Uint8Array).
export async function compile(rt, modelBytes) {
  const { wasm, env } = rt;
  const ptr = wasm._malloc(modelBytes.byteLength);
  wasm.HEAPU8.set(modelBytes, ptr);
  const model = wasm.loadModel(env, ptr, modelBytes.byteLength);
  const compiled = await wasm.compileModel(env, model, {
    accelerator: 'wasm',
    cpuOptions: { numThreads: 1 },
    gpuOptions: {},
    webNNOptions: {},
  });
  const inType = model.getInputTensorType(0, 0);
  const outType = model.getOutputTensorType(0, 0);
  const inBytes = inType.bytes();
  const outBytes = outType.bytes();
  const run = async (input) => {
    if (input.byteLength !== inBytes)
      throw new Error(`input is ${input.byteLength} bytes, the model wants ${inBytes}`);
    const buf = wasm.LiteRtTensorBuffer.createManaged(
      env, wasm.LiteRtTensorBufferType.HOST_MEMORY, inType, inBytes);
    const p = buf.lock(wasm.LiteRtTensorBufferLockMode.WRITE);
    wasm.HEAPU8.set(input, p);
    buf.unlock();
    const outs = await compiled.run(0, [buf]);
    const o = outs[0];
    const q = o.lock(wasm.LiteRtTensorBufferLockMode.READ);
    const result = wasm.HEAPU8.slice(q, q + outBytes);
    o.unlock();
    for (const t of outs) t.delete();
    buf.delete();
    return result;
  };
  return { run, inBytes, outBytes };
}

// The deterministic inputs the references are made on; tests/unit
// regenerates them in C (tfl_oracle_input in test_tfl_oracle.c) with the
// same definitions, so no input file is checked in.
//   zero:   every byte 0x00
//   ramp:   byte i = i mod 256 (as int8)
//   xsN:    xorshift32 seeded N, byte = state >> 24 after each step
export function makeInput(kind, n) {
  const b = new Uint8Array(n);
  if (kind === 'zero') return b;
  if (kind === 'ramp') {
    for (let i = 0; i < n; i++) b[i] = i & 255;
    return b;
  }
  const m = /^xs(\d+)$/.exec(kind);
  if (!m) throw new Error(`unknown input kind ${kind}`);
  let s = Number(m[1]) >>> 0;
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    b[i] = s >>> 24;
  }
  return b;
}

export const INPUT_KINDS = ['zero', 'ramp', 'xs1', 'xs2', 'xs3', 'xs4', 'xs5', 'xs6', 'xs7', 'xs8'];

// A copy of a model whose subgraph-0 output 0 is tensor `t` instead: how the
// logits feeding a SOFTMAX are compared (softmax amplifies small logit
// differences). Walks root -> subgraphs[0] -> outputs (schema.fbs slots 2
// and 2) with every offset checked.
export function withOutput(bytes, t) {
  const b = Buffer.from(bytes);
  const u32 = (p) => { if (p < 0 || p + 4 > b.length) throw new Error('bad offset'); return b.readUInt32LE(p); };
  const field = (tab, slot) => {
    const vt = tab - b.readInt32LE(tab);
    const vlen = b.readUInt16LE(vt);
    if (4 + 2 * slot + 2 > vlen) throw new Error('field absent');
    const off = b.readUInt16LE(vt + 4 + 2 * slot);
    if (off === 0) throw new Error('field absent');
    return tab + off;
  };
  const deref = (p) => p + u32(p);
  const root = u32(0);
  const sgs = deref(field(root, 2));
  const sg = deref(sgs + 4);
  const outs = deref(field(sg, 2));
  if (u32(outs) < 1) throw new Error('no outputs');
  b.writeInt32LE(t, outs + 4);
  return new Uint8Array(b);
}
