// No text on the canvas overlaps another or leaves the canvas (issue "Nothing hides the lesson",
// item 4). The canvas reports every text it wrote with its box (`data-scene`'s `texts`, CSS px);
// this test opens presets of every model at the four sizes and fails on any two boxes that
// overlap, any box outside the canvas, and lists the texts that had to be shortened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, openPage, waitScene } from './harness.mjs';

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
