// Seeking without freezing (issue "RocketMQ fidelity under churn ... memory that scales", item 5):
// a long seek runs in slices across animation frames, shows its progress and can be cancelled.
// `#bench=N` opens the generated load scenario with N messages, paused at t=0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, openPage, simMs, artifacts, waitMs, pct } from './harness.mjs';

const ctx = useBrowser();
const MESSAGES = Number(process.env.MQVIZ_SEEK_MESSAGES || 1000000);

/// The end of the bench's run: read once the page shows that run (a scenario of its own,
/// `own:<n>`), settled.
async function until(page) {
  await page.waitForSelector('[data-testid="sim-time"][data-ready^="own:"]');
  return Number(await page.getAttribute('[data-testid="sim-time"]', 'data-until'));
}

test(`a seek to the end of ${MESSAGES} messages runs in slices: progress shown, frames keep coming (sliced = one seek: sim::history tests)`, async () => {
  const { page, errors } = await openPage(ctx, { fragment: `#bench=${MESSAGES}` });
  await page.waitForFunction(() => Array.isArray(window.__mqvizFrameMs));
  const end = await until(page);
  assert.ok(end > 60000, `the bench run is long (${end} ms)`);
  // Watch frames from the page itself while the seek runs.
  await page.evaluate(() => {
    window.__seek = { intervals: [], last: null, start: window.__mqvizFrameMs.length, t0: performance.now(), progressSeen: false };
    const f = (ts) => {
      const s = window.__seek;
      if (s.last !== null) s.intervals.push(ts - s.last);
      s.last = ts;
      if (document.querySelector('[data-testid="seek-progress"]')) s.progressSeen = true;
      if (document.querySelector('[data-testid="sim-time"]').dataset.atEnd === 'true') {
        s.done = performance.now() - s.t0;
        s.work = window.__mqvizFrameMs.slice(s.start);
        return;
      }
      requestAnimationFrame(f);
    };
    requestAnimationFrame(f);
  });
  await page.keyboard.press('End');
  await page.waitForFunction(() => window.__seek.done !== undefined, null, { timeout: 240000 });
  const s = await page.evaluate(() => window.__seek);
  // The digest is hashed after the seek, a slice a frame: how long until it shows.
  await page.waitForSelector('[data-testid="digest"][data-pending="false"]', { timeout: 120000 });
  const digestShownMs = Math.round(await page.evaluate(() => performance.now() - window.__seek.t0));
  // The seek is over and the page caught up with it (the progress bar is gone with the seek).
  await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"][data-ready]');
  assert.ok(s.progressSeen, 'a progress bar showed while seeking');
  assert.equal(await page.$('[data-testid="seek-progress"]'), null, 'the progress bar goes away at the end');
  assert.equal(await simMs(page), end);
  const figures = {
    messages: MESSAGES,
    seekToEndMs: Math.round(s.done),
    digestShownMs,
    frameIntervalMs: { p50: pct(s.intervals, 50), p95: pct(s.intervals, 95), max: pct(s.intervals, 100), frames: s.intervals.length },
    loopWorkMs: { p50: pct(s.work, 50), p95: pct(s.work, 95), samples: s.work.length },
  };
  writeFileSync(join(artifacts, 'seek.json'), JSON.stringify(figures, null, 2));
  console.log(`SEEK ${JSON.stringify(figures)}`);
  assert.ok(figures.loopWorkMs.p95 < 50, `frame work p95 ${figures.loopWorkMs.p95} ms during the seek`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a seek can be cancelled (button or Escape) and stops where it got to; seeking back is sliced too', async () => {
  // Three times the messages: two seeks must still be under way when they are cancelled, and a
  // seek over 1 M takes under a second.
  const { page, errors } = await openPage(ctx, { fragment: `#bench=${3 * MESSAGES}` });
  const end = await until(page);
  await page.keyboard.press('End');
  // Under way, and past the start: the playhead has moved while the progress bar shows.
  await page.waitForFunction(
    () =>
      document.querySelector('[data-testid="seek-progress"]') !== null &&
      Number(document.querySelector('[data-testid="sim-time"]').dataset.ms) > 0,
  );
  await page.keyboard.press('Escape');
  // Cancelled: the bar goes, and the page settles where the seek stopped.
  await page.waitForSelector('[data-testid="seek-progress"]', { state: 'detached' });
  await page.waitForSelector('[data-testid="sim-time"][data-ready]');
  const stopped = await simMs(page);
  assert.ok(stopped > 0 && stopped < end, `stopped part-way (${stopped} of ${end})`);
  // The cancel has been handled (above); these 300 ms prove that the seek does not go on.
  await page.waitForTimeout(300);
  assert.equal(await simMs(page), stopped, 'a cancelled seek stays where it stopped');
  // The button does the same.
  await page.keyboard.press('End');
  await page.waitForSelector('[data-testid="seek-progress"]');
  await page.click('[data-testid="seek-cancel"]');
  await page.waitForSelector('[data-testid="seek-progress"]', { state: 'detached' });
  await page.waitForSelector('[data-testid="sim-time"][data-ready]');
  const second = await simMs(page);
  assert.ok(second >= stopped && second < end, `the second seek went on from ${stopped} to ${second}`);
  // The playhead still works afterwards: Home goes back to the start.
  await page.keyboard.press('Home');
  await waitMs(page, 0, { timeout: 60000 });
  assert.deepEqual(errors, []);
  await page.close();
});

// Memory that scales (same issue, item 3): a 5 M-message run goes to its end in the tab. The
// model's memory budget (1.5 GB by default) would stop it cleanly and say so; it must not need to.
const LONG_RUN = Number(process.env.MQVIZ_LONG_RUN_MESSAGES || 5000000);

test(`a ${LONG_RUN}-message run goes to its end in the tab, inside the memory budget`, async () => {
  const { page, errors } = await openPage(ctx, { fragment: `#bench=${LONG_RUN}` });
  const end = await until(page);
  const t0 = Date.now();
  await page.keyboard.press('End');
  await page.waitForFunction(() => document.querySelector('[data-testid="sim-time"]').dataset.atEnd === 'true', null, {
    timeout: 600000,
    polling: 500,
  });
  const seconds = (Date.now() - t0) / 1000;
  // The page text read below follows once the seek is done and the panels caught up.
  await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"][data-ready]');
  assert.equal(await simMs(page), end, 'the run reached its end');
  const text = await page.textContent('body');
  assert.ok(!text.includes('memory budget'), 'the memory budget did not stop the run');
  // The page still answers: Home goes back to the start (a checkpoint restore).
  await page.keyboard.press('Home');
  await waitMs(page, 0, { timeout: 60000 });
  const figures = { messages: LONG_RUN, runToEndSeconds: Math.round(seconds * 10) / 10 };
  writeFileSync(join(artifacts, 'long-run.json'), JSON.stringify(figures, null, 2));
  console.log(`LONG RUN ${JSON.stringify(figures)}`);
  assert.deepEqual(errors, []);
  await page.close();
});
