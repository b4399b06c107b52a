// The plots (issue "Nothing hides the lesson", item 6): drawn by plotters on their canvases; the
// largest few lines named in a legend beside the plot and the rest summarised by one row; a
// playhead at the model's time; a click on a plot goes to the time under the pointer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { useBrowser, openPage, simMs, waitMs, artifacts } from './harness.mjs';

const ctx = useBrowser();

/// Waits until the plot `testid` has been drawn with the model's time at `ms` and returns where its
/// axis lies and what its legend says.
async function plotAt(page, testid, ms) {
  await waitMs(page, ms);
  const sel = `[data-testid="${testid}"]`;
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.legend !== undefined, sel);
  return page.$eval(sel, (c) => ({
    x0: Number(c.dataset.x0),
    x1: Number(c.dataset.x1),
    until: Number(c.dataset.until),
    legend: c.dataset.legend.split('|'),
    // The axis is measured from the canvas's padding edge (a click's offsetX), inside its border.
    border: c.clientLeft,
    width: c.clientWidth,
    height: c.clientHeight,
  }));
}

/// Waits until column `x` (CSS pixels) of the plot `testid` is dark ink (the playhead's colour)
/// over more than `h` CSS pixels: the playhead stands there.
async function waitPlayhead(page, testid, x, h) {
  await page.waitForFunction(
    ({ testid, x, h }) => {
      const c = document.querySelector(`[data-testid="${testid}"]`);
      const dpr = c.width / c.clientWidth;
      const d = c.getContext('2d').getImageData(Math.round(x * dpr) - 1, 0, 3, c.height).data;
      let n = 0;
      for (let y = 0; y < c.height; y++) {
        if ([0, 1, 2].some((k) => d[(y * 3 + k) * 4] < 60 && d[(y * 3 + k) * 4 + 2] < 80)) n++;
      }
      return n / dpr > h;
    },
    { testid, x, h },
    { timeout: 10000 },
  );
}

test('Kafka lag: five partitions named, seven summarised, a click goes to its time', async () => {
  const { page, errors } = await openPage(ctx, { fragment: '#preset=kafka-eager-join&t=17000' });
  await page.click('[data-testid="tab-lag"]');
  await page.waitForFunction(() => (document.querySelector('[data-testid="kafka-lag-plot"]')?.dataset.drawn || '').startsWith('12:'));
  let p = await plotAt(page, 'kafka-lag-plot', 17000);
  assert.equal(p.legend.length, 6, p.legend.join(' | '));
  assert.equal(p.legend[5], '+7 more partitions');
  assert.ok(p.legend.slice(0, 5).every((name) => /^orders-\d+$|^\S+ orders-\d+$|-\d+$/.test(name)), p.legend.join(' | '));
  // The legend has a margin of its own, right of the time axis, and the axis is most of the width.
  assert.ok(p.x1 < p.width - 40 && p.x1 - p.x0 > p.width / 3, JSON.stringify(p));
  await page.screenshot({ path: join(artifacts, 'plots-kafka-lag.png') });

  // A click a quarter of the way along the axis goes to that time, and the playhead follows.
  const box = await page.locator('[data-testid="kafka-lag-plot"]').boundingBox();
  const x = Math.round(p.x0 + (p.x1 - p.x0) / 4);
  const expected = Math.round(((x - p.x0) / (p.x1 - p.x0)) * p.until);
  assert.notEqual(expected, 17000);
  await page.mouse.click(box.x + p.border + x, box.y + p.height / 2);
  p = await plotAt(page, 'kafka-lag-plot', expected);
  await waitPlayhead(page, 'kafka-lag-plot', x, (p.height - 30) * 0.6);
  assert.equal(await simMs(page), expected);
  await page.close();
  assert.deepEqual(errors, []);
});

test('RocketMQ: every consumer named on the rate plot, the backlog plot in the model\'s words', async () => {
  const { page, errors } = await openPage(ctx, { fragment: '#t=20000' });
  const consumed = await plotAt(page, 'plot-consumed', 20000);
  assert.ok(consumed.legend.length >= 2 && !consumed.legend.some((n) => n.startsWith('+')), consumed.legend.join(' | '));
  const backlog = await plotAt(page, 'plot-backlog', 20000);
  assert.ok(backlog.legend.length >= 2, backlog.legend.join(' | '));
  const more = backlog.legend.find((n) => n.startsWith('+'));
  if (more) assert.match(more, /^\+\d+ more queues$/);
  // The playhead stands at 20 s on both.
  for (const [id, q] of [['plot-consumed', consumed], ['plot-backlog', backlog]]) {
    const x = q.x0 + ((q.x1 - q.x0) * 20000) / q.until;
    await waitPlayhead(page, id, x, (q.height - 30) * 0.6);
  }
  await page.close();
  assert.deepEqual(errors, []);
});
