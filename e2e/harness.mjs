// Shared harness for the browser tests: serves dist/ (optionally under a sub-path) with python's
// http.server and drives Debian's chromium through playwright-core. Each test file calls
// `useBrowser()` at its top level.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const dist = join(here, '..', 'dist');
export const artifacts = join(here, 'artifacts');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForServer(url, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server at ${url} did not start`);
}

/// Starts the server and the browser for this file. `subPath` serves dist/ under that path
/// (e.g. "docs/mqviz/"), as a project docs site would.
export function useBrowser({ subPath = '' } = {}) {
  const ctx = { baseUrl: '', browser: null };
  let server;
  before(async () => {
    assert.ok(existsSync(join(dist, 'index.html')), 'dist/index.html missing: run `trunk build --release` first');
    mkdirSync(artifacts, { recursive: true });
    let root = dist;
    if (subPath) {
      root = mkdtempSync(join(tmpdir(), 'mqviz-site-'));
      const parts = subPath.replace(/\/$/, '').split('/');
      mkdirSync(join(root, ...parts.slice(0, -1)), { recursive: true });
      symlinkSync(dist, join(root, ...parts));
    }
    const port = await freePort();
    server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', root], { stdio: 'ignore' });
    ctx.baseUrl = `http://127.0.0.1:${port}/${subPath}`;
    await waitForServer(ctx.baseUrl);
    const executablePath = execSync('command -v chromium', { shell: '/bin/sh' }).toString().trim();
    ctx.browser = await chromium.launch({
      executablePath,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    if (ctx.browser) await ctx.browser.close();
    if (server) server.kill();
  });
  return ctx;
}

/// Opens the app (with an optional fragment) and collects console errors, failed requests and
/// the names of the files it requested.
export async function openPage(ctx, { viewport = { width: 1280, height: 800 }, fragment = '', deviceScaleFactor = 1 } = {}) {
  // A context per page: isolated storage, and what axe-core needs to inject itself.
  const context = await ctx.browser.newContext({ viewport, deviceScaleFactor });
  const page = await context.newPage();
  page.on('close', () => context.close().catch(() => {}));
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`);
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  // The files the page asked for, by name (the release page fetches model chunks on demand).
  const requests = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname.split('/').pop()));
  await page.goto(`${ctx.baseUrl}${fragment}`);
  // The page says when it shows what was asked for (`data-ready` on the clock, see
  // `Sim::ready`): the run is in, nothing is being fetched, no seek is under way, the panels
  // have caught up. A link's preset arrives after the first view, and a link's `t=` seeks once
  // it has: wait for the preset it names, or for the error that says why not.
  const named = /(?:^#|&)preset=([^&]+)/.exec(fragment);
  const file = named ? (named[1].endsWith('.json') ? named[1] : `${named[1]}.json`) : null;
  await page.waitForFunction(
    (file) => {
      const ready = document.querySelector('[data-testid="sim-time"]')?.dataset.ready;
      if (ready === undefined) return false;
      // With a seed or edits the preset's run is the page's own.
      const ofLink = file === null || ready.startsWith(`${file}:`) || ready.startsWith('own:');
      return ofLink || document.querySelector('[role="alert"]') !== null;
    },
    file,
  );
  return { page, errors, requests };
}

/// The identity of the run shown (`<preset file or own>:<n>`), whether or not it is ready.
export async function runId(page) {
  return page.getAttribute('[data-testid="sim-time"]', 'data-run');
}

/// Waits until the page shows what was asked for (`data-ready`), and returns the run's identity.
/// `after`: a run identity read before an action that installs a new run; the wait is then for
/// another run. `file`: the preset file the run must be of.
export async function waitReady(page, { after = null, file = null, timeout = 30000 } = {}) {
  const h = await page.waitForFunction(
    ({ after, file }) => {
      const ready = document.querySelector('[data-testid="sim-time"]')?.dataset.ready;
      if (ready === undefined || ready === after) return false;
      if (file !== null && !ready.startsWith(`${file}:`)) return false;
      return ready;
    },
    { after, file },
    { timeout },
  );
  return h.jsonValue();
}

export async function simMs(page) {
  return Number(await page.getAttribute('[data-testid="sim-time"]', 'data-ms'));
}

export async function setSpeed(page, log10) {
  await page.$eval(
    '[data-testid="speed"]',
    (el, v) => {
      el.value = String(v);
      el.dispatchEvent(new Event('input', { bubbles: true }));
    },
    log10,
  );
}

/// What the canvas drew last (`data-scene`), parsed.
export async function scene(page) {
  const s = await page.getAttribute('[data-testid="canvas-topology"]', 'data-scene');
  return s ? JSON.parse(s) : null;
}

/// Waits until the canvas's scene satisfies `pred`.
export async function waitScene(page, pred, timeout = 10000) {
  const end = Date.now() + timeout;
  let last = null;
  while (Date.now() < end) {
    last = await scene(page);
    if (last && pred(last)) return last;
    await page.waitForTimeout(50);
  }
  throw new Error(`scene never matched; last: ${JSON.stringify(last)?.slice(0, 600)}`);
}

export async function loadPreset(page, file) {
  const i = await page.$eval('[data-testid="preset-select"]', (s, f) => [...s.options].findIndex((o) => o.dataset.file === f), file);
  assert.ok(i >= 0, `no preset ${file}`);
  const before = await runId(page);
  await page.selectOption('[data-testid="preset-select"]', String(i));
  // A Kafka or Pulsar preset loads once its model's code has been fetched: wait for its run.
  await waitReady(page, { after: before, file });
}

/// Waits until the page is settled (the clock's `data-ready`) and two frames have been painted
/// since, so the canvas shows the settled state.
export async function drawn(page) {
  await page.waitForSelector('[data-testid="sim-time"][data-ready]');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/// Waits until an edit has been entered (more edit marks on the time bar than `before`) and the
/// page has settled after it.
export async function entered(page, before) {
  await page.waitForFunction(
    (n) =>
      document.querySelectorAll('[data-testid="edit-marks"] .mark').length > n &&
      document.querySelector('[data-testid="sim-time"]').dataset.ready !== undefined,
    before,
  );
}

/// Waits until the page is settled with the clock at `ms`.
export async function waitMs(page, ms, { timeout = 30000 } = {}) {
  await page.waitForFunction(
    (ms) => {
      const el = document.querySelector('[data-testid="sim-time"]');
      return el.dataset.ready !== undefined && el.dataset.ms === String(ms);
    },
    ms,
    { timeout },
  );
}

/// The `p`th percentile of `xs`, to a tenth (the timing figures the browser tests print).
export function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10 : NaN;
}
