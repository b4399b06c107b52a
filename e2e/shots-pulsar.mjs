// Screenshots of the Pulsar figures for looking at by eye (not a test): the segment DAG with a
// drained segment, the Key_Shared ring with a draining hash, and the scalable tour's last step,
// at 1280×800 and 800×600. Usage: node e2e/shots-pulsar.mjs <out-dir> (needs dist/).
import { spawn, execSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] || join(here, 'artifacts', 'shots');
mkdirSync(out, { recursive: true });
const port = 18000 + Math.floor(Math.random() * 1000);
const server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', join(here, '..', 'dist')], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 800));
const base = `http://127.0.0.1:${port}/`;
const executablePath = execSync('command -v chromium', { shell: '/bin/sh' }).toString().trim();
const browser = await chromium.launch({
  executablePath,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const at = (t) => (page) => page.waitForFunction((t) => Number(document.querySelector('[data-testid="sim-time"]').dataset.ms) >= t, t);

async function open(viewport, fragment) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log('pageerror', String(e)));
  await page.goto(base + fragment);
  await page.waitForSelector('[data-testid="sim-time"]');
  return page;
}

async function stage(page, name, selector = '[data-testid="pulsar-stage"]') {
  await page.waitForTimeout(400);
  const el = await page.$(selector);
  await el.scrollIntoViewIfNeeded();
  await el.screenshot({ path: join(out, `${name}.png`) });
}

for (const [w, h] of [[1280, 800], [800, 600]]) {
  const v = { width: w, height: h };
  let page = await open(v, '#preset=pulsar-scalable-children-blocked&t=30000');
  await at(30000)(page);
  await stage(page, `dag-end-${w}`, '[data-testid="pulsar-dag"]');
  const scene = JSON.parse(await page.getAttribute('[data-testid="canvas-topology"]', 'data-scene'));
  console.log(w, 'topology badges', JSON.stringify(scene.badgeBoxes), 'canvas width', scene.width);
  await stage(page, `topology-end-${w}`, '[data-testid="canvas-topology"]');
  await page.context().close();
  page = await open(v, '#preset=pulsar-scalable-two-splits&t=40000');
  await at(40000)(page);
  await stage(page, `dag-two-splits-${w}`, '[data-testid="pulsar-dag"]');
  await page.context().close();
  page = await open(v, '#preset=pulsar-key-shared-join&t=4200');
  await at(4200)(page);
  await stage(page, `ring-4200-${w}`, '[data-testid="pulsar-ring"]');
  await page.context().close();
  page = await open(v, '#preset=pulsar-scalable-children-blocked');
  await page.click('[data-testid="tour-start"]');
  await page.waitForSelector('[data-testid="tour-caption"][data-step="0"]');
  for (let k = 1; k <= 8; k++) {
    await page.click('[data-testid="tour-next"]');
    await page.waitForSelector(`[data-testid="tour-caption"][data-step="${k}"]`);
  }
  await page.waitForTimeout(600);
  await page.screenshot({ path: join(out, `tour-last-${w}.png`) });
  const t = await page.$('[data-testid="flow-table"]');
  await t.scrollIntoViewIfNeeded();
  await t.screenshot({ path: join(out, `tour-last-flow-${w}.png`) });
  console.log(w, 'tour last t=', await page.getAttribute('[data-testid="sim-time"]', 'data-ms'),
    JSON.stringify(await page.$$eval('[data-testid="flow-table"] td[data-on]', (l) => l.map((e) => `${e.closest('tr').dataset.consumer}:${e.textContent}`))));
  await page.context().close();
}
await browser.close();
server.kill();
