// An ergon report page's layout as Chromium draws it (Debian's
// /usr/bin/chromium driven by playwright-core), for
// tests/functional/test_report_readable.sh: prints one JSON object with,
// for every plot, its x scale, the frame's pixel box, the x tick labels
// with their centres, and the boxes of every mark and span label drawn;
// the headline rows; the order of the section's parts; the row headers of
// every table; and every request the page made (none may leave it).
//
//   node report_layout.mjs file:///.../report.html
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const url = process.argv[2];
const out = { url, requests: [], escaped: [], page_errors: [], console_errors: [] };
const dir = mkdtempSync(join(tmpdir(), 'ergon-chromium-'));
let ctx;
try {
  ctx = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.ERGON_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--proxy-server=127.0.0.1:9'],
    viewport: { width: 1280, height: 900 },
  });
  const page = ctx.pages()[0] || (await ctx.newPage());
  await page.route('**/*', (route) => {
    const u = route.request().url();
    out.requests.push(u);
    if (u.split('#')[0] === url.split('#')[0]) return route.continue();
    out.escaped.push(u);
    return route.abort();
  });
  page.on('pageerror', (e) => out.page_errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') out.console_errors.push(m.text()); });
  await page.goto(url);
  Object.assign(out, await page.evaluate(() => {
    const box = (e) => { const r = e.getBoundingClientRect(); return { x0: r.left, x1: r.right, y0: r.top, y1: r.bottom }; };
    const plots = {};
    document.querySelectorAll('figure.plotbox').forEach((f) => {
      const svg = f.querySelector('svg.plot');
      plots[f.id] = {
        xscale: svg.dataset.xscale,
        frame: box(svg.querySelector('rect.frame')),
        xticks: [...svg.querySelectorAll(':scope > text.tick:not(.xcat)')]
          .filter((t) => !t.getAttribute('text-anchor') || t.getAttribute('text-anchor') === 'middle')
          .map((t) => ({ text: t.textContent, x: (box(t).x0 + box(t).x1) / 2 })),
        xcats: [...svg.querySelectorAll('text.xcat')].map((t) => t.textContent),
        // Each category name as placed: its anchor (x, y), its rotation
        // and its box before the rotation (getBBox, the font's line box),
        // all in the SVG's own units, so that overlap is decided in the
        // names' rotated frame, not from their axis-aligned page boxes.
        xcat_boxes: [...svg.querySelectorAll('text.xcat')].map((t) => {
          const b = t.getBBox();
          const m = /rotate\((-?[0-9.]+)/.exec(t.getAttribute('transform') || '');
          return { text: t.textContent, x: +t.getAttribute('x'), y: +t.getAttribute('y'),
            angle: m ? +m[1] : 0, bx: b.x, by: b.y, bw: b.width, bh: b.height };
        }),
        labels: [...svg.querySelectorAll('text.marklabel, text.spanlabel')]
          .filter((t) => t.getAttribute('display') !== 'none')
          .map((t) => ({ text: t.textContent, ...box(t) })),
        hidden_labels: svg.querySelectorAll('text.marklabel[data-hidden]').length,
        marks: [...svg.querySelectorAll('line.mark')].map((l) => ({
          title: l.textContent, x: box(l).x0 + (box(l).x1 - box(l).x0) / 2 })),
        xlabel: [...svg.querySelectorAll('text.axislabel:not([transform])')].map((t) => t.textContent)[0],
      };
    });
    const sec = document.querySelector('section.artifact');
    const order = [...sec.children].map((e) =>
      e.matches('table.headline') ? 'headline' : e.matches('table.issues') ? 'issues'
        : e.matches('.banner') ? 'banner:' + (e.dataset.check || '') : e.tagName === 'H3' ? 'h3:' + e.textContent
          : e.tagName.toLowerCase());
    const headline = [...document.querySelectorAll('table.headline tr')].slice(1).map((tr) =>
      [...tr.children].map((c) => c.textContent.trim()));
    const th = {};
    document.querySelectorAll('th[data-key]').forEach((t) => { th[t.dataset.key] = t.textContent; });
    const tables = {};
    document.querySelectorAll('table').forEach((t) => {
      const cap = t.querySelector('caption');
      if (!cap) return;
      tables[cap.textContent] = [...t.querySelectorAll('tr')].map((tr) =>
        [...tr.children].map((c) => c.textContent.trim()));
    });
    return { plots, order, headline, th, tables };
  }));
} catch (e) {
  out.error = String(e && e.stack || e);
} finally {
  if (ctx) await ctx.close();
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
