// The compare view's speed (issue "Your own scenario, whole-run links, embedding in docs, and
// side-by-side comparison", Speed): with 5,000 messages in flight on each side, the frame loop's
// work (both models advanced in lockstep, both canvases drawn) keeps p95 < 16 ms. That figure is
// measured and printed here (COMPARE PERF) for the notes; the assertion only guards against a
// regression of an order (p95 past two 60 Hz frames), because a shared 2-core CI machine makes a
// 16 ms bound flaky (the project's rule: benchmarks are not timed tests).
// `#bench` opens the generated load scenario playing; "Compare…" opens its first variant beside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useBrowser, openPage, artifacts, pct } from './harness.mjs';

const ctx = useBrowser();

const dotsOf = (testid) => Number(document.querySelector(`[data-testid="${testid}"]`)?.dataset.dots ?? 0);

test('compare view: frame work p95 with 5,000 messages in flight on each side', async () => {
  // `#bench` plays from its first frame, so the page never settles (`data-ready` is absent while it
  // plays) and `openPage`'s wait for that would not end: open the page plain, then go to `#bench`
  // as a new document (a fragment change alone is a link the page follows, and a bench is not),
  // and wait for the bench's own run (`own:`), playing, with its frame-time samples.
  const { page, errors } = await openPage(ctx);
  await page.goto('about:blank');
  await page.goto(`${ctx.baseUrl}#bench`);
  await page.waitForFunction(
    () =>
      Array.isArray(window.__mqvizFrameMs) &&
      document.querySelector('[data-testid="sim-time"]')?.dataset.run?.startsWith('own:') &&
      document.querySelector('[data-testid="pause"]') !== null,
  );
  await page.click('[data-testid="compare-open"]');
  const select = page.locator('[data-testid="compare-select"]');
  const label = await select.locator('option').nth(1).textContent();
  await select.selectOption({ index: 1 });
  await page.waitForSelector('[data-testid="canvas-compare"]');
  await page.waitForFunction(
    (f) => {
      const dots = new Function(`return (${f})`)();
      return dots('canvas-topology') >= 5000 && dots('canvas-compare') >= 5000;
    },
    dotsOf.toString(),
    { timeout: 60000 },
  );
  const m = await page.evaluate((f) => {
    const dots = new Function(`return (${f})`)();
    return new Promise((resolve) => {
      const start = window.__mqvizFrameMs.length;
      const left = [];
      const right = [];
      const t0 = performance.now();
      function frame() {
        left.push(dots('canvas-topology'));
        right.push(dots('canvas-compare'));
        if (performance.now() - t0 < 4000) requestAnimationFrame(frame);
        else resolve({ work: window.__mqvizFrameMs.slice(start), left, right });
      }
      requestAnimationFrame(frame);
    });
  }, dotsOf.toString());
  await page.screenshot({ path: join(artifacts, 'compare-bench.png') });
  const figures = {
    variant: label,
    loopWorkMs: { p50: pct(m.work, 50), p95: pct(m.work, 95), max: pct(m.work, 100), samples: m.work.length },
    dotsInFlight: { left: Math.min(...m.left), right: Math.min(...m.right) },
  };
  writeFileSync(join(artifacts, 'compare-perf.json'), JSON.stringify(figures, null, 2));
  console.log(`COMPARE PERF ${JSON.stringify(figures)}`);
  assert.ok(figures.dotsInFlight.left >= 5000 && figures.dotsInFlight.right >= 5000, `dots in flight ${JSON.stringify(figures.dotsInFlight)}`);
  assert.ok(m.work.length >= 30, `too few frames sampled: ${m.work.length}`);
  if (figures.loopWorkMs.p95 >= 16) console.log(`COMPARE PERF over the 16 ms target in this run: p95 ${figures.loopWorkMs.p95} ms`);
  assert.ok(figures.loopWorkMs.p95 < 33, `compare view frame work p95 ${figures.loopWorkMs.p95} ms (target < 16 ms, guard < 33 ms)`);
  assert.deepEqual(errors, []);
});
