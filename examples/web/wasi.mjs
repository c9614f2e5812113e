// Runs the sweep built for wasm32-wasip1 (src/bin/sweep.rs) in Node's WASI:
// node examples/web/wasi.mjs target/wasm32-wasip1/release/sweep.wasm
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';

const wasi = new WASI({ version: 'preview1', args: ['sweep'], env: {}, returnOnExit: true });
const module = await WebAssembly.compile(readFileSync(process.argv[2]));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exit(wasi.start(instance));
