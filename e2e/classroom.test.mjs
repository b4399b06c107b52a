// Fit for a classroom and a docs page (issue "Fit for a classroom and a docs page"): one test per
// numbered item, each checking what a first-time viewer sees: boxes inside the viewport, canvas
// pixels, the visible text at that moment. Screenshots of every tour step at three sizes, of the
// embed example and of a comparison go to e2e/artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useBrowser, openPage, simMs, scene, waitScene, loadPreset, waitReady, artifacts, drawn } from './harness.mjs';

const ctx = useBrowser();
const SEED = 'seed-same-topic-different-tags.json';
const SIZES = [
  [800, 600],
  [1024, 768],
  [1280, 800],
  [1920, 1080],
];

const overlap = (a, b) =>
  Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)) *
  Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));

/// The box of what the step points at, in viewport px, measured here (not taken from the page's
/// own report): a panel's bounding box, or the canvas's box plus the highlight the canvas drew.
async function targetBox(page, highlight) {
  if (highlight.startsWith('panel:')) {
    const id = highlight.slice('panel:'.length);
    const there = await page.waitForSelector(`[data-testid="${id}"]`, { timeout: 3000 }).catch(() => null);
    if (!there) return null;
    return page.$eval(`[data-testid="${id}"]`, (el) => {
      const r = el.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    });
  }
  const s = await scene(page);
  if (!s?.highlight || s.highlight.key !== highlight) return null;
  const c = await page.$eval('[data-testid="canvas-topology"]', (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y };
  });
  return { x: c.x + s.highlight.x, y: c.y + s.highlight.y, width: s.highlight.w, height: s.highlight.h };
}

/// The canvas elements and the assignment table's rows a caption names, by this test's own rule
/// (the page's is wider: numbers after "queues", the word "broker"): an element's name, or a
/// partition's label, as a word of its own in the text. Boxes in viewport px, from the canvas's
/// scene and the table's rows.
async function namedBoxes(page, caption) {
  const s = await scene(page);
  const c = await page.$eval('[data-testid="canvas-topology"]', (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y };
  });
  const word = (name) => new RegExp(`(^|[^A-Za-z0-9_-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9_-])`);
  return (s?.elements ?? [])
    .filter(([key]) => {
      const name = key.startsWith('partition:') ? key.slice(key.lastIndexOf(':') + 1) : key.slice(key.indexOf(':') + 1);
      return name.length > 0 && word(name).test(caption);
    })
    .map(([key, x, y, w, h]) => ({ key, x: c.x + x, y: c.y + y, width: w, height: h }))
    .concat(await tableRowsNamed(page, caption));
}

/// The assignment table's rows whose queue or partition label `caption` names as a word.
async function tableRowsNamed(page, caption) {
  return page.$$eval(
    '[data-testid="assignment-table"] tbody tr[data-queue]',
    (rows, caption) =>
      rows
        .map((row) => {
          const queue = row.dataset.queue;
          const label = queue.slice(queue.lastIndexOf(':') + 1);
          const escaped = label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          const named = label.length > 0 && new RegExp(`(^|[^A-Za-z0-9_-])${escaped}($|[^A-Za-z0-9_-])`).test(caption);
          const r = row.getBoundingClientRect();
          return named && r.width > 0 && r.height > 0 ? { key: `row ${queue}`, x: r.x, y: r.y, width: r.width, height: r.height } : null;
        })
        .filter(Boolean),
    caption,
  );
}

/// Waits until the page is settled (`data-ready`) and the canvas has drawn what it shows.
// NEEDS-SIGNAL: the canvas does not say which state it drew last (`data-scene` names no run, time
// or version), so after the page settled the wait is for two of the page's animation frames: the
// frame loop draws a changed model in the first frame after the change.
/// Waits until step `k` shows as a viewer sees it: its caption (`data-step`), its seek done and the
/// panels caught up (`data-ready`), and the caption placed for it (after any scroll the step asked
/// for). Returns the caption's box.
async function captionSettled(page, k) {
  // One predicate: the step's caption shows from the click on, its seek may go on for frames.
  await page.waitForFunction(
    (k) =>
      document.querySelector(`[data-testid="tour-caption"][data-step="${k}"]`) !== null &&
      document.querySelector('[data-testid="sim-time"]').dataset.ready !== undefined,
    k,
  );
  // The caption is placed in an animation frame once the canvas has drawn the step, again after
  // the scroll the step may ask for, and once more when its text changed its size (`data-target`
  // says where its target was when it was placed). Settled: the caption, where it says its target
  // was, and that target (the marked panel, or the canvas's highlight) all unchanged for three of
  // the page's frames, which is longer than that chain of frames takes.
  // NEEDS-SIGNAL: nothing says that a step's placement is final (after the re-placing for the
  // caption's own size and for a scroll); the frame count stands in for it.
  await page.evaluate(() => {
    window.__captionSettle = { key: null, frames: 0 };
  });
  await page.waitForFunction(
    (k) => {
      const cap = document.querySelector(`[data-testid="tour-caption"][data-step="${k}"]`);
      if (!cap) return false;
      const canvas = document.querySelector('[data-testid="canvas-topology"]');
      const panel = document.querySelector('.tour-target')?.getBoundingClientRect();
      const highlight = JSON.parse(canvas?.getAttribute('data-scene') || 'null')?.highlight;
      const c = canvas?.getBoundingClientRect();
      const r = cap.getBoundingClientRect();
      const key = JSON.stringify([r.x, r.y, r.width, r.height, cap.dataset.target, panel, highlight, c?.x, c?.y]);
      const w = window.__captionSettle;
      if (w.key === key) w.frames++;
      else {
        w.key = key;
        w.frames = 0;
      }
      return w.frames >= 3;
    },
    k,
    { polling: 'raf' },
  );
  return page.locator('[data-testid="tour-caption"]').boundingBox();
}

/// Plays a tour step by step at one size; checks every step as a viewer sees it.
async function walkTour(file, [w, h], { shots = false } = {}) {
  const { page, errors } = await openPage(ctx, { viewport: { width: w, height: h }, fragment: `#preset=${file}` });
  const tour = JSON.parse(await (await fetch(`${ctx.baseUrl}tours/${file}`)).text());
  await page.click('[data-testid="tour-start"]');
  const problems = [];
  for (let k = 0; k < tour.steps.length; k++) {
    if (k > 0) await page.click('[data-testid="tour-next"]');
    const cap = await captionSettled(page, k);
    const step = tour.steps[k];
    const where = `${file} step ${k + 1} at ${w}×${h}`;
    const text = await page.textContent('[data-testid="tour-caption"] p');
    if (text.trim() !== step.caption) problems.push(`${where}: caption text ${JSON.stringify(text)}`);
    if (!(cap.x >= 0 && cap.y >= 0 && cap.x + cap.width <= w + 0.5 && cap.y + cap.height <= h + 0.5)) {
      problems.push(`${where}: caption ${JSON.stringify(cap)} not inside the viewport`);
    }
    if (step.highlight) {
      const t = await targetBox(page, step.highlight);
      if (!t) {
        problems.push(`${where}: ${step.highlight} is not drawn`);
      } else {
        const visible = overlap(t, { x: 0, y: 0, width: w, height: h });
        if (visible < Math.min(t.width * t.height, w * h) * 0.5) problems.push(`${where}: ${step.highlight} mostly off screen ${JSON.stringify(t)}`);
        // Beside it, not over it (unless the target leaves no room beside it).
        const room = t.width * t.height < w * h * 0.45;
        if (room && overlap(cap, t) > 0) problems.push(`${where}: caption covers ${step.highlight}`);
        // And near it: within a caption's height of the target (beyond the elements beside it
        // when those are named or would be covered).
        const gapX = Math.max(0, t.x - (cap.x + cap.width), cap.x - (t.x + t.width));
        const gapY = Math.max(0, t.y - (cap.y + cap.height), cap.y - (t.y + t.height));
        if (room && (gapX > 120 || gapY > 120)) problems.push(`${where}: caption ${JSON.stringify(cap)} far from ${step.highlight} ${JSON.stringify(t)}`);
      }
    }
    // Nor over anything its text names that is on screen.
    for (const n of await namedBoxes(page, step.caption)) {
      if (overlap(n, { x: 0, y: 0, width: w, height: h }) > 0 && overlap(cap, n) > 0) {
        problems.push(`${where}: caption ${JSON.stringify(cap)} covers ${n.key}, which its text names`);
      }
    }
    if (shots) await page.screenshot({ path: join(artifacts, `tour-${file.replace('.json', '')}-${w}x${h}-step${k + 1}.png`) });
  }
  await page.close();
  assert.deepEqual(errors, []);
  return problems;
}

test('1. Pulsar tours show their text at laptop sizes: every caption inside the viewport, beside its panel', async () => {
  const problems = [];
  for (const file of ['pulsar-key-shared-join.json', 'pulsar-scalable-two-splits.json']) {
    for (const size of [[1280, 800], [1024, 768], [800, 600], [1920, 1080]]) {
      problems.push(...(await walkTour(file, size, { shots: size[0] !== 1024 })));
    }
  }
  assert.deepEqual(problems, []);
});

test('2. every tour points at what it explains: target drawn and on screen, caption beside it, pages turned', async () => {
  const tours = readdirSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'static', 'tours')).filter((f) => f.endsWith('.json')).sort();
  const problems = [];
  for (const file of tours) {
    // The tours the classroom issues measured, at the four sizes (screenshots at three).
    const everySize = ['seed-same-topic-different-tags.json', 'kafka-cooperative-join.json', 'kafka-eager-join.json', 'pulsar-failover.json'].includes(file);
    for (const size of everySize ? SIZES : [[1280, 800]]) problems.push(...(await walkTour(file, size, { shots: everySize && size[0] !== 1024 })));
  }
  assert.deepEqual(problems, []);

  // The seed's overwrite steps ring the broker's table, not only its title.
  const { page } = await openPage(ctx, { fragment: `#preset=${SEED}` });
  await page.click('[data-testid="tour-start"]');
  // Next on the first step's caption, not before it shows.
  await page.waitForSelector('[data-testid="tour-caption"][data-step="0"]');
  await page.click('[data-testid="tour-next"]');
  await captionSettled(page, 1);
  const s = await scene(page);
  assert.equal(s.highlight.key, 'broker:broker-a');
  assert.ok(s.highlight.h >= 40, `the ring holds the table's lines: ${JSON.stringify(s.highlight)}`);
  await page.close();

  // Kafka cooperative, step 6: orders-9 sits on a page of its own at 800×600; the canvas turns to it.
  const coop = await openPage(ctx, { viewport: { width: 800, height: 600 }, fragment: '#preset=kafka-cooperative-join' });
  await coop.page.click('[data-testid="tour-start"]');
  // Each Next on the caption of the step before it: the caption is drawn anew for every step.
  await coop.page.waitForSelector('[data-testid="tour-caption"][data-step="0"]');
  for (let k = 1; k <= 5; k++) {
    await coop.page.click('[data-testid="tour-next"]');
    await coop.page.waitForSelector(`[data-testid="tour-caption"][data-step="${k}"]`);
  }
  await captionSettled(coop.page, 5);
  const cs = await scene(coop.page);
  assert.equal(cs.highlight?.key, 'partition:orders:p9', JSON.stringify(cs.rows));
  await coop.page.close();
});

test('3. embeds: drawn at once, titled by their preset, a time bar with step and marks, bad ones get an error in the frame', async () => {
  const docs = await ctx.browser.newPage({ viewport: { width: 1280, height: 800 } });
  await docs.goto(`${ctx.baseUrl}embed-example.html`);
  await docs.waitForFunction(() => (window.mqvizMessages || []).filter((m) => m.type === 'ready').length === 2, null, { timeout: 20000 });
  for (const [id, title, file] of [
    ['left', 'Same topic, different tags', SEED],
    ['right', 'Consistent group', 'consistent-group.json'],
  ]) {
    const frame = docs.frameLocator(`#${id}`);
    // Drawn without Play or a resize: the canvas has ink on it. Once the frame shows its preset's
    // run, settled, its frame loop draws it in its next frame (see `drawn`).
    // NEEDS-SIGNAL: as in `drawn`, the canvas does not say what it drew; two frames stand in.
    await frame.locator(`[data-testid="sim-time"][data-ready^="${file}:"]`).waitFor({ state: 'attached' });
    await frame
      .locator('[data-testid="canvas-topology"]')
      .evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const inked = await frame.locator('[data-testid="canvas-topology"]').evaluate((c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] < 128 && d[i + 1] < 128 && d[i + 2] < 128) n++;
      return n;
    });
    assert.ok(inked > 500, `${id} frame drawn at once (${inked} dark pixels)`);
    assert.match(await frame.locator('[data-testid="embed-title"]').textContent(), new RegExp(`^${title}`));
  }
  await docs.screenshot({ path: join(artifacts, 'classroom-embed-example.png') });
  // An embed whose link names other origins neither answers this page nor obeys it; one that
  // names this page's origin does both.
  const here = new URL(ctx.baseUrl).origin;
  await docs.evaluate((here) => {
    window.mqvizMessages = [];
    for (const [id, origin] of [
      ['mine', here],
      ['theirs', 'https://docs.example.org'],
    ]) {
      const f = document.createElement('iframe');
      f.id = id;
      f.src = `index.html#embed&preset=consistent-group&origin=${origin}`;
      document.body.append(f);
    }
    window.addEventListener('message', (ev) => {
      const who = ['mine', 'theirs'].find((id) => document.getElementById(id).contentWindow === ev.source);
      if (who) window.mqvizMessages.push({ who, ...ev.data });
    });
  }, here);
  await docs.waitForFunction(() => window.mqvizMessages.some((m) => m.who === 'mine' && m.type === 'ready'), null, { timeout: 20000 });
  // The other frame's `ready` goes to the other origin only: its clock says when its run is in
  // and it listens, so that what follows tests a refusal, not a frame still loading.
  await docs.frameLocator('#theirs').locator('[data-testid="sim-time"][data-ready^="consistent-group.json:"]').waitFor({ state: 'attached' });
  await docs.evaluate(() => {
    // A listener added after the frame's own runs after it: when it has seen the message, the
    // frame has handled (and refused) it.
    window.theirsReceived = 0;
    document.getElementById('theirs').contentWindow.addEventListener('message', () => window.theirsReceived++);
    for (const id of ['mine', 'theirs']) document.getElementById(id).contentWindow.postMessage({ type: 'seek', t: 9000 }, '*');
  });
  await docs.waitForFunction(() => window.mqvizMessages.some((m) => m.who === 'mine' && m.type === 'state' && m.t === 9000));
  await docs.waitForFunction(() => window.theirsReceived > 0);
  // Nothing comes later either (this wait proves an absence; the refusal was seen above).
  await docs.waitForTimeout(500);
  assert.equal(await docs.evaluate(() => window.mqvizMessages.filter((m) => m.who === 'theirs').length), 0, 'the other origin is not answered');
  const theirs = docs.frameLocator('#theirs');
  assert.equal(await theirs.locator('[data-testid="sim-time"]').getAttribute('data-ms'), '0', 'nor obeyed');
  await docs.close();

  // Every model's embed is titled by its own preset.
  for (const [file, title] of [
    ['kafka-eager-join', /EAGER/],
    ['pulsar-key-shared-join', /Key_Shared/],
  ]) {
    const { page } = await openPage(ctx, { viewport: { width: 720, height: 420 }, fragment: `#embed&preset=${file}` });
    // The scene read below is of this run, not of the first run drawn while the preset came.
    await drawn(page);
    await page.waitForFunction(() => document.querySelector('[data-testid="embed-title"]')?.textContent.length > 0);
    await page.waitForFunction((re) => new RegExp(re).test(document.querySelector('[data-testid="embed-title"]').textContent), title.source, {
      timeout: 15000,
    });
    const s = await waitScene(page, (x) => x.rows.length > 0);
    if (file.startsWith('kafka')) assert.equal(s.rows.length, 12, `all twelve partitions at 720×420: ${s.rows}`);
    // A time bar with a step button and chapter marks.
    await page.waitForSelector('[data-testid="embed"] [data-testid="scrub"]');
    await page.waitForSelector('[data-testid="embed"] [data-testid="chapter-marks"] .mark');
    const t0 = await simMs(page);
    await page.click('[data-testid="embed"] [data-testid="step"]');
    await page.waitForFunction((t) => {
      const clock = document.querySelector('[data-testid="sim-time"]');
      return Number(clock.dataset.ms) > t && clock.dataset.ready !== undefined;
    }, t0);
    await page.screenshot({ path: join(artifacts, `classroom-embed-${file}.png`) });
    await page.close();
  }

  // 480×270: less detail, nothing clipped out of the frame.
  const small = await openPage(ctx, { viewport: { width: 480, height: 270 }, fragment: `#embed&preset=${SEED.replace('.json', '')}` });
  await drawn(small.page);
  await waitScene(small.page, (x) => x.rows.length > 0);
  for (const sel of ['[data-testid="play"]', '[data-testid="sim-time"]', '[data-testid="canvas-topology"]', '[data-testid="scrub"]']) {
    const b = await small.page.locator(`[data-testid="embed"] ${sel}`).first().boundingBox();
    assert.ok(b && b.x >= 0 && b.y >= 0 && b.x + b.width <= 480.5 && b.y + b.height <= 270.5, `${sel} inside 480×270: ${JSON.stringify(b)}`);
  }
  await small.page.screenshot({ path: join(artifacts, 'classroom-embed-480x270.png') });
  await small.page.close();

  // A bad preset: an error inside the embed, not the whole editor squeezed into the frame, and
  // not the default diagram either (the page around it asked for another): the error alone,
  // addressed to whoever can mend the frame's address, with no dismiss that would leave it empty.
  const bad = await openPage(ctx, { viewport: { width: 640, height: 400 }, fragment: '#embed&preset=kafka-eager-joins' });
  await bad.page.waitForSelector('[data-testid="embed"] [data-testid="link-error"]');
  const said = await bad.page.textContent('[data-testid="link-error"]');
  assert.match(said, /unknown preset "kafka-eager-joins"/);
  assert.match(said, /page that embeds it/);
  assert.doesNotMatch(said, /address bar/);
  assert.equal(await bad.page.$('.editor-panel'), null);
  assert.equal(await bad.page.isVisible('[data-testid="canvas-topology"]'), false, 'no diagram of another run');
  assert.equal(await bad.page.isVisible('[data-testid="play"]'), false);
  assert.equal(await bad.page.$('[data-testid="link-error"] .dismiss'), null);
  const box = await bad.page.locator('[data-testid="link-error"]').boundingBox();
  assert.ok(box && box.y >= 0 && box.y + box.height <= 400.5, `the error is inside the frame: ${JSON.stringify(box)}`);
  // It points to the gallery of presets: the app itself, without the broken link, in a new tab.
  const gallery = bad.page.locator('[data-testid="link-error"] [data-testid="embed-gallery"]');
  assert.ok(await gallery.isVisible(), 'a link to the presets');
  const g = await gallery.boundingBox();
  assert.ok(g.y >= 0 && g.y + g.height <= 400.5 && g.x >= 0 && g.x + g.width <= 640.5, `the link is inside the frame: ${JSON.stringify(g)}`);
  assert.equal(await gallery.getAttribute('target'), '_blank');
  const href = await gallery.evaluate((a) => a.href);
  assert.equal(new URL(href).hash, '', `the presets' page, not the broken link: ${href}`);
  assert.equal(new URL(href).pathname, new URL(bad.page.url()).pathname);
  await bad.page.screenshot({ path: join(artifacts, 'classroom-embed-bad-preset.png') });
  await bad.page.close();
});

test('4. the comparison counts moves per rebalance, for every model, and says which run is which', async () => {
  // AVG moves six queues when a fourth consumer joins, CONSISTENT_HASH three; the same however
  // the playhead got to the end.
  const counts = async (page) => {
    const side = (s) =>
      page.$$eval(`[data-testid="compare-moves"] li[data-side="${s}"]`, (l) => l.reduce((n, x) => n + Number(x.dataset.count), 0));
    return [await side('A'), await side('B')];
  };
  const lists = [];
  for (const path of ['end', 'scrub']) {
    const { page } = await openPage(ctx, { fragment: '#preset=compare-join-avg-vs-consistent-hash' });
    await page.waitForSelector('[data-testid="canvas-compare"]');
    if (path === 'scrub') {
      for (const t of [19000, 30000]) {
        await page.$eval('[data-testid="scrub"]', (el, v) => {
          el.value = String(v);
          el.dispatchEvent(new Event('input', { bubbles: true }));
        }, t);
        // A long seek goes on in slices; the panels follow once it is done.
        await page.waitForFunction((v) => {
          const clock = document.querySelector('[data-testid="sim-time"]');
          return Number(clock.dataset.ms) === v && clock.dataset.ready !== undefined;
        }, t);
      }
    }
    await page.keyboard.press('End');
    // At the end, with the comparison's list caught up (it may hold moves from before already).
    await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"][data-ready]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="compare-moves"] li').length > 0);
    assert.deepEqual(await counts(page), [6, 3], path);
    lists.push(await page.$$eval('[data-testid="compare-moves"] li', (l) => l.map((x) => x.textContent)));
    // Each side says what it is, and both runs are above the fold at 1280×800.
    assert.match(await page.textContent('[data-testid="side-label-this"]'), /allocation AVG/);
    assert.match(await page.textContent('[data-testid="side-label-other"]'), /CONSISTENT_HASH/);
    for (const id of ['canvas-topology', 'canvas-compare']) {
      const b = await page.locator(`[data-testid="${id}"]`).boundingBox();
      assert.ok(b.y >= 0 && b.y + b.height <= 800.5, `${id} inside 1280×800: ${JSON.stringify(b)}`);
    }
    if (path === 'end') {
      await page.screenshot({ path: join(artifacts, 'classroom-compare-1280x800.png') });
      // Side by side at 1280×800: one row, A left of B.
      const a = await page.locator('[data-testid="canvas-topology"]').boundingBox();
      const b = await page.locator('[data-testid="canvas-compare"]').boundingBox();
      assert.ok(Math.abs(a.y - b.y) < 2 && a.x + a.width <= b.x + 1, `A ${JSON.stringify(a)}, B ${JSON.stringify(b)}`);
      assert.ok(a.width >= 400 && b.width >= 400, `each side at least 400 px wide: ${a.width}, ${b.width}`);
      // Every panel says which side it describes.
      assert.match(await page.textContent('[data-testid="outcome"]'), /^ASide A: /);
      assert.match(await page.textContent('[data-testid="inspector-side"]'), /^AThese panels describe side A \(allocation AVG\)\.$/);
      assert.match(await page.textContent('[data-testid="editor-side"]'), /^AEdits here change side A \(allocation AVG\)\.$/);
      // At 800×600 the runs stack, and each shows all twelve queues: q9-q11, the ones that moved
      // under AVG, are not folded away.
      await page.setViewportSize({ width: 800, height: 600 });
      await page.waitForFunction(() =>
        ['canvas-topology', 'canvas-compare'].every((id) => {
          const s = JSON.parse(document.querySelector(`[data-testid="${id}"]`)?.dataset.scene || 'null');
          return s && ['q9', 'q10', 'q11'].every((q) => s.rows.includes(q)) && s.mores.length === 0;
        }),
      );
      await page.screenshot({ path: join(artifacts, 'classroom-compare-800x600.png'), fullPage: true });
    }
    await page.close();
  }
  assert.deepEqual(lists[0], lists[1], 'the list does not depend on the way the playhead went');

  // Kafka and Pulsar offer variants: EAGER vs COOPERATIVE, Key_Shared vs Shared.
  for (const [file, label, side] of [
    ['kafka-eager-join', 'COOPERATIVE: assignors [cooperative-sticky]', /EAGER/],
    ['pulsar-key-shared-join', 'subscription type Shared', /Key_Shared/],
  ]) {
    const { page, errors } = await openPage(ctx, { fragment: `#preset=${file}` });
    await page.click('[data-testid="compare-open"]');
    await page.selectOption('[data-testid="compare-select"]', { label });
    await page.waitForSelector('[data-testid="canvas-compare"]');
    await page.keyboard.press('End');
    await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"][data-ready]');
    assert.match(await page.textContent('[data-testid="side-label-other"]'), new RegExp(label.replace(/[[\]]/g, '\\$&')));
    assert.match(await page.textContent('[data-testid="side-label-this"]'), side);
    await page.screenshot({ path: join(artifacts, `classroom-compare-${file}.png`) });
    await page.close();
    assert.deepEqual(errors, []);
  }

  // Any edit: a subscription change compared with the run without it.
  const { page } = await openPage(ctx, { fragment: '#preset=consistent-group&t=10000' });
  const input = page.locator('[data-testid="subscription-input"]').first();
  await input.fill('TagA');
  await input.press('Enter');
  await page.click('[data-testid="compare-open"]');
  await page.selectOption('[data-testid="compare-select"]', { label: 'without your edits' });
  await page.waitForSelector('[data-testid="canvas-compare"]');
  assert.match(await page.textContent('[data-testid="side-label-this"]'), /with your edit/);
  await page.close();
});

test('5. one action is one edit; Ctrl+Z and Ctrl+Shift+Z undo and redo; a new branch is announced', async () => {
  const { page, errors } = await openPage(ctx, { fragment: `#preset=${SEED}&t=8000` });
  const marks = () => page.$$eval('[data-testid="edit-marks"] .mark', (m) => m.length);
  const input = page.locator('[data-testid="subscription-input"]').first();
  await input.click();
  await input.press('End');
  await input.type(' || TagB');
  await input.press('Enter');
  await input.blur();
  // The change event that follows Enter is handled when the field loses focus: once it has, and
  // the first edit's mark shows with the page settled, the 200 ms prove that no second one comes.
  await page.waitForFunction(() => {
    const field = document.querySelector('[data-testid="subscription-input"]');
    return (
      document.activeElement !== field &&
      document.querySelectorAll('[data-testid="edit-marks"] .mark').length > 0 &&
      document.querySelector('[data-testid="sim-time"]').dataset.ready !== undefined
    );
  });
  await page.waitForTimeout(200);
  assert.equal(await marks(), 1, 'Enter and the change that follows it are one edit');
  // Ctrl+Z outside a text field takes it back; Ctrl+Shift+Z enters it again.
  await page.click('h1');
  await page.keyboard.press('Control+z');
  await page.waitForFunction(
    () =>
      document.querySelectorAll('[data-testid="edit-marks"] .mark').length === 0 &&
      document.querySelector('[data-testid="sim-time"]').dataset.ready !== undefined,
  );
  assert.match(await page.textContent('[data-testid="edit-notice"]'), /Took back subscribe/);
  await page.keyboard.press('Control+Shift+z');
  await page.waitForFunction(
    () =>
      document.querySelectorAll('[data-testid="edit-marks"] .mark').length === 1 &&
      document.querySelector('[data-testid="sim-time"]').dataset.ready !== undefined,
  );
  // An edit before it forks a branch, and the page says so where it happened.
  await page.$eval('[data-testid="scrub"]', (el) => {
    el.value = '7000';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.waitForFunction(() => {
    const clock = document.querySelector('[data-testid="sim-time"]');
    return Number(clock.dataset.ms) === 7000 && clock.dataset.ready !== undefined;
  });
  await page.locator('[data-testid="consumer-crash"]').first().click();
  // The notice is there already (it says the redo): wait for the one this edit gives.
  await page.waitForFunction(() => /new branch/.test(document.querySelector('[data-testid="edit-notice"]')?.textContent || ''));
  const notice = await page.textContent('[data-testid="edit-notice"]');
  assert.match(notice, /started a new branch: the later edit is kept under "Earlier branches"/);
  const b = await page.locator('[data-testid="edit-notice"]').boundingBox();
  assert.ok(b && b.y >= 0 && b.y + b.height <= 800, 'the notice is on screen');
  await page.close();
  assert.deepEqual(errors, []);
});

test('6. the outcome is stated in words with its counts, beside the canvas and in the live region; the speed label says when Pace slows', async () => {
  const { page, errors } = await openPage(ctx, { fragment: `#preset=${SEED}` });
  await page.keyboard.press('End');
  await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"][data-ready]');
  const outcome = page.locator('[data-testid="outcome"]');
  await page.waitForFunction(() => /14 of 20 messages sent were lost/.test(document.querySelector('[data-testid="outcome"]')?.textContent || ''));
  assert.equal(await outcome.getAttribute('data-alarm'), 'true');
  const ob = await outcome.boundingBox();
  const cb = await page.locator('[data-testid="canvas-topology"]').boundingBox();
  assert.ok(ob.y + ob.height <= cb.y + 2 && cb.y - (ob.y + ob.height) < 40, 'right above the canvas');
  await page.waitForFunction(() => /14 of 20 messages sent were lost/.test(document.querySelector('[data-testid="live-summary"]').textContent));
  await page.close();
  // At 10× with Pace, the overwrite burst plays far slower: the label says so while it does.
  const slow = await openPage(ctx, { fragment: `#preset=${SEED}&t=4990&speed=10` });
  await slow.page.click('[data-testid="play"]');
  // The label as it reads while the note shows, in one look: the note goes when the burst is over.
  const label = await slow.page.waitForFunction(
    () => document.querySelector('[data-testid="pace-note"]') && document.querySelector('[data-testid="speed-label"]').textContent,
    null,
    { timeout: 5000 },
  );
  assert.match(await label.jsonValue(), /10× · Pace: 1\/\d+× around a key moment/);
  await slow.page.click('[data-testid="pause"]');
  await slow.page.close();
  assert.deepEqual(errors, []);
});

test('7. lost is the loudest mark: thick red crosses on the canvas', async () => {
  const { page } = await openPage(ctx, { fragment: `#preset=${SEED}&t=60000` });
  await waitScene(page, (x) => x.cells.skipped >= 10);
  const red = await page.$eval('[data-testid="canvas-topology"]', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] > 150 && d[i + 1] < 60 && d[i + 2] < 60) n++;
    return n;
  });
  assert.ok(red > 300, `lost cells carry red crosses (${red} red pixels)`);
  assert.match(await page.textContent('[data-testid="legend"]'), /lost \(skipped by a filter, never consumed\)/);
  await page.close();
});

test('8. the layout fits 800×600 to 1920×1080: nothing cut that has room, bigger text on a projector, a skip link', async () => {
  for (const [w, h] of [[1024, 768], [1280, 800]]) {
    const { page } = await openPage(ctx, { viewport: { width: w, height: h }, fragment: `#preset=${SEED}` });
    await drawn(page);
    const s = await waitScene(page, (x) => x.rows.length > 0);
    const cutRows = s.cut.filter((t) => /^q\d/.test(t));
    assert.deepEqual(cutRows, [], `${w}×${h}: row labels cut`);
    await page.close();
  }
  const big = await openPage(ctx, { viewport: { width: 1920, height: 1080 }, fragment: `#preset=${SEED}` });
  await drawn(big.page);
  const s = await waitScene(big.page, (x) => x.rows.length > 0);
  assert.ok(s.font >= 14, `text on a 1920×1080 projector is ${s.font} px`);
  await big.page.screenshot({ path: join(artifacts, 'classroom-1920x1080.png') });
  await big.page.close();
  // The first Tab reaches a skip link; Enter on it focuses the canvas.
  const { page } = await openPage(ctx);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'skip-link');
  assert.ok(await page.locator('[data-testid="skip-link"]').isVisible());
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'canvas-topology');
  await page.close();
});

test('9. every sentence is true at the moment shown: warnings, pauses, history, what to watch, chapter marks', async () => {
  // Before ConsumerB starts (5 s), no warning speaks of its TagB.
  const { page } = await openPage(ctx, { fragment: `#preset=${SEED}&t=3000` });
  await page.waitForSelector('[data-testid="sim-time"][data-ms="3000"][data-ready]');
  const early = await page.textContent('.inspector-panel');
  assert.ok(!/TagB/.test(early.split('History')[0]), 'no TagB before ConsumerB starts');
  // A heartbeat that writes the same expression again is not an alarm.
  await page.keyboard.press('End');
  // The history panel follows once the seek to the end is done.
  await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"][data-ready]');
  const same = await page.$$eval('.chg', (l) => l.map((x) => [x.className, x.parentElement.textContent]));
  for (const [cls, text] of same) {
    const m = /: (\S+) → (\S+) by/.exec(text);
    if (m && m[1] === m[2]) assert.ok(!cls.includes('overwritten'), text);
  }
  // Chapter marks carry words, and a crowded time bar is grouped.
  const words = await page.$$eval('[data-testid="chapter-marks"] .mark-word', (l) => l.map((x) => x.textContent));
  assert.ok(words.length > 0 && words.every((w) => w.length > 2), words.join('|'));
  await page.close();
  const kafka = await openPage(ctx, { fragment: '#preset=kafka-eager-join&t=17000' });
  const marks = await kafka.page.$$eval('[data-testid="chapter-marks"] .mark', (l) => l.length);
  assert.ok(marks <= 12, `${marks} marks on Kafka's time bar`);
  // In the middle of the stop-the-world no warning says the longest pause was 0 ms.
  assert.ok(!/longest pause 0 ms/.test(await kafka.page.textContent('.inspector-panel')));
  await kafka.page.close();
  // A crash is marked as a crash, not a stop; routine sends are one quiet mark without a word.
  const crash = await openPage(ctx, { fragment: '#preset=kafka-crash-redelivery' });
  await crash.page.waitForSelector('[data-testid="chapter-marks"] .mark');
  const kinds = await crash.page.$$eval('[data-testid="chapter-marks"] .mark', (l) => l.map((m) => [m.dataset.kind, m.classList.contains('quiet')]));
  assert.ok(kinds.some(([k]) => k.split(' ').includes('crash')), JSON.stringify(kinds));
  assert.ok(!kinds.some(([k]) => k.split(' ').includes('stop')), JSON.stringify(kinds));
  assert.ok(kinds.filter(([k]) => k === 'send').length <= 1 && kinds.filter(([, q]) => q).every(([k]) => k === 'send'), JSON.stringify(kinds));
  const sendWords = await crash.page.$$eval('[data-testid="chapter-marks"] .mark-word', (l) => l.filter((w) => w.textContent.startsWith('sends')).length);
  assert.equal(sendWords, 0);
  await crash.page.close();
  // "What to watch" is a sentence for a viewer, never a Java test name.
  for (const file of ['pulsar-scalable-two-splits', 'pulsar-scalable-post-split-backlog', 'pulsar-scalable-sealed-not-redelivered', 'pulsar-scalable-children-blocked']) {
    const p = await openPage(ctx, { fragment: `#preset=${file}` });
    const watch = await p.page.textContent('[data-testid="description"] summary');
    assert.ok(!/Test#/.test(watch), `${file}: ${watch}`);
    await p.page.close();
  }
});

test('10. a bad link opens what it can, names the bad field and keeps the address bar; panels open; Copy link confirms', async () => {
  const { page } = await openPage(ctx, { fragment: '#preset=kafka-eager-join&t=-5' });
  // `openPage` returns as soon as the link's error shows; the address bar is checked once the
  // run is in and the page settled, which is when it would otherwise write the run's own link.
  await page.waitForFunction(() => document.querySelector('[data-testid="preset-select"]').dataset.loaded === 'kafka-eager-join.json');
  await waitReady(page, { file: 'kafka-eager-join.json' });
  assert.match(await page.textContent('[data-testid="link-error"]'), /column 28: t must be a whole number/);
  assert.equal(new URL(page.url()).hash, '#preset=kafka-eager-join&t=-5');
  await page.close();
  const other = await openPage(ctx, { fragment: '#t=12000&foo=bar' });
  await other.page.waitForFunction(() => {
    const clock = document.querySelector('[data-testid="sim-time"]');
    return Number(clock.dataset.ms) === 12000 && clock.dataset.ready !== undefined;
  });
  assert.match(await other.page.textContent('[data-testid="link-error"]'), /unknown key "foo"/);
  assert.equal(new URL(other.page.url()).hash, '#t=12000&foo=bar');
  await other.page.close();
  // The panel a link names is open.
  const panel = await openPage(ctx, { fragment: `#preset=${SEED}&panel=filters` });
  await panel.page.waitForFunction(() => document.querySelector('[data-testid="tab-filters"]')?.getAttribute('aria-selected') === 'true');
  // Copy link says what became of it.
  await panel.page.click('[data-testid="copy-link"]');
  await panel.page.waitForFunction(() => /copied|refused/.test(document.querySelector('[data-testid="copy-status"]')?.textContent || ''));
  assert.match(await panel.page.inputValue('[data-testid="share-link"]'), /panel=filters/);
  await panel.page.close();
});

test('11. the first screen states the lesson, and at t = 0 no owner is an alarm yet', async () => {
  for (const [width, height] of [
    [800, 600],
    [1280, 800],
  ]) {
    const { page, errors } = await openPage(ctx, { viewport: { width, height }, fragment: '#preset=kafka-eager-join' });
    // The lesson is on the first screen, unfolded, before Play.
    const lesson = page.locator('[data-testid="lesson"]');
    assert.match(await lesson.textContent(), /EAGER rebalance every member revokes all its partitions/);
    const b = await lesson.boundingBox();
    assert.ok(b && b.y >= 0 && b.y + b.height <= height, `the lesson inside ${width}×${height}: ${JSON.stringify(b)}`);
    assert.ok(await page.locator('[data-testid="play"]').isVisible());
    // At t = 0 the assignment says "not started", in grey, for every partition.
    const rows = await page.$$eval('[data-testid="assignment-table"] tr[data-queue]', (l) => l.map((r) => [r.className, r.cells[1].textContent]));
    assert.equal(rows.length, 12);
    assert.ok(rows.every(([cls, text]) => cls === 'muted' && text === 'not started'), JSON.stringify(rows));
    // Once the run is under way, an unowned partition is an alarm with its reason again.
    if (width === 1280) {
      await page.keyboard.press('End');
      await page.waitForSelector('[data-testid="sim-time"][data-at-end="true"][data-ready]');
      const after = await page.$$eval('[data-testid="assignment-table"] tr[data-queue]', (l) => l.map((r) => r.cells[1].textContent));
      assert.ok(!after.includes('not started'), JSON.stringify(after));
    }
    await page.close();
    assert.deepEqual(errors, []);
  }
});
