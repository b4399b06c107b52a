// The canvas teaches (issue "The canvas teaches"): one test per numbered item, in Chromium.
// The canvas reports what it drew as JSON in its `data-scene` attribute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { useBrowser, openPage, simMs, setSpeed, scene, waitScene, loadPreset, runId, waitReady, artifacts, drawn, waitMs } from './harness.mjs';

const ctx = useBrowser();
const SEED = 'seed-same-topic-different-tags.json';
const PRESETS = [
  SEED,
  'seed-same-topic-different-tags-a-wins.json',
  'seed-different-topics-same-tag.json',
  'consistent-group.json',
  'sql92-filter.json',
  'filter-manager-heartbeat-cost.json',
];

/// Pauses a run that still plays, and waits for the panels to catch up (`data-ready` is absent
/// while it plays).
async function pauseIfPlaying(page) {
  const pause = await page.$('[data-testid="pause"]');
  if (pause) await pause.click().catch(() => {});
  await page.waitForSelector('[data-testid="sim-time"][data-ready]');
}

/// Waits until the page is settled (`data-ready`) and the frame loop has drawn what it shows and
/// said it in the live region.
// NEEDS-SIGNAL: the canvas does not say which state it drew last (`data-scene` names no run, time
// or version), nor the live region which state it spoke of; both are done by the frame loop in
// the first frame after a change, so the wait is for two of the page's animation frames.
/// Runs the next event, then waits for the canvas and the live region to show it. (A step is done
/// within the click, and may leave the clock where it was: `data-ready` holds after it.)
async function step(page) {
  await page.click('[data-testid="step"]');
  await drawn(page);
}

/// Waits until tour step `k` shows: its caption, its seek done and the panels caught up. (A step's
/// caption shows at once, the seek to its moment may take frames.)
async function tourStep(page, k, timeout = 30000) {
  await page.waitForFunction(
    (k) =>
      document.querySelector(`[data-testid="tour-caption"][data-step="${k}"]`) !== null &&
      document.querySelector('[data-testid="sim-time"]').dataset.ready !== undefined,
    k,
    { timeout },
  );
}

/// Opens `fragment` afresh on this page (the address, then a reload) and waits until the page shows
/// that link's run, as `openPage` does. A reloaded page counts its runs from the start again, so
/// the wait is for the link's preset in the new document, not for another run id than before.
async function reopen(page, fragment) {
  await page.goto(`${ctx.baseUrl}${fragment}`);
  await page.reload();
  const file = /(?:^#|&)preset=([^&]+)/.exec(fragment)[1];
  await waitReady(page, { file: file.endsWith('.json') ? file : `${file}.json` });
}

test('1. draw the mechanism: table entries flash when overwritten, mismatch marks, lost cells, pulses, brokers apart, properties', async () => {
  const { page, errors } = await openPage(ctx, { fragment: `#preset=${SEED}&t=5004` });
  // Step through the overwrite burst: the broker box shows each entry in turn, flashing.
  const seen = [];
  let flashed = 0;
  while ((await simMs(page)) < 6016) {
    await step(page);
    const s = await scene(page);
    const line = s.brokers[0].lines.find((l) => l.startsWith('TopicTestA'));
    if (line && seen[seen.length - 1] !== line) {
      seen.push(line);
      if (s.flashing) flashed++;
    }
  }
  const order = seen.map((l) => l.match(/⇐ (\w+) \((\w+), subVersion (\d+)\)/).slice(1).join(' '));
  assert.deepEqual(order.slice(-3), ['TagB ConsumerB 5000', 'TagA ConsumerA 5008', 'TagB ConsumerB 6010'], JSON.stringify(seen));
  assert.ok(flashed >= 3, `each overwrite flashes (${flashed})`);
  // ConsumerA's own TagA differs from the table's TagB: it carries the mismatch mark.
  let s = await waitScene(page, (x) => x.consumers.find((c) => c.name === 'ConsumerA')?.mismatch);
  assert.ok(s.brokers[0].alerts >= 1, 'the entry is marked as disagreeing with a member');
  // Lost messages get a style of their own once they are skipped.
  await reopen(page, `#preset=${SEED}&t=12500`);
  s = await waitScene(page, (x) => x.cells.skipped >= 4);
  assert.ok(s.cells.consumed >= 4, JSON.stringify(s.cells));
  // Heartbeats travel as pulses while playing.
  await reopen(page, `#preset=${SEED}&t=4990&speed=0.1`);
  await page.click('[data-testid="play"]');
  await waitScene(page, (x) => x.pulses, 15000);
  await page.click('[data-testid="pause"]');
  // Each broker is its own box; SQL92 verdicts are marked on the cells; properties on hover and in provenance.
  await reopen(page, '#preset=sql92-filter.json&t=20000');
  s = await waitScene(page, (x) => x.brokers.length === 2 && x.cells.notes >= 3);
  const probe = s.probe;
  const canvas = await page.$('[data-testid="canvas-topology"]');
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + probe.x, box.y + probe.y);
  await page.waitForFunction(() => (document.querySelector('[data-testid="canvas-topology"]').getAttribute('title') || '').includes('offset'));
  const title = await canvas.getAttribute('title');
  assert.match(title, /TopicSql offset 0/);
  assert.match(title, /a=\S+/, title);
  await page.mouse.click(box.x + probe.x, box.y + probe.y);
  await page.waitForSelector('[data-testid="message-properties"]');
  assert.match(await page.textContent('[data-testid="message-properties"]'), /TAGS=TagA/);
  await page.screenshot({ path: join(artifacts, 'teach-mechanism.png') });
  await page.close();
  assert.deepEqual(errors.filter((e) => !e.includes('favicon')), []);
});

test('2. one meaning per colour: drops are crosses, tags the only hues, larger dots along the edges', async () => {
  const { page } = await openPage(ctx, { fragment: `#preset=${SEED}&t=9990&speed=1` });
  await page.uncheck('[data-testid="pacing"]');
  await page.click('[data-testid="play"]');
  await waitScene(page, (x) => x.moving && x.crosses, 15000);
  const s = await waitScene(page, (x) => x.labels.length === 2, 15000);
  assert.deepEqual(s.labels, ['TagA', 'TagB']);
  await page.click('[data-testid="pause"]');
  // Paused (`data-ready` is absent while it plays): the panels have caught up.
  await page.waitForSelector('[data-testid="sim-time"][data-ready]');
  // The legend names every cell style and drop shape in words and shapes.
  const legend = await page.textContent('[data-testid="legend"]');
  for (const word of ['consumed', 'waiting', 'skipped', 'retrying', 'dead-lettered', 'dropped by a filter', 'heartbeat']) {
    assert.ok(legend.includes(word), `legend lacks ${word}`);
  }
  await page.close();
});

test('3. pace the story: chapter marks, slow-down around key moments, idle skipped, next key moment', async () => {
  const { page } = await openPage(ctx, { fragment: `#preset=${SEED}` });
  await page.waitForSelector('[data-testid="chapter-marks"] .mark');
  const kinds = await page.$$eval('[data-testid="chapter-marks"] .mark', (ms) => ms.flatMap((m) => m.dataset.kind.split(' ')));
  for (const k of ['send', 'overwrite', 'rebalance', 'stop', 'loss']) assert.ok(kinds.includes(k), `no ${k} mark: ${kinds}`);
  // "Next moment" runs to the next mark and pauses.
  const firstAt = Number(await page.getAttribute('[data-testid="chapter-marks"] .mark', 'data-at'));
  await page.click('[data-testid="next-moment"]');
  await waitMs(page, firstAt);
  // Pacing slows playback around the 5.005 s overwrite burst... (The second of play is what is
  // measured, not a wait for something: the clock is read once the pause has taken.)
  await reopen(page, `#preset=${SEED}&t=4990&speed=10`);
  await page.click('[data-testid="play"]');
  await page.waitForTimeout(1000);
  await page.click('[data-testid="pause"]');
  await page.waitForSelector('[data-testid="sim-time"][data-ready]');
  const slowed = (await simMs(page)) - 4990;
  // ...and without it, ten simulated seconds pass per second.
  await reopen(page, `#preset=${SEED}&t=4990&speed=10`);
  await page.uncheck('[data-testid="pacing"]');
  await page.click('[data-testid="play"]');
  await page.waitForTimeout(1000);
  await page.click('[data-testid="pause"]');
  await page.waitForSelector('[data-testid="sim-time"][data-ready]');
  const plain = (await simMs(page)) - 4990;
  assert.ok(slowed < 300 && plain > 3000, `paced ${slowed} ms vs plain ${plain} ms of simulated time in one second`);
  // The idle stretch after the last consumption is skipped. (Again the 1.2 s are the measure.)
  await reopen(page, `#preset=${SEED}&t=20000&speed=10`);
  await page.click('[data-testid="play"]');
  await page.waitForTimeout(1200);
  const after = await simMs(page);
  assert.ok(after >= 50000, `idle stretch skipped: at ${after} ms after 1.2 s`);
  await page.close();
});

test('4. guided tours: every step of every tour, caption next to its element, auto-pause, collapsible description', async () => {
  const { page, errors } = await openPage(ctx);
  // The long description is collapsible: one sentence shown, the rest behind the summary.
  assert.equal(await page.$eval('[data-testid="description"]', (d) => d.open), false);
  await page.click('[data-testid="description"] summary');
  assert.equal(await page.$eval('[data-testid="description"]', (d) => d.open), true);
  for (const file of PRESETS) {
    await loadPreset(page, file);
    await page.click('[data-testid="tour-start"]');
    await tourStep(page, 0);
    let k = 0;
    let last = await simMs(page);
    for (;;) {
      const caption = await page.textContent('[data-testid="tour-caption"] p');
      assert.ok(caption.length > 10 && caption.length < 260, `${file} step ${k}: ${caption}`);
      const t = await simMs(page);
      assert.ok(t >= last, `${file}: step ${k} went back in time`);
      last = t;
      const next = await page.textContent('[data-testid="tour-next"]');
      if (next.includes('Finish')) break;
      await page.click('[data-testid="tour-next"]');
      k++;
      await tourStep(page, k);
    }
    await page.screenshot({ path: join(artifacts, `tour-${file.replace('.json', '')}.png`) });
    await page.click('[data-testid="tour-next"]');
    await page.waitForSelector('[data-testid="tour-caption"]', { state: 'detached' });
    assert.ok(k >= 3, `${file}: only ${k + 1} steps`);
  }
  // Seed tour: step 2 is the 5.005 s overwrite, shown at the broker; playing on stops at step 3.
  await loadPreset(page, SEED);
  await page.click('[data-testid="tour-start"]');
  await tourStep(page, 0);
  await page.click('[data-testid="tour-next"]');
  await tourStep(page, 1);
  assert.equal(await simMs(page), 5005);
  assert.match(await page.textContent('[data-testid="tour-caption"] p'), /overwrites/);
  await page.click('[data-testid="play"]');
  // Playing stops at step 3 by itself: its caption, and the page settled (not playing).
  await tourStep(page, 2, 20000);
  assert.equal(await simMs(page), 5009);
  await page.close();
  assert.deepEqual(errors, []);
});

test('5. fit any screen: every preset at 800×600, 1024×768 and 1920×1080; paging; cost plot on stage; sharp plots; word wrap', async () => {
  for (const [w, h] of [[800, 600], [1024, 768], [1920, 1080]]) {
    for (const file of PRESETS) {
      const { page, errors } = await openPage(ctx, { viewport: { width: w, height: h }, fragment: `#preset=${file}&t=15000` });
      // The scene of this run, not of the first run drawn while the preset came.
      await drawn(page);
      const s = await waitScene(page, (x) => x.rows.length > 0);
      assert.ok(s.consumers.length > 0, `${file} ${w}x${h}: no consumer drawn`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `${file} at ${w}x${h} scrolls sideways by ${overflow}px`);
      await page.screenshot({ path: join(artifacts, `fit-${file.replace('.json', '')}-${w}x${h}.png`) });
      await page.close();
      assert.deepEqual(errors, [], `${file} ${w}x${h}`);
    }
  }
  // A large topology pages its topics; "+N more" shows the next page.
  const { page } = await openPage(ctx, { fragment: '#preset=filter-manager-heartbeat-cost.json&t=40000' });
  await drawn(page);
  let s = await waitScene(page, (x) => x.moreAt.some((m) => m.list.endsWith(':topics')));
  const more = s.moreAt.find((m) => m.list.endsWith(':topics'));
  const before = s.rows.join(',');
  const box = await (await page.$('[data-testid="canvas-topology"]')).boundingBox();
  await page.mouse.click(box.x + more.x, box.y + more.y);
  s = await waitScene(page, (x) => x.rows.join(',') !== before);
  // The filter-registry preset puts its cost plot on the stage.
  await page.waitForSelector('[data-testid="stage-cost-plot"][data-drawn]');
  // Tables wrap at word boundaries.
  const wrap = await page.$eval('table.grid td', (td) => [getComputedStyle(td).overflowWrap, getComputedStyle(td).wordBreak]);
  assert.deepEqual(wrap, ['normal', 'normal']);
  await page.close();
  // Plots honour the device pixel ratio.
  const hi = await openPage(ctx, { deviceScaleFactor: 2, fragment: `#preset=${SEED}&t=15000` });
  await hi.page.waitForSelector('[data-testid="plot-consumed"][data-drawn]');
  const [cw, w2] = await hi.page.$eval('[data-testid="plot-consumed"]', (c) => [c.clientWidth, c.width]);
  assert.equal(w2, cw * 2);
  await hi.page.close();
});

test('6. feedback for every edit: when it applies, what still holds, bad numbers, one state wording, log follows, Space once', async () => {
  const { page } = await openPage(ctx, { fragment: `#preset=${SEED}&t=12000` });
  await page.selectOption('[data-testid="strategy-select"]', 'AVG_BY_CIRCLE');
  await page.waitForSelector('[data-testid="edit-feedback"]');
  assert.match(await page.textContent('[data-testid="edit-feedback"]'), /applies at each member's next rebalance; the next is in about \d+\.\d s/);
  const input = page.locator('[data-testid="consumer-row"][data-client-id="ConsumerA"] [data-testid="subscription-input"]');
  await input.fill('||');
  await page.waitForSelector('[data-testid="subscription-error"]');
  assert.match(await page.textContent('[data-testid="subscription-error"]'), /previous expression "TagA" still holds/);
  await input.fill('TagA');
  await page.fill('[data-testid="producer-row"] [data-testid="send-count"]', 'many');
  await page.click('[data-testid="send-button"]');
  await page.waitForSelector('[data-testid="send-error"]');
  // Stop ConsumerA: the editor and the canvas say the same word.
  await page.click('button[aria-label="stop ConsumerA"]');
  await page.waitForSelector('[data-testid="consumer-row"][data-client-id="ConsumerA"] [data-testid="consumer-state"][data-running="false"]');
  assert.equal((await page.textContent('[data-testid="consumer-row"][data-client-id="ConsumerA"] [data-testid="consumer-state"]')).trim(), 'stopped');
  await waitScene(page, (x) => x.consumers.find((c) => c.name === 'ConsumerA').state === 'stopped');
  assert.match(await page.textContent('[data-testid="edit-feedback"]'), /ConsumerA unregistered/);
  // The event log follows the playhead: play until it has rows it did not have, then pause.
  const lastBefore = await page.$eval('[data-testid="event-log"] .log-row:last-child', (r) => r.textContent);
  await page.click('[data-testid="play"]');
  await page.waitForFunction(
    (last) => document.querySelector('[data-testid="event-log"] .log-row:last-child')?.textContent !== last,
    lastBefore,
  );
  await pauseIfPlaying(page);
  // The log scrolls in the frame after its rows change, so give the last change that frame.
  const follows = await page
    .waitForFunction(() => {
      const l = document.querySelector('[data-testid="event-log"]');
      return l.scrollTop + l.clientHeight >= l.scrollHeight - 30;
    }, null, { timeout: 2000 })
    .then(() => true, () => false);
  assert.ok(follows, 'the log shows its newest rows');
  const lastRow = await page.$eval('[data-testid="event-log"] .log-row:last-child', (r) => Number(r.textContent.match(/t=(\d+)/)[1]));
  assert.ok(lastRow <= (await simMs(page)), 'no row from the future');
  // Space on a focused button presses it once; it does not also toggle play.
  // Stopping ConsumerA was an edit, so Reset asks first; confirm, so the run starts again at t=0.
  const run = await runId(page);
  await page.click('[data-testid="reset"]');
  await page.click('[data-testid="reset-confirm"]');
  await waitReady(page, { after: run });
  await page.waitForFunction(() => document.querySelector('[data-testid="sim-time"]')?.getAttribute('data-ms') === '0');
  await page.focus('[data-testid="play"]');
  await page.keyboard.press('Space');
  // Pause shows that the press played, or, if playback already stopped on its own (see below),
  // a clock that moved.
  await page.waitForFunction(
    () => document.querySelector('[data-testid="pause"]') || Number(document.querySelector('[data-testid="sim-time"]')?.getAttribute('data-ms')) > 0,
    null,
    { timeout: 15000 },
  );
  // A double fire would toggle play and pause again at once: the clock would barely move. (Not
  // "still playing": playback may stop on its own, at a tour step or the story's end.) The press
  // was seen to play above; these 0.6 s are the measure of how far it ran.
  await page.waitForTimeout(600);
  const ran = await simMs(page);
  assert.ok((await page.isVisible('[data-testid="pause"]')) || ran >= 1000, `one Space plays (t=${ran} ms after 0.6 s)`);
  await page.close();
});

test('7. accessible: axe on every preset, keyboard on canvas, log and tabs, named buttons, live summary', async () => {
  for (const file of PRESETS) {
    const { page } = await openPage(ctx, { fragment: `#preset=${file}&t=15000` });
    await drawn(page);
    await waitScene(page, (x) => x.rows.length > 0);
    const r = await new AxeBuilder({ page }).analyze();
    const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')}`), [], file);
    await page.close();
  }
  const { page } = await openPage(ctx, { fragment: `#preset=${SEED}&t=5004` });
  // The live region says what changed, step by step.
  const said = [];
  while ((await simMs(page)) < 6016) {
    // `step` waits for the frame in which the live region speaks.
    await step(page);
    said.push(await page.textContent('[data-testid="live-summary"]'));
  }
  assert.ok(said.some((t) => t.includes('broker-a: TopicTestA ⇐ TagB (ConsumerB, subVersion 6010)')), said.join(' | '));
  assert.ok(said.some((t) => t.includes('ConsumerB now owns q2, q3')), said.join(' | '));
  // Canvas by keyboard: move to a partition row, then along its cells, Enter opens provenance.
  await page.focus('[data-testid="canvas-topology"]');
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('ArrowDown');
    if ((await page.textContent('[data-testid="canvas-focus"]')).startsWith('TopicTestA q0')) break;
  }
  assert.match(await page.textContent('[data-testid="canvas-focus"]'), /^TopicTestA q0/);
  await reopen(page, `#preset=${SEED}&t=12000`);
  await waitScene(page, (x) => x.cells.skipped > 0);
  await page.focus('[data-testid="canvas-topology"]');
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('ArrowDown');
    if ((await page.textContent('[data-testid="canvas-focus"]')).startsWith('TopicTestA q0')) break;
  }
  const onRow = await page.textContent('[data-testid="canvas-focus"]');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((t) => document.querySelector('[data-testid="canvas-focus"]').textContent !== t, onRow);
  assert.match(await page.textContent('[data-testid="canvas-focus"]'), /offset \d+, tag Tag[AB]/);
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid="cause-chain"] li');
  // Event log rows by keyboard.
  await page.focus('[data-testid="event-log"]');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  const focusedId = await page.evaluate(() => document.activeElement.dataset.eventId);
  await page.keyboard.press('Enter');
  await page.waitForFunction((id) => document.querySelector(`[data-testid="cause-chain"] li[data-event-id="${id}"]`), focusedId);
  // Tabs follow the ARIA pattern.
  await page.focus('[data-testid="tab-inspector"]');
  await page.keyboard.press('ArrowRight');
  // The key moves the selection and the focus off the Inspector's tab.
  await page.waitForFunction(
    () =>
      document.querySelector('[data-testid="tab-inspector"]').getAttribute('aria-selected') !== 'true' &&
      document.activeElement?.dataset.testid !== 'tab-inspector',
  );
  assert.equal(await page.getAttribute('[data-testid="tab-filters"]', 'aria-selected'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'tab-filters');
  // Buttons name their consumer.
  for (const b of ['restart ConsumerA', 'stop ConsumerA', 'crash ConsumerB']) assert.ok(await page.$(`button[aria-label="${b}"]`), b);
  await page.close();
});
