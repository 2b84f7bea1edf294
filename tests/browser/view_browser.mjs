// ergon view in a real browser: Debian's Chromium (/usr/bin/chromium)
// driven by playwright-core (no browser download), for the tests
// (tests/functional/test_view_browser.sh) and the benchmark
// (bench/bench_view.sh). It prints one JSON object with what it saw; the
// caller asserts.
//
//   node view_browser.mjs URL --shot FILE.png [--allow ORIGIN]
//        [--zoom-at T] [--drag T0 T1] [--fragment '#t0=..&t1=..']
//        [--width 1280] [--baseline 1] [--served V0 V1]
//
// URL is file:///...html or http://127.0.0.1:PORT/...; every request the
// page makes is recorded, and any that is not the page itself (or, with
// --allow, not to that origin) is aborted and listed in "escaped".
// --baseline 1: any page, only its load event's time (baseline_load_ms).
// --served V0 V1 (a page of `ergon view --serve`): after the load, the
// selection's figures once the server's exact ones came ("served_stats"),
// then the view set to V0..V1 and, once the finer tile it fetches came and
// was drawn, what each lane drew from ("served_zoom"; a screenshot beside
// --shot, *-zoom.png).
// the wheel event to the end of the draw it caused). Steps, in order: load
// (time to the first draw, from the navigation start); a Shift+drag from
// T0 to T1 (the selection's figures, read from #selection-stats' data-
// attributes); a screenshot of the whole page; a wheel zoom at time T (the
// redraw's latency, measured in the page from the wheel event to the end
// of the draw it caused).
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const argv = process.argv.slice(2);
const url = argv.shift();
const opt = {};
const argv0 = {};
while (argv.length) {
  const k = argv.shift();
  if (k === '--drag') opt.drag = [Number(argv.shift()), Number(argv.shift())];
  else if (k === '--served') { opt.served = argv.shift(); argv0.served1 = argv.shift(); }
  else if (k.startsWith('--')) opt[k.slice(2)] = argv.shift();
  else throw new Error(`unknown argument ${k}`);
}
const out = { url, escaped: [], requests: [], console_errors: [], page_errors: [] };
const userDataDir = mkdtempSync(join(tmpdir(), 'ergon-chromium-'));
let ctx;
try {
  ctx = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.ERGON_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: Number(opt.width || 1280), height: 900 },
    deviceScaleFactor: 1,
    offline: !opt.allow,
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  const base = url.split('#')[0];
  await ctx.route('**/*', (route) => {
    const u = route.request().url();
    out.requests.push(u);
    const ok = u.split('#')[0] === base || (opt.allow && u.startsWith(opt.allow + '/'));
    if (ok) return route.continue();
    out.escaped.push(u);
    return route.abort();
  });
  page.on('console', (m) => { if (m.type() === 'error') out.console_errors.push(m.text()); });
  page.on('pageerror', (e) => out.page_errors.push(String(e)));
  const full = url + (opt.fragment || '');
  await page.goto(full, { waitUntil: 'load', timeout: 60000 });
  if (opt.baseline) {
    // A page that is not ergon view's: only its load event, for a baseline.
    out.baseline_load_ms = await page.evaluate(() =>
      performance.getEntriesByType('navigation')[0].loadEventEnd);
    throw null;
  }
  await page.waitForFunction(() => window.ergonView && window.ergonView.ready, null,
    { timeout: 60000 });
  const load = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    return {
      first_draw_ms: window.ergonView.firstDrawMs, first_draw_cost_ms: window.ergonView.lastDrawMs,
      dom_content_loaded_ms: nav ? nav.domContentLoadedEventEnd : null,
      page_bytes: nav ? nav.transferSize || nav.encodedBodySize : null,
      view: window.ergonView.view, recordings: window.ergonView.recordings,
    };
  });
  out.load = load;
  out.fragment_stats = await statsOf(page);
  if (opt.served) {
    const [v0, v1] = [Number(opt.served), Number(argv0.served1)];
    const idle = () => page.waitForFunction(() => window.ergonView.fetching === 0, null,
      { timeout: 60000 });
    await page.waitForFunction(() => {
      const el = document.getElementById('selection-stats');
      return el.getAttribute('data-state') !== 'ok' || el.getAttribute('data-source') === 'server';
    }, null, { timeout: 60000 });
    out.served_stats = await statsOf(page);
    out.served_stats_text = await page.evaluate(() => document.getElementById('selection-stats').innerText);
    const tilesBefore = await page.evaluate(() => window.ergonView.tiles.length);
    await page.evaluate(([a, b]) => window.ergonView.setView(a, b), [v0, v1]);
    await page.waitForFunction((n) => window.ergonView.tiles.length > n, tilesBefore,
      { timeout: 60000 });
    await idle();
    await page.evaluate(() => new Promise((res) => requestAnimationFrame(() =>
      requestAnimationFrame(() => res()))));
    out.served_zoom = await page.evaluate(() => ({
      view: window.ergonView.view, tiles: window.ergonView.tiles,
      drawn_from: window.ergonView.drawnFrom, fetch_errors: window.ergonView.fetchErrors,
    }));
    if (opt.shot) await page.screenshot({ path: opt.shot.replace(/\.png$/, '-zoom.png'), fullPage: true });
    await page.evaluate(([a, b]) => window.ergonView.setView(a, b), [load.view.v0, load.view.v1]);
  }
  if (opt.drag) {
    const [ta, tb] = opt.drag;
    const pts = await page.evaluate(([ta, tb]) => {
      const EV = window.ergonView, r = document.getElementById('plot').getBoundingClientRect();
      return { xa: r.left + EV.xOf(ta), xb: r.left + EV.xOf(tb), y: r.top + 100 };
    }, [ta, tb]);
    await page.keyboard.down('Shift');
    await page.mouse.move(pts.xa, pts.y);
    await page.mouse.down();
    await page.mouse.move((pts.xa + pts.xb) / 2, pts.y, { steps: 4 });
    await page.mouse.move(pts.xb, pts.y, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => res())));
    out.drag_stats = await statsOf(page);
    out.drag_px = pts;
    out.hash = await page.evaluate(() => location.hash);
  }
  if (opt.shot) {
    await page.screenshot({ path: opt.shot, fullPage: true });
    out.shot = opt.shot;
  }
  if (opt['zoom-at'] !== undefined) {
    const t = Number(opt['zoom-at']);
    out.zoom = await page.evaluate(async (t) => {
      const EV = window.ergonView, c = document.getElementById('plot');
      const r = c.getBoundingClientRect();
      const before = EV.view, draws = EV.draws;
      const x = r.left + EV.xOf(t), y = r.top + 120;
      const t0 = performance.now();
      c.dispatchEvent(new WheelEvent('wheel', { deltaY: -1000, clientX: x, clientY: y,
        bubbles: true, cancelable: true }));
      while (EV.draws === draws) await new Promise((res) => requestAnimationFrame(res));
      return { before, after: EV.view, redraw_ms: EV.lastDrawAt - t0, draw_cost_ms: EV.lastDrawMs };
    }, t);
  }
  out.stats_text = await page.evaluate(() => document.getElementById('selection-stats').innerText);
  out.notes_text = await page.evaluate(() => document.getElementById('notes').innerText);
  out.header_text = await page.evaluate(() => document.getElementById('recordings').innerText);
} catch (e) {
  if (e !== null) out.error = String(e && e.stack || e);
} finally {
  if (ctx) await ctx.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
process.exit(out.error ? 1 : 0);

// #selection-stats' data- attributes (recording A) and each recording's
// column header's (data-rec), as numbers where they are numbers.
async function statsOf(page) {
  return page.evaluate(() => {
    const conv = (el) => {
      const o = {};
      for (const a of el.attributes) {
        if (!a.name.startsWith('data-')) continue;
        const v = a.value;
        o[a.name.slice(5)] = v !== '' && !isNaN(Number(v)) ? Number(v) : v;
      }
      return o;
    };
    const el = document.getElementById('selection-stats');
    return { section: conv(el),
      recordings: [...el.querySelectorAll('th[data-rec]')].map(conv) };
  });
}
