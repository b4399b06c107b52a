// The Kafka UI (issue 7, item 5): every Kafka preset played to its end shows what it teaches,
// read from the Gantt's `data-gantt`, the group panel's `data-*` attributes and the canvas's
// `data-scene`; the editor enters its edits as timeline actions; axe finds nothing to fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { useBrowser, openPage, simMs, scene, artifacts, drawn, entered } from './harness.mjs';

const ctx = useBrowser();

async function atEnd(page) {
  // The shortcut is ignored while a field has the focus.
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press('End');
  // At the end, the seek done and the panels caught up with it.
  await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"][data-ready]');
}

/// Waits until the page is settled and the canvas has drawn what it shows.
// NEEDS-SIGNAL: the canvas does not say which run, time or model version it drew (`data-scene`
// names none), so after the page settled the wait is for two of the page's animation frames: the
// frame loop draws a changed model in the first frame after the change.
/// What the Gantt drew last, once it has caught up with the simulated time.
async function gantt(page) {
  // The time the page settled at, not one a seek passes through.
  await page.waitForSelector('[data-testid="sim-time"][data-ready]');
  const t = await simMs(page);
  await page.waitForFunction(
    (t) => {
      const s = document.querySelector('[data-testid="kafka-gantt-canvas"]')?.getAttribute('data-gantt');
      return s && JSON.parse(s).now === t;
    },
    t,
  );
  return JSON.parse(await page.getAttribute('[data-testid="kafka-gantt-canvas"]', 'data-gantt'));
}

async function group(page, name) {
  const g = page.locator(`[data-testid="kafka-group"][data-group="${name}"]`);
  await g.waitFor();
  return {
    state: await g.getAttribute('data-state'),
    generation: Number(await g.getAttribute('data-generation')),
    epoch: Number(await g.getAttribute('data-epoch')),
    protocol: await g.getAttribute('data-protocol'),
    received: Number(await g.getAttribute('data-received')),
    duplicates: Number(await g.getAttribute('data-duplicates')),
    lost: Number(await g.getAttribute('data-lost')),
  };
}

const statesOf = (g, kind, label) => g.rows.find((r) => r.kind === kind && r.label === label)?.states ?? [];
const partitionRows = (g, consumer) => g.rows.filter((r) => r.kind === 'partition' && r.consumer === consumer);

/// Opens a preset, plays it to the end, runs `check` and makes sure nothing went to the console.
async function preset(name, check) {
  const { page, errors } = await openPage(ctx, { fragment: `#preset=${name}` });
  await atEnd(page);
  await check(page);
  await page.close();
  assert.deepEqual(errors, []);
}

test('kafka-eager-join: all partitions stop at once while the group rebalances (stop-the-world)', () =>
  preset('kafka-eager-join', async (page) => {
    const g = await gantt(page);
    assert.equal(g.windows.length, 1, JSON.stringify(g.windows));
    const w = g.windows[0];
    assert.ok(w.idle === 12 && w.partitions === 12 && w.to - w.from > 1000, JSON.stringify(w));
    assert.ok(statesOf(g, 'group', 'billing').includes('PREPARING_REBALANCE'));
    assert.ok(statesOf(g, 'member', 'c1').includes('COMPLETING_REBALANCE'));
    // c1 and c2 gave up all four partitions each before the new assignment (EAGER revokes everything).
    for (const c of ['c1', 'c2']) {
      assert.equal(partitionRows(g, c).filter((r) => r.states.includes('UNASSIGNED')).length, 4, c);
    }
    assert.match(await page.textContent('[data-testid="kafka-gantt-summary"]'), /billing: stop-the-world at \d+\.\d s for \d\.\d s: .* all 12 partitions were idle/);
    const billing = await group(page, 'billing');
    assert.equal(billing.state, 'STABLE');
    assert.equal(billing.generation, 2);
    // The generation is shown in the panel, and the state machine marks the current state.
    assert.equal(await page.textContent('[data-group="billing"] [data-testid="kafka-generation"]'), '2');
    assert.equal(await page.textContent('[data-group="billing"] .kstates [aria-current="step"]'), 'STABLE');
  }));

test('kafka-cooperative-join: no stop-the-world; c4 ends up with 3 partitions taken one from each', () =>
  preset('kafka-cooperative-join', async (page) => {
    const g = await gantt(page);
    assert.deepEqual(g.windows, []);
    assert.equal(partitionRows(g, 'c4').length, 3);
    assert.match(await page.textContent('[data-testid="kafka-gantt-summary"]'), /No stop-the-world/);
    const owned = await page.getAttribute('[data-testid="kafka-member"][data-client-id="c4"]', 'data-owned');
    assert.equal(owned.split(',').length, 3, owned);
    // Cooperative members kept fetching while they rejoined: c1 has a partition FETCHING all along.
    assert.ok(partitionRows(g, 'c1').some((r) => !r.states.includes('UNASSIGNED')));
  }));

test('kafka-crash-redelivery: the crashed member is shown crashed and its records are read twice', () =>
  preset('kafka-crash-redelivery', async (page) => {
    const g = await gantt(page);
    assert.ok(statesOf(g, 'member', 'c1').includes('CRASHED'), JSON.stringify(statesOf(g, 'member', 'c1')));
    const ledger = await group(page, 'ledger');
    assert.ok(ledger.duplicates > 0, JSON.stringify(ledger));
    assert.equal(await page.getAttribute('[data-testid="kafka-member"][data-client-id="c1"]', 'data-state'), 'crashed');
    assert.ok(ledger.generation >= 2);
  }));

test('kafka-fetch-states: AWAIT_RESET and AWAIT_VALIDATION lanes and badges, the audit consumer fails', async () => {
  // Just after the leader change (t=8 s, validated at 8.005 s) the readers' positions wait for validation.
  const { page, errors } = await openPage(ctx, { fragment: '#preset=kafka-fetch-states&t=8004' });
  // The scene at 8.004 s, not one drawn before the preset came or while the link's seek ran.
  await drawn(page);
  const s = await scene(page);
  assert.ok(Object.keys(s.badges).some((b) => b.startsWith('AWAIT_VALIDATION')), JSON.stringify(s.badges));
  await atEnd(page);
  const g = await gantt(page);
  const seen = new Set(g.rows.filter((r) => r.kind === 'partition').flatMap((r) => r.states));
  for (const st of ['INITIALIZING', 'AWAIT_RESET', 'AWAIT_VALIDATION', 'FETCHING']) assert.ok(seen.has(st), `${st} in ${[...seen]}`);
  assert.match(await page.getAttribute('[data-testid="kafka-member"][data-client-id="auditor"]', 'data-state'), /failed/);
  await drawn(page);
  const end = await scene(page);
  assert.ok(Object.keys(end.badges).length > 0, 'partitions carry FetchState badges');
  await page.close();
  assert.deepEqual(errors, []);
});

test('kafka-kip848-reconciliation: epochs, UNREVOKED / UNRELEASED partitions, no stop-the-world', () =>
  preset('kafka-kip848-reconciliation', async (page) => {
    const g = await gantt(page);
    assert.ok(statesOf(g, 'member', 'c3').includes('UNRELEASED_PARTITIONS'));
    assert.ok(['c1', 'c2'].some((c) => statesOf(g, 'member', c).includes('UNREVOKED_PARTITIONS')));
    assert.deepEqual(g.windows, []);
    const f = await group(page, 'fulfilment');
    assert.equal(f.protocol, 'consumer');
    assert.ok(f.epoch >= 2, JSON.stringify(f));
    assert.match(await page.textContent('[data-group="fulfilment"] .kgen'), /group epoch \d+ · target epoch \d+/);
  }));

test('kafka-new-group-latest: latest skips what came before; earliest reads it all', () =>
  preset('kafka-new-group-latest', async (page) => {
    const analytics = await group(page, 'analytics');
    const audit = await group(page, 'audit');
    assert.ok(analytics.lost > 0, JSON.stringify(analytics));
    assert.equal(audit.lost, 0);
    assert.ok(audit.received > analytics.received, `${audit.received} vs ${analytics.received}`);
  }));

test('kafka-static-membership: the static restart causes no rebalance, the dynamic one two stops', () =>
  preset('kafka-static-membership', async (page) => {
    const g = await gantt(page);
    assert.deepEqual(
      g.windows.map((w) => w.group),
      ['dynamic-group', 'dynamic-group'],
    );
    const st = await group(page, 'static-group');
    const dy = await group(page, 'dynamic-group');
    assert.ok(st.generation < dy.generation, `${st.generation} vs ${dy.generation}`);
    assert.match(await page.textContent('[data-testid="kafka-member"][data-client-id="s2"]'), /static/);
  }));

test('editing: add a consumer, crash one, change the assignor: each is a timeline action in the log', async () => {
  const { page, errors } = await openPage(ctx, { fragment: '#preset=kafka-eager-join&t=5000' });
  const block = page.locator('[data-testid="group"][data-group="billing"]');
  await block.locator('[data-testid="add-consumer"]').click();
  await page.waitForSelector('[data-testid="consumer-row"][data-client-id="c5"]');
  await entered(page, 0);
  assert.match(await page.textContent('[data-testid="edit-feedback"]'), /c5 joins billing/);
  await page.locator('[data-testid="consumer-row"][data-client-id="c2"] [data-testid="consumer-crash"]').click();
  await page.waitForFunction(
    () => document.querySelector('[data-client-id="c2"] [data-testid="consumer-state"]').dataset.running === 'false',
  );
  await entered(page, 1);
  assert.match(await page.textContent('[data-testid="edit-feedback"]'), /c2 crashed/);
  await block.locator('[data-testid="assignor-select"]').selectOption({ label: 'cooperative-sticky (COOPERATIVE)' });
  // The feedback and the log are there already (of the edits before): wait for this edit.
  await entered(page, 2);
  assert.match(await page.textContent('[data-testid="edit-feedback"]'), /applies at the next rebalance/);
  const log = await page.textContent('[data-testid="event-log"]');
  assert.match(log, /addConsumer c5 to billing/);
  assert.match(log, /crashConsumer c2/);
  assert.match(log, /setAssignors billing \[cooperative-sticky\]/);
  // A bad subscription is refused inline and enters nothing.
  const sub = page.locator('[data-testid="consumer-row"][data-client-id="c1"] [data-testid="subscription-input"]');
  await sub.fill('nope');
  await sub.press('Enter');
  await page.waitForSelector('[data-testid="subscription-error"]');
  assert.match(await page.textContent('[data-testid="subscription-error"]'), /unknown topic "nope"/);
  assert.equal(await page.textContent('[data-testid="event-log"]'), log);
  // The run goes on with the edits: c5 gets partitions, the group rebalanced cooperatively.
  await atEnd(page);
  const owned = await page.getAttribute('[data-testid="kafka-member"][data-client-id="c5"]', 'data-owned');
  assert.ok(owned.length > 0, 'c5 owns partitions');
  assert.match(await page.textContent('[data-group="billing"] .kgen'), /cooperative-sticky/);
  await page.screenshot({ path: join(artifacts, 'kafka-edit.png') });
  await page.close();
  assert.deepEqual(errors, []);
});

/// After a resize: waits until the canvas and the lag plot have been drawn at their new size (each
/// sizes itself to its box when it draws: the scene's `width`, the plot's pixel width).
async function redrawnAtSize(page) {
  await page.waitForFunction(() => {
    const c = document.querySelector('[data-testid="canvas-topology"]');
    const drawnAt = JSON.parse(c?.getAttribute('data-scene') || 'null')?.width;
    const canvasOk = !c || drawnAt === Math.max(200, c.clientWidth);
    const p = document.querySelector('[data-testid="kafka-lag-plot"]');
    const dpr = Math.max(1, devicePixelRatio);
    // A plot smaller than 40 px either way is not drawn at all.
    const plotOk =
      !p ||
      p.clientWidth < 40 ||
      p.clientHeight < 40 ||
      (p.width === Math.round(p.clientWidth * dpr) && p.height === Math.round(p.clientHeight * dpr));
    return canvasOk && plotOk;
  });
}

test('screenshots at 1280×800 and 800×600, and axe finds no violations', async () => {
  const { page, errors } = await openPage(ctx, { fragment: '#preset=kafka-eager-join&t=17000' });
  await gantt(page);
  // The Gantt comes before the legend, so its first lanes are above the fold at 1280×800; the
  // legend names no RocketMQ-only marks (Kafka has no message filters).
  const ganttTop = await page.$eval('[data-testid="kafka-gantt-canvas"]', (e) => e.getBoundingClientRect().top);
  assert.ok(ganttTop < 800 - 80, `the Gantt starts at y=${ganttTop}, below the fold`);
  const legend = await page.textContent('[data-testid="legend"]');
  assert.ok(legend.includes('consumed') && legend.includes('offset reset'), legend);
  for (const other of ['filter', 'heartbeat that overwrote', 'differs from the broker', 'retrying', 'dead-letter']) assert.ok(!legend.includes(other), `${other} in ${legend}`);
  assert.match(await page.textContent('.plots figcaption'), /^Lag per partition \(log end − committed\)/);
  // The page opened on the default RocketMQ preset first: its word for a partition is gone.
  assert.equal((await page.textContent('[data-testid="assignment-table"] th')).trim(), 'partition');
  await page.screenshot({ path: join(artifacts, 'kafka-eager.png') });
  await page.screenshot({ path: join(artifacts, 'kafka-eager-full.png'), fullPage: true });
  const results = await new AxeBuilder({ page }).analyze();
  assert.deepEqual(
    results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
  );
  await page.click('[data-testid="tab-lag"]');
  await page.waitForFunction(() => (document.querySelector('[data-testid="kafka-lag-plot"]')?.dataset.drawn || '').startsWith('12:'));
  await page.screenshot({ path: join(artifacts, 'kafka-lag.png') });
  await page.setViewportSize({ width: 800, height: 600 });
  await redrawnAtSize(page);
  await page.screenshot({ path: join(artifacts, 'kafka-lag-800x600.png') });
  const switched = await page.click('[data-testid="tab-inspector"]').then(
    () => true,
    () => false,
  );
  if (switched) await page.waitForSelector('[data-testid="tab-inspector"][aria-selected="true"]');
  await page.screenshot({ path: join(artifacts, 'kafka-800x600.png') });
  await page.screenshot({ path: join(artifacts, 'kafka-800x600-full.png'), fullPage: true });
  await page.close();
  assert.deepEqual(errors, []);
});
