// The timeline page's style and script (docs/profile-queries.md, "The timeline"). The script
// reads the JSON in #profile-data, draws the axis, the aggregate rows and the visible tile
// lanes on canvases, positions the .phase-band elements, and sets body[data-status] to "ok"
// (or "error" with the message in #status) so a headless browser can tell it ran.
#include "profile/profile_html.hpp"

namespace lockstep::replay {

const char* const kProfileTimelineStyle = R"CSS(
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.35 system-ui, sans-serif; color: #222; background: #fff; }
header { padding: 8px 12px 4px; }
h1 { font-size: 17px; margin: 0 0 4px; }
.facts { margin: 0 0 6px; color: #444; }
#legend span { display: inline-block; margin-right: 12px; white-space: nowrap; }
#legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -2px;
            border: 1px solid rgba(0,0,0,.2); }
#controls { padding: 4px 12px 6px; border-bottom: 1px solid #ddd; display: flex; gap: 14px;
            align-items: center; flex-wrap: wrap; }
#controls input.bad { border-color: #c00; background: #fee; }
#view-range { color: #444; font-variant-numeric: tabular-nums; }
.hint { color: #777; }
#timeline { position: relative; user-select: none; }
#timeline canvas { display: block; }
#bands { position: relative; height: 20px; overflow: hidden; background: #fafafa;
         border-bottom: 1px solid #ddd; }
.phase-band { position: absolute; top: 2px; height: 16px; background: rgba(78,121,167,.25);
              border-left: 1px solid rgba(78,121,167,.8); font-size: 10px; line-height: 16px;
              padding-left: 2px; overflow: hidden; white-space: nowrap; color: #234; }
.phase-band:nth-child(even) { background: rgba(242,142,43,.25); border-left-color: rgba(242,142,43,.9); }
.phase-band.off { display: none; }
#lanes-scroll { overflow-y: auto; overflow-x: hidden; position: relative; }
#lanes { position: sticky; top: 0; }
#tooltip { position: fixed; z-index: 10; pointer-events: none; background: #fffff4; border: 1px solid #999;
           padding: 4px 6px; font: 12px/1.3 ui-monospace, monospace; white-space: pre; max-width: 640px;
           box-shadow: 0 2px 6px rgba(0,0,0,.2); }
#status { margin: 4px 12px; color: #666; font-size: 11px; }
body[data-status="error"] #status { color: #c00; font-weight: bold; }
)CSS";

const char* const kProfileTimelineScript = R"JS(
(function () {
  'use strict';
  const body = document.body;
  const statusLine = document.getElementById('status');
  function fail(message) {
    body.dataset.status = 'error';
    statusLine.textContent = 'error: ' + message;
  }
  window.addEventListener('error', function (e) { fail(e.message); });

  const data = JSON.parse(document.getElementById('profile-data').textContent);
  const S = data.strings;
  const KIND_NAMES = ['exchange', 'compute', 'synchronization', 'idle'];
  // Drawing categories: how the stack's renderer splits and colours samples.
  const C = { compute: 0, exchange: 1, tx: 2, rx: 3, txrx: 4, busy: 5, xidle: 6, wait: 7, sampling: 8, sync: 9,
              idle: 10 };
  const CAT_NAMES = ['compute', 'exchange (zoom in for roles)', 'tx', 'rx', 'tx/rx', 'partner busy', 'exchange idle',
                     'exchange boundary wait', 'exchange boundary sampling', 'synchronization', 'idle'];
  const COLORS = ['#4e79a7', '#f28e2b', '#17becf', '#59a14f', '#b07aa1', '#9c755f', '#d9cbb5', '#e15759',
                  '#edc948', '#ff9da7', '#dddddd'];
  const ROLE_CAT = [C.tx, C.rx, C.txrx, C.busy, C.xidle];
  // Aggregate rows: share of the shown tiles in each group of categories.
  const AGGREGATES = [
    { name: 'compute', color: COLORS[C.compute], cats: [C.compute] },
    { name: 'exchange', color: COLORS[C.exchange], cats: [C.exchange, C.tx, C.rx, C.txrx, C.busy, C.xidle] },
    { name: 'sync', color: COLORS[C.wait], cats: [C.wait, C.sampling, C.sync] },
    { name: 'idle', color: '#aaaaaa', cats: [C.idle] },
  ];
  const AGG_OF = new Int32Array(CAT_NAMES.length);
  AGGREGATES.forEach(function (a, i) { a.cats.forEach(function (c) { AGG_OF[c] = i; }); });
  const GUTTER = 64, AXIS_H = 24, AGG_ROW_H = 26;

  const steps = data.steps.map(function (s) {
    return { kind: s[0], kernel: S[s[1]], operation: S[s[2]], phase: s[3], label: S[s[4]], eventCycles: s[5],
             roles: s[6], meta: s[7], shownIdle: s[8] === 1 };
  });
  const bands = data.bands.map(function (b) {
    return { start: b[0], end: b[1], eventStart: b[2], phase: b[3], epoch: b[4], invocation: b[5], label: S[b[6]],
             eventCycles: b[7], tiles: b[8], syncOnly: b[9], measured: b[10], wait: b[11], boundary: b[12],
             firstEntry: b[13] };
  });
  const bandByKey = new Map();
  bands.forEach(function (b) { bandByKey.set(b.invocation + '/' + b.epoch + '/' + b.phase, b); });
  const bandElements = Array.prototype.slice.call(document.querySelectorAll('#bands .phase-band'));

  let sampleCount = 0;
  const lanes = data.tiles.map(function (tile, i) {
    const flat = data.samples[i], n = flat.length / 4;
    const start = new Float64Array(n), dur = new Float64Array(n), step = new Int32Array(n), ctx = new Int32Array(n);
    let at = 0;
    for (let k = 0; k < n; ++k) {
      at += flat[4 * k];
      start[k] = at; dur[k] = flat[4 * k + 1]; step[k] = flat[4 * k + 2]; ctx[k] = flat[4 * k + 3];
    }
    sampleCount += n;
    return { tile: tile, n: n, start: start, dur: dur, step: step, ctx: ctx };
  });

  function plainCategory(s) {
    if (s.kind === 1) return s.shownIdle ? C.idle : C.compute;
    if (s.kind === 0) return C.exchange;
    if (s.kind === 2) return C.sync;
    return C.idle;
  }
  function bandOf(lane, k) {
    const s = steps[lane.step[k]], c = data.contexts[lane.ctx[k]];
    return bandByKey.get(c[1] + '/' + c[0] + '/' + (s.phase & 0x7fffffff));
  }
  // Calls emit(category, from, to) for the pieces of sample k: an exchange with a horizon is
  // boundary wait before its event start, its roles from there, boundary sampling after.
  // Where the roles outnumber the pixels (`scale` pixels per cycle) they are one piece.
  function pieces(lane, k, emit, scale) {
    const s = steps[lane.step[k]], a = lane.start[k], b = a + lane.dur[k];
    if (s.kind === 0 && s.eventCycles > 0) {
      const band = bandOf(lane, k);
      if (band) {
        const es = band.eventStart, ee = es + s.eventCycles, r = s.roles;
        if (es > a) emit(C.wait, a, Math.min(es, b));
        if (s.eventCycles * scale < r.length) {
          const x0 = Math.max(a, es), x1 = Math.min(b, ee);
          if (x1 > x0) emit(C.exchange, x0, x1);
        } else {
          let at = es;
          for (let j = 0; j < r.length; ++j) {  // [length * 5 + role, ...] from the event start
            const length = Math.floor(r[j] / 5);
            const x0 = Math.max(a, at), x1 = Math.min(b, at + length);
            if (x1 > x0) emit(ROLE_CAT[r[j] % 5], x0, x1);
            at += length;
          }
        }
        if (b > ee) emit(C.sampling, Math.max(a, ee), b);
        return;
      }
    }
    emit(plainCategory(s), a, b);
  }
  // The first sample that may end after t (samples of a lane follow each other).
  function firstAfter(lane, t) {
    let lo = 0, hi = lane.n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (lane.start[mid] < t) lo = mid + 1; else hi = mid;
    }
    return lo > 0 && lane.start[lo - 1] + lane.dur[lo - 1] > t ? lo - 1 : lo;
  }

  // ---- State -----------------------------------------------------------------------
  const span = Math.max(1, data.span);
  const view = { t0: 0, t1: span };
  let shown = lanes;
  let laneHeight = 1;
  const axis = document.getElementById('axis'), aggregate = document.getElementById('aggregate');
  const lanesCanvas = document.getElementById('lanes'), scroller = document.getElementById('lanes-scroll');
  const spacer = document.getElementById('lanes-spacer'), tooltip = document.getElementById('tooltip');
  const tileFilter = document.getElementById('tile-filter'), laneSelect = document.getElementById('lane-height');

  function plotWidth() { return Math.max(10, scroller.clientWidth - GUTTER); }
  function X(t) { return GUTTER + (t - view.t0) / (view.t1 - view.t0) * plotWidth(); }
  function T(x) { return view.t0 + (x - GUTTER) / plotWidth() * (view.t1 - view.t0); }
  function sizeCanvas(canvas, w, h) {
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
      canvas.style.width = w + 'px'; canvas.style.height = h + 'px';
    }
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    return g;
  }
  function cyclesText(c) {
    if (c >= 1e9) return (c / 1e9).toFixed(2) + 'G';
    if (c >= 1e6) return (c / 1e6).toFixed(2) + 'M';
    if (c >= 1e4) return (c / 1e3).toFixed(1) + 'k';
    return String(Math.round(c));
  }
  function msText(c) { return data.clockHz > 0 ? ' (' + (c * 1000 / data.clockHz).toFixed(4) + ' ms)' : ''; }

  // ---- Drawing ---------------------------------------------------------------------
  function drawAxis(w) {
    const g = sizeCanvas(axis, w, AXIS_H);
    g.fillStyle = '#f4f4f4'; g.fillRect(0, 0, w, AXIS_H);
    const range = view.t1 - view.t0, raw = range / Math.max(2, plotWidth() / 110);
    const pow = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map(function (m) { return m * pow; }).find(function (s) { return s >= raw; });
    g.fillStyle = '#333'; g.strokeStyle = '#999'; g.font = '11px system-ui, sans-serif'; g.textBaseline = 'middle';
    for (let t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      const x = X(t);
      g.beginPath(); g.moveTo(x + 0.5, AXIS_H - 6); g.lineTo(x + 0.5, AXIS_H); g.stroke();
      g.fillText(cyclesText(t), x + 3, AXIS_H / 2 - 2);
    }
    g.fillText('cycles', 6, AXIS_H / 2 - 2);
  }

  function drawBands() {
    const w = plotWidth();
    for (let i = 0; i < bands.length; ++i) {
      const el = bandElements[i];
      if (!el) continue;
      const x0 = X(bands[i].start), x1 = X(bands[i].end);
      if (x1 < GUTTER || x0 > GUTTER + w) { el.classList.add('off'); continue; }
      el.classList.remove('off');
      const left = Math.max(GUTTER, x0);
      el.style.left = left + 'px';
      el.style.width = Math.max(1, Math.min(GUTTER + w, x1) - left) + 'px';
    }
  }

  // Per aggregate row and pixel column: covered cycles, summed over the shown tiles.
  function aggregateColumns(w) {
    const rows = AGGREGATES.map(function () { return { part: new Float64Array(w + 1), diff: new Float64Array(w + 2) }; });
    const scale = w / (view.t1 - view.t0);
    for (const lane of shown) {
      for (let k = firstAfter(lane, view.t0); k < lane.n && lane.start[k] < view.t1; ++k) {
        pieces(lane, k, function (cat, from, to) {
          const a = Math.max(0, (from - view.t0) * scale), b = Math.min(w, (to - view.t0) * scale);
          if (b <= a) return;
          const row = rows[AGG_OF[cat]], ia = Math.floor(a), ib = Math.floor(b);
          if (ia === ib) { row.part[ia] += b - a; return; }
          row.part[ia] += ia + 1 - a;
          row.diff[ia + 1] += 1; row.diff[ib] -= 1;
          if (ib < w) row.part[ib] += b - ib;
        }, scale);
      }
    }
    return rows.map(function (row) {
      const out = new Float64Array(w);
      let run = 0;
      for (let x = 0; x < w; ++x) { run += row.diff[x]; out[x] = (run + row.part[x]) / Math.max(1, shown.length); }
      return out;
    });
  }

  let aggregateValues = [];
  function drawAggregate(w) {
    const h = AGGREGATES.length * AGG_ROW_H;
    const g = sizeCanvas(aggregate, GUTTER + w, h);
    aggregateValues = aggregateColumns(w);
    g.font = '11px system-ui, sans-serif'; g.textBaseline = 'middle';
    AGGREGATES.forEach(function (a, r) {
      const y0 = r * AGG_ROW_H, values = aggregateValues[r];
      g.fillStyle = r % 2 ? '#fafafa' : '#f3f3f3'; g.fillRect(GUTTER, y0, w, AGG_ROW_H);
      g.fillStyle = a.color;
      for (let x = 0; x < w; ++x) {
        const v = Math.min(1, values[x]);
        if (v > 0) g.fillRect(GUTTER + x, y0 + AGG_ROW_H - 1 - v * (AGG_ROW_H - 2), 1, v * (AGG_ROW_H - 2));
      }
      g.fillStyle = '#333'; g.fillText(a.name, 4, y0 + AGG_ROW_H / 2);
    });
    g.fillStyle = 'rgba(0,0,0,.25)'; g.fillRect(0, h - 1, GUTTER + w, 1);
  }

  function drawLanes(w) {
    const viewH = scroller.clientHeight;
    const g = sizeCanvas(lanesCanvas, GUTTER + w, viewH);
    const top = scroller.scrollTop;
    const first = Math.floor(top / laneHeight), last = Math.min(shown.length, Math.ceil((top + viewH) / laneHeight));
    const rects = CAT_NAMES.map(function () { return []; });
    const scale = w / (view.t1 - view.t0);
    for (let i = first; i < last; ++i) {
      const lane = shown[i], y = i * laneHeight - top;
      const h = laneHeight > 3 ? laneHeight - 1 : laneHeight;
      let lastPixel = -1;
      for (let k = firstAfter(lane, view.t0); k < lane.n && lane.start[k] < view.t1; ++k) {
        pieces(lane, k, function (cat, from, to) {
          const a = Math.max(0, (from - view.t0) * scale), b = Math.min(w, (to - view.t0) * scale);
          if (b <= a) return;
          if (b - a < 1) {  // narrower than a pixel: the first piece in a pixel stands for it
            const px = Math.floor(a);
            if (px <= lastPixel) return;
            rects[cat].push(GUTTER + px, y, 1, h);
            lastPixel = px;
            return;
          }
          rects[cat].push(GUTTER + a, y, b - a, h);
          lastPixel = Math.floor(b) - 1;
        }, scale);
      }
    }
    rects.forEach(function (list, cat) {
      g.fillStyle = COLORS[cat];
      for (let j = 0; j < list.length; j += 4) g.fillRect(list[j], list[j + 1], list[j + 2], list[j + 3]);
    });
    // Band starts as faint lines when few enough are in view to tell apart.
    const visibleBands = bands.filter(function (b) { return b.end > view.t0 && b.start < view.t1; });
    if (visibleBands.length < w / 6) {
      g.fillStyle = 'rgba(0,0,0,.18)';
      for (const b of visibleBands) g.fillRect(Math.round(X(b.start)), 0, 1, viewH);
    }
    g.fillStyle = '#fff'; g.fillRect(0, 0, GUTTER, viewH);
    g.fillStyle = '#333'; g.font = '10px system-ui, sans-serif'; g.textBaseline = 'middle';
    const every = Math.max(1, Math.ceil(12 / laneHeight));
    for (let i = first; i < last; ++i) {
      if (i % every === 0) g.fillText('tile ' + shown[i].tile, 4, i * laneHeight - top + laneHeight / 2);
    }
  }

  function layout() {
    const avail = Math.max(120, window.innerHeight - scroller.getBoundingClientRect().top - 30);
    const chosen = Number(laneSelect.value);
    laneHeight = chosen > 0 ? chosen : Math.max(1, Math.min(16, Math.floor(avail / Math.max(1, shown.length))));
    scroller.style.height = Math.min(avail, Math.max(laneHeight, shown.length * laneHeight)) + 'px';
    spacer.style.height = Math.max(1, shown.length * laneHeight) + 'px';
  }

  function draw() {
    const w = plotWidth();
    drawAxis(GUTTER + w);
    drawBands();
    drawAggregate(w);
    drawLanes(w);
    document.getElementById('view-range').textContent =
        'cycles ' + Math.round(view.t0) + '..' + Math.round(view.t1) + msText(view.t1 - view.t0) + ', ' +
        shown.length + ' of ' + lanes.length + ' tiles';
  }
  let pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () {
      pending = false;
      try { draw(); } catch (e) { fail(e.message); throw e; }
    });
  }

  // ---- Interaction -----------------------------------------------------------------
  function clampView() {
    const range = Math.min(span * 1.1, Math.max(10, view.t1 - view.t0));
    let t0 = Math.max(-span * 0.05, Math.min(view.t0, span * 1.05 - range));
    view.t0 = t0; view.t1 = t0 + range;
  }
  function zoomAt(x, factor) {
    const t = T(x);
    view.t0 = t - (t - view.t0) * factor; view.t1 = t + (view.t1 - t) * factor;
    clampView(); redraw();
  }
  function wheel(e) {
    e.preventDefault();
    const delta = (e.deltaY || e.deltaX) * (e.deltaMode === 1 ? 16 : 1);
    if (e.shiftKey) { scroller.scrollTop += delta; return; }
    zoomAt(e.clientX - scroller.getBoundingClientRect().left, Math.exp(delta * 0.0015));
  }
  let drag = null;
  function down(e) { drag = { x: e.clientX, y: e.clientY, t0: view.t0, t1: view.t1, top: scroller.scrollTop }; }
  function move(e) {
    if (drag) {
      const dt = (e.clientX - drag.x) / plotWidth() * (drag.t1 - drag.t0);
      view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt; clampView();
      scroller.scrollTop = drag.top - (e.clientY - drag.y);
      tooltip.hidden = true;
      redraw();
    }
  }
  function reset() { view.t0 = 0; view.t1 = span; redraw(); }
  const timeline = document.getElementById('timeline');
  timeline.addEventListener('wheel', wheel, { passive: false });
  timeline.addEventListener('mousedown', down);
  timeline.addEventListener('dblclick', reset);
  window.addEventListener('mousemove', move);
  window.addEventListener('mouseup', function () { drag = null; });
  document.getElementById('reset').addEventListener('click', reset);
  scroller.addEventListener('scroll', redraw);
  window.addEventListener('resize', function () { layout(); redraw(); });
  laneSelect.addEventListener('change', function () { layout(); redraw(); });

  function parseTiles(text) {
    const set = new Set();
    for (const item of text.split(',')) {
      const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(item);
      if (!m) return null;
      const a = Number(m[1]), b = m[2] === undefined ? a : Number(m[2]);
      if (b < a || b - a > 100000) return null;
      for (let t = a; t <= b; ++t) set.add(t);
    }
    return set;
  }
  tileFilter.addEventListener('input', function () {
    const text = tileFilter.value.trim();
    const set = text === '' ? null : parseTiles(text);
    tileFilter.classList.toggle('bad', text !== '' && set === null);
    if (text !== '' && set === null) return;
    shown = set === null ? lanes : lanes.filter(function (l) { return set.has(l.tile); });
    scroller.scrollTop = 0; layout(); redraw();
  });

  // ---- Hover -----------------------------------------------------------------------
  function metaText(s) {
    let text = '';
    for (let j = 0; j < s.meta.length; j += 2) text += '\n  ' + S[s.meta[j]] + ' = ' + S[s.meta[j + 1]];
    return text;
  }
  function bandText(b) {
    return 'exchange phase ' + b.phase + ', epoch ' + b.epoch + (b.invocation ? ', invocation ' + b.invocation : '') +
        (b.label ? '\n' + b.label : '') + '\nwindow ' + b.start + '..' + b.end + ' (entries from ' + b.firstEntry +
        ')\nmeasured ' + b.measured + ', arrival wait ' + b.wait + ', scheduled ' + b.eventCycles + ', boundary ' +
        b.boundary + '\n' + b.tiles + ' tiles exchanging, ' + b.syncOnly + ' only synchronizing';
  }
  function sampleText(lane, k, t) {
    const s = steps[lane.step[k]], c = data.contexts[lane.ctx[k]];
    let piece = '';
    pieces(lane, k, function (cat, from, to) { if (from <= t && t < to) piece = CAT_NAMES[cat]; }, Infinity);
    const exchange = (s.phase & 0x80000000) !== 0;
    return 'tile ' + lane.tile + ': ' + KIND_NAMES[s.kind] + (piece && piece !== KIND_NAMES[s.kind] ? ' (' + piece + ')' : '') +
        '\nkernel ' + (s.kernel || '(none)') + (s.operation ? '\noperation ' + s.operation : '') +
        '\n' + (exchange ? 'exchange phase ' + (s.phase & 0x7fffffff) : 'step ' + s.phase) +
        (s.label ? ' (' + s.label + ')' : '') + ', epoch ' + c[0] + (c[1] ? ', invocation ' + c[1] : '') +
        '\ncycles ' + lane.start[k] + '..' + (lane.start[k] + lane.dur[k]) + ' (' + lane.dur[k] + ')' +
        msText(lane.dur[k]) + (s.eventCycles ? '\nscheduled horizon ' + s.eventCycles : '') + metaText(s);
  }
  function showTip(e, text) {
    if (!text) { tooltip.hidden = true; return; }
    tooltip.textContent = text;
    tooltip.hidden = false;
    const x = Math.min(e.clientX + 14, window.innerWidth - tooltip.offsetWidth - 4);
    const y = Math.min(e.clientY + 14, window.innerHeight - tooltip.offsetHeight - 4);
    tooltip.style.left = Math.max(0, x) + 'px'; tooltip.style.top = Math.max(0, y) + 'px';
  }
  lanesCanvas.addEventListener('mousemove', function (e) {
    if (drag) return;
    const r = lanesCanvas.getBoundingClientRect(), x = e.clientX - r.left;
    const lane = shown[Math.floor((e.clientY - r.top + scroller.scrollTop) / laneHeight)];
    if (!lane || x < GUTTER) { showTip(e, lane ? 'tile ' + lane.tile + ': ' + lane.n + ' samples' : ''); return; }
    const t = T(x), k = firstAfter(lane, t);
    showTip(e, k < lane.n && lane.start[k] <= t ? sampleText(lane, k, t) : 'tile ' + lane.tile + ': no sample');
  });
  aggregate.addEventListener('mousemove', function (e) {
    if (drag) return;
    const r = aggregate.getBoundingClientRect(), x = Math.floor(e.clientX - r.left - GUTTER);
    const row = Math.floor((e.clientY - r.top) / AGG_ROW_H);
    if (x < 0 || !AGGREGATES[row] || !aggregateValues[row]) { tooltip.hidden = true; return; }
    showTip(e, AGGREGATES[row].name + ': ' + (100 * aggregateValues[row][x]).toFixed(1) + '% of ' + shown.length +
        ' tiles near cycle ' + Math.round(T(x + GUTTER)));
  });
  document.getElementById('bands').addEventListener('mousemove', function (e) {
    const i = e.target.dataset ? e.target.dataset.band : undefined;
    if (i === undefined || drag) { tooltip.hidden = true; return; }
    e.target.removeAttribute('title');  // our tooltip, not the browser's, once scripted
    showTip(e, bandText(bands[Number(i)]));
  });
  for (const el of [lanesCanvas, aggregate, document.getElementById('bands')]) {
    el.addEventListener('mouseleave', function () { tooltip.hidden = true; });
  }

  // ---- Start -----------------------------------------------------------------------
  const legend = document.getElementById('legend');
  CAT_NAMES.forEach(function (name, cat) {
    const item = document.createElement('span'), swatch = document.createElement('i');
    swatch.style.background = COLORS[cat];
    item.appendChild(swatch); item.appendChild(document.createTextNode(name));
    legend.appendChild(item);
  });
  if (bandElements.length !== bands.length) fail('phase band elements ' + bandElements.length + ' != ' + bands.length);
  const began = performance.now();
  layout();
  draw();
  if (body.dataset.status !== 'error') {
    body.dataset.status = 'ok';
    body.dataset.readyMs = String(Math.round(performance.now()));  // since navigation started
    statusLine.textContent = 'ok: ' + lanes.length + ' tiles, ' + sampleCount + ' samples, ' + bands.length +
        ' phase bands; first drawing ' + Math.round(performance.now() - began) + ' ms';
  }
})();
)JS";

}  // namespace lockstep::replay
