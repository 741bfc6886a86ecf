// reins view: the page. Plain JavaScript, no library, no build step.
//
// Every text shown comes from session logs, which hold model-, tool- and
// child-written text: the DOM is built with createElement and text nodes
// only. Nothing here parses HTML: TestNoHTMLParsingInScript checks this
// file for the DOM's HTML-parsing properties and methods.
(() => {
  'use strict';

  const DATA = JSON.parse(document.getElementById('reins-data').textContent);
  const EXPORT = DATA.mode === 'export';
  const TOKEN = new URLSearchParams(location.search).get('token') || '';
  const MAX_ROWS = 1000;

  const state = {
    session: null,   // the root session shown
    sel: null,       // the selected node's key
    tree: EXPORT ? DATA.tree : null,
    details: EXPORT ? (DATA.details || {}) : {},
    stream: null,
    renders: 0,
  };

  // h builds an element: props set properties (never HTML), kids are
  // nodes or strings (as text).
  function h(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v == null || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k === 'className' || k === 'title' || k === 'open' || k === 'href' || k === 'colSpan') e[k] = v;
      else throw new Error('h: unexpected property ' + k);
    }
    for (const c of kids.flat(Infinity)) {
      if (c == null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  // cls makes a class-name part of a value from a log.
  const cls = (s) => String(s || 'none').toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 40);

  function api(path) {
    const sep = path.includes('?') ? '&' : '?';
    return fetch(path + sep + 'token=' + encodeURIComponent(TOKEN), { cache: 'no-store' }).then((r) => {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    });
  }

  function eventsURL(id) {
    return '/api/sessions/' + encodeURIComponent(id) + '/events?token=' + encodeURIComponent(TOKEN);
  }

  // Formatting.
  function tokens(u) {
    if (!u) return '—';
    let s = 'in ' + u.inputTokens + ' out ' + u.outputTokens;
    if (u.cacheReadTokens) s += ' cached ' + u.cacheReadTokens;
    if (u.reasoningTokens) s += ' reasoning ' + u.reasoningTokens;
    return s;
  }
  function cost(u) {
    if (!u || u.costUsd == null) return '—';
    return '$' + Number(u.costUsd).toFixed(4);
  }
  function dur(ms) {
    if (ms == null || isNaN(ms)) return '—';
    if (ms < 1000) return ms + ' ms';
    const s = ms / 1000;
    if (s < 60) return s.toFixed(1) + ' s';
    const m = Math.floor(s / 60);
    if (m < 60) return m + ' m ' + Math.round(s - m * 60) + ' s';
    return Math.floor(m / 60) + ' h ' + (m % 60) + ' m';
  }
  function when(t) {
    const d = new Date(t);
    return isNaN(d) ? '' : d.toLocaleString();
  }
  function nodeDuration(n) {
    if (n.durationMs) return n.durationMs;
    const a = Date.parse(n.start);
    const b = n.end ? Date.parse(n.end) : (EXPORT ? Date.parse(DATA.exported) : Date.now());
    return isNaN(a) || isNaN(b) ? null : Math.max(0, b - a);
  }
  function nodeName(n) {
    const who = n.agent || (n.runId ? 'child' : 'session');
    return n.label ? who + ': ' + n.label : who;
  }
  function outcome(n) {
    if (n.state === 'running') return 'running';
    if (n.state === 'lost') return 'lost (no end recorded)';
    let s = n.stopReason || 'ended';
    if (n.by) s += ' by ' + n.by;
    if (n.failure) s += ': ' + n.failure;
    return s;
  }
  function marks(n) {
    const m = [];
    if (n.background) m.push('background');
    if (n.jobId) m.push('job ' + n.jobId + (n.jobStatus ? ' ' + n.jobStatus : ''));
    if (n.continues) m.push('continues ' + n.continues);
    if (n.branch) m.push('[' + n.branch + ']'); // isolation: worktree, as the terminal's child row shows it
    if (n.problem) m.push(n.problem);
    return m;
  }

  function walk(n, depth, f) {
    f(n, depth);
    for (const c of n.children || []) walk(c, depth + 1, f);
  }
  function findNode(key) {
    let found = null;
    if (state.tree) walk(state.tree.root, 0, (n) => { if (n.key === key) found = n; });
    return found;
  }

  // Routing: #s=SESSION&n=NODE.
  function route() {
    const p = new URLSearchParams(location.hash.slice(1));
    return { s: p.get('s') || (EXPORT ? DATA.session : null), n: p.get('n') };
  }
  function go(s, n) {
    const p = new URLSearchParams();
    if (s) p.set('s', s);
    if (n) p.set('n', n);
    location.hash = p.toString();
  }

  const top = document.getElementById('top');
  const main = document.getElementById('main');

  function setTop(...kids) {
    top.replaceChildren(h('span', { className: 'brand' }, 'reins view'), ...kids.filter(Boolean));
  }

  function problem(text) {
    main.replaceChildren(h('p', { className: 'problem' }, text));
    done();
  }

  function done() {
    state.renders++;
    document.body.dataset.renders = String(state.renders);
    document.body.dataset.ready = '1';
  }

  // The session list (served only).
  function showList() {
    closeStream();
    setTop(h('span', { className: 'muted' }, 'sessions'));
    api('/api/sessions').then((list) => {
      if (!list.length) return problem('No sessions yet.');
      const rows = list.map((s) => h('tr', { className: 'st-' + (s.running ? 'running' : 'ended') },
        h('td', null, h('a', { href: '#s=' + encodeURIComponent(s.id) }, s.id)),
        h('td', null, when(s.createdAt)),
        h('td', null, s.cwd || ''),
        h('td', null, s.agent || '—'),
        h('td', null, s.model || '—'),
        h('td', null, s.running ? 'running' : (s.last || '—')),
        h('td', { className: 'num' }, String(s.children)),
        h('td', null, tokens(s.usage)),
        h('td', null, cost(s.usage)),
        h('td', { className: 'prompt' }, s.problem || s.prompt || '')));
      main.replaceChildren(h('table', { className: 'list' },
        h('thead', null, h('tr', null, ['session', 'created', 'workspace', 'agent', 'model', 'last', 'children', 'tokens', 'cost', 'prompt'].map((t) => h('th', null, t)))),
        h('tbody', null, rows)));
      done();
    }).catch(() => problem('The session list cannot be read.'));
  }

  // One session.
  const sections = {};
  function showSession(id) {
    if (state.session !== id) {
      closeStream();
      state.session = id;
      state.tree = EXPORT ? DATA.tree : null;
      if (!EXPORT) state.details = {};
      sections.summary = h('section', { className: 'summary' });
      sections.tree = h('section', { className: 'tree' });
      sections.timeline = h('section', { className: 'timeline' });
      sections.detail = h('section', { className: 'detail' });
      main.replaceChildren(sections.summary,
        h('h2', null, 'Delegation tree'), sections.tree,
        h('h2', null, 'Timeline'), sections.timeline,
        sections.detail);
      if (!EXPORT) {
        api('/api/sessions/' + encodeURIComponent(id)).then((t) => { state.tree = t; render(); })
          .catch(() => problem('No such session, or its log cannot be read.'));
        openStream(id);
      }
    }
    render();
  }

  function openStream(id) {
    if (typeof EventSource === 'undefined') return;
    const es = new EventSource(eventsURL(id));
    es.addEventListener('tree', (ev) => {
      state.tree = JSON.parse(ev.data);
      render();
    });
    es.onerror = () => { top.dataset.live = 'reconnecting'; };
    es.onopen = () => { top.dataset.live = 'live'; };
    state.stream = es;
  }
  function closeStream() {
    if (state.stream) state.stream.close();
    state.stream = null;
    state.session = null;
  }

  function render() {
    const r = route();
    if (!state.tree) return;
    const root = state.tree.root;
    state.sel = r.n && findNode(r.n) ? r.n : root.key;
    setTop(EXPORT ? h('span', { className: 'muted' }, 'exported ' + when(DATA.exported)) : h('a', { href: '#' }, 'all sessions'),
      h('span', { className: 'sid' }, root.session),
      h('span', { className: 'state st-' + cls(root.state) }, outcome(root)),
      !EXPORT && root.state === 'running' ? h('span', { className: 'live' }, 'live') : null);
    renderSummary(root);
    renderTree(root);
    const sel = findNode(state.sel);
    const detail = sel && sel.session ? state.details[sel.session] : null;
    renderTimeline(root, sel, detail);
    renderDetail(sel, detail);
    if (sel && sel.session && !EXPORT) {
      const v = state.tree.versions[sel.session];
      if (!detail || detail.version !== v) fetchDetail(sel.session, v);
    }
    done();
  }

  const pending = {};
  function fetchDetail(id, v) {
    if (pending[id] === v) return;
    pending[id] = v;
    api('/api/sessions/' + encodeURIComponent(id) + '/detail').then((d) => {
      state.details[id] = d;
      delete pending[id];
      render();
    }).catch(() => { delete pending[id]; });
  }

  function renderSummary(root) {
    let nodes = 0; let running = 0; let total = null; let costKnown = true; let tok = 0;
    walk(root, 0, (n) => {
      nodes++;
      if (n.state === 'running') running++;
      if (n.usage) {
        tok += (n.usage.inputTokens || 0) + (n.usage.outputTokens || 0);
        if (n.usage.costUsd == null) costKnown = false; else total = (total || 0) + n.usage.costUsd;
      }
    });
    sections.summary.replaceChildren(
      h('div', null, h('b', null, 'workspace '), root.cwd || '—', '  ', h('b', null, 'model '), root.model || '—',
        '  ', h('b', null, 'agent '), root.agent || 'built-in'),
      h('div', null, nodes + ' node(s), ' + running + ' running; ',
        'tokens as recorded per node: ' + tok + '; cost: ' + (total == null ? 'unknown' : '$' + total.toFixed(4) + (costKnown ? '' : ' (some unknown)')),
        '; duration ' + dur(nodeDuration(root))));
  }

  function renderTree(root) {
    const rows = [];
    walk(root, 0, (n, depth) => {
      if (rows.length >= MAX_ROWS) return;
      const name = h('td', { className: 'name' },
        h('span', { className: 'indent' }, '\u00a0\u00a0'.repeat(depth) + (depth ? '└ ' : '')),
        nodeName(n),
        marks(n).map((m) => h('span', { className: 'mark' }, m)));
      rows.push(h('tr', {
        className: 'node st-' + cls(n.state) + ' sr-' + cls(n.stopReason) + (n.key === state.sel ? ' sel' : ''),
        dataset: { key: n.key, stop: n.stopReason || '', state: n.state },
        onclick: () => go(state.session, n.key),
      },
      name,
      h('td', null, n.provider || '—'),
      h('td', null, n.model || '—'),
      h('td', { className: 'outcome' }, outcome(n)),
      h('td', { className: 'diag' }, n.diagnostic || ''),
      h('td', null, tokens(n.usage)),
      h('td', { className: 'num' }, cost(n.usage)),
      h('td', { className: 'num' }, dur(nodeDuration(n)))));
    });
    sections.tree.replaceChildren(h('table', { className: 'nodes' },
      h('thead', null, h('tr', null, ['node', 'provider', 'model', 'state / stop reason', 'diagnostic', 'tokens', 'cost', 'duration'].map((t) => h('th', null, t)))),
      h('tbody', null, rows)),
    ...(state.tree.nodes > MAX_ROWS ? [h('p', { className: 'muted' }, 'showing the first ' + MAX_ROWS + ' of ' + state.tree.nodes + ' nodes')] : []));
  }

  function renderTimeline(root, sel, detail) {
    let t0 = Date.parse(root.start); let t1 = t0;
    // What is still open ends now, or, in an export, when it was exported.
    const now = EXPORT ? Date.parse(DATA.exported) : Date.now();
    const endOf = (x) => (x.end ? Date.parse(x.end) : now);
    walk(root, 0, (n) => { t0 = Math.min(t0, Date.parse(n.start)); t1 = Math.max(t1, endOf(n)); });
    const spans = detail ? detail.spans.slice(0, MAX_ROWS) : [];
    for (const s of spans) { t0 = Math.min(t0, Date.parse(s.start)); t1 = Math.max(t1, s.end ? Date.parse(s.end) : t1); }
    const width = Math.max(1, t1 - t0);
    const bar = (start, end, className, title) => {
      const a = Date.parse(start);
      const b = end ? Date.parse(end) : t1;
      const e = h('div', { className: 'bar ' + className, title });
      e.style.left = ((a - t0) / width * 100).toFixed(3) + '%';
      e.style.width = Math.max(0.3, (b - a) / width * 100).toFixed(3) + '%';
      return e;
    };
    const rows = [];
    walk(root, 0, (n, depth) => {
      if (rows.length >= MAX_ROWS) return;
      rows.push(h('div', { className: 'row' + (n.key === state.sel ? ' sel' : ''), dataset: { key: n.key }, onclick: () => go(state.session, n.key) },
        h('div', { className: 'lab', title: nodeName(n) }, '\u00a0'.repeat(depth * 2) + nodeName(n)),
        h('div', { className: 'lane' }, bar(n.start, n.end, 'k-node st-' + cls(n.state) + ' sr-' + cls(n.stopReason),
          nodeName(n) + ' — ' + outcome(n) + ' — ' + dur(nodeDuration(n))))));
    });
    if (sel && detail) {
      rows.push(h('div', { className: 'row head' }, h('div', { className: 'lab' }, 'in ' + nodeName(sel) + ':'), h('div', { className: 'lane' })));
      for (const s of spans) {
        rows.push(h('div', { className: 'row span' },
          h('div', { className: 'lab', title: s.label }, s.kind + ' ' + s.label),
          h('div', { className: 'lane' }, bar(s.start, s.end, 'k-' + cls(s.kind) + ' ss-' + cls(s.status),
            s.kind + ' ' + s.label + (s.status ? ' — ' + s.status : '') + (s.end ? ' — ' + dur(Date.parse(s.end) - Date.parse(s.start)) : ' — open')))));
      }
      if (detail.spans.length > MAX_ROWS) rows.push(h('p', { className: 'muted' }, 'showing the first ' + MAX_ROWS + ' spans'));
    }
    sections.timeline.replaceChildren(
      h('div', { className: 'axis' }, h('span', null, when(new Date(t0))), h('span', null, dur(width)), h('span', null, when(new Date(t1)))),
      h('div', { className: 'gantt' }, rows));
  }

  function renderDetail(n, detail) {
    if (!n) { sections.detail.replaceChildren(); return; }
    const kv = (k, v) => (v ? h('div', null, h('b', null, k + ' '), v) : null);
    const info = h('div', { className: 'info' },
      kv('agent', n.agent || 'built-in'), kv('provider', n.provider), kv('model', n.model),
      kv('session', n.session), kv('run', n.runId), kv('task', n.label),
      kv('state', outcome(n)), kv('diagnostic', n.diagnostic), kv('worktree', (n.worktree || '').replace(/^worktree: /, '')),
      kv('tokens', tokens(n.usage)), kv('cost', cost(n.usage)), kv('duration', dur(nodeDuration(n))),
      kv('started', when(n.start)), marks(n).length ? kv('marks', marks(n).join(', ')) : null);
    const parts = [h('h2', null, 'Selected: ' + nodeName(n)), info];
    if (n.answer) parts.push(h('h3', null, 'Answer handed to the parent'), h('pre', { className: 'answer' }, n.answer));
    if (n.session) {
      parts.push(h('h3', null, 'Conversation'));
      if (!detail) parts.push(h('p', { className: 'muted' }, EXPORT ? 'Not in this export.' : 'Loading…'));
      else {
        // The same detail keeps its elements, so a live redraw leaves
        // what the reader unfolded unfolded.
        if (state.convFor !== detail) { state.convFor = detail; state.convEl = conversation(detail); }
        parts.push(state.convEl);
      }
    } else if (n.runId) {
      parts.push(h('p', { className: 'muted' }, 'This child keeps no reins session (' + (n.provider || 'unknown provider') + '): its answer and diagnostic are what its parent recorded.'));
    }
    sections.detail.replaceChildren(...parts.filter(Boolean));
  }

  function conversation(d) {
    const out = [];
    if (d.problem) out.push(h('p', { className: 'problem' }, d.problem));
    if (d.omitted) out.push(h('p', { className: 'muted' }, d.omitted + ' older entries are not shown'));
    for (const it of d.items) out.push(item(it));
    return h('div', { className: 'conv' }, out);
  }

  function item(it) {
    const cut = it.truncated ? h('span', { className: 'mark' }, 'truncated') : null;
    const note = it.note ? h('span', { className: 'note' }, it.note) : null;
    const pre = (t) => (t ? h('pre', null, t) : null);
    const box = (label, body, extra) => h('div', { className: 'item k-' + cls(it.kind) + (it.isError ? ' err' : ''), dataset: { seq: String(it.seq) } },
      h('div', { className: 'ih' }, h('span', { className: 'who' }, label), note, cut, extra), body);
    switch (it.kind) {
      case 'turn': return h('div', { className: 'turn' }, it.note);
      case 'turn-end': return h('div', { className: 'turn end' }, '└ ' + it.note);
      case 'user': return box('user', pre(it.text));
      case 'assistant': return box('assistant', pre(it.text));
      case 'reasoning': return box('reasoning', h('details', null, h('summary', null, 'show reasoning'), pre(it.text)));
      case 'tool-call': return box('→ ' + (it.name || 'tool'), pre(it.text));
      case 'tool-result': {
        const body = it.text && it.text.length > 2000 ? h('details', null, h('summary', null, it.text.length + ' characters'), pre(it.text)) : pre(it.text);
        return box((it.isError ? '✗ ' : '✓ ') + (it.name || 'result'), body);
      }
      case 'retry': return box('⟳ retry', null);
      case 'subagent-start': {
        const child = it.child ? findNode(it.child) : null;
        return box('⇢ subagent ' + (it.name || ''), pre(it.text), child ? h('a', { href: '#', onclick: (e) => { e.preventDefault(); go(state.session, child.key); } }, 'open child') : null);
      }
      case 'subagent-end': return box('⇠ subagent', pre(it.text));
      case 'job': return box('job', null);
      case 'hook': return box('⚑ hook ' + (it.name || ''), pre(it.text));
      case 'compaction': return box('compaction', h('details', null, h('summary', null, 'summary'), pre(it.text)));
      default: return box('event ' + (it.name || ''), pre(it.text));
    }
  }

  function onRoute() {
    const r = route();
    if (r.s) showSession(r.s);
    else if (EXPORT) problem('Nothing to show.');
    else showList();
  }

  window.addEventListener('hashchange', onRoute);
  window.addEventListener('beforeunload', closeStream);
  onRoute();
})();
