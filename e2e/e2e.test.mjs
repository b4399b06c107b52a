// End-to-end test of the mqviz browser UI: serves dist/ with python's http.server and drives
// Debian's chromium through playwright-core. Run `trunk build --release` first, then
// `cd e2e && npm install && node --test`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const artifacts = join(here, 'artifacts');

let server;
let browser;
let baseUrl;

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

before(async () => {
  assert.ok(existsSync(join(dist, 'index.html')), 'dist/index.html missing: run `trunk build --release` first');
  mkdirSync(artifacts, { recursive: true });
  const port = await freePort();
  server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dist], {
    stdio: 'ignore',
  });
  baseUrl = `http://127.0.0.1:${port}/`;
  await waitForServer(baseUrl);
  const executablePath = execSync('command -v chromium', { shell: '/bin/sh' }).toString().trim();
  browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill();
});

async function openPage(viewport = { width: 1280, height: 800 }) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  // The browser asks for /favicon.ico on its own; index.html has none, so that 404 is not an app error.
  page.on('console', (m) => {
    const favicon = m.location()?.url?.endsWith('/favicon.ico');
    if (m.type() === 'error' && !favicon) errors.push(m.text());
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) errors.push(`HTTP ${r.status()} ${r.url()}`);
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(baseUrl);
  await page.waitForSelector('[data-testid="sim-time"]');
  return { page, errors };
}

async function setSpeed(page, log10) {
  await page.$eval(
    '[data-testid="speed"]',
    (el, v) => {
      el.value = String(v);
      el.dispatchEvent(new Event('input', { bubbles: true }));
    },
    log10,
  );
}

async function simMs(page) {
  return Number(await page.getAttribute('[data-testid="sim-time"]', 'data-ms'));
}

async function playToEnd(page) {
  await setSpeed(page, 2);
  await page.click('[data-testid="play"]');
  await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"]', { timeout: 60000 });
}

async function counts(page) {
  return page.$$eval('[data-testid="consumed-count"]', (els) =>
    Object.fromEntries(els.map((e) => [e.dataset.clientId, Number(e.textContent.trim())])),
  );
}

async function owners(page) {
  return page.$$eval('[data-testid="assignment-table"] tr[data-queue]', (rows) =>
    Object.fromEntries(rows.map((r) => [r.dataset.queue, r.dataset.owner])),
  );
}

test('default page: seed preset paused at t=0, no console errors', async () => {
  const { page, errors } = await openPage();
  assert.equal(await simMs(page), 0);
  assert.equal(await page.$eval('[data-testid="preset-select"]', (s) => s.selectedIndex), 0);
  assert.ok(await page.isVisible('[data-testid="play"]'));
  assert.ok(await page.isVisible('[data-testid="canvas-topology"]'));
  assert.match(await page.textContent('.explain'), /TagB ends up winning/);
  assert.equal((await page.$$('[data-testid="consumer-row"]')).length, 2);
  await page.keyboard.press('?');
  assert.ok(await page.isVisible('[data-testid="shortcuts"]'));
  await page.keyboard.press('?');
  assert.equal(await page.isVisible('[data-testid="shortcuts"]'), false);
  // Step runs one event and moves the clock forward (or leaves it at an event time).
  await page.click('[data-testid="step"]');
  await page.keyboard.press('ArrowRight');
  assert.ok((await page.textContent('[data-testid="event-log"]')).includes('t='));
  await page.close();
  assert.deepEqual(errors, []);
});

test('seed preset run to the end: A consumes 0, B consumes 6, a warning is shown', async () => {
  const { page, errors } = await openPage();
  await playToEnd(page);
  assert.equal(await simMs(page), 120000);
  const c = await counts(page);
  assert.equal(c.ConsumerA, 0);
  assert.equal(c.ConsumerB, 6);
  const warnings = await page.$$('[data-testid="warning"]');
  assert.ok(warnings.length >= 1, 'expected at least one warning');
  assert.ok((await page.textContent('[data-testid="subscription-table"]')).includes('TagB'));
  await page.screenshot({ path: join(artifacts, 'app.png') });
  await page.setViewportSize({ width: 800, height: 600 });
  await page.waitForTimeout(100);
  await page.screenshot({ path: join(artifacts, 'app-800x600.png') });
  await page.close();
  assert.deepEqual(errors, []);
});

test('adding a consumer changes the assignment table', async () => {
  const { page, errors } = await openPage();
  await page.keyboard.press('End');
  await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"]');
  const baseline = await owners(page);
  assert.ok(Object.keys(baseline).length >= 4);

  await page.click('[data-testid="reset"]');
  assert.equal(await simMs(page), 0);
  await page.click('[data-testid="add-consumer"]');
  await page.waitForSelector('[data-testid="consumer-row"][data-client-id="ConsumerC"]');
  await page.keyboard.press('End');
  await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"]');
  const withC = await owners(page);
  assert.notDeepEqual(withC, baseline);
  assert.ok(Object.values(withC).includes('ConsumerC'), `ConsumerC owns nothing: ${JSON.stringify(withC)}`);
  await page.close();
  assert.deepEqual(errors, []);
});

test('an invalid subscription expression shows an inline error and changes nothing', async () => {
  const { page, errors } = await openPage();
  await setSpeed(page, 2);
  await page.click('[data-testid="play"]');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="sim-time"]').dataset.ms) >= 20000);
  await page.click('[data-testid="pause"]');
  const t = await simMs(page);
  const before = {
    log: await page.textContent('[data-testid="event-log"]'),
    table: await page.textContent('[data-testid="subscription-table"]'),
    owners: await owners(page),
  };
  const input = page.locator('[data-testid="consumer-row"][data-client-id="ConsumerA"] [data-testid="subscription-input"]');
  await input.fill('||');
  await input.press('Enter');
  await input.blur();
  await page.waitForSelector('[data-testid="subscription-error"]');
  assert.match(await page.textContent('[data-testid="subscription-error"]'), /split error/);
  assert.equal(await input.getAttribute('aria-invalid'), 'true');
  await page.waitForTimeout(200);
  assert.equal(await simMs(page), t);
  assert.equal(await page.textContent('[data-testid="event-log"]'), before.log);
  assert.equal(await page.textContent('[data-testid="subscription-table"]'), before.table);
  assert.deepEqual(await owners(page), before.owners);
  // A valid expression clears the error.
  await input.fill('TagA || TagB');
  assert.equal(await page.$('[data-testid="subscription-error"]'), null);
  await page.close();
  assert.deepEqual(errors, []);
});
