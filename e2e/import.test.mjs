// "Import…" (issue 32, "Design review from a real cluster"): what kafka-consumer-groups.sh printed,
// pasted, is read in the page with every row explained, then opens as a run whose members already
// own their partitions at t=0. Nothing imported leaves the browser; the page says what a link carries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import AxeBuilder from '@axe-core/playwright';
import { useBrowser, openPage, waitReady, runId, drawn, scene, artifacts } from './harness.mjs';

const ctx = useBrowser();
const here = dirname(fileURLToPath(import.meta.url));
const corpus = join(here, '..', 'tests', 'import', 'kafka', 'describe-members-state-3.7');
const capture = (f) => readFileSync(join(corpus, f), 'utf8');

/// The Assignment table as {partition: owner}.
async function owners(page) {
  return page.$$eval('[data-testid="assignment-table"] tbody tr', (rows) =>
    Object.fromEntries(rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent.trim())).map((c) => [c[0], c[1]])),
  );
}

test('a pasted describe, members and state capture is explained row by row and opens with its owners at t=0', async () => {
  const { page, errors } = await openPage(ctx);
  await page.click('[data-testid="import-open"]');
  await page.waitForSelector('[data-testid="import-dialog"]');
  assert.match(await page.textContent('[data-testid="import-privacy"]'), /stays in this browser/);
  // Not a capture: the error names the line.
  await page.fill('[data-testid="import-text"]', 'hello\nworld');
  await page.click('[data-testid="import-read"]');
  await page.waitForSelector('[data-testid="import-error"]');
  assert.match(await page.textContent('[data-testid="import-error"]'), /^paste:1: not recognised/);
  // The three captures of one group, pasted together, with a shell prompt above them.
  const pasted = `$ kafka-consumer-groups.sh --describe --group billing\n${capture('describe.txt')}${capture('members.txt')}${capture('state.txt')}`;
  await page.fill('[data-testid="import-text"]', pasted);
  await page.click('[data-testid="import-read"]');
  await page.waitForSelector('[data-testid="import-summary"]');
  assert.equal((await page.textContent('[data-testid="import-summary"]')).trim(), '9 rows read, 1 line not used, 4 facts derived');
  const notes = await page.$$eval('[data-testid="import-notes"] li', (li) => li.map((l) => l.textContent));
  assert.ok(notes.some((n) => /^paste:1: unused: before any table header/.test(n)), notes.join('\n'));
  assert.ok(notes.some((n) => /payments-0: `-` in CURRENT-OFFSET: the group has no committed offset here/.test(n)));
  assert.ok(notes.some((n) => /derived: group billing: subscriptions are not in the captures/.test(n)));
  await page.screenshot({ path: join(artifacts, 'import-dialog-1280.png') });
  const audit = await new AxeBuilder({ page }).include('[data-testid="import-dialog"]').analyze();
  assert.deepEqual(audit.violations.map((v) => `${v.id}: ${v.help}`), []);

  const before = await runId(page);
  await page.click('[data-testid="import-run"]');
  await waitReady(page, { after: before });
  assert.equal(await page.$('[data-testid="import-dialog"]'), null, 'the dialog closes once the run is in');
  assert.match(await page.textContent('h1'), /Imported: group billing/);
  // At t=0, before Play, the members own what the capture said: no rebalance from nothing.
  await drawn(page);
  const table = await owners(page);
  assert.equal(table['orders:p0'], 'consumer-billing-1', JSON.stringify(table));
  assert.equal(table['orders:p2'], 'consumer-billing-2', JSON.stringify(table));
  assert.equal(table['payments:p0'], 'consumer-billing-2', JSON.stringify(table));
  const s = await scene(page);
  assert.deepEqual(
    s.consumers.map((c) => c.name).sort(),
    ['consumer-billing-1', 'consumer-billing-2', 'consumer-billing-3'],
    JSON.stringify(s.consumers),
  );
  assert.ok(s.cells.pending > 0, `the lag the capture showed is in the logs: ${JSON.stringify(s.cells)}`);
  // The import's idle producer: its send form is how new records arrive after a change.
  assert.ok(await page.$('[data-testid="producer-row"][data-producer="producer"]'), 'the idle producer has a send form');
  // Where the run's names could leave the browser, the page says so.
  assert.match(await page.textContent('[data-testid="import-link-note"]'), /a copied link or an exported run carries them/);
  await page.screenshot({ path: join(artifacts, 'import-run-1280.png') });
  await page.close();
  assert.deepEqual(errors, []);
});

test('captures dropped on the page open the import dialog, read together', async () => {
  const { page, errors } = await openPage(ctx);
  // Two text files dropped at once, as a user drags them from a file manager.
  await page.evaluate(
    ([describe, state]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([describe], 'describe.txt', { type: 'text/plain' }));
      dt.items.add(new File([state], 'state.txt', { type: 'text/plain' }));
      document.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    [capture('describe.txt'), capture('state.txt')],
  );
  await page.waitForSelector('[data-testid="import-dialog"]');
  // Both files read (each arrives on its own): 5 describe rows and the state row.
  await page.waitForFunction(() => /^6 rows read/.test(document.querySelector('[data-testid="import-summary"]')?.textContent ?? ''));
  const notes = await page.$$eval('[data-testid="import-notes"] li', (li) => li.map((l) => l.textContent));
  assert.ok(notes.some((n) => n.startsWith('describe.txt:3: read: orders-0: committed 1195')), notes.join('\n'));
  assert.ok(notes.some((n) => n.startsWith('state.txt:3: read: group billing: Stable')), notes.join('\n'));
  await page.close();
  assert.deepEqual(errors, []);
});

test('a pasted consumerProgress and consumerConnection open as a RocketMQ run whose members hold their queues at t=0', async () => {
  const { page, errors } = await openPage(ctx);
  const dir = join(here, '..', 'tests', 'import', 'rocketmq', 'progress-connection-4.9.7');
  const progress = readFileSync(join(dir, 'progress.txt'), 'utf8');
  const connection = readFileSync(join(dir, 'connection.txt'), 'utf8');
  await page.click('[data-testid="import-open"]');
  await page.waitForSelector('[data-testid="import-dialog"]');
  // Both captures pasted into the one box, one after the other.
  await page.fill('[data-testid="import-text"]', `${progress}\n${connection}`);
  await page.click('[data-testid="import-read"]');
  await page.waitForSelector('[data-testid="import-summary"]');
  const notes = await page.$$eval('[data-testid="import-notes"] li', (li) => li.map((l) => l.textContent));
  assert.ok(notes.some((n) => /^paste:4: read: OrderTopic:broker-a:0: max offset 1200, committed 1190 \(lag 10\), held by a client on 10\.0\.0\.11$/.test(n)), notes.join('\n'));
  assert.ok(notes.some((n) => /read: the group's retry topic %RETRY%billing_group: group "billing_group"/.test(n)), notes.join('\n'));
  assert.ok(notes.some((n) => /derived: .*one broker's answer/.test(n)), notes.join('\n'));
  const before = await runId(page);
  await page.click('[data-testid="import-run"]');
  await waitReady(page, { after: before });
  assert.match(await page.textContent('h1'), /Imported: group billing_group/);
  await drawn(page);
  // At t=0 each member holds the queues of its host, as -s true said; no rebalance moved them.
  const table = await owners(page);
  const rows = Object.entries(table).filter(([q]) => /OrderTopic/.test(q) || /broker-[ab]/.test(q));
  assert.equal(rows.length, 8, JSON.stringify(table));
  for (const [q, owner] of rows) {
    const expected = /broker-a/.test(q) ? '10.0.0.11@31415' : '10.0.0.12@27182';
    assert.equal(owner, expected, `${q}: ${JSON.stringify(table)}`);
  }
  const s = await scene(page);
  assert.ok(s.cells.pending > 0, `the backlog the capture showed is in the queues: ${JSON.stringify(s.cells)}`);
  await page.screenshot({ path: join(artifacts, 'import-rocketmq-run-1280.png') });
  await page.close();
  assert.deepEqual(errors, []);
});

test('reviewing an edit of an imported RocketMQ group shows the verdict above the run with and without it', async () => {
  const { page, errors } = await openPage(ctx);
  const dir = join(here, '..', 'tests', 'import', 'rocketmq', 'progress-connection-4.9.7');
  const pasted = ['progress.txt', 'connection.txt'].map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
  await page.click('[data-testid="import-open"]');
  await page.fill('[data-testid="import-text"]', pasted);
  await page.click('[data-testid="import-read"]');
  await page.waitForSelector('[data-testid="import-summary"]');
  const before = await runId(page);
  await page.click('[data-testid="import-run"]');
  await waitReady(page, { after: before });
  assert.equal(await page.$('[data-testid="review-edits"]'), null, 'nothing to review before an edit');
  // The change under review: one member switches its tag at t=0.
  const input = page.locator('[data-testid="consumer-row"][data-client-id="10.0.0.12@27182"] [data-testid="subscription-input"]');
  await input.fill('TagB');
  await input.press('Enter');
  // New messages arrive after it: the import's idle producer sends 10 TagA messages.
  await page.locator('[data-testid="producer-row"] [data-testid="send-button"]').click();
  await page.waitForFunction(() => /produce/.test(document.querySelector('[data-testid="event-log"]').textContent));
  await page.waitForSelector('[data-testid="review-edits"]');
  await page.click('[data-testid="review-edits"]');
  await page.waitForSelector('[data-testid="review-verdict"]');
  await page.waitForSelector('[data-testid="canvas-compare"]');
  // The verdict mqviz review gives: the backlog (tag TagA) is filtered by the table's "TagB".

  assert.equal(await page.getAttribute('[data-testid="review-verdict"]', 'data-risky'), 'true');
  assert.match(await page.textContent('[data-testid="review-headline"]'), /^RISK: \d+ lost\.$/);
  const text = await page.textContent('[data-testid="review-text"]');
  assert.match(text, /The change begins at t=0 \(your first edit\)/);
  assert.match(text, /Lost \(skipped, filtered, truncated or dead-lettered\)/);
  assert.match(text, /the group's subscription table held "TagB"/);
  assert.match(await page.textContent('[data-testid="side-label-this"]'), /with your 2 edits$/);
  assert.match(await page.textContent('[data-testid="side-label-other"]'), /without your edits$/);
  // Above both runs, inside the viewport.
  const [v, a, b] = await Promise.all(
    ['review-verdict', 'canvas-topology', 'canvas-compare'].map((id) => page.locator(`[data-testid="${id}"]`).boundingBox()),
  );
  assert.ok(v.y + v.height <= a.y && v.y + v.height <= b.y, JSON.stringify({ v, a, b }));
  assert.ok(v.y >= 0 && v.y + v.height <= 800, JSON.stringify(v));
  await page.screenshot({ path: join(artifacts, 'review-edits-1280.png') });
  await page.close();
  assert.deepEqual(errors, []);
});

/// Who is active on each partition, from the Pulsar flow-control table.
async function actives(page) {
  return page.$$eval('[data-testid="flow-table"] td[data-role="active"]', (l) =>
    Object.fromEntries(l.map((td) => [td.dataset.on, td.closest('tr').dataset.consumer])),
  );
}

test('pasted pulsar-admin stats and stats-internal open as a Pulsar run with its active consumers and cursors at t=0', async () => {
  const { page, errors } = await openPage(ctx);
  const dir = join(here, '..', 'tests', 'import', 'pulsar', 'stats-3.0-failover-partitioned');
  const pasted = ['partitioned-stats.txt', 'partitioned-stats-internal.txt'].map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
  await page.click('[data-testid="import-open"]');
  await page.waitForSelector('[data-testid="import-dialog"]');
  await page.fill('[data-testid="import-text"]', pasted);
  await page.click('[data-testid="import-read"]');
  await page.waitForSelector('[data-testid="import-summary"]');
  const notes = await page.$$eval('[data-testid="import-notes"] li', (li) => li.map((l) => l.textContent));
  assert.ok(notes.some((n) => /read: persistent:\/\/acme\/retail\/orders-partition-1 \/ billing: markDelete 58:1150 is entry 6130; 1 individually acked range/.test(n)), notes.join('\n'));
  assert.ok(notes.some((n) => /read: persistent:\/\/acme\/retail\/orders-partition-1 \/ billing: Failover, 2 consumers .* active billing-worker-2/.test(n)), notes.join('\n'));
  assert.ok(notes.some((n) => /^paste:1: unused: not JSON from pulsar-admin: pulsar@pulsar-toolset-0/.test(n)), notes.join('\n'));
  await page.screenshot({ path: join(artifacts, 'import-pulsar-dialog-1280.png') });
  const before = await runId(page);
  await page.click('[data-testid="import-run"]');
  await waitReady(page, { after: before });
  assert.match(await page.textContent('h1'), /Imported: topic persistent:\/\/acme\/retail\/orders/);
  await drawn(page);
  // At t=0, before Play: the active consumers stats named, no failover from nothing.
  assert.deepEqual(await actives(page), { p0: 'billing-worker-1', p1: 'billing-worker-2', p2: 'billing-worker-1' });
  // The cursors as stats-internal had them: the backlog stats printed, the hole on partition 1.
  const cursors = await page.$$eval('[data-testid="cursor-strip"]', (l) =>
    l.map((e) => ({ on: e.dataset.partition, backlog: Number(e.dataset.backlog), holes: Number(e.dataset.holes) })),
  );
  const by = Object.fromEntries(cursors.map((c) => [c.on, c]));
  assert.deepEqual([by.p0?.backlog, by.p1?.backlog, by.p2?.backlog], [22, 34, 1175], JSON.stringify(cursors));
  assert.equal(by.p1.holes, 1, JSON.stringify(cursors));
  const s = await scene(page);
  assert.ok(s.cells.pending > 0, `the backlog is in the ledgers: ${JSON.stringify(s.cells)}`);
  assert.match(await page.textContent('[data-testid="import-link-note"]'), /a copied link or an exported run carries them/);
  await page.screenshot({ path: join(artifacts, 'import-pulsar-run-1280.png') });
  await page.close();
  assert.deepEqual(errors, []);
});

test('a large paste says it is reading, then lists its first notes and counts the rest', async () => {
  const { page, errors } = await openPage(ctx);
  // About 2.6 MB: 30,000 partitions of a describe over 3 topics.
  const rows = ['GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID'];
  for (let i = 0; i < 30000; i++) {
    rows.push(`g big${Math.floor(i / 10000)} ${i % 10000} 5 9 4 consumer-${i % 50}-0b9e4c2a-1f3d-4e5a-9b8c-7d6e5f4a3b2c /10.0.0.${i % 250} c-${i % 50}`);
  }
  const text = rows.join('\n');
  await page.click('[data-testid="import-open"]');
  await page.waitForSelector('[data-testid="import-dialog"]');
  await page.$eval('[data-testid="import-text"]', (el, t) => {
    el.value = t;
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, text);
  // Every status the dialog shows, as it is added (it goes once the reading is done, and the
  // page is busy reading meanwhile: a poll could miss it).
  await page.evaluate(() => {
    window.__statuses = [];
    new MutationObserver(() => {
      const s = document.querySelector('[data-testid="import-reading"]');
      if (s && !window.__statuses.includes(s.textContent)) window.__statuses.push(s.textContent);
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  });
  const started = Date.now();
  await page.click('[data-testid="import-read"]');
  await page.waitForSelector('[data-testid="import-summary"]', { timeout: 60000 });
  console.log(`# IMPORT-2.6MB ${Date.now() - started} ms to read 30,000 rows in the page`);
  // The dialog said what it was doing before the reading started.
  const statuses = await page.evaluate(() => window.__statuses);
  assert.equal(statuses.length, 1, JSON.stringify(statuses));
  assert.match(statuses[0], /^Reading 2\.\d MB…$/);
  assert.equal(await page.$('[data-testid="import-reading"]'), null);
  assert.match(await page.textContent('[data-testid="import-summary"]'), /^30000 rows read/);
  assert.equal(await page.$$eval('[data-testid="import-notes"] li', (l) => l.length), 1000);
  assert.match(await page.textContent('[data-testid="import-more"]'), /^… and \d+ more notes, not listed here/);
  await page.close();
  assert.deepEqual(errors, []);
});
