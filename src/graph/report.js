'use strict';
// The upgrade-graph page of `olmctl catalog graph --format html`. Data is the JSON in #data;
// nothing is fetched. The URL fragment can pick a view: #package=P&channel=C&q=TEXT&click=NAME
// (click dispatches a real click on that version, as a person would).
const DATA = JSON.parse(document.getElementById('data').textContent);
const NS = 'http://www.w3.org/2000/svg'; // a namespace name, not a URL that is loaded
const ROW = 26;
const TOP = 24;
const $ = (id) => document.getElementById(id);

function svg(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function html(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

const state = { pkg: null, ch: null, q: '', selected: null };

function pkgByName(name) {
  return DATA.packages.find((p) => p.name === name) || null;
}

function matches(p, q) {
  if (!q) return true;
  if (p.name.toLowerCase().includes(q)) return true;
  return p.channels.some((c) => c.nodes.some((n) =>
    n.name.toLowerCase().includes(q) || (n.version || '').toLowerCase().includes(q)));
}

function fillPackages() {
  const sel = $('package');
  sel.textContent = '';
  for (const p of DATA.packages) {
    if (!matches(p, state.q) && p.name !== state.pkg) continue;
    const mark = p.status ? ` (${p.status})` : (p.changes.length ? ' (changed)' : '');
    const o = html('option', { value: p.name }, (p.changes.length ? '● ' : '') + p.name + mark);
    if (p.name === state.pkg) o.selected = true;
    sel.appendChild(o);
  }
}

function fillChannels(p) {
  const sel = $('channel');
  sel.textContent = '';
  for (const c of p.channels) {
    const label = c.name + (c.name === p.defaultChannel ? ' (default)' : '') + (c.status ? ` (${c.status})` : '');
    const o = html('option', { value: c.name }, label);
    if (c.name === state.ch) o.selected = true;
    sel.appendChild(o);
  }
}

// Lanes for skipRange brackets: a bracket takes the first lane free over its span.
function lanes(spans) {
  const ends = [];
  return spans.map(([a, b]) => {
    let l = ends.findIndex((e) => e < a);
    if (l < 0) { l = ends.length; ends.push(b); } else { ends[l] = b; }
    return l;
  });
}

function draw() {
  const p = pkgByName(state.pkg);
  const box = $('graph');
  box.textContent = '';
  if (!p) return;
  const c = p.channels.find((x) => x.name === state.ch) || p.channels[0];
  if (!c) return;
  state.ch = c.name;
  const pos = new Map(c.nodes.map((n, i) => [n.name, i]));
  const y = (i) => TOP + i * ROW;
  // Brackets: one per run of each skipRange.
  const brackets = [];
  c.ranges.forEach((r) => r.runs.forEach(([a, b]) => brackets.push({ r, a: Math.min(a, r.to), b: Math.max(b, r.to), run: [a, b] })));
  const lane = lanes(brackets.map((k) => [k.a, k.b]));
  const nLanes = lane.length ? Math.max(...lane) + 1 : 0;
  const skipEdges = c.edges.filter((e) => e.kind === 'skips' && pos.has(e.from) && pos.has(e.to));
  const maxSkip = skipEdges.reduce((m, e) => Math.max(m, Math.abs(pos.get(e.from) - pos.get(e.to))), 0);
  const skipRoom = Math.min(160, maxSkip * ROW * 0.5 + 10);
  const X = 20 + nLanes * 10 + skipRoom;
  const labelX = X + 150;
  const width = labelX + 420;
  const height = TOP * 2 + c.nodes.length * ROW;
  const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${p.name} ${c.name}` });
  const edgesG = svg('g', { class: 'edges' });
  root.appendChild(edgesG);
  brackets.forEach((k, i) => {
    const x = 14 + lane[i] * 10;
    const g = svg('g', { class: `edge range${k.r.status ? ' ' + k.r.status : ''}`, 'data-to': c.nodes[k.r.to].name, 'data-range': k.r.range });
    g.appendChild(svg('path', { d: `M ${X - 8} ${y(k.run[0])} H ${x} V ${y(k.run[1])} H ${X - 8}` }));
    g.appendChild(svg('path', { class: 'link', d: `M ${x} ${y(k.r.to)} H ${X - 8}` }));
    g.appendChild(svg('title', {}, `${c.nodes[k.r.to].name} skipRange ${k.r.range}`));
    edgesG.appendChild(g);
  });
  for (const e of c.edges) {
    if (!pos.has(e.from) || !pos.has(e.to)) continue;
    const y1 = y(pos.get(e.from));
    const y2 = y(pos.get(e.to));
    const bulge = Math.min(e.kind === 'replaces' ? 120 : skipRoom, Math.abs(y2 - y1) * 0.5 + 8);
    const dx = e.kind === 'replaces' ? bulge : -bulge;
    const g = svg('g', { class: `edge ${e.kind}${e.status ? ' ' + e.status : ''}`, 'data-from': e.from, 'data-to': e.to });
    g.appendChild(svg('path', { d: `M ${X} ${y1} C ${X + dx} ${y1} ${X + dx} ${y2} ${X} ${y2}` }));
    g.appendChild(svg('title', {}, `${e.from} → ${e.to} (${e.kind})${e.status ? ', ' + e.status : ''}`));
    edgesG.appendChild(g);
  }
  const q = state.q;
  c.nodes.forEach((n, i) => {
    const cls = ['node'];
    if (n.name === c.head) cls.push('head');
    if (n.skipped) cls.push('skipped');
    if (n.deprecated) cls.push('deprecated');
    if (n.status) cls.push(n.status);
    if (q && (n.name.toLowerCase().includes(q) || (n.version || '').toLowerCase().includes(q))) cls.push('match');
    const g = svg('g', { class: cls.join(' '), 'data-name': n.name, 'data-version': n.version || '', tabindex: 0 });
    g.appendChild(svg('circle', { cx: X, cy: y(i), r: 6 }));
    g.appendChild(svg('text', { x: labelX, y: y(i) + 4 }, `${n.version || '?'}  ${n.name}`));
    g.appendChild(svg('line', { class: 'guide', x1: X + 8, y1: y(i), x2: labelX - 6, y2: y(i) }));
    g.addEventListener('click', () => select(n.name));
    g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') select(n.name); });
    root.appendChild(g);
  });
  box.appendChild(html('h2', {}, `${p.name} / ${c.name}: ${c.nodes.length} entries, head ${c.head || '(none)'}`));
  box.appendChild(root);
  if (state.selected && pos.has(state.selected)) select(state.selected); else showHint();
}

function showHint() {
  const d = $('details');
  d.textContent = '';
  d.removeAttribute('data-selected');
  const p = pkgByName(state.pkg);
  if (DATA.diff && p) {
    d.appendChild(html('h2', {}, `Changes in ${p.name}`));
    if (!p.changes.length) d.appendChild(html('p', {}, 'None.'));
    const ul = html('ul', { class: 'changes' });
    p.changes.forEach((l) => ul.appendChild(html('li', {}, l)));
    d.appendChild(ul);
  }
  d.appendChild(html('p', {}, 'Click a version to see its properties and its upgrade paths.'));
}

const STOPS = { head: 'reaches the head', noUpgrade: 'stops: no upgrade from here', loop: 'stops: the edges loop', target: 'reaches the target' };

function pathBlock(label, p, cls) {
  const div = html('div', { class: `path ${cls}` });
  div.appendChild(html('h3', {}, label));
  const ol = html('ol', {});
  p.hops.forEach((h) => ol.appendChild(html('li', {}, h)));
  div.appendChild(ol);
  div.appendChild(html('p', { class: 'stop' }, `${p.hops.length - 1} upgrade${p.hops.length === 2 ? '' : 's'}; ${STOPS[p.stop] || p.stop}`));
  return div;
}

function select(name) {
  const p = pkgByName(state.pkg);
  const c = p && p.channels.find((x) => x.name === state.ch);
  if (!c) return;
  state.selected = name;
  const paths = c.paths[name];
  const b = p.bundles[name] || { image: '', properties: [] };
  const n = c.nodes.find((x) => x.name === name) || {};
  const d = $('details');
  d.textContent = '';
  d.setAttribute('data-selected', name);
  d.appendChild(html('h2', {}, name));
  const facts = html('dl', {});
  const fact = (k, v) => { facts.appendChild(html('dt', {}, k)); facts.appendChild(html('dd', {}, v)); };
  fact('version', n.version || '?');
  fact('image', b.image || '(none)');
  const flags = [];
  if (name === c.head) flags.push('channel head');
  if (n.skipped) flags.push('skipped (OLM v0 never upgrades to it)');
  if (n.deprecated) flags.push('deprecated');
  if (n.status) flags.push(`${n.status} in the new catalog`);
  if (flags.length) fact('marks', flags.join(', '));
  d.appendChild(facts);
  if (paths) {
    d.appendChild(pathBlock('OLM v0 (Subscription)', paths[0], 'v0'));
    d.appendChild(pathBlock('OLM v1 (ClusterExtension)', paths[1], 'v1'));
  }
  const t = html('table', { class: 'props' });
  t.appendChild(html('caption', {}, 'Properties'));
  for (const [type, value] of b.properties) {
    const tr = html('tr', {});
    tr.appendChild(html('th', {}, type));
    const td = html('td', {});
    td.appendChild(html('code', {}, value));
    tr.appendChild(td);
    t.appendChild(tr);
  }
  d.appendChild(t);
  const on = new Set(paths ? paths[1].hops : []);
  for (const g of document.querySelectorAll('#graph .node')) {
    const nm = g.getAttribute('data-name');
    g.classList.toggle('selected', nm === name);
    g.classList.toggle('onpath', on.has(nm) && nm !== name);
  }
}

function showPackage(name, channel) {
  const p = pkgByName(name);
  if (!p) return;
  if (state.pkg !== name) state.selected = null;
  state.pkg = name;
  state.ch = channel && p.channels.some((c) => c.name === channel) ? channel
    : (p.channels.some((c) => c.name === p.defaultChannel) ? p.defaultChannel : (p.channels[0] || {}).name);
  fillPackages();
  fillChannels(p);
  draw();
}

$('package').addEventListener('change', (ev) => showPackage(ev.target.value));
$('channel').addEventListener('change', (ev) => { state.ch = ev.target.value; state.selected = null; draw(); });
$('search').addEventListener('input', (ev) => {
  state.q = ev.target.value.trim().toLowerCase();
  const cur = pkgByName(state.pkg);
  if (state.q && (!cur || !matches(cur, state.q))) {
    const first = DATA.packages.find((p) => matches(p, state.q));
    if (first) { showPackage(first.name); return; }
  }
  fillPackages();
  draw();
});

function fromHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get('q')) { state.q = h.get('q').toLowerCase(); $('search').value = h.get('q'); }
  // Without a choice: the largest package, where a picture helps most.
  // In a diff, the first package that changed.
  const largest = DATA.packages.reduce((m, p) => {
    const size = Object.keys(p.bundles).length;
    return !m || size > m.size ? { name: p.name, size } : m;
  }, null);
  const changed = DATA.packages.find((p) => p.changes.length);
  const want = h.get('package') || (changed && changed.name) || (largest && largest.name);
  if (want) showPackage(want, h.get('channel'));
  const click = h.get('click');
  if (click) {
    const g = Array.from(document.querySelectorAll('#graph .node')).find((x) => x.getAttribute('data-name') === click);
    if (g) g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  }
}

fromHash();
// For tests: what the page loaded besides itself (Resource Timing sees every fetch, image,
// script or style it requested) and that it has finished drawing.
document.body.setAttribute('data-resources', String(performance.getEntriesByType('resource').length));
document.body.setAttribute('data-ready', '1');
