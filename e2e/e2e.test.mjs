// End-to-end test of the mqviz browser UI: serves dist/ with python's http.server and drives
// Debian's chromium through playwright-core. Run `trunk build --release` first, then
// `cd e2e && npm install && node --test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useBrowser, openPage as open, simMs, setSpeed, loadPreset, runId, waitReady, dist, artifacts, waitMs } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ctx = useBrowser();

async function openPage(viewport = { width: 1280, height: 800 }, fragment = '') {
  return open(ctx, { viewport, fragment });
}

/// Waits until the page is settled with the clock moved off `from`; returns where it is.
async function waitMsOff(page, from) {
  await page.waitForFunction((from) => {
    const el = document.querySelector('[data-testid="sim-time"]');
    return el.dataset.ready !== undefined && el.dataset.ms !== String(from);
  }, from);
  return simMs(page);
}

/// Waits until the page is settled at the end of the run.
async function waitAtEnd(page, timeout = 60000) {
  await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"][data-ready]', { timeout });
}

/// Pauses a run that plays and waits for the panels to catch up with it.
async function pause(page) {
  await page.click('[data-testid="pause"]');
  await page.waitForSelector('[data-testid="sim-time"][data-ready]');
}

async function playToEnd(page) {
  await setSpeed(page, 2);
  await page.click('[data-testid="play"]');
  await waitAtEnd(page);
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
  // The panel's code is fetched the first time it is shown (release build).
  await page.waitForSelector('[data-testid="shortcuts"]');
  await page.keyboard.press('?');
  assert.equal(await page.isVisible('[data-testid="shortcuts"]'), false);
  // Step runs one event and moves the clock forward (or leaves it at an event time).
  const log = await page.textContent('[data-testid="event-log"]');
  await page.click('[data-testid="step"]');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(
    (log) => document.querySelector('[data-testid="sim-time"]').dataset.ready !== undefined &&
      document.querySelector('[data-testid="event-log"]').textContent !== log,
    log,
  );
  assert.ok((await page.textContent('[data-testid="event-log"]')).includes('t='));
  await page.close();
  assert.deepEqual(errors, []);
});

test("after another preset is picked, the event log shows that run's events, not the last one's", async () => {
  const { page, errors } = await openPage();
  await page.waitForSelector('[data-testid="event-log"] .log-row');
  await loadPreset(page, 'kafka-eager-join.json');
  const rows = await page.$$eval('[data-testid="event-log"] .log-row', (rs) =>
    rs.map((r) => [Number(r.dataset.eventId), r.textContent]),
  );
  assert.ok(rows.length > 0, 'the Kafka run has events at t=0');
  // The CLI's log of the same preset: the page's rows are its prefix, line for line.
  const cli = join(here, '..', 'target', 'release', 'mqviz');
  const lines = execSync(`${cli} run ${join(here, '..', 'static', 'scenarios', 'kafka-eager-join.json')} --log`)
    .toString()
    .split('\n');
  for (const [id, text] of rows) assert.equal(text, lines[id], `log row #${id}`);
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
  await waitAtEnd(page);
  const baseline = await owners(page);
  assert.ok(Object.keys(baseline).length >= 4);

  const run = await runId(page);
  await page.click('[data-testid="reset"]');
  await waitReady(page, { after: run });
  assert.equal(await simMs(page), 0);
  await page.click('[data-testid="add-consumer"]');
  await page.waitForSelector('[data-testid="consumer-row"][data-client-id="ConsumerC"]');
  await page.keyboard.press('End');
  await waitAtEnd(page);
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
  await pause(page);
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
  await page.waitForSelector('[data-testid="subscription-error"]', { state: 'detached' });
  await page.close();
  assert.deepEqual(errors, []);
});

// Non-background pixels on a canvas: proves something was drawn there.
async function inkedPixels(page, testid) {
  return page.$eval(`[data-testid="${testid}"]`, (c) => {
    const ctx = c.getContext('2d');
    if (!ctx || c.width === 0 || c.height === 0) return 0;
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240) n++;
    return n;
  });
}

test('plots are drawn; clicking a log row shows its provenance', async () => {
  const { page, errors } = await openPage();
  await playToEnd(page);
  await page.waitForSelector('[data-testid="plot-backlog"][data-drawn]');
  await page.waitForSelector('[data-testid="plot-consumed"][data-drawn]');
  assert.ok((await inkedPixels(page, 'plot-backlog')) > 500, 'backlog plot is blank');
  assert.ok((await inkedPixels(page, 'plot-consumed')) > 500, 'consumed plot is blank');
  assert.match(await page.textContent('[data-testid="provenance"]'), /Click an event-log row/);
  const row = page.locator('[data-testid="event-log"] [data-event-id]', { hasText: ' consumed m' }).last();
  const id = await row.getAttribute('data-event-id');
  await row.click();
  await page.waitForSelector('[data-testid="cause-chain"] li');
  const chain = await page.$$eval('[data-testid="cause-chain"] li', (els) => els.map((e) => e.textContent));
  assert.ok(chain.length >= 2, `cause chain too short: ${chain}`);
  assert.ok(chain[0].startsWith(`#${id} `), `chain starts at the clicked event: ${chain[0]}`);
  const msgEvents = await page.$$eval('[data-testid="message-events"] li', (els) => els.map((e) => e.textContent));
  assert.ok(msgEvents.some((t) => / stored m\d+/.test(t)), `message events lack the store: ${msgEvents}`);
  assert.ok(msgEvents.some((t) => / consumed m\d+/.test(t)));
  await page.locator('[data-testid="provenance"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(artifacts, 'provenance.png') });
  // A message cell on the canvas opens that message's provenance too.
  const box = await page.locator('[data-testid="canvas-topology"]').boundingBox();
  let hit = false;
  for (let x = 120; x < box.width * 0.6 && !hit; x += 4) {
    await page.mouse.click(box.x + x, box.y + 52);
    hit = (await page.$('[data-testid="message-events"]')) !== null &&
      (await page.textContent('[data-testid="cause-chain"]')).includes(' stored m');
  }
  assert.ok(hit, 'clicking a queue cell did not select its message');
  await page.close();
  assert.deepEqual(errors, []);
});

test('an invalid SQL92 expression shows an inline error at its position and changes nothing', async () => {
  const { page, errors } = await openPage();
  await loadPreset(page, 'sql92-filter.json');
  await setSpeed(page, 2);
  await page.click('[data-testid="play"]');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="sim-time"]').dataset.ms) >= 20000);
  await pause(page);
  const t = await simMs(page);
  const row = page.locator('[data-testid="consumer-row"][data-client-id="SqlConsumer"]');
  assert.equal(await row.locator('[data-testid="subscription-type"]').inputValue(), 'SQL92');
  const before = {
    log: await page.textContent('[data-testid="event-log"]'),
    table: await page.textContent('[data-testid="subscription-table"]'),
  };
  const input = row.locator('[data-testid="subscription-input"]');
  const bad = "a > 5 AND region = ";
  await input.fill(bad);
  await input.press('Enter');
  await input.blur();
  const err = row.locator('[data-testid="sql-error"]');
  await err.waitFor();
  const pos = Number(await err.getAttribute('data-position'));
  assert.ok(Number.isInteger(pos) && pos >= 10 && pos <= bad.length, `position ${pos}`);
  assert.match(await err.textContent(), new RegExp(`at ${pos}: `));
  assert.equal(await err.locator('mark.caret').count(), 1);
  assert.equal(await input.getAttribute('aria-invalid'), 'true');
  await page.waitForTimeout(200);
  assert.equal(await simMs(page), t);
  assert.equal(await page.textContent('[data-testid="event-log"]'), before.log);
  assert.equal(await page.textContent('[data-testid="subscription-table"]'), before.table);
  // A valid SQL edit clears the error and enters a subscribe command with type SQL92.
  await input.fill("a > 1 AND region = 'eu'");
  await row.locator('[data-testid="sql-error"]').waitFor({ state: 'detached' });
  await input.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid="event-log"]').textContent.includes("a > 1 AND region = 'eu'"));
  await page.screenshot({ path: join(artifacts, 'sql-error.png') });
  await page.close();
  assert.deepEqual(errors, []);
});

test('heartbeat-cost preset: the filter panel plots both designs and lists both indexes', async () => {
  const { page, errors } = await openPage();
  await loadPreset(page, 'filter-manager-heartbeat-cost.json');
  await page.keyboard.press('End');
  await waitAtEnd(page);
  await page.click('[data-testid="tab-filters"]');
  await page.waitForSelector('[data-testid="heartbeat-cost-plot"][data-drawn]');
  assert.ok(Number(await page.getAttribute('[data-testid="heartbeat-cost-plot"]', 'data-drawn')) > 10);
  assert.ok((await inkedPixels(page, 'heartbeat-cost-plot')) > 500, 'cost plot is blank');
  const flags = async () => ({
    design: await page.getAttribute('[data-testid="filter-broker-flags"]', 'data-design'),
    text: await page.textContent('[data-testid="filter-broker-flags"]'),
  });
  const mean = (text) => Number(/([\d.]+) entries touched on average/.exec(text)[1]);
  const a = await flags();
  assert.equal(a.design, 'topicScan');
  assert.match(a.text, /enablePropertyFilter\s*true/);
  const regA = await page.$$('[data-testid="filter-registry"] tr[data-topic]');
  assert.ok(regA.length > 50, `registry rows: ${regA.length}`);
  assert.ok((await page.$$('[data-testid="filter-registry"] tr[data-dead="true"]')).length >= 10, 'dead entries listed');
  await page.selectOption('[data-testid="filter-broker-select"]', '1');
  await page.waitForSelector('[data-testid="filter-broker-flags"][data-design="groupIndex"]');
  const b = await flags();
  assert.ok(mean(a.text) > 2 * mean(b.text), `topicScan ${mean(a.text)} vs groupIndex ${mean(b.text)}`);
  const groups = await page.$$eval('[data-testid="filter-group-index"] tr[data-group]', (rs) => rs.map((r) => r.dataset.group));
  assert.ok(groups.includes('GID_SQL_0'), `group index: ${groups}`);
  await page.screenshot({ path: join(artifacts, 'filters.png') });
  await page.setViewportSize({ width: 800, height: 600 });
  await page.waitForTimeout(200);
  await page.locator('[data-testid="heartbeat-cost-plot"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(artifacts, 'filters-800x600.png') });
  await page.close();
  assert.deepEqual(errors, []);
});

test('stop / start buttons change a consumer state; bad numbers give inline errors', async () => {
  const { page, errors } = await openPage();
  await setSpeed(page, 2);
  await page.click('[data-testid="play"]');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="sim-time"]').dataset.ms) >= 5000);
  await pause(page);
  const row = page.locator('[data-testid="consumer-row"][data-client-id="ConsumerA"]');
  const state = row.locator('[data-testid="consumer-state"]');
  assert.equal(await state.getAttribute('data-running'), 'true');
  await row.locator('[data-testid="consumer-stop"]').click();
  await page.waitForFunction(
    () => document.querySelector('[data-client-id="ConsumerA"] [data-testid="consumer-state"]').dataset.running === 'false',
  );
  assert.match(await page.textContent('[data-testid="event-log"]'), /stopConsumer/);
  assert.equal(await row.locator('[data-testid="consumer-start"]').textContent(), 'restart');
  await row.locator('[data-testid="consumer-start"]').click();
  await page.waitForFunction(
    () => document.querySelector('[data-client-id="ConsumerA"] [data-testid="consumer-state"]').dataset.running === 'true',
  );
  await row.locator('[data-testid="consumer-crash"]').click();
  await page.waitForFunction(
    () => document.querySelector('[data-client-id="ConsumerA"] [data-testid="consumer-state"]').dataset.running === 'false',
  );
  assert.match(await row.locator('[data-testid="consumer-state"]').textContent(), /crashed/);
  // Queue count: invalid input is an inline error, a valid one enters setQueueCount.
  const q = page.locator('[data-testid="topic-queues"]').first();
  await q.fill('0');
  await q.dispatchEvent('change');
  await page.waitForSelector('[data-testid="topic-error"]');
  await q.fill('6');
  await q.dispatchEvent('change');
  await page.waitForFunction(() => !document.querySelector('[data-testid="topic-error"]'));
  assert.match(await page.textContent('[data-testid="event-log"]'), /setQueueCount|queue count/i);
  // Producer send form: a bad count is an inline error; a good one enters produce.
  const p = page.locator('[data-testid="producer-row"]').first();
  await p.locator('[data-testid="send-count"]').fill('ten');
  await p.locator('[data-testid="send-button"]').click();
  await page.locator('[data-testid="send-error"]').waitFor();
  await p.locator('[data-testid="send-count"]').fill('3');
  await p.locator('[data-testid="send-button"]').click();
  await page.waitForSelector('[data-testid="send-error"]', { state: 'detached' });
  await page.waitForFunction(() => /produce/.test(document.querySelector('[data-testid="event-log"]').textContent));
  await page.screenshot({ path: join(artifacts, 'editor.png') });
  await page.close();
  assert.deepEqual(errors, []);
});

test('stepping back and scrubbing rebuild earlier states; running on gives the same result', async () => {
  const { page, errors } = await openPage(undefined, '#t=30000');
  assert.equal(await simMs(page), 30000);
  await page.keyboard.press('ArrowLeft');
  const back = await waitMsOff(page, 30000);
  assert.ok(back < 30000 && back > 0, `stepped back to ${back}`);
  await page.click('[data-testid="step-back"]');
  assert.ok((await waitMsOff(page, back)) < back);
  // Scrub to 8 s: before the producer's first message, nothing is consumed yet.
  await page.$eval('[data-testid="scrub"]', (el) => {
    el.value = '8000';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await waitMs(page, 8000);
  assert.deepEqual(await counts(page), { ConsumerA: 0, ConsumerB: 0 });
  await page.keyboard.press('End');
  await waitAtEnd(page);
  assert.deepEqual(await counts(page), { ConsumerA: 0, ConsumerB: 6 });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the send form carries user properties that the SQL92 filter evaluates; bad properties are refused', async () => {
  const { page, errors } = await openPage(undefined, '#preset=sql92-filter');
  const row = page.locator('[data-testid="producer-row"]').first();
  await row.locator('[data-testid="send-topic"]').selectOption('TopicSql');
  await row.locator('[data-testid="send-count"]').fill('3');
  await row.locator('[data-testid="send-properties"]').fill('TAGS=x');
  await row.locator('[data-testid="send-button"]').click();
  await page.waitForSelector('[data-testid="send-error"]');
  assert.match(await page.textContent('[data-testid="send-error"]'), /system property/);
  await row.locator('[data-testid="send-properties"]').fill('a=10, region=eu');
  await row.locator('[data-testid="send-button"]').click();
  await page.waitForFunction(() => !document.querySelector('[data-testid="send-error"]'));
  await page.keyboard.press('End');
  await waitAtEnd(page);
  const c = await counts(page);
  assert.equal(c.SqlConsumer, 4 + 3);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a link fragment opens a preset at a time; a bad fragment gets an error with its column', async () => {
  const { page, errors } = await openPage(undefined, '#preset=consistent-group&t=60000');
  assert.equal(await simMs(page), 60000);
  const c = await counts(page);
  assert.equal(c.ConsumerA + c.ConsumerB, 20);
  assert.deepEqual(errors, []);
  await page.close();
  const bad = await openPage(undefined, '#t=soon');
  const text = await bad.page.textContent('[data-testid="link-error"]');
  assert.match(text, /column 4: t must be a whole number/);
  assert.equal(await simMs(bad.page), 0);
  // The address bar keeps the bad link, for its recipient to mend.
  assert.equal(new URL(bad.page.url()).hash, '#t=soon');
  await bad.page.close();
});

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

test('performance: first frame, frame time with 5,000 messages in flight, gzipped size', async () => {
  // Time from navigation to the first drawn frame (performance.now() is relative to navigation start).
  const first = [];
  // The page's wasm and JS the first view downloads (the seed preset, RocketMQ).
  const firstView = new Set();
  for (let i = 0; i < 3; i++) {
    const page = await ctx.browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('request', (r) => {
      // Relative to dist/: the page's files live in app-<content hash>/.
      const file = r.url().slice(ctx.baseUrl.length);
      if (/\.(wasm|js)$/.test(file)) firstView.add(file);
    });
    await page.goto(ctx.baseUrl);
    await page.waitForFunction(() => typeof window.__mqvizFirstFrame === 'number', null, { timeout: 20000 });
    first.push(await page.evaluate(() => window.__mqvizFirstFrame));
    await page.close();
  }

  const { page, errors } = await openPage();
  await page.goto(`${ctx.baseUrl}#bench`);
  await page.reload(); // the fragment is read at start-up
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="canvas-topology"]')?.dataset.dots) >= 5000, null, {
    timeout: 30000,
  });
  const m = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const c = document.querySelector('[data-testid="canvas-topology"]');
        const start = window.__mqvizFrameMs.length;
        const intervals = [];
        const dots = [];
        let last = null;
        const t0 = performance.now();
        function frame(ts) {
          if (last !== null) intervals.push(ts - last);
          last = ts;
          dots.push(Number(c.dataset.dots));
          if (performance.now() - t0 < 3000) requestAnimationFrame(frame);
          else resolve({ intervals, work: window.__mqvizFrameMs.slice(start), dots });
        }
        requestAnimationFrame(frame);
      }),
  );
  await page.screenshot({ path: join(artifacts, 'bench.png') });
  await page.close();

  const gzipped = (f) => gzipSync(readFileSync(join(dist, f)), { level: 9 }).length;
  const app = readdirSync(dist).filter((d) => d.startsWith('app-'));
  assert.equal(app.length, 1, `one app-<hash> directory in dist/: ${app}`);
  const all = readdirSync(join(dist, app[0]))
    .filter((f) => f.endsWith('.wasm') || f.endsWith('.js'))
    .map((f) => `${app[0]}/${f}`);
  const gz = [...firstView].reduce((sum, f) => sum + gzipped(f), 0);
  const raw = [...firstView].reduce((sum, f) => sum + readFileSync(join(dist, f)).length, 0);
  const byFile = Object.fromEntries(all.map((f) => [f, gzipped(f)]));
  const figures = {
    firstFrameMs: first.map((x) => Math.round(x)),
    frameIntervalMs: { p50: pct(m.intervals, 50), p95: pct(m.intervals, 95), frames: m.intervals.length },
    loopWorkMs: { p50: pct(m.work, 50), p95: pct(m.work, 95), samples: m.work.length },
    dotsInFlight: { min: Math.min(...m.dots), max: Math.max(...m.dots) },
    firstViewWasmJs: { files: [...firstView].sort(), raw, gzip: gz, gzipKB: Math.round(gz / 1024) },
    gzipByFile: byFile,
  };
  writeFileSync(join(artifacts, 'perf.json'), JSON.stringify(figures, null, 2));
  console.log(`PERF ${JSON.stringify(figures)}`);
  // Generous sanity bounds only; the figures are what matters.
  assert.ok(figures.dotsInFlight.min >= 5000, `fewer than 5,000 dots in flight: ${figures.dotsInFlight.min}`);
  assert.ok(figures.frameIntervalMs.p95 < 250, `frame p95 ${figures.frameIntervalMs.p95} ms`);
  assert.ok(Math.min(...first) < 10000, `first frame ${first} ms`);
  // Kafka's and Pulsar's code is fetched when a run of theirs is opened, and the code of embed
  // mode, the comparison, the tour player and the help when they are shown: not for the first view.
  assert.ok(firstView.has(`${app[0]}/main_bg.wasm`), `first view fetched ${[...firstView]}`);
  assert.ok(![...firstView].some((f) => /split_|chunk_/.test(f)), `first view fetched ${[...firstView]}`);
  // Nor the other presets' texts: those are fetched from scenarios/ and tours/ when chosen.
  const wasm = readFileSync(join(dist, app[0], 'main_bg.wasm'));
  for (const dir of ['scenarios', 'tours']) {
    for (const f of readdirSync(join(dist, dir)).filter((f) => f !== 'seed-same-topic-different-tags.json')) {
      assert.ok(!wasm.includes(readFileSync(join(dist, dir, f))), `${dir}/${f} is in the first view's wasm`);
    }
  }
  // 450 KB (450,000 bytes) is the goal; the ceiling leaves headroom so that a small change to
  // the page cannot fail CI on size alone (a fresh clone once built 292 bytes more than the
  // working tree). A change that grows the first view by more than 2 KB says why in its commit.
  const goal = 450000;
  const ceiling = 512000;
  console.log(`FIRST-VIEW ${gz} bytes gzipped (goal ${goal}: ${gz <= goal ? `${goal - gz} under` : `${gz - goal} over`}; ceiling ${ceiling})`);
  writeFileSync(join(artifacts, 'first-view.txt'), `${gz}\n`);
  assert.ok(gz <= ceiling, `first view's gzipped wasm+js ${gz} bytes, over the ${ceiling}-byte ceiling`);
  assert.deepEqual(errors, []);
});
