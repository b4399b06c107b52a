// Screenshots for looking at the page as a first-time viewer would (not a test):
//   node e2e/shoot.mjs OUTDIR WIDTHxHEIGHT FRAGMENT [ACTIONS]
// ACTIONS is a JS function body run with `page` in scope before the screenshot.
import { spawn, execSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const [out, size, fragment = '', actions = ''] = process.argv.slice(2);
const [width, height] = size.split('x').map(Number);
const port = 8000 + Math.floor(Math.random() * 1000);
const server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', join(here, '..', 'dist')], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 700));
const browser = await chromium.launch({
  executablePath: execSync('command -v chromium', { shell: '/bin/sh' }).toString().trim(),
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  const page = await browser.newPage({ viewport: { width, height } });
  page.on('console', (m) => m.type() === 'error' && console.log('console:', m.text()));
  page.on('pageerror', (e) => console.log('pageerror:', String(e)));
  await page.goto(`http://127.0.0.1:${port}/${fragment}`);
  await page.waitForTimeout(1500);
  if (actions) await new Function('page', `return (async () => { ${actions} })()`)(page);
  await page.screenshot({ path: out });
} finally {
  await browser.close();
  server.kill();
}
