// No text on the canvas overlaps another or leaves the canvas (issue "Nothing hides the lesson",
// item 4). The canvas reports every text it wrote with its box (`data-scene`'s `texts`, CSS px);
// this test opens presets of every model at the four sizes and fails on any two boxes that
// overlap, any box outside the canvas, and lists the texts that had to be shortened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { useBrowser, openPage, waitScene, waitMs, drawn, artifacts } from './harness.mjs';

const ctx = useBrowser();
const SIZES = [
  [800, 600],
  [1024, 768],
  [1280, 800],
  [1920, 1080],
];
const RUNS = ['#t=30000', '#preset=kafka-eager-join&t=17000', '#preset=pulsar-key-shared-join&t=20000', '#preset=pulsar-failover&t=20000'];

/// The pairs of texts whose boxes overlap by more than a pixel each way, and the texts outside
/// the canvas.
function problems(scene, height) {
  const boxes = scene.texts.map(([text, x, y, w, h]) => ({ text, x, y, w, h }));
  const found = [];
  for (let i = 0; i < boxes.length; i++) {
    const a = boxes[i];
    if (a.x < -0.5 || a.y < -0.5 || a.x + a.w > scene.width + 0.5 || a.y + a.h > height + 0.5) found.push(`"${a.text}" outside the canvas`);
    for (let j = i + 1; j < boxes.length; j++) {
      const b = boxes[j];
      const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
      const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
      if (dx > 1 && dy > 1) found.push(`"${a.text}" overlaps "${b.text}"`);
    }
  }
  return found;
}

for (const [width, height] of SIZES) {
  test(`no canvas text overlaps another or leaves the canvas at ${width}×${height}`, async () => {
    const all = [];
    for (const fragment of RUNS) {
      const { page, errors } = await openPage(ctx, { viewport: { width, height }, fragment });
      const scene = await waitScene(page, (s) => Array.isArray(s.texts) && s.texts.length > 0);
      const canvasHeight = await page.$eval('[data-testid="canvas-topology"]', (c) => c.clientHeight);
      for (const p of problems(scene, canvasHeight)) all.push(`${fragment}: ${p}`);
      if (scene.cut.length) console.log(`${width}×${height} ${fragment}: shortened ${JSON.stringify(scene.cut)}`);
      await page.close();
      assert.deepEqual(errors, []);
    }
    assert.deepEqual(all, []);
  });
}

// Item 2: two Kafka embeds side by side in a docs page, 480×270 each, mid-rebalance. Each says in
// its title what differs (read whole, not cut), names every partition with its owner instead of
// asking a reader who cannot to enlarge it, keeps every text apart, and labels its marks.
test('Kafka embeds at 480×270 read: whole distinct titles, every partition named, marks labelled', async () => {
  const titles = [];
  for (const preset of ['kafka-eager-join', 'kafka-cooperative-join']) {
    const fragment = `#embed&preset=${preset}&t=18000`;
    const { page, errors } = await openPage(ctx, { viewport: { width: 480, height: 270 }, fragment });
    // Settled at 18 s, and drawn since: the scene is of that moment, not of t = 0.
    await waitMs(page, 18000);
    await drawn(page);
    const scene = await waitScene(page, (s) => Array.isArray(s.texts) && s.texts.length > 0);
    const title = await page.$eval('[data-testid="embed-title"]', (el) => {
      const r = el.getBoundingClientRect();
      return { text: el.textContent, whole: el.scrollHeight <= el.clientHeight + 1, inside: r.right <= innerWidth && r.bottom <= innerHeight };
    });
    assert.ok(title.whole && title.inside, `${preset}: the title reads whole ${JSON.stringify(title)}`);
    titles.push(title.text);
    const texts = scene.texts.map(([t]) => t);
    assert.ok(!texts.some((t) => /enlarge/.test(t)), `${preset}: ${JSON.stringify(texts)}`);
    // Every partition of the three brokers is named on the canvas, with an owner before it.
    for (let p = 0; p < 12; p++) {
      assert.ok(texts.some((t) => new RegExp(`(^|[ :])p${p}( |$)`).test(t)), `${preset}: p${p} is not named in ${JSON.stringify(texts)}`);
    }
    assert.ok(texts.some((t) => /^(c\d|no owner): p\d/.test(t)), `${preset}: no owner named in ${JSON.stringify(texts)}`);
    const canvasHeight = await page.$eval('[data-testid="canvas-topology"]', (c) => c.clientHeight);
    assert.deepEqual(problems(scene, canvasHeight), []);
    // The marks: a word beside some, none over another mark or word, all inside the frame.
    const marks = await page.$$eval('[data-testid="chapter-marks"] .mark, [data-testid="chapter-marks"] .mark-word', (els) =>
      els.map((el) => {
        const r = el.getBoundingClientRect();
        return { text: el.textContent, word: el.classList.contains('mark-word'), x: r.x, y: r.y, w: r.width, h: r.height };
      }),
    );
    assert.ok(marks.some((m) => m.word), `${preset}: no mark has a word ${JSON.stringify(marks)}`);
    for (let i = 0; i < marks.length; i++) {
      const a = marks[i];
      assert.ok(a.x >= 0 && a.x + a.w <= 480 && a.y + a.h <= 270, `${preset}: ${a.text} outside the frame`);
      for (const b of marks.slice(i + 1)) {
        const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
        const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
        assert.ok(!(dx > 1 && dy > 1), `${preset}: "${a.text}" overlaps "${b.text}"`);
      }
    }
    await page.screenshot({ path: join(artifacts, `embed-480x270-${preset}.png`) });
    await page.close();
    assert.deepEqual(errors, []);
  }
  assert.notEqual(titles[0], titles[1]);
});
