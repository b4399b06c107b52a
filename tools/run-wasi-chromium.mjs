// Runs a wasm32-wasip1 build of the mqviz CLI inside headless Chromium, the engine the page runs
// in (Node's V8 is older), with the few WASI calls the CLI's benchmarks make:
//   node tools/run-wasi-chromium.mjs target/wasm32-wasip1/web/mqviz.wasm bench throughput
// Needs e2e/node_modules (playwright-core) and Debian's chromium, as the e2e tests do.
import { readFile } from "node:fs/promises";
import { execSync } from "node:child_process";
import process, { argv, exit, stdout } from "node:process";
import { chromium } from "../e2e/node_modules/playwright-core/index.mjs";

const [, , wasmPath, ...args] = argv;
if (!wasmPath) {
  console.error("usage: node tools/run-wasi-chromium.mjs MQVIZ.wasm ARGS...");
  exit(2);
}
const wasm = (await readFile(wasmPath)).toString("base64");
const browser = await chromium.launch({
  executablePath: execSync("command -v chromium").toString().trim(),
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage();
  const { out, code } = await page.evaluate(async ({ wasm, args }) => {
    const bytes = Uint8Array.from(atob(wasm), (c) => c.charCodeAt(0));
    const module = await WebAssembly.compile(bytes);
    let memory;
    let out = "";
    const view = () => new DataView(memory.buffer);
    const encoded = ["mqviz", ...args].map((a) => new TextEncoder().encode(a + "\0"));
    class Exit { constructor(code) { this.code = code; } }
    const EBADF = 8, ENOSYS = 52;
    const wasi = {
      args_sizes_get(count, size) {
        view().setUint32(count, encoded.length, true);
        view().setUint32(size, encoded.reduce((n, a) => n + a.length, 0), true);
        return 0;
      },
      args_get(ptrs, buf) {
        for (const a of encoded) {
          view().setUint32(ptrs, buf, true);
          new Uint8Array(memory.buffer, buf, a.length).set(a);
          ptrs += 4;
          buf += a.length;
        }
        return 0;
      },
      environ_sizes_get(count, size) {
        view().setUint32(count, 0, true);
        view().setUint32(size, 0, true);
        return 0;
      },
      environ_get: () => 0,
      clock_time_get(_id, _precision, at) {
        view().setBigUint64(at, BigInt(Math.round(performance.now() * 1e6)), true);
        return 0;
      },
      random_get(buf, len) {
        crypto.getRandomValues(new Uint8Array(memory.buffer, buf, len));
        return 0;
      },
      fd_write(fd, iovs, count, written) {
        let n = 0;
        for (let i = 0; i < count; i++) {
          const ptr = view().getUint32(iovs + 8 * i, true);
          const len = view().getUint32(iovs + 8 * i + 4, true);
          if (fd === 1 || fd === 2) out += new TextDecoder().decode(new Uint8Array(memory.buffer, ptr, len));
          n += len;
        }
        view().setUint32(written, n, true);
        return 0;
      },
      fd_prestat_get: () => EBADF,
      fd_prestat_dir_name: () => EBADF,
      fd_close: () => EBADF,
      fd_fdstat_get: () => EBADF,
      fd_filestat_get: () => EBADF,
      fd_read: () => EBADF,
      path_open: () => ENOSYS,
      proc_exit(code) { throw new Exit(code); },
    };
    const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi });
    memory = instance.exports.memory;
    try {
      instance.exports._start();
      return { out, code: 0 };
    } catch (e) {
      if (e instanceof Exit) return { out, code: e.code };
      return { out: out + String(e) + "\n", code: 1 };
    }
  }, { wasm, args });
  stdout.write(out);
  process.exitCode = code;
} finally {
  await browser.close();
}
