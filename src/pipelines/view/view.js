/* ergon view: the page's script (embedded in the page; docs/internals/view.md).
 *
 * The data (#ergon-view-data) holds, per recording, the finest bins ergon
 * embedded: min, max and mean of current, voltage and power per bin of
 * bin_samples samples, the finite-sample counts of the bins that are not
 * full, and per digital line whether each bin held a low and/or a high
 * sample. Here the coarser levels are built (4 bins to 1), each drawing
 * uses the level with about one bin per pixel column, and a selection's
 * figures are sums over the finest bins, its edges snapped to them.
 * Served (`ergon view --serve`), the page also asks its server for exact
 * full-resolution statistics and for finer bins when zoomed in past the
 * embedded ones. Kept ASCII: non-ASCII characters are written as escapes.
 */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('ergon-view-data').textContent);
  var EV = window.ergonView = {
    ready: false, draws: 0, firstDrawMs: null, lastDrawMs: null, lastDrawAt: null,
    selection: null, view: null, errors: []
  };
  var MU = '\u00b5', DELTA = '\u0394';
  var LEFT = 84, RIGHT = 14, TOP = 26, AXIS = 36, GAP = 6, HEAD = 20;
  var FACTOR = 4;

  function decode(b64, Type) {
    var bin = atob(b64), n = bin.length, u8 = new Uint8Array(n);
    for (var i = 0; i < n; i++) u8[i] = bin.charCodeAt(i);
    return Type === Uint8Array ? u8 : new Type(u8.buffer);
  }

  /* --- the recordings and their pyramids -------------------------------- */

  function buildLevels(lv0, nb) {
    var levels = [lv0];
    var cur = lv0, n = nb;
    while (n > 1) {
      var m = Math.ceil(n / FACTOR), nx = { n: m, f: cur.f * FACTOR, sig: [], lines: [] };
      for (var k = 0; k < cur.sig.length; k++) {
        var s = cur.sig[k], mn = new Float32Array(m), mx = new Float32Array(m),
          me = new Float32Array(m), c = new Float64Array(m);
        for (var i = 0; i < m; i++) {
          var lo = Infinity, hi = -Infinity, sum = 0, cnt = 0, e = Math.min(n, (i + 1) * FACTOR);
          for (var j = i * FACTOR; j < e; j++) {
            var cj = s.cnt[j];
            if (!cj) continue;
            if (s.min[j] < lo) lo = s.min[j];
            if (s.max[j] > hi) hi = s.max[j];
            sum += s.mean[j] * cj; cnt += cj;
          }
          mn[i] = cnt ? lo : NaN; mx[i] = cnt ? hi : NaN; me[i] = cnt ? sum / cnt : NaN; c[i] = cnt;
        }
        nx.sig.push({ min: mn, max: mx, mean: me, cnt: c });
      }
      for (var L = 0; L < cur.lines.length; L++) {
        var b = cur.lines[L], o = new Uint8Array(m);
        for (var q = 0; q < n; q++) o[(q / FACTOR) | 0] |= b[q];
        nx.lines.push(o);
      }
      levels.push(nx);
      cur = nx; n = m;
    }
    return levels;
  }

  function loadRecording(r, ri) {
    var R = {
      i: ri, label: String.fromCharCode(65 + ri), name: r.name, path: r.path,
      fs: r.sample_rate_hz, N: r.samples, bs: r.bin_samples, nb: r.bins, raw: r,
      shift: 0, align: null, alignSource: 'none'
    };
    var lv0 = { n: R.nb, f: 1, sig: [], lines: [] };
    for (var k = 0; k < r.signals.length; k++) {
      var s = r.signals[k], cnt = new Float64Array(R.nb);
      for (var i = 0; i < R.nb; i++) cnt[i] = Math.min(R.bs, R.N - i * R.bs);
      lv0.sig.push({
        name: s.name, unit: s.unit, min: decode(s.min, Float32Array),
        max: decode(s.max, Float32Array), mean: decode(s.mean, Float32Array), cnt: cnt
      });
    }
    if (r.finite_sparse) {
      r.finite_sparse.forEach(function (e) {
        for (var k = 0; k < 3; k++) lv0.sig[k].cnt[e[0]] = e[1 + k];
      });
    } else if (r.finite_dense) {
      ['current', 'voltage', 'power'].forEach(function (nm, k) {
        var u = decode(r.finite_dense[nm], Uint32Array);
        for (var i = 0; i < R.nb; i++) lv0.sig[k].cnt[i] = u[i];
      });
    }
    // Prefix sums over the finest bins: a selection's sums in O(1).
    R.P = lv0.sig.map(function (s) {
      var p = new Float64Array(R.nb + 1), c = new Float64Array(R.nb + 1);
      for (var i = 0; i < R.nb; i++) {
        p[i + 1] = p[i] + (s.cnt[i] ? s.mean[i] * s.cnt[i] : 0);
        c[i + 1] = c[i] + s.cnt[i];
      }
      return { sum: p, cnt: c };
    });
    R.lines = r.lines.map(function (l) { return { name: l.name, rise: l.first_rise_index }; });
    r.lines.forEach(function (l) { lv0.lines.push(decode(l.bins, Uint8Array)); });
    R.levels = buildLevels(lv0, R.nb);
    R.summary = r.summary || null;
    // The first gate edge: the summary's first window, else the first
    // rising edge of gpi[0].
    if (R.summary && R.summary.windows.length) {
      R.align = R.summary.windows[0].start_s;
      R.alignSource = 'the summary\'s first gate window';
    } else if (R.lines.length && R.lines[0].name === 'gpi[0]' && R.lines[0].rise !== null) {
      R.align = R.lines[0].rise / R.fs;
      R.alignSource = 'the first rising edge of gpi[0]';
    }
    R.shown = [];
    R.lines.forEach(function (l, li) {
      var b = lv0.lines[li], any = 0;
      for (var i = 0; i < b.length; i++) any |= b[i];
      l.bits = any;
      if (any & 2) R.shown.push(li);
    });
    R.duration = R.N / R.fs;
    // Served: the recording's own levels (entries of entry_samples samples)
    // the server reads tiles from, and the tile on hand.
    R.srvLevels = r.levels || null;
    R.tile = null;
    return R;
  }

  var recs = D.recordings.map(loadRecording);
  if (recs.length > 1) {
    recs.forEach(function (R) {
      if (R.i > 0 && R.align !== null && recs[0].align !== null) R.shift = recs[0].align - R.align;
    });
  }

  /* --- formatting -------------------------------------------------------- */

  var PREFIX = [[1e-12, 'p'], [1e-9, 'n'], [1e-6, MU], [1e-3, 'm'], [1, ''], [1e3, 'k'], [1e6, 'M']];
  function si(v, unit, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '\u2013';
    if (v === 0) return '0 ' + unit;
    var a = Math.abs(v), p = PREFIX[0];
    for (var i = 0; i < PREFIX.length; i++) if (a >= PREFIX[i][0] * 0.9995) p = PREFIX[i];
    return (v / p[0]).toPrecision(digits || 5) + ' ' + p[1] + unit;
  }
  function secs(t, step) {
    var d = step > 0 ? Math.max(0, Math.min(9, Math.ceil(-Math.log10(step) - 1e-9))) : 6;
    return t.toFixed(d) + ' s';
  }
  function niceStep(range, n) {
    var raw = range / Math.max(1, n), p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }[c];
    });
  }

  /* --- layout ------------------------------------------------------------ */

  var canvas = document.getElementById('plot'), ctx = canvas.getContext('2d');
  var lanes = [], plotH = 0;
  function layout() {
    lanes = [];
    var y = TOP;
    recs.forEach(function (R) {
      if (recs.length > 1) { lanes.push({ R: R, kind: 'head', y: y, h: HEAD }); y += HEAD; }
      var first = lanes.length;
      [[0, 150], [1, 80], [2, 120]].forEach(function (e) {
        lanes.push({ R: R, kind: 'sig', k: e[0], y: y, h: e[1] }); y += e[1] + GAP;
      });
      R.shown.forEach(function (li) {
        lanes.push({ R: R, kind: 'line', li: li, y: y, h: 22 }); y += 22 + 3;
      });
      R.y0 = lanes[first].y; R.y1 = y - GAP;
      y += 8;
    });
    plotH = y + AXIS;
  }
  layout();

  var fullV0 = Math.min.apply(null, recs.map(function (R) { return R.shift; }));
  var fullV1 = Math.max.apply(null, recs.map(function (R) { return R.shift + R.duration; }));
  var view = { v0: fullV0, v1: fullV1 };
  var minSpan = Math.max(1e-9, 4 / Math.max.apply(null, recs.map(function (R) { return R.fs; })));
  var sel = null; // {t0, t1}
  var W = 600, CW = 800;

  function resize() {
    var dpr = window.devicePixelRatio || 1;
    CW = Math.max(320, canvas.parentElement.clientWidth || 800);
    W = CW - LEFT - RIGHT;
    canvas.style.height = plotH + 'px';
    canvas.width = Math.round(CW * dpr);
    canvas.height = Math.round(plotH * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  function xOf(t) { return LEFT + (t - view.v0) / (view.v1 - view.v0) * W; }
  function tOf(x) { return view.v0 + (x - LEFT) / W * (view.v1 - view.v0); }

  /* --- drawing ----------------------------------------------------------- */

  /* The level and bin range a lane draws from: about one bin per column. */
  function pick(R) {
    var span = view.v1 - view.v0, bpp = span * R.fs / R.bs / W, j = 0;
    if (bpp < 1 && R.bs > 1 && SERVE) {
      var T = wantTile(R, span);
      if (T) return T;
    }
    while (j + 1 < R.levels.length && Math.pow(FACTOR, j + 1) <= bpp) j++;
    var L = R.levels[j], dur = R.bs * L.f / R.fs;
    var i0 = Math.max(0, Math.floor((view.v0 - R.shift) / dur));
    var i1 = Math.min(L.n, Math.ceil((view.v1 - R.shift) / dur) + 1);
    R.drawnFrom = { source: 'embedded', level: j, entry_samples: R.bs * L.f };
    return { L: L, dur: dur, i0: i0, i1: i1, wide: bpp < 1, off: 0 };
  }

  /* --- served: finer bins from the server -------------------------------- */

  var SERVE = D.serve || null;
  EV.served = !!SERVE;
  EV.fetching = 0; EV.tiles = []; EV.fetchErrors = [];
  function api(path, q, done) {
    EV.fetching++;
    fetch(path + '?token=' + encodeURIComponent(SERVE.token) + '&' + q, { cache: 'no-store' })
      .then(function (res) {
        return res.json().then(function (j) {
          if (!res.ok) throw new Error(path + ': ' + res.status + ': ' + (j.error || ''));
          return j;
        });
      })
      .then(function (j) { EV.fetching--; done(j); },
        function (e) { EV.fetching--; EV.fetchErrors.push(String(e)); });
  }
  /* Zoomed in past the embedded bins: the finest level of the recording
   * that keeps the view within TILE_VIEW entries; its tile when on hand
   * (as a level to draw), else fetched (drawn from the embedded bins until
   * it comes). Null when the embedded bins are as fine. */
  var TILE_VIEW = 3000;
  function wantTile(R, span) {
    if (!R.srvLevels) return null;
    var lv = null;
    for (var k = 0; k < R.srvLevels.length; k++) {
      var c = R.srvLevels[k];
      if (span * R.fs / c.entry_samples <= TILE_VIEW && (!lv || c.entry_samples < lv.entry_samples)) lv = c;
    }
    if (!lv || lv.entry_samples >= R.bs) return null;
    var es = lv.entry_samples, dur = es / R.fs;
    var i0 = Math.max(0, Math.floor((view.v0 - R.shift) / dur));
    var i1 = Math.min(lv.entries, Math.ceil((view.v1 - R.shift) / dur) + 1);
    if (i1 <= i0) return null;
    var t = R.tile;
    if (t && t.level === lv.level && t.start <= i0 && t.start + t.count >= i1) {
      R.drawnFrom = { source: 'server', level: t.level, entry_samples: es };
      return { L: t.L, dur: dur, i0: i0 - t.start, i1: i1 - t.start, wide: span * R.fs / es / W < 1,
        off: t.start, tile: t };
    }
    // A margin of half the view each side, so that panning keeps it.
    var n = i1 - i0, start = Math.max(0, i0 - Math.floor(n / 2));
    var count = Math.min(8192, lv.entries - start, 2 * n + 2);
    var key = R.i + ':' + lv.level + ':' + start + ':' + count;
    if (R.want !== key) {
      R.want = key;
      api('/api/tile', 'rec=' + R.i + '&level=' + lv.level + '&start=' + start + '&count=' + count,
        function (j) { if (R.want === key) { R.tile = tileOf(j); redraw(); } });
    }
    return null;
  }
  function tileOf(j) {
    var L = { n: j.count, f: 0, sig: [], lines: [] };
    j.signals.forEach(function (s) {
      var mean = decode(s.mean, Float32Array), cnt = new Float64Array(j.count);
      for (var i = 0; i < j.count; i++) cnt[i] = isNaN(mean[i]) ? 0 : j.entry_samples;
      L.sig.push({ min: decode(s.min, Float32Array), max: decode(s.max, Float32Array), mean: mean, cnt: cnt });
    });
    j.lines.forEach(function (l) { L.lines.push(decode(l.bins, Uint8Array)); });
    var t = { level: j.level, es: j.entry_samples, start: j.start, count: j.count, L: L };
    EV.tiles.push({ rec: j.rec, level: j.level, entry_samples: j.entry_samples, start: j.start, count: j.count });
    return t;
  }

  function drawSig(lane) {
    var R = lane.R, P = pick(R), s = P.L.sig[lane.k], y0 = lane.y, h = lane.h;
    var lo = Infinity, hi = -Infinity, i;
    for (i = P.i0; i < P.i1; i++) {
      if (!s.cnt[i]) continue;
      if (s.min[i] < lo) lo = s.min[i];
      if (s.max[i] > hi) hi = s.max[i];
    }
    ctx.fillStyle = '#fafbfc';
    ctx.fillRect(LEFT, y0, W, h);
    ctx.strokeStyle = '#d5dae3';
    ctx.strokeRect(LEFT + 0.5, y0 + 0.5, W - 1, h - 1);
    var unit = R.levels[0].sig[lane.k].unit, name = R.levels[0].sig[lane.k].name;
    if (!(hi >= lo)) { laneLabel(name + ' (' + unit + '): no finite sample here', y0); return; }
    var pad = (hi - lo) * 0.08;
    if (pad === 0) pad = Math.max(Math.abs(hi) * 0.05, 1e-12);
    lo -= pad; hi += pad;
    var yOf = function (v) { return y0 + h - (v - lo) / (hi - lo) * h; };
    // Y ticks.
    var step = niceStep(hi - lo, Math.max(2, Math.floor(h / 36)));
    ctx.textAlign = 'right';
    ctx.fillStyle = '#5b6577';
    ctx.strokeStyle = '#eceff3';
    ctx.beginPath();
    for (var v = Math.ceil(lo / step) * step; v <= hi; v += step) {
      var yy = Math.round(yOf(v)) + 0.5;
      ctx.moveTo(LEFT, yy); ctx.lineTo(LEFT + W, yy);
      ctx.fillText(si(Math.abs(v) < step * 1e-6 ? 0 : v, unit, 3), LEFT - 6, yy + 4);
    }
    ctx.stroke();
    ctx.save();
    ctx.beginPath();
    ctx.rect(LEFT, y0, W, h);
    ctx.clip();
    var color = ['#2563eb', '#7c3aed', '#dc2626'][lane.k];
    if (!P.wide) {
      // One column per pixel: min..max band, mean line.
      var cmin = new Float64Array(W), cmax = new Float64Array(W), csum = new Float64Array(W),
        ccnt = new Float64Array(W), c;
      for (c = 0; c < W; c++) { cmin[c] = Infinity; cmax[c] = -Infinity; }
      for (i = P.i0; i < P.i1; i++) {
        if (!s.cnt[i]) continue;
        c = Math.floor(((i + P.off + 0.5) * P.dur + R.shift - view.v0) / (view.v1 - view.v0) * W);
        if (c < 0 || c >= W) continue;
        if (s.min[i] < cmin[c]) cmin[c] = s.min[i];
        if (s.max[i] > cmax[c]) cmax[c] = s.max[i];
        csum[c] += s.mean[i] * s.cnt[i]; ccnt[c] += s.cnt[i];
      }
      ctx.fillStyle = color + '55';
      for (c = 0; c < W; c++) {
        if (!ccnt[c]) continue;
        var ya = yOf(cmax[c]), yb = yOf(cmin[c]);
        ctx.fillRect(LEFT + c, ya, 1, Math.max(1, yb - ya));
      }
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.25;
      ctx.beginPath();
      var pen = false;
      for (c = 0; c < W; c++) {
        if (!ccnt[c]) { pen = false; continue; }
        var ym = yOf(csum[c] / ccnt[c]);
        if (pen) ctx.lineTo(LEFT + c + 0.5, ym); else ctx.moveTo(LEFT + c + 0.5, ym);
        pen = true;
      }
      ctx.stroke();
    } else {
      // Bins wider than a column: each bin's band and mean as a step.
      ctx.fillStyle = color + '33';
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.25;
      ctx.beginPath();
      var last = null;
      for (i = P.i0; i < P.i1; i++) {
        if (!s.cnt[i]) { last = null; continue; }
        var xa = xOf((i + P.off) * P.dur + R.shift), xb = xOf((i + P.off + 1) * P.dur + R.shift);
        var yt = yOf(s.max[i]), ybot = yOf(s.min[i]), ym2 = yOf(s.mean[i]);
        ctx.fillRect(xa, yt, xb - xa, Math.max(1, ybot - yt));
        if (last === null) ctx.moveTo(xa, ym2); else ctx.lineTo(xa, ym2);
        ctx.lineTo(xb, ym2);
        last = ym2;
      }
      ctx.stroke();
    }
    ctx.restore();
    laneLabel(name + ' (' + unit + ')', y0);
  }
  /* A lane's name on a light box, over the trace. */
  function laneLabel(text, y0) {
    ctx.font = '12px system-ui, sans-serif';
    ctx.textAlign = 'left';
    var w = ctx.measureText(text).width;
    ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
    ctx.fillRect(LEFT + 2, y0 + 2, w + 8, 16);
    ctx.fillStyle = '#1d2330';
    ctx.fillText(text, LEFT + 6, y0 + 14);
  }

  function drawLine(lane) {
    var R = lane.R, P = pick(R), b = P.L.lines[lane.li], y0 = lane.y, h = lane.h, i;
    ctx.fillStyle = '#fafbfc';
    ctx.fillRect(LEFT, y0, W, h);
    ctx.fillStyle = '#1d2330';
    ctx.font = '12px system-ui, sans-serif';
    ctx.textAlign = 'right';
    ctx.fillText(R.lines[lane.li].name, LEFT - 6, y0 + h / 2 + 4);
    ctx.save();
    ctx.beginPath();
    ctx.rect(LEFT, y0, W, h);
    ctx.clip();
    var span = view.v1 - view.v0;
    if (!P.wide) {
      var col = new Uint8Array(W), c;
      for (i = P.i0; i < P.i1; i++) {
        c = Math.floor(((i + P.off + 0.5) * P.dur + R.shift - view.v0) / span * W);
        if (c >= 0 && c < W) col[c] |= b[i];
      }
      for (c = 0; c < W; c++) paintLine(LEFT + c, 1, col[c], y0, h);
    } else {
      for (i = P.i0; i < P.i1; i++) {
        var xa = xOf((i + P.off) * P.dur + R.shift), xb = xOf((i + P.off + 1) * P.dur + R.shift);
        paintLine(xa, xb - xa, b[i], y0, h);
      }
    }
    ctx.restore();
  }
  function paintLine(x, w, st, y0, h) {
    if (st === 2) { ctx.fillStyle = '#16a34a'; ctx.fillRect(x, y0 + 3, w, h - 6); }
    else if (st === 1) { ctx.fillStyle = '#64748b'; ctx.fillRect(x, y0 + h - 4, w, 1.5); }
    else if (st === 3) { ctx.fillStyle = '#86c89c'; ctx.fillRect(x, y0 + 3, w, h - 6); }
  }

  function drawOverlays() {
    var span = view.v1 - view.v0;
    recs.forEach(function (R) {
      var S = R.summary;
      if (!S) return;
      ctx.save();
      ctx.beginPath();
      ctx.rect(LEFT, 0, W, plotH);
      ctx.clip();
      S.windows.forEach(function (w, wi) {
        var xa = xOf(w.start_s + R.shift), xb = xOf(w.end_s + R.shift);
        if (xb < LEFT || xa > LEFT + W) return;
        ctx.fillStyle = 'rgba(22, 163, 74, 0.12)';
        ctx.fillRect(xa, R.y0, Math.max(1, xb - xa), R.y1 - R.y0);
        ctx.fillStyle = '#15803d';
        ctx.fillRect(xa, R.y0, 1, R.y1 - R.y0);
        ctx.fillRect(xb - 1, R.y0, 1, R.y1 - R.y0);
        if (xb - xa > 60) {
          ctx.font = '11px system-ui, sans-serif';
          ctx.textAlign = 'left';
          ctx.fillText('gate window ' + (wi + 1), Math.max(xa, LEFT) + 4, R.y0 + 28);
        }
      });
      S.ignored_pulses.forEach(function (g) {
        var xa = xOf(g.start_s + R.shift), xb = xOf(g.start_s + g.duration_s + R.shift);
        if (xb < LEFT || xa > LEFT + W) return;
        ctx.fillStyle = 'rgba(220, 38, 38, 0.8)';
        ctx.fillRect(xa, R.y0, Math.max(2, xb - xa), R.y1 - R.y0);
      });
      var lastEnd = -Infinity;
      S.layers.forEach(function (l) {
        var xa = xOf(l.start_s + R.shift);
        if (xa < LEFT || xa > LEFT + W) return;
        ctx.fillStyle = 'rgba(124, 58, 237, 0.55)';
        ctx.fillRect(Math.round(xa), R.y0, 1, R.y1 - R.y0);
        ctx.font = '10px system-ui, sans-serif';
        ctx.textAlign = 'left';
        var tw = ctx.measureText(l.name).width;
        if (xa + 2 > lastEnd && l.name) {
          ctx.fillStyle = '#6d28d9';
          ctx.fillText(l.name, xa + 2, R.y0 + 40);
          lastEnd = xa + 2 + tw + 6;
        }
      });
      ctx.restore();
    });
    void span;
  }

  function drawSelection() {
    if (!sel) return;
    var xa = xOf(sel.t0), xb = xOf(sel.t1), bottom = plotH - AXIS;
    ctx.save();
    ctx.beginPath();
    ctx.rect(LEFT, 0, W, plotH);
    ctx.clip();
    ctx.fillStyle = 'rgba(37, 99, 235, 0.13)';
    ctx.fillRect(xa, TOP, xb - xa, bottom - TOP);
    ctx.fillStyle = '#1d4ed8';
    ctx.fillRect(Math.round(xa), TOP - 6, 1.5, bottom - TOP + 6);
    ctx.fillRect(Math.round(xb) - 1, TOP - 6, 1.5, bottom - TOP + 6);
    ctx.restore();
    ctx.font = 'bold 11px system-ui, sans-serif';
    ctx.fillStyle = '#1d4ed8';
    var step = niceStep(view.v1 - view.v0, 1000);
    ctx.textAlign = 'right';
    if (xa >= LEFT - 1 && xa <= LEFT + W + 1) ctx.fillText('A ' + secs(sel.t0, step), xa - 3, TOP - 9);
    ctx.textAlign = 'left';
    if (xb >= LEFT - 1 && xb <= LEFT + W + 1) ctx.fillText('B ' + secs(sel.t1, step), xb + 3, TOP - 9);
  }

  function drawAxis() {
    var y = plotH - AXIS, span = view.v1 - view.v0;
    var step = niceStep(span, Math.max(2, Math.floor(W / 110)));
    ctx.fillStyle = '#f1f3f6';
    ctx.fillRect(LEFT, y, W, 22);
    ctx.fillStyle = '#5b6577';
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'center';
    ctx.strokeStyle = '#9aa3b2';
    ctx.beginPath();
    for (var t = Math.ceil(view.v0 / step) * step; t <= view.v1; t += step) {
      var x = Math.round(xOf(t)) + 0.5;
      ctx.moveTo(x, y); ctx.lineTo(x, y + 5);
      ctx.fillText(secs(Math.abs(t) < step * 1e-6 ? 0 : t, step), x, y + 16);
    }
    ctx.stroke();
    ctx.textAlign = 'left';
    ctx.fillText('time (s)' + (recs.length > 1 ? ', aligned on the first gate edge' : ''), LEFT, y + 32);
  }

  function draw() {
    var t = performance.now();
    if (canvas.width !== Math.round(CW * (window.devicePixelRatio || 1))) resize();
    ctx.clearRect(0, 0, CW, plotH);
    lanes.forEach(function (lane) {
      if (lane.kind === 'sig') drawSig(lane);
      else if (lane.kind === 'line') drawLine(lane);
      else {
        ctx.fillStyle = '#1d2330';
        ctx.font = 'bold 12px system-ui, sans-serif';
        ctx.textAlign = 'left';
        ctx.fillText(lane.R.label + ': ' + lane.R.name + (lane.R.shift ? '  (shifted ' +
          si(lane.R.shift, 's', 6) + ' to align the first gate edge)' : ''), LEFT, lane.y + 14);
      }
    });
    drawOverlays();
    drawSelection();
    drawAxis();
    var now = performance.now();
    EV.draws++;
    EV.lastDrawMs = now - t;
    EV.lastDrawAt = now;
    EV.view = { v0: view.v0, v1: view.v1 };
    EV.drawnFrom = recs.map(function (R) { return R.drawnFrom; });
    if (!EV.ready) {
      EV.firstDrawMs = now;
      EV.ready = true;
      document.body.setAttribute('data-ready', '1');
    }
  }
  var pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; draw(); });
  }

  /* --- selection statistics ---------------------------------------------- */

  /* The selection's figures for recording R, from the finest embedded bins,
   * its edges snapped to them; null when it misses the recording. */
  function stats(R, t0, t1) {
    var a = Math.round((t0 - R.shift) * R.fs / R.bs), b = Math.round((t1 - R.shift) * R.fs / R.bs);
    a = Math.max(0, Math.min(R.nb, a)); b = Math.max(0, Math.min(R.nb, b));
    if (b <= a) {
      if (a >= R.nb || (t1 - R.shift) <= 0) return null;
      b = a + 1;
    }
    var L = R.levels[0], out = {
      rec: R.i, bin0: a, bin1: b, s0: a * R.bs, s1: Math.min(b * R.bs, R.N)
    };
    out.t0 = out.s0 / R.fs + R.shift; out.t1 = out.s1 / R.fs + R.shift;
    out.dt = (out.s1 - out.s0) / R.fs;
    out.samples = out.s1 - out.s0;
    ['current', 'voltage', 'power'].forEach(function (nm, k) {
      var s = L.sig[k], lo = Infinity, hi = -Infinity;
      for (var i = a; i < b; i++) {
        if (!s.cnt[i]) continue;
        if (s.min[i] < lo) lo = s.min[i];
        if (s.max[i] > hi) hi = s.max[i];
      }
      var sum = R.P[k].sum[b] - R.P[k].sum[a], cnt = R.P[k].cnt[b] - R.P[k].cnt[a];
      out[nm] = { mean: cnt ? sum / cnt : NaN, min: cnt ? lo : NaN, max: cnt ? hi : NaN,
        sum: sum, finite: cnt };
    });
    // Each sample stands for 1/fs: charge and energy are the sums over it.
    out.charge_c = out.current.sum / R.fs;
    out.energy_j = out.power.sum / R.fs;
    out.lost = out.samples - out.current.finite;
    out.resolution_s = R.bs / R.fs;
    out.bin_samples = R.bs;
    out.source = 'embedded';
    return out;
  }

  var ROWS = [
    ['t0 (A)', 't0-s', function (s) { return secs(s.t0, s.resolution_s); }, 't0'],
    ['t1 (B)', 't1-s', function (s) { return secs(s.t1, s.resolution_s); }, 't1'],
    [DELTA + 't', 'dt-s', function (s) { return si(s.dt, 's', 6); }, 'dt'],
    ['mean current', 'mean-current-a', function (s) { return si(s.current.mean, 'A'); }, 'current.mean'],
    ['min current', 'min-current-a', function (s) { return si(s.current.min, 'A'); }, 'current.min'],
    ['max current', 'max-current-a', function (s) { return si(s.current.max, 'A'); }, 'current.max'],
    ['mean power', 'mean-power-w', function (s) { return si(s.power.mean, 'W'); }, 'power.mean'],
    ['min power', 'min-power-w', function (s) { return si(s.power.min, 'W'); }, 'power.min'],
    ['max power', 'max-power-w', function (s) { return si(s.power.max, 'W'); }, 'power.max'],
    ['mean voltage', 'mean-voltage-v', function (s) { return si(s.voltage.mean, 'V'); }, 'voltage.mean'],
    ['charge', 'charge-c', function (s) { return si(s.charge_c, 'C'); }, 'charge_c'],
    ['energy', 'energy-j', function (s) { return si(s.energy_j, 'J'); }, 'energy_j'],
    ['samples', 'samples', function (s) { return String(s.samples); }, 'samples'],
    ['lost samples', 'lost-samples', function (s) { return String(s.lost); }, 'lost'],
    ['resolution', 'resolution-s', function (s) { return si(s.resolution_s, 's', 4); }, 'resolution_s']
  ];
  function field(s, path) {
    return path.split('.').reduce(function (o, k) { return o[k]; }, s);
  }
  function dataAttrs(s) {
    var a = ' data-rec="' + s.rec + '" data-bin-samples="' + s.bin_samples + '" data-source="' +
      s.source + '"';
    ROWS.forEach(function (r) {
      var v = field(s, r[3]);
      a += ' data-' + r[1] + '="' + (typeof v === 'number' && !isFinite(v) ? '' : v) + '"';
    });
    return a;
  }

  /* Served: the selection's figures at full resolution from the server
   * (its edges on samples), replacing the embedded bins' when they come. */
  var exact = { seq: 0, list: null };
  function askExact() {
    var seq = ++exact.seq;
    exact.list = null;
    if (!SERVE || !sel) return;
    var got = recs.map(function () { return null; }), left = 0;
    recs.forEach(function (R) {
      var a = Math.max(0, Math.min(R.N, Math.round((sel.t0 - R.shift) * R.fs)));
      var b = Math.max(0, Math.min(R.N, Math.round((sel.t1 - R.shift) * R.fs)));
      if (b <= a) return;
      left++;
      api('/api/stats', 'rec=' + R.i + '&start=' + a + '&end=' + b, function (j) {
        if (seq !== exact.seq) return;
        got[R.i] = exactOf(R, j);
        if (--left === 0) { exact.list = got; showStats(true); }
      });
    });
  }
  function exactOf(R, j) {
    var out = { rec: R.i, s0: j.start, s1: j.end, samples: j.samples, dt: j.dt_s,
      t0: j.start / R.fs + R.shift, t1: j.end / R.fs + R.shift, source: 'server',
      resolution_s: 1 / R.fs, bin_samples: 1, levels_used: j.levels_used };
    ['current', 'voltage', 'power'].forEach(function (nm) {
      var g = j.signals[nm], f = g.finite_samples;
      out[nm] = { mean: g.mean === null ? NaN : g.mean, min: g.min === null ? NaN : g.min,
        max: g.max === null ? NaN : g.max, sum: f ? g.mean * f : 0, finite: f };
    });
    out.charge_c = j.charge_c === null ? NaN : j.charge_c;
    out.energy_j = j.energy_j === null ? NaN : j.energy_j;
    out.lost = out.samples - out.current.finite;
    return out;
  }

  var statsEl = document.getElementById('selection-stats');
  function showStats(fromServer) {
    if (!fromServer) askExact();
    var list = !sel ? [] : exact.list ? exact.list :
      recs.map(function (R) { return stats(R, sel.t0, sel.t1); });
    EV.selection = sel ? { t0: sel.t0, t1: sel.t1, stats: list } : null;
    // The section's own attributes: recording A's figures.
    Array.prototype.slice.call(statsEl.attributes).forEach(function (at) {
      if (at.name.indexOf('data-') === 0) statsEl.removeAttribute(at.name);
    });
    if (!sel) {
      statsEl.setAttribute('data-state', 'none');
      statsEl.innerHTML = '<p>No selection: Shift+drag over the plot, or drag on the time axis.</p>';
      return;
    }
    var s0 = list[0];
    statsEl.setAttribute('data-state', s0 ? 'ok' : 'outside');
    if (s0) {
      var tmp = document.createElement('div');
      tmp.innerHTML = '<i' + dataAttrs(s0) + '></i>';
      Array.prototype.slice.call(tmp.firstChild.attributes).forEach(function (at) {
        statsEl.setAttribute(at.name, at.value);
      });
    }
    var h = '<table><thead><tr><th>selection</th>';
    list.forEach(function (s, i) {
      h += '<th' + (s ? dataAttrs(s) : ' data-rec="' + i + '"') + '>' + esc(recs[i].label + ': ' +
        recs[i].name) + '</th>';
    });
    h += '</tr></thead><tbody>';
    ROWS.forEach(function (r) {
      h += '<tr><th>' + r[0] + '</th>';
      list.forEach(function (s) { h += '<td>' + (s ? esc(r[2](s)) : 'outside') + '</td>'; });
      h += '</tr>';
    });
    h += '</tbody></table>';
    list.forEach(function (s, i) {
      if (!s) return;
      var R = recs[i];
      if (s.source === 'server') {
        h += '<p class="res">' + esc(R.label) + ': exact at full resolution (' +
          esc(si(1 / R.fs, 's', 4)) + ' per sample at ' + esc(si(R.fs, 'Hz', 6)) + '), read by the ' +
          'server from the recording: ' + s.levels_used.map(function (u) {
            return u.entries + ' \u00d7 ' + u.entry_samples + ' sample' + (u.entry_samples > 1 ? 's' : '');
          }).join(' + ') + '; the selection\'s edges are on samples: ' +
          esc(secs(s.t0, s.resolution_s)) + ' to ' + esc(secs(s.t1, s.resolution_s)) +
          (s.lost ? '; ' + s.lost + ' lost samples are left out' : '') + '.</p>';
        return;
      }
      h += '<p class="res">' + esc(R.label) + ': from the finest embedded level, bins of ' +
        R.bs + ' sample' + (R.bs > 1 ? 's' : '') + ' (' + esc(si(R.bs / R.fs, 's', 4)) + ' at ' +
        esc(si(R.fs, 'Hz', 6)) + '); the selection\'s edges snap to these bins, so its figures ' +
        'are exact for ' + esc(secs(s.t0, s.resolution_s)) + ' to ' + esc(secs(s.t1, s.resolution_s)) +
        (s.lost ? '; ' + s.lost + ' lost samples are left out' : '') + '.</p>';
    });
    statsEl.innerHTML = h;
  }

  function setSelection(t0, t1, keepHash) {
    if (t0 === null || t0 === undefined) { sel = null; }
    else {
      if (t1 < t0) { var x = t0; t0 = t1; t1 = x; }
      sel = { t0: t0, t1: t1 };
    }
    showStats();
    if (!keepHash) writeHash();
    document.getElementById('btn-zoom-sel').disabled = !sel;
    document.getElementById('btn-clear-sel').disabled = !sel;
    redraw();
  }
  function writeHash() {
    var h = sel ? '#t0=' + sel.t0.toPrecision(10) + '&t1=' + sel.t1.toPrecision(10) : '';
    try { history.replaceState(null, '', location.pathname + location.search + h); } catch (e) { /* file: */ }
  }
  function setView(v0, v1) {
    var span = Math.max(minSpan, Math.min(v1 - v0, (fullV1 - fullV0) * 1.5));
    var c = (v0 + v1) / 2;
    view.v0 = c - span / 2; view.v1 = c + span / 2;
    var margin = (fullV1 - fullV0) * 0.25;
    if (view.v0 < fullV0 - margin) { view.v1 += fullV0 - margin - view.v0; view.v0 = fullV0 - margin; }
    if (view.v1 > fullV1 + margin) { view.v0 -= view.v1 - fullV1 - margin; view.v1 = fullV1 + margin; }
    redraw();
  }
  function zoomAt(x, factor) {
    var t = tOf(x), span = (view.v1 - view.v0) * factor;
    span = Math.max(minSpan, span);
    var f = (x - LEFT) / W;
    setView(t - f * span, t - f * span + span);
  }

  /* --- input ------------------------------------------------------------- */

  var drag = null, pointers = {};
  function pos(e) {
    var r = canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }
  function nearCursor(p) {
    if (!sel) return null;
    if (Math.abs(p.x - xOf(sel.t0)) <= 6) return 't0';
    if (Math.abs(p.x - xOf(sel.t1)) <= 6) return 't1';
    return null;
  }
  canvas.addEventListener('wheel', function (e) {
    e.preventDefault();
    var dy = e.deltaY * (e.deltaMode === 1 ? 33 : e.deltaMode === 2 ? 400 : 1);
    zoomAt(pos(e).x, Math.exp(dy * 0.0015));
  }, { passive: false });
  canvas.addEventListener('pointerdown', function (e) {
    var p = pos(e);
    pointers[e.pointerId] = p;
    canvas.setPointerCapture(e.pointerId);
    var ids = Object.keys(pointers);
    if (ids.length === 2) {
      var a = pointers[ids[0]], b = pointers[ids[1]];
      drag = { mode: 'pinch', d: Math.abs(a.x - b.x) || 1, v0: view.v0, v1: view.v1, cx: (a.x + b.x) / 2 };
      return;
    }
    var c = nearCursor(p);
    if (c) drag = { mode: 'cursor', which: c };
    else if (e.shiftKey || p.y >= plotH - AXIS) drag = { mode: 'select', t: tOf(p.x), x: p.x };
    else { drag = { mode: 'pan', x: p.x, v0: view.v0, v1: view.v1 }; canvas.classList.add('panning'); }
  });
  canvas.addEventListener('pointermove', function (e) {
    var p = pos(e);
    if (pointers[e.pointerId]) pointers[e.pointerId] = p;
    if (!drag) {
      canvas.classList.toggle('on-cursor', !!nearCursor(p));
      return;
    }
    if (drag.mode === 'pan') {
      var dt = (p.x - drag.x) / W * (drag.v1 - drag.v0);
      setView(drag.v0 - dt, drag.v1 - dt);
    } else if (drag.mode === 'select') {
      if (Math.abs(p.x - drag.x) >= 3) setSelection(drag.t, tOf(p.x));
    } else if (drag.mode === 'cursor') {
      var t = tOf(p.x);
      if (drag.which === 't0') setSelection(t, sel.t1); else setSelection(sel.t0, t);
      if (sel && sel.t0 === t) drag.which = 't0'; else drag.which = 't1';
    } else if (drag.mode === 'pinch') {
      var ids = Object.keys(pointers), a = pointers[ids[0]], b = pointers[ids[1]];
      if (!a || !b) return;
      var d = Math.abs(a.x - b.x) || 1, span = (drag.v1 - drag.v0) * drag.d / d;
      var tc = drag.v0 + (drag.cx - LEFT) / W * (drag.v1 - drag.v0), f = ((a.x + b.x) / 2 - LEFT) / W;
      setView(tc - f * span, tc - f * span + span);
    }
  });
  function up(e) {
    delete pointers[e.pointerId];
    if (drag && drag.mode === 'select') writeHash();
    drag = null;
    canvas.classList.remove('panning');
  }
  canvas.addEventListener('pointerup', up);
  canvas.addEventListener('pointercancel', up);
  canvas.addEventListener('dblclick', function () { setView(fullV0, fullV1); });
  document.addEventListener('keydown', function (e) {
    var span = view.v1 - view.v0;
    if (e.key === '+' || e.key === '=') zoomAt(LEFT + W / 2, 0.5);
    else if (e.key === '-') zoomAt(LEFT + W / 2, 2);
    else if (e.key === 'ArrowLeft') setView(view.v0 - span * 0.2, view.v1 - span * 0.2);
    else if (e.key === 'ArrowRight') setView(view.v0 + span * 0.2, view.v1 + span * 0.2);
    else if (e.key === 'Escape') setSelection(null);
    else if (e.key === 'Home' || e.key === 'f') setView(fullV0, fullV1);
  });
  document.getElementById('btn-fit').addEventListener('click', function () { setView(fullV0, fullV1); });
  document.getElementById('btn-clear-sel').addEventListener('click', function () { setSelection(null); });
  document.getElementById('btn-zoom-sel').addEventListener('click', function () {
    if (sel) { var m = (sel.t1 - sel.t0) * 0.1; setView(sel.t0 - m, sel.t1 + m); }
  });
  window.addEventListener('resize', function () { resize(); redraw(); });

  /* --- the header and notes ---------------------------------------------- */

  var hdr = '';
  recs.forEach(function (R) {
    var r = R.raw;
    hdr += '<div class="rec" data-rec="' + R.i + '"><b>' + esc(R.label + ': ' + R.name) + '</b> ' +
      esc(si(R.fs, 'Hz', 6)) + ', ' + R.N + ' samples (' + esc(si(R.duration, 's', 6)) + ')' +
      (r.start_utc ? ', started ' + esc(r.start_utc) : '') +
      (r.source && r.source.model ? ', ' + esc([r.source.vendor, r.source.model, r.source.serial]
        .filter(Boolean).join(' ')) : '') +
      '; finest embedded bins: ' + R.bs + ' sample' + (R.bs > 1 ? 's' : '') +
      (R.summary ? '; summary ' + esc(R.summary.path) + ' (' + R.summary.windows.length +
        ' gate window' + (R.summary.windows.length === 1 ? '' : 's') + ', integrity ' +
        esc(R.summary.integrity || 'unknown') + ')' : '') + '</div>';
  });
  document.getElementById('recordings').innerHTML = hdr;
  var notes = '';
  recs.forEach(function (R) {
    var r = R.raw;
    r.warnings.forEach(function (w) {
      notes += '<p class="warn">' + esc(R.label) + ': ' + esc(w.code) + ': ' + esc(w.message) + '</p>';
    });
    r.signals.forEach(function (s) {
      if (s.lost_samples) notes += '<p class="warn">' + esc(R.label) + ': ' + s.lost_samples +
        ' lost samples of ' + esc(s.name) + ' (NaN in the recording): left out of every figure.</p>';
    });
    if (r.signals[2].computed) notes += '<p>' + esc(R.label) + ': power is current \u00d7 voltage ' +
      'per sample (the recording has no power signal).</p>';
    var low = R.lines.filter(function (l, li) { return R.shown.indexOf(li) < 0; })
      .map(function (l) { return l.name; });
    if (low.length) notes += '<p>' + esc(R.label) + ': ' + esc(low.join(', ')) + ' low throughout (not drawn).</p>';
    if (R.summary && R.summary.not_shown_to_belong) notes += '<p class="warn" data-summary-forced="1">' +
      esc(R.label) + ': the summary is drawn with --force-jls over a recording NOT shown to be its own: ' +
      esc(R.summary.not_shown_to_belong) + '</p>';
    if (R.summary && R.summary.ignored_pulses_total) notes += '<p>' + esc(R.label) + ': ' +
      R.summary.ignored_pulses_total + ' short gate pulse' + (R.summary.ignored_pulses_total === 1 ? '' : 's') +
      ' ignored by the analysis (red).</p>';
    if (recs.length > 1 && R.i > 0) notes += '<p>' + esc(R.label) + ': ' + (R.align !== null &&
      recs[0].align !== null ? 'aligned on ' + esc(R.alignSource) + ' (A: ' + esc(recs[0].alignSource) +
      '), shifted by ' + esc(si(R.shift, 's', 6)) : 'not aligned: no gate edge found in both recordings') + '.</p>';
  });
  document.getElementById('notes').innerHTML = notes;

  /* --- start ------------------------------------------------------------- */

  function readHash() {
    var q = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i > 0) q[decodeURIComponent(kv.slice(0, i))] = parseFloat(decodeURIComponent(kv.slice(i + 1)));
    });
    return q;
  }
  EV.setSelection = function (t0, t1) { setSelection(t0, t1); draw(); return EV.selection; };
  EV.setView = function (v0, v1) { setView(v0, v1); draw(); return EV.view; };
  /* The x of time t on the canvas, in CSS pixels from its left edge. */
  EV.xOf = function (t) { return xOf(t); };
  EV.recordings = recs.map(function (R) {
    return { name: R.name, fs: R.fs, samples: R.N, bin_samples: R.bs, shift_s: R.shift };
  });
  resize();
  var q = readHash();
  if (isFinite(q.v0) && isFinite(q.v1) && q.v1 > q.v0) setView(q.v0, q.v1);
  if (isFinite(q.t0) && isFinite(q.t1)) setSelection(q.t0, q.t1, true);
  else setSelection(null, null, true);
  window.addEventListener('hashchange', function () {
    var h = readHash();
    if (isFinite(h.t0) && isFinite(h.t1)) setSelection(h.t0, h.t1, true);
  });
  draw();
})();
