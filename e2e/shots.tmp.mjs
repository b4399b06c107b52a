// Ad-hoc screenshots for looking at the UI (not part of the suite).
import { chromium } from 'playwright-core';
import { execSync, spawn } from 'node:child_process';
const dist = '/work/main/dist';
const port = 8766;
const server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dist], { stdio: 'ignore' });
await new Promise(r => setTimeout(r, 800));
const browser = await chromium.launch({ executablePath: execSync('command -v chromium').toString().trim(),
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
// args: list of preset:t:WxH
for (const spec of process.argv.slice(2)) {
  const [preset, t, size] = spec.split(':');
  const [w, h] = size.split('x').map(Number);
  const page = await browser.newPage({ viewport: { width: w, height: h } });
  page.on('pageerror', e => console.log('pageerror', String(e)));
  await page.goto(`http://127.0.0.1:${port}/#preset=${preset}.json&t=${t}`);
  await page.waitForTimeout(1200);
  await page.screenshot({ path: `/tmp/e2e/${preset}-${t}-${w}x${h}.png` });
  await page.close();
}
await browser.close(); server.kill();
