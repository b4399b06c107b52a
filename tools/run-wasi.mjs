// Runs a wasm32-wasip1 build of the mqviz CLI under Node's WASI (used for the wasm benchmark):
//   node tools/run-wasi.mjs target/wasm32-wasip1/release/mqviz.wasm bench throughput
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";
import { argv, env } from "node:process";

const [, , wasmPath, ...args] = argv;
const wasi = new WASI({ version: "preview1", args: ["mqviz", ...args], env, preopens: { ".": "." } });
const module = await WebAssembly.compile(await readFile(wasmPath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
wasi.start(instance);
