'use strict';
// The upgrade-graph page of `olmctl catalog graph --format html`. Data is the JSON in #data;
// nothing is fetched. The URL fragment can pick a view: #package=P&channel=C&q=TEXT&click=NAME
// (click dispatches a real click on that version, as a person would). Without a channel the
// package overview is shown (every version, one lane per channel); there &lane=C clicks the
// version's dot in channel C's lane rather than its label.
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

// ch: the channel drawn alone, or '' for the package overview; lane: in the overview, the
// channel whose path is highlighted.
const state = { pkg: null, ch: '', q: '', selected: null, lane: null };

function pkgByName(name) {
  return DATA.packages.find((p) => p.name === name) || null;
}

function matches(p, q) {
  if (!q) return true;
  if (p.name.toLowerCase().includes(q)) return true;
  return p.versions.some(([name, version]) => isMatch({ name, version }, q));
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
  const all = html('option', { value: '' }, `all ${p.channels.length} channels (overview)`);
  if (!state.ch) all.selected = true;
  sel.appendChild(all);
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
  const c = p.channels.find((x) => x.name === state.ch);
  if (!c) { state.ch = ''; drawOverview(p, box); return; }
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
    if (isMatch(n, q)) cls.push('match');
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

function isMatch(n, q) {
  return q && (n.name.toLowerCase().includes(q) || (n.version || '').toLowerCase().includes(q));
}

// The package overview: one row per version of the package (newest first by semver, as in
// `p.versions`) and one lane (column) per channel. An entry of several channels is drawn once
// per lane, on its version's row: the row (one label, one guide line through its dots) links
// the copies, so every version has exactly one label whatever the number of channels, and rows
// of a fixed height keep labels apart at any size. A channel's edges stay in its lane
// (`replaces` arcs right of the dots, `skips` left, skipRange brackets at the lane's left
// edge); an edge from a bundle that is not an entry of the channel (`outside`) is drawn across
// lanes from that bundle's dot in the nearest lane that has it.
const OROW = 22;
const LANE = 44;
const CHAR = 7.4; // width of a 12px monospace character, a little over

function drawOverview(p, box) {
  const rowOf = new Map(p.versions.map(([name], i) => [name, i]));
  // Lanes newest first (by the row of their newest entry, then by name): upgrades run from
  // lanes on the right to lanes on the left, and edges across lanes stay short.
  const top = (c) => c.nodes.reduce((m, n) => Math.min(m, rowOf.has(n.name) ? rowOf.get(n.name) : Infinity), Infinity);
  const chans = p.channels.map((c) => [top(c), c]).sort((a, b) => a[0] - b[0] || (a[1].name < b[1].name ? -1 : 1)).map(([, c]) => c);
  const nodeIn = chans.map((c) => new Map(c.nodes.map((n) => [n.name, n])));
  const lanesOf = new Map(p.versions.map(([name]) => [name, []]));
  nodeIn.forEach((m, l) => m.forEach((n, name) => { if (lanesOf.has(name)) lanesOf.get(name).push(l); }));
  const laneName = (c) => c.name + (c.name === p.defaultChannel ? ' (default)' : '') + (c.deprecated ? ' (deprecated)' : '');
  const labelText = ([name, version]) => `${version || '?'}  ${name}`;
  const labelW = 16 + CHAR * p.versions.reduce((m, v) => Math.max(m, labelText(v).length), 0);
  const head = 20 + CHAR * chans.reduce((m, c) => Math.max(m, laneName(c).length), 0);
  const x0 = 8 + labelW;
  const cx = (l) => x0 + l * LANE + LANE / 2;
  const y = (r) => head + r * OROW + OROW / 2;
  const width = x0 + chans.length * LANE + 16;
  const height = head + p.versions.length * OROW + 16;
  const root = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${p.name} overview`, class: 'overview' });
  chans.forEach((c, l) => {
    const cls = ['lane'];
    if (l % 2) cls.push('odd');
    if (c.name === p.defaultChannel) cls.push('default');
    if (c.deprecated) cls.push('deprecated');
    if (c.status) cls.push(c.status);
    const g = svg('g', { class: cls.join(' '), 'data-channel': c.name, 'data-head': c.head || '' });
    g.appendChild(svg('rect', { x: x0 + l * LANE, y: head - 4, width: LANE, height: height - head }));
    const tx = cx(l) + 4;
    const t = svg('text', { class: 'lanelabel', x: tx, y: head - 10, transform: `rotate(-90 ${tx} ${head - 10})` }, laneName(c));
    t.addEventListener('click', () => { state.ch = c.name; state.selected = null; fillChannels(p); draw(); });
    g.appendChild(t);
    g.appendChild(svg('title', {}, `${c.name}: ${c.nodes.length} entries, head ${c.head || '(none)'}${c.deprecated ? '; deprecated: ' + c.deprecated : ''}`));
    root.appendChild(g);
  });
  const edgesG = svg('g', { class: 'edges' });
  root.appendChild(edgesG);
  const edge = (c, e, d, extra) => {
    const g = svg('g', { class: `edge ${e.kind}${extra}${e.status ? ' ' + e.status : ''}`, 'data-from': e.from, 'data-to': e.to, 'data-channel': c.name });
    g.appendChild(svg('path', { d }));
    g.appendChild(svg('title', {}, `${c.name}: ${e.from} → ${e.to} (${e.kind})${e.status ? ', ' + e.status : ''}`));
    edgesG.appendChild(g);
  };
  chans.forEach((c, l) => {
    const x = cx(l);
    c.ranges.forEach((r) => r.runs.forEach(([a, b]) => {
      const to = y(rowOf.get(c.nodes[r.to].name));
      const ys = [a, b].map((i) => y(rowOf.get(c.nodes[i].name)));
      const bx = x - LANE / 2 + 4;
      const g = svg('g', { class: `edge range${r.status ? ' ' + r.status : ''}`, 'data-to': c.nodes[r.to].name, 'data-range': r.range, 'data-channel': c.name });
      g.appendChild(svg('path', { d: `M ${x - 6} ${ys[0]} H ${bx} V ${ys[1]} H ${x - 6}` }));
      g.appendChild(svg('path', { class: 'link', d: `M ${bx} ${Math.min(Math.max(to, ys[0]), ys[1])} V ${to} H ${x - 6}` }));
      g.appendChild(svg('title', {}, `${c.name}: ${c.nodes[r.to].name} skipRange ${r.range}`));
      edgesG.appendChild(g);
    }));
    for (const e of c.edges) {
      if (!rowOf.has(e.from) || !rowOf.has(e.to)) continue;
      const y1 = y(rowOf.get(e.from));
      const y2 = y(rowOf.get(e.to));
      const bulge = Math.min(LANE / 2 - 4, Math.abs(y2 - y1) * 0.25 + 4);
      const dx = e.kind === 'replaces' ? bulge : -bulge;
      edge(c, e, `M ${x} ${y1} C ${x + dx} ${y1} ${x + dx} ${y2} ${x} ${y2}`, '');
    }
    for (const e of c.outside || []) {
      if (!rowOf.has(e.from) || !rowOf.has(e.to)) continue;
      const y1 = y(rowOf.get(e.from));
      const y2 = y(rowOf.get(e.to));
      // From the nearest lane that has the bundle; from its label when no channel has it.
      const near = lanesOf.get(e.from).reduce((m, k) => (m < 0 || Math.abs(k - l) < Math.abs(m - l) ? k : m), -1);
      const x1 = near < 0 ? x0 : cx(near);
      const mid = (x1 + x) / 2;
      edge(c, e, `M ${x1} ${y1} C ${mid} ${y1} ${mid} ${y2} ${x} ${y2}`, ' cross');
    }
  });
  const q = state.q;
  const heads = new Set(chans.map((c) => c.head));
  p.versions.forEach((v, r) => {
    const [name, version] = v;
    const lanes = lanesOf.get(name);
    const nodes = lanes.map((l) => nodeIn[l].get(name));
    const cls = ['node'];
    if (heads.has(name)) cls.push('head');
    if (nodes.some((n) => n.deprecated) || (p.bundles[name] || {}).deprecated) cls.push('deprecated');
    if (nodes.length && nodes.every((n) => n.skipped)) cls.push('skipped');
    const st = nodes.length && nodes.every((n) => n.status === nodes[0].status) ? nodes[0].status : null;
    if (st) cls.push(st);
    if (isMatch({ name, version }, q)) cls.push('match');
    const g = svg('g', { class: cls.join(' '), 'data-name': name, 'data-version': version || '', tabindex: 0 });
    const last = lanes.length ? cx(lanes[lanes.length - 1]) : x0;
    g.appendChild(svg('line', { class: 'guide', x1: 8 + labelW - 8, y1: y(r), x2: last, y2: y(r) }));
    g.appendChild(svg('text', { class: 'label', x: 8, y: y(r) + 4 }, labelText(v)));
    lanes.forEach((l, i) => {
      const c = chans[l];
      const n = nodes[i];
      const dc = ['dot'];
      if (c.head === name) dc.push('head');
      if (n.skipped) dc.push('skipped');
      if (n.deprecated) dc.push('deprecated');
      if (n.status) dc.push(n.status);
      const dot = svg('circle', { class: dc.join(' '), cx: cx(l), cy: y(r), r: 5, 'data-name': name, 'data-channel': c.name });
      dot.appendChild(svg('title', {}, `${name} in ${c.name}${c.head === name ? ' (head)' : ''}`));
      g.appendChild(dot);
    });
    g.addEventListener('click', (ev) => {
      const dot = ev.target.closest && ev.target.closest('circle[data-channel]');
      select(name, dot ? dot.getAttribute('data-channel') : null);
    });
    g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') select(name); });
    root.appendChild(g);
  });
  const nEntries = p.versions.filter(([name]) => lanesOf.get(name).length).length;
  box.appendChild(html('h2', {}, `${p.name} / all channels: ${p.versions.length} versions (${nEntries} in channels), ${chans.length} channels, default ${p.defaultChannel || '(none)'}`));
  if (p.deprecated) box.appendChild(html('p', { class: 'deprecated' }, `Deprecated package: ${p.deprecated}`));
  box.appendChild(root);
  if (state.selected && rowOf.has(state.selected)) select(state.selected, state.lane); else showHint();
}

// The lane whose path a click on a version's label shows: the default channel when the version
// is in it, else the first channel (by name) that has it.
function laneFor(p, name) {
  const has = p.channels.filter((c) => c.nodes.some((n) => n.name === name));
  const d = has.find((c) => c.name === p.defaultChannel);
  return (d || has[0] || {}).name || null;
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

// Shows `name`'s details and highlights its path to the head: of the channel drawn, or in the
// overview of channel `lane` (by default the one laneFor picks).
function select(name, lane) {
  const p = pkgByName(state.pkg);
  if (!p) return;
  const overview = !state.ch;
  const cn = overview ? (lane || laneFor(p, name)) : state.ch;
  const c = p.channels.find((x) => x.name === cn);
  if (!c && !overview) return;
  state.selected = name;
  state.lane = overview && c ? c.name : null;
  const paths = c ? c.paths[name] : null;
  const b = p.bundles[name] || { image: '', properties: [] };
  const n = (c && c.nodes.find((x) => x.name === name)) || { version: (p.versions.find(([x]) => x === name) || [])[1] };
  const d = $('details');
  d.textContent = '';
  d.setAttribute('data-selected', name);
  if (c) d.setAttribute('data-channel', c.name); else d.removeAttribute('data-channel');
  d.appendChild(html('h2', {}, name));
  const facts = html('dl', {});
  const fact = (k, v) => { facts.appendChild(html('dt', {}, k)); facts.appendChild(html('dd', {}, v)); };
  fact('version', n.version || '?');
  fact('image', b.image || '(none)');
  if (overview) {
    const ins = p.channels.filter((x) => x.nodes.some((m) => m.name === name)).map((x) => x.name);
    fact('channels', ins.length ? ins.join(', ') : '(none)');
    if (c) fact('path shown in', c.name);
  }
  const flags = [];
  if (c && name === c.head) flags.push('channel head');
  if (n.skipped) flags.push('skipped (OLM v0 never upgrades to it)');
  if (n.deprecated || b.deprecated) flags.push('deprecated' + (b.deprecated ? `: ${b.deprecated}` : ''));
  if (c && c.deprecated) flags.push(`channel deprecated: ${c.deprecated}`);
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
  highlight(name, c, paths ? paths[1].hops : []);
}

// Marks the selected version, the versions on its (OLM v1) path and the edges between
// consecutive hops; in the overview only the dots and edges of channel `c`'s lane.
function highlight(name, c, hops) {
  const on = new Set(hops);
  const steps = new Set(hops.slice(1).map((h, i) => `${hops[i]}\n${h}`));
  const inLane = (g) => !state.ch ? c && g.getAttribute('data-channel') === c.name : true;
  for (const g of document.querySelectorAll('#graph .node')) {
    const nm = g.getAttribute('data-name');
    g.classList.toggle('selected', nm === name);
    g.classList.toggle('onpath', on.has(nm) && nm !== name);
  }
  for (const g of document.querySelectorAll('#graph circle.dot')) {
    const nm = g.getAttribute('data-name');
    g.classList.toggle('selected', inLane(g) && nm === name);
    g.classList.toggle('onpath', inLane(g) && on.has(nm) && nm !== name);
  }
  // A step by a named edge lights that edge; any other step (by skipRange) the range bracket
  // of the entry it lands on.
  const byRange = new Set(hops.slice(1));
  for (const g of document.querySelectorAll('#graph .edge[data-from]')) {
    const step = `${g.getAttribute('data-from')}\n${g.getAttribute('data-to')}`;
    const lit = inLane(g) && steps.has(step);
    g.classList.toggle('onpath', lit);
    if (lit) byRange.delete(g.getAttribute('data-to'));
  }
  for (const g of document.querySelectorAll('#graph .edge.range')) {
    g.classList.toggle('onpath', inLane(g) && byRange.has(g.getAttribute('data-to')));
  }
}

function showPackage(name, channel) {
  const p = pkgByName(name);
  if (!p) return;
  if (state.pkg !== name) state.selected = null;
  state.pkg = name;
  state.ch = channel && p.channels.some((c) => c.name === channel) ? channel : '';
  fillPackages();
  fillChannels(p);
  draw();
}

$('package').addEventListener('change', (ev) => showPackage(ev.target.value));
$('channel').addEventListener('change', (ev) => { state.ch = ev.target.value; state.selected = null; state.lane = null; draw(); });
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
    const lane = h.get('lane');
    const g = Array.from(document.querySelectorAll(lane ? '#graph circle.dot' : '#graph .node')).find((x) =>
      x.getAttribute('data-name') === click && (!lane || x.getAttribute('data-channel') === lane));
    if (g) g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  }
}

fromHash();
// For tests: what the page loaded besides itself (Resource Timing sees every fetch, image,
// script or style it requested) and that it has finished drawing.
document.body.setAttribute('data-resources', String(performance.getEntriesByType('resource').length));
document.body.setAttribute('data-ready', '1');
