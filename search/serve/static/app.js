/* fortekit search page.
 *
 * Plain ES2020, no framework, no build step.  Every element holding data is
 * built with document.createElement + textContent (never an HTML string), and
 * every id that goes into a URL path is passed through encodeURIComponent.
 */
'use strict';

(() => {
  const SWITCHES = ['stage1', 'formula_scoring', 'stage3'];
  const DEFAULT_K = 10;

  const STAGE_LABELS = {
    stage1: 'Stage 1 (query refinement)',
    projection: 'Projection',
    formula: 'Formula scoring',
    stage3: 'Stage 3 (re-ranking)',
    order_check: 'Order check',
  };

  const SOURCE_LABELS = {
    query: 'the query',
    refine: 'Stage 1 (refine)',
    lookup: 'lookup',
  };

  // ---------------------------------------------------------------- helpers

  const { byId, el, clear, isObj, asArray, isText, num, formatInt, fetchJSON } = window.fortekit;

  /** Hits shown at a time; "More results" shows the next ones (and asks for more when k is used up). */
  const PAGE = 20;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  /** The score parts' stages, in the order they apply, and their labels. */
  const PART_LABELS = {
    similarity: 'similarity',
    stage2: 'stage2',
    formula: 'formula',
    stage3: 'stage3',
    order: 'order',
  };
  const PART_TITLES = {
    similarity: 'the first pass: the query\u2019s cosine to the item',
    stage2: 'Stage 2 (the projection head)',
    formula: 'formula scoring (the clauses)',
    stage3: 'Stage 3 (re-ranking by captions)',
    order: 'the order check',
  };
  const BAR_WIDTH = 120;
  const BAR_HEIGHT = 12;

  function formatMs(ms) {
    if (ms < 10) return ms.toFixed(1);
    return String(Math.round(ms));
  }

  /** A signed amount with a true minus sign: "+0.010", "−0.052" (the first part unsigned). */
  function signed(value, first) {
    const text = Math.abs(value).toFixed(3);
    if (first) return (value < 0 ? '\u2212' : '') + text;
    return (value < 0 ? '\u2212' : '+') + text;
  }

  /** The score parts of a hit: [{stage, amount}] with a finite amount, in order. */
  function scoreParts(hit) {
    return asArray(hit.score_parts)
      .filter(isObj)
      .map((p) => ({ stage: isText(p.stage) ? p.stage : 'other', amount: num(p.amount) }))
      .filter((p) => p.amount !== null);
  }

  /** "similarity 0.610 · formula −0.052 · stage3 +0.010", as format_score_parts writes it. */
  function partsLine(parts) {
    return parts.map((p, i) => (PART_LABELS[p.stage] || p.stage) + ' ' + signed(p.amount, i === 0)).join(' \u00b7 ');
  }

  // ---------------------------------------------------------------- elements

  const form = byId('search-form');
  const fieldset = byId('search-fieldset');
  const queryInput = byId('query');
  const kInput = byId('k');
  const button = byId('search-button');
  const statusEl = byId('status');
  const panel = byId('formula-panel');
  const formulaBody = byId('formula-body');
  const pipelineList = byId('pipeline');
  const pipelineLine = byId('pipeline-line');
  const pipelineKind = byId('pipeline-kind');
  const treeDetails = byId('tree-details');
  const treeBody = byId('tree-body');
  const treeLink = byId('stage1-tree-link');
  const confidenceEl = byId('confidence');
  const pushed = byId('pushed-down');
  const pushedCount = byId('pushed-count');
  const pushedHint = byId('pushed-hint');
  const pushedList = byId('pushed-list');
  const pushedNone = byId('pushed-none');
  const legend = byId('score-legend');
  const hitsList = byId('hits');
  const noHits = byId('no-hits');
  const more = byId('more');
  const moreButton = byId('more-button');
  const shownCount = byId('shown-count');
  const summary = byId('index-summary');
  const evalLink = byId('eval-link');
  const noIndex = byId('no-index');
  const noIndexEvalLink = byId('no-index-eval-link');

  let maxK = num(kInput && kInput.max) || 100;
  let hasIndex = true;
  let indexItems = null; // the index's size, from /v1/info
  let requestSeq = 0;

  /** What is shown: the last answer's hits, how many are listed, the request and its clauses. */
  const view = { hits: [], shown: 0, req: null, clauses: [], scale: null, treeQuery: null, treeFor: null };

  function setStatus(text, kind) {
    if (!statusEl) return;
    statusEl.textContent = text || '';
    statusEl.classList.toggle('status-error', kind === 'error');
    statusEl.classList.toggle('status-busy', kind === 'busy');
  }

  // ---------------------------------------------------------------- info

  function fillSelect(select, values) {
    if (!select) return;
    const list = asArray(values).filter((v) => typeof v === 'string' && v.length > 0);
    if (list.length === 0) return; // keep the built-in defaults
    const current = select.value;
    clear(select);
    for (const value of list) {
      const opt = el('option', { text: value });
      opt.value = value;
      select.appendChild(opt);
    }
    if (list.includes(current)) select.value = current;
    else if (list.includes('auto')) select.value = 'auto';
  }

  function renderInfo(info) {
    if (!isObj(info)) return;

    const switches = isObj(info.switches) ? info.switches : {};
    for (const name of SWITCHES) fillSelect(byId(name), switches[name]);

    const limits = isObj(info.limits) ? info.limits : {};
    const mk = num(limits.max_k);
    if (mk !== null && mk >= 1) {
      maxK = Math.floor(mk);
      kInput.max = String(maxK);
      if ((num(kInput.value) || 0) > maxK) kInput.value = String(maxK);
    }

    const evalOn = info.eval === true;
    if (evalLink) evalLink.hidden = !evalOn;

    const index = isObj(info.index) ? info.index : null;
    clear(summary);
    if (index) {
      hasIndex = true;
      const parts = [];
      const items = num(index.items);
      indexItems = items;
      if (items !== null) parts.push(formatInt(items) + (items === 1 ? ' item' : ' items'));
      if (isText(index.kind)) parts.push(index.kind.replace(/_/g, ' '));
      if (isText(index.backbone)) {
        const dim = num(index.dim);
        parts.push(index.backbone + (dim !== null ? ' (' + dim + '-d)' : ''));
      }
      summary.textContent = parts.join(' · ');
      if (isText(index.name)) summary.title = index.name + (isText(index.state) ? ' (state ' + index.state + ')' : '');
      if (noIndex) noIndex.hidden = true;
      if (fieldset) fieldset.disabled = false;
    } else if (info.index === null) {
      hasIndex = false;
      summary.textContent = 'no index loaded';
      if (noIndex) noIndex.hidden = false;
      if (noIndexEvalLink) noIndexEvalLink.hidden = !evalOn;
      if (fieldset) fieldset.disabled = true;
    }
    const version = isText(info.fortekit_version) ? info.fortekit_version : null;
    if (version) {
      summary.appendChild(el('span', { cls: 'version', text: ' · fortekit ' + version }));
    }
  }

  // ---------------------------------------------------------------- URL state

  function readURL() {
    let params;
    try {
      params = new URLSearchParams(window.location.search);
    } catch (e) {
      return null;
    }
    for (const name of SWITCHES) {
      const select = byId(name);
      const v = params.get(name);
      if (select && v !== null && Array.from(select.options).some((o) => o.value === v)) {
        select.value = v;
      }
    }
    const k = num(params.get('k'));
    if (k !== null) kInput.value = String(Math.min(Math.max(1, Math.floor(k)), maxK));
    const q = params.get('q');
    if (q !== null) queryInput.value = q;
    return q;
  }

  function writeURL(req) {
    if (!window.history || typeof window.history.replaceState !== 'function') return;
    const params = new URLSearchParams();
    params.set('q', req.query);
    if (req.k !== DEFAULT_K) params.set('k', String(req.k));
    for (const name of SWITCHES) {
      if (req[name] && req[name] !== 'auto') params.set(name, req[name]);
    }
    try {
      window.history.replaceState(null, '', window.location.pathname + '?' + params.toString());
    } catch (e) {
      /* ignore (e.g. file:// pages) */
    }
  }

  // ---------------------------------------------------------------- search

  function readK() {
    let k = num(kInput.value);
    if (k === null) k = DEFAULT_K;
    k = Math.min(Math.max(1, Math.floor(k)), maxK);
    kInput.value = String(k);
    return k;
  }

  function clearResults() {
    clear(hitsList);
    if (noHits) noHits.hidden = true;
    clear(formulaBody);
    clear(pipelineList);
    clear(pipelineLine);
    if (pipelineKind) pipelineKind.textContent = '';
    if (panel) panel.hidden = true;
    if (confidenceEl) confidenceEl.hidden = true;
    if (pushed) pushed.hidden = true;
    if (legend) legend.hidden = true;
    if (more) more.hidden = true;
    view.hits = [];
    view.shown = 0;
  }

  /**
   * Search the query in the box. opts.k: ask for this many hits (the "More results" button);
   * opts.keep: show at least this many hits, and move the focus to the first new one.
   */
  async function runSearch(opts) {
    const o = opts || {};
    if (!hasIndex) {
      setStatus('This server has no search index loaded.', 'error');
      return;
    }
    const query = queryInput.value.trim();
    if (!query) {
      setStatus('Enter a query.', 'error');
      queryInput.focus();
      return;
    }
    if (o.k) kInput.value = String(o.k);
    const req = { query: query, k: readK(), explain: true };
    for (const name of SWITCHES) {
      const select = byId(name);
      req[name] = select ? select.value : 'auto';
    }

    const mine = ++requestSeq;
    button.disabled = true;
    if (moreButton) moreButton.disabled = true;
    hitsList.setAttribute('aria-busy', 'true');
    setStatus('Searching…', 'busy');
    writeURL(req);

    try {
      const data = await fetchJSON('/v1/search', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(req),
      });
      if (mine !== requestSeq) return; // a newer request is running
      renderResponse(isObj(data) ? data : {}, req, o.keep || 0);
    } catch (err) {
      if (mine !== requestSeq) return;
      clearResults();
      setStatus(err && err.message ? err.message : 'Search failed.', 'error');
    } finally {
      if (mine === requestSeq) {
        button.disabled = false;
        if (moreButton) moreButton.disabled = false;
        hitsList.removeAttribute('aria-busy');
      }
    }
  }

  function renderResponse(data, req, keep) {
    const results = asArray(data.results);
    const result = isObj(results[0]) ? results[0] : null;
    const hits = result ? asArray(result.hits).filter(isObj) : [];
    const took = num(data.took_ms);
    const tookText = took !== null ? ' in ' + formatMs(took) + ' ms' : '';

    if (hits.length === 0) setStatus('No hits' + tookText);
    else setStatus(hits.length + (hits.length === 1 ? ' hit' : ' hits') + tookText);

    view.clauses = result ? asArray(result.clauses).filter(isObj) : [];
    renderFormula(result, isObj(data.pipeline) ? data.pipeline : null, req.query);
    renderConfidence(result);
    renderPushedDown(result);
    renderHits(hits, req, keep);
  }

  // ---------------------------------------------------------------- query panel

  function queryItem(label, valueNode, cls) {
    return el('span', { cls: 'q-item ' + cls }, [el('span', { cls: 'q-label', text: label }), ' ', valueNode]);
  }

  function renderFormula(result, pipeline, query) {
    clear(formulaBody);
    const r = result || {};

    const line = el('div', { cls: 'q-items' });
    const phi0 = isText(r.phi0) ? r.phi0 : null;
    const phiStar = isText(r.phi_star) ? r.phi_star : null;
    if (phi0) line.appendChild(queryItem('φ₀', el('code', { cls: 'phi0', text: phi0 }), 'formula-phi0'));
    if (phiStar && phiStar !== phi0) {
      line.appendChild(queryItem('φ* (refined)', el('code', { cls: 'phi-star', text: phiStar }), 'formula-phi-star'));
    }
    if (isText(r.refined_text) && r.refined_text !== r.query) {
      line.appendChild(
        queryItem('refined text', el('span', { cls: 'refined-text', text: r.refined_text }), 'formula-refined')
      );
    }
    const clauses = asArray(r.clauses).filter(isObj);
    if (clauses.length > 0) {
      const ul = el('ul', { cls: 'clauses', attrs: { 'aria-label': 'Clauses' } });
      for (const c of clauses) {
        const negated = c.negated === true;
        const li = el('li', { cls: negated ? 'clause negated' : 'clause' });
        if (negated) li.appendChild(el('span', { cls: 'not', text: 'not' }));
        li.appendChild(el('span', { cls: 'clause-text', text: isText(c.text) ? c.text : '' }));
        ul.appendChild(li);
      }
      line.appendChild(queryItem('clauses', ul, 'formula-clauses'));
    }
    if (isText(r.source) && r.source !== 'query') {
      line.appendChild(
        queryItem('formula from', el('span', { text: SOURCE_LABELS[r.source] || r.source }), 'formula-source')
      );
    }
    if (line.firstChild) formulaBody.appendChild(line);

    if (isText(r.fallback)) {
      formulaBody.appendChild(
        el('p', { cls: 'fallback', text: 'formula scoring not applied: ' + r.fallback })
      );
    }
    const unsure = asArray(r.unsure).filter(isText);
    if (unsure.length > 0) {
      const ul = el('ul', { cls: 'unsure-list' });
      for (const u of unsure) ul.appendChild(el('li', { cls: 'unsure', text: 'unsure: ' + u }));
      formulaBody.appendChild(ul);
    }
    if (!formulaBody.firstChild) {
      formulaBody.appendChild(el('p', { cls: 'muted', text: 'No formula for this query.' }));
    }

    renderPipeline(pipeline);

    const treeQuery = isText(r.query) ? r.query : query;
    treeLink.href = '/v1/stage1/tree?query=' + encodeURIComponent(treeQuery);
    view.treeQuery = treeQuery;
    if (treeDetails && treeDetails.open) loadTree();
    else if (view.treeFor !== treeQuery) clear(treeBody);

    panel.hidden = false;
  }

  function renderPipeline(pipeline) {
    clear(pipelineList);
    clear(pipelineLine);
    pipelineKind.textContent = '';
    if (!pipeline) return;
    if (isText(pipeline.kind)) pipelineKind.textContent = pipeline.kind;
    const stages = isObj(pipeline.stages) ? pipeline.stages : {};
    for (const [name, st] of Object.entries(stages)) {
      const stage = isObj(st) ? st : {};
      const on = stage.on === true;
      const label = STAGE_LABELS[name] || name;
      const state = on ? 'stage-on' : 'stage-off';
      pipelineLine.appendChild(
        el('span', { cls: 'stage-chip ' + state, attrs: { 'data-stage': name } }, [
          el('span', { cls: 'chip-name', text: label }),
          ' ',
          el('span', { cls: 'stage-state', text: on ? 'on' : 'off' }),
        ])
      );

      const li = el('li', { cls: 'stage ' + state, attrs: { 'data-stage': name } });
      const why = isText(stage.why) ? stage.why : '';
      const detail = isText(stage.detail) ? stage.detail : '';
      const head = el('span', { cls: 'stage-head' }, [
        el('span', { cls: 'stage-name', text: label }),
        el('span', { cls: 'stage-state', text: on ? 'on' : 'off' }),
      ]);
      if (isText(stage.source) && stage.source !== 'default') {
        head.appendChild(el('span', { cls: 'stage-source', text: stage.source }));
      }
      li.appendChild(head);
      if (why) li.appendChild(el('span', { cls: 'stage-why', text: why }));
      if (detail && detail !== why) li.appendChild(el('span', { cls: 'stage-why stage-detail', text: detail }));
      pipelineList.appendChild(li);
    }
  }

  // ---------------------------------------------------------------- Stage 1 tree

  const TREE_MARKS = { star: '★', kept: '✔', feasible: '·', pruned: '✘' };
  const TREE_MARK_TITLES = {
    star: 'φ*: the refinement chosen',
    kept: 'kept in the beam',
    feasible: 'feasible, not kept',
    pruned: 'pruned (infeasible)',
  };

  function nodeEdit(node) {
    const edit = asArray(node.edit).map(String);
    if (edit.length === 0) return 'φ0';
    const [op, ...args] = edit;
    if (op === 'attr') return '+' + args[0];
    if (op === 'neg') return '+¬' + args[0];
    if (args.length === 2) return '+' + args[0] + '(x, ' + args[1] + ')';
    return '+' + args.join(',');
  }

  function nodeMark(node, star) {
    if (node.id === star) return 'star';
    if (node.feasible !== true) return 'pruned';
    return node.kept === true ? 'kept' : 'feasible';
  }

  function nodeTerms(node) {
    const parts = [];
    const add = (label, value, digits) => {
      const v = num(value);
      if (v !== null) parts.push(label + '=' + (digits ? (v >= 0 ? '+' : '') + v.toFixed(3) : String(v)));
    };
    add('F', node.F, true);
    add('c', node.complexity, false);
    add('u', node.utility, true);
    add('v·', node.pivot, true);
    if (num(node.sim_pos) || num(node.sim_neg)) {
      add('e+', node.sim_pos, true);
      add('e−', node.sim_neg, true);
    }
    return parts.join(' ');
  }

  function treeRow(node, star) {
    const mark = nodeMark(node, star);
    return el('span', { cls: 'tree-row' }, [
      el('span', { cls: 'tree-mark mark-' + mark, text: TREE_MARKS[mark], attrs: { title: TREE_MARK_TITLES[mark] } }),
      el('span', { cls: 'visually-hidden', text: ' (' + TREE_MARK_TITLES[mark] + ')' }),
      ' ',
      el('span', { cls: 'tree-edit', text: nodeEdit(node) }),
      ' ',
      el('span', { cls: 'tree-text', text: '“' + (isText(node.text) ? node.text : '') + '”' }),
      ' ',
      el('span', { cls: 'tree-terms', text: nodeTerms(node) }),
    ]);
  }

  /** A nested list: a node with children is a <details> (open on the path to φ*), a leaf a row. */
  function treeNode(node, children, star, onPath) {
    const kids = children.get(node.id) || [];
    const mark = nodeMark(node, star);
    const li = el('li', { cls: 'tree-node node-' + mark, attrs: { 'data-node': node.id } });
    if (kids.length === 0) {
      li.appendChild(el('div', { cls: 'tree-leaf' }, [treeRow(node, star)]));
      return li;
    }
    const open = onPath.has(node.id);
    const details = el('details', { cls: 'tree-fold', attrs: { open: open } });
    const pruned = kids.filter((k) => k.feasible !== true).length;
    details.appendChild(
      el('summary', {}, [
        treeRow(node, star),
        el('span', { cls: 'tree-count', text: ' ' + kids.length + (kids.length === 1 ? ' child' : ' children') +
          (pruned ? ', ' + pruned + ' pruned' : '') }),
      ])
    );
    const ul = el('ul', { cls: 'tree' });
    for (const kid of kids) ul.appendChild(treeNode(kid, children, star, onPath));
    details.appendChild(ul);
    li.appendChild(details);
    return li;
  }

  function renderTree(data) {
    clear(treeBody);
    const nodes = asArray(data.tree)
      .filter(isObj)
      .map((n) => Object.assign({}, n, { id: num(n.id), parent: num(n.parent) }))
      .filter((n) => n.id !== null);
    const star = num(data.star) !== null ? num(data.star) : 0;

    const head = el('dl', { cls: 'tree-head' });
    const add = (label, text, cls) => {
      if (!isText(text)) return;
      head.appendChild(el('dt', { text: label }));
      head.appendChild(el('dd', {}, [el(cls ? 'code' : 'span', { cls: cls || null, text: text })]));
    };
    add('φ0', data.phi0, 'tree-phi0');
    asArray(data.phi_plus).forEach((phi, i) =>
      add('φ+', String(phi) + (isText(asArray(data.positives)[i]) ? '  ← “' + data.positives[i] + '”' : ''), 'tree-phi')
    );
    asArray(data.phi_minus).forEach((phi, i) =>
      add('φ−', String(phi) + (isText(asArray(data.negatives)[i]) ? '  ← “' + data.negatives[i] + '”' : ''), 'tree-phi')
    );
    const invariant = asArray(data.invariant).filter(isText);
    add('C (kept)', '{' + (invariant.length ? invariant.join(', ') : '∅') + '}', 'tree-phi');
    add('φ*', data.phi_star, 'tree-phi-star');
    add('G(φ*)', data.refined_text, null);
    const setting = [];
    if (isText(data.threshold)) setting.push('threshold ' + data.threshold);
    if (isText(data.anchors)) setting.push('anchors ' + data.anchors);
    if (data.feasible === false) setting.push('nothing passed the threshold: φ0 is kept');
    add('search', setting.join(' · '), null);
    treeBody.appendChild(head);

    const keys = el('p', { cls: 'tree-keys small muted' });
    keys.textContent = 'Marks: ★ φ* · ✔ kept in the beam · · feasible · ✘ pruned. ' +
      'F = w·c − u (lower is better), c the complexity, u the utility, v· the pivot.';
    treeBody.appendChild(keys);

    if (nodes.length === 0) {
      treeBody.appendChild(el('p', { cls: 'muted', text: 'Stage 1 searched no edit for this query.' }));
      return;
    }
    const byId_ = new Map(nodes.map((n) => [n.id, n]));
    const children = new Map();
    const roots = [];
    for (const n of nodes) {
      if (n.parent === null || !byId_.has(n.parent)) roots.push(n);
      else {
        if (!children.has(n.parent)) children.set(n.parent, []);
        children.get(n.parent).push(n);
      }
    }
    const rank = (n) => [n.id !== star ? 1 : 0, n.kept === true ? 0 : 1, n.feasible === true ? 0 : 1, num(n.F) || 0];
    for (const list of children.values()) {
      list.sort((a, b) => {
        const ra = rank(a);
        const rb = rank(b);
        for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return ra[i] - rb[i];
        return 0;
      });
    }
    const onPath = new Set();
    for (let n = byId_.get(star); n; n = n.parent !== null ? byId_.get(n.parent) : undefined) {
      if (onPath.has(n.id)) break;
      onPath.add(n.id);
    }
    for (const r of roots) onPath.add(r.id);
    const ul = el('ul', { cls: 'tree tree-root', attrs: { 'aria-label': 'Stage 1 search tree' } });
    for (const r of roots) ul.appendChild(treeNode(r, children, star, onPath));
    treeBody.appendChild(ul);
  }

  async function loadTree() {
    const query = view.treeQuery;
    if (!query || view.treeFor === query) return;
    view.treeFor = query;
    clear(treeBody);
    treeBody.appendChild(el('p', { cls: 'muted', text: 'Searching Stage 1\u2019s tree…' }));
    try {
      const data = await fetchJSON('/v1/stage1/tree?format=json&query=' + encodeURIComponent(query));
      if (view.treeFor !== query) return;
      renderTree(isObj(data) ? data : {});
    } catch (err) {
      if (view.treeFor !== query) return;
      view.treeFor = null;
      clear(treeBody);
      treeBody.appendChild(
        el('p', { cls: 'status-error', text: 'The tree: ' + (err && err.message ? err.message : 'failed') })
      );
    }
  }

  // ---------------------------------------------------------------- confidence, pushed down

  function renderConfidence(result) {
    if (!confidenceEl) return;
    clear(confidenceEl);
    const c = result && isObj(result.confidence) ? result.confidence : null;
    if (!c || c.low !== true) {
      confidenceEl.hidden = true;
      return;
    }
    const code = isText(c.code) ? c.code : '';
    let reason = isText(c.reason) ? c.reason : 'no item matches the query well';
    const marked = code && (reason.startsWith(code) || reason.startsWith('[' + code + ']'));
    confidenceEl.appendChild(el('strong', { cls: 'confidence-title', text: 'Low confidence: ' }));
    if (code && !marked) confidenceEl.appendChild(el('code', { cls: 'confidence-code', text: code }));
    if (code && !marked) reason = ': ' + reason;
    confidenceEl.appendChild(el('span', { cls: 'confidence-reason', text: reason }));
    confidenceEl.hidden = false;
  }

  function rankText(value) {
    const n = num(value);
    return n === null ? null : '#' + n;
  }

  function renderPushedDown(result) {
    if (!pushed) return;
    clear(pushedList);
    const list = result && Array.isArray(result.pushed_down) ? result.pushed_down.filter(isObj) : null;
    const negated = view.clauses.some((c) => c.negated === true);
    if (list === null || (list.length === 0 && !negated)) {
      pushed.hidden = true;
      return;
    }
    pushedCount.textContent = String(list.length);
    pushedHint.textContent = list.length
      ? 'items the negated clause moved out of the top k: were they the right ones?'
      : '';
    pushedNone.hidden = list.length > 0;
    for (const item of list) {
      const id = item.id === undefined || item.id === null ? '' : String(item.id);
      const li = el('li', { cls: 'pushed-item', attrs: { 'data-id': id } });
      const was = rankText(item.was);
      const now = rankText(item.now);
      const move = el('span', { cls: 'pushed-move' }, [
        el('span', { cls: 'pushed-was', text: 'was ' + (was || '?') }),
        ' → ',
        el('span', { cls: 'pushed-now', text: now ? 'now ' + now : 'now beyond the candidate pool' }),
      ]);
      const head = el('div', { cls: 'pushed-head' }, [move]);
      if (id) head.appendChild(el('code', { cls: 'hit-id', text: id }));
      li.appendChild(head);
      li.appendChild(el('p', { cls: 'caption', text: isText(item.caption) ? item.caption : '(no caption)' }));
      const evidence = asArray(item.evidence).filter(isText);
      if (evidence.length > 0) {
        const ul = el('ul', { cls: 'evidence', attrs: { 'aria-label': 'Evidence' } });
        for (const e of evidence) ul.appendChild(el('li', { text: e }));
        li.appendChild(el('div', { cls: 'evidence-wrap' }, [el('span', { cls: 'pred-label', text: 'evidence' }), ul]));
      }
      pushedList.appendChild(li);
    }
    pushed.hidden = false;
  }

  // ---------------------------------------------------------------- score bars

  /** The common scale of the shown bars: [lo, hi] over every hit's running total (0 included). */
  function barScale(hits) {
    let lo = 0;
    let hi = 0;
    for (const hit of hits) {
      let x = 0;
      for (const p of scoreParts(hit)) {
        x += p.amount;
        lo = Math.min(lo, x);
        hi = Math.max(hi, x);
      }
    }
    if (hi - lo <= 0) hi = lo + 1;
    return { lo: lo, hi: hi };
  }

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  }

  /**
   * A waterfall of the score parts on the shown hits' common scale: each part from the running
   * total to the next; a part that adds is filled in its stage's colour, one that takes away is
   * hatched (over what it took away). The line at the end is the score.
   */
  function scoreBar(parts, scale) {
    const line = partsLine(parts);
    const at = (v) => ((v - scale.lo) / (scale.hi - scale.lo)) * BAR_WIDTH;
    const bar = svg('svg', {
      class: 'score-bar',
      width: BAR_WIDTH + 2,
      height: BAR_HEIGHT,
      viewBox: '-1 0 ' + (BAR_WIDTH + 2) + ' ' + BAR_HEIGHT,
      role: 'img',
      'aria-label': 'score parts: ' + line,
    });
    const title = svg('title');
    title.textContent = line;
    bar.appendChild(title);
    bar.appendChild(svg('rect', { class: 'bar-track', x: 0, y: 1, width: BAR_WIDTH, height: BAR_HEIGHT - 2 }));
    let x = 0;
    for (const p of parts) {
      const next = x + p.amount;
      const left = at(Math.min(x, next));
      const width = Math.max(Math.abs(at(next) - at(x)), 0.75);
      const stage = PART_LABELS[p.stage] ? p.stage : 'other';
      const takes = p.amount < 0;
      bar.appendChild(
        svg('rect', {
          class: 'bar-part part-' + stage + (takes ? ' part-minus' : ' part-plus'),
          x: left.toFixed(2),
          y: 1,
          width: width.toFixed(2),
          height: BAR_HEIGHT - 2,
          'data-stage': p.stage,
          'data-amount': p.amount,
        })
      );
      x = next;
    }
    if (scale.lo < 0) {
      const zero = at(0).toFixed(2);
      bar.appendChild(svg('line', { class: 'bar-zero', x1: zero, x2: zero, y1: 0, y2: BAR_HEIGHT }));
    }
    const end = at(x).toFixed(2);
    bar.appendChild(svg('line', { class: 'bar-end', x1: end, x2: end, y1: 0, y2: BAR_HEIGHT }));
    return bar;
  }

  // ---------------------------------------------------------------- hits

  function predicateGroup(kind, label, items) {
    const list = asArray(items).filter(isText);
    if (list.length === 0) return null;
    const ul = el('ul', { cls: kind, attrs: { 'aria-label': label } });
    for (const p of list) {
      const li = el('li', { cls: 'pred' });
      if (kind === 'violated') li.appendChild(el('span', { cls: 'x-mark', text: '✗ ', attrs: { 'aria-hidden': 'true' } }));
      li.appendChild(el('span', { cls: 'pred-text', text: p }));
      ul.appendChild(li);
    }
    return el('div', { cls: 'pred-group pred-group-' + kind }, [
      el('span', { cls: 'pred-label', text: label, attrs: { 'aria-hidden': 'true' } }),
      ul,
    ]);
  }

  /** "a dog barking 0.664 · not a siren 0.364": each clause similarity with its clause. */
  function clauseSims(sims) {
    const p = el('p', { cls: 'sims' }, [el('span', { cls: 'sims-label', text: 'clause similarity: ' })]);
    sims.forEach((v, i) => {
      const clause = isObj(view.clauses[i]) ? view.clauses[i] : null;
      const negated = clause && clause.negated === true;
      const text = clause && isText(clause.text) ? clause.text : 'clause ' + (i + 1);
      if (i > 0) p.appendChild(document.createTextNode(' · '));
      p.appendChild(
        el('span', { cls: negated ? 'sim negated' : 'sim' }, [
          negated ? el('span', { cls: 'sim-not', text: 'not ' }) : null,
          el('span', { cls: 'sim-clause', text: text }),
          ' ',
          el('span', { cls: 'sim-value', text: v.toFixed(3) }),
        ])
      );
    });
    return p;
  }

  function renderHit(hit, position) {
    const id = hit.id === undefined || hit.id === null ? '' : String(hit.id);
    const violated = asArray(hit.violated).filter(isText);
    const rank = num(hit.rank) !== null ? num(hit.rank) : position + 1;
    const li = el('li', {
      cls: violated.length > 0 ? 'hit violated' : 'hit',
      attrs: { 'data-id': id, tabindex: '-1' },
    });
    const main = el('div', { cls: 'hit-main' });

    const head = el('div', { cls: 'hit-head' });
    head.appendChild(el('span', { cls: 'rank', text: '#' + rank }));
    const score = num(hit.score);
    const parts = scoreParts(hit);
    if (score !== null) {
      const wrap = el('span', { cls: 'score-wrap' });
      if (parts.length > 0) {
        wrap.title = partsLine(parts) + ' = ' + score.toFixed(3);
        wrap.appendChild(scoreBar(parts, view.scale));
      }
      wrap.appendChild(el('span', { cls: 'score-label', text: 'score ' }));
      wrap.appendChild(el('span', { cls: 'score', text: score.toFixed(4) }));
      head.appendChild(wrap);
    }
    if (id) head.appendChild(el('code', { cls: 'hit-id', text: id }));
    if (violated.length > 0) {
      head.appendChild(el('span', { cls: 'violates-badge', text: '✗ violates' }));
    }
    const detailsId = 'details-' + position;
    if (id) {
      const toggle = el('button', {
        cls: 'details-toggle link-button',
        text: 'Details',
        attrs: { type: 'button', 'aria-expanded': 'false', 'aria-controls': detailsId, 'aria-label': 'Details for ' + id },
      });
      toggle.addEventListener('click', () => toggleDetails(li, hit, toggle));
      head.appendChild(toggle);
    }
    main.appendChild(head);

    if (isText(hit.caption)) main.appendChild(el('p', { cls: 'caption', text: hit.caption }));

    const groups = [
      predicateGroup('matched', 'matched', hit.matched),
      predicateGroup('missed', 'missed', hit.missed),
      predicateGroup('violated', 'violates', violated),
    ].filter(Boolean);
    if (groups.length > 0) main.appendChild(el('div', { cls: 'predicates' }, groups));

    const sims = asArray(hit.clause_similarities).map(num).filter((v) => v !== null);
    if (sims.length > 0) main.appendChild(clauseSims(sims));
    li.appendChild(main);

    if (id && hit.path !== null && hit.path !== undefined) {
      const audio = el('audio', {
        attrs: {
          controls: true,
          preload: 'none',
          src: '/v1/items/' + encodeURIComponent(id) + '/audio',
          'aria-label': 'Play ' + id,
        },
      });
      li.appendChild(audio);
    }
    li.appendChild(el('div', { cls: 'hit-details', attrs: { id: detailsId, hidden: true } }));
    return li;
  }

  // ---------------------------------------------------------------- details inline

  function detailRow(dl, label, node) {
    dl.appendChild(el('dt', { text: label }));
    const dd = el('dd');
    dd.appendChild(node);
    dl.appendChild(dd);
  }

  function scoreTable(hit) {
    const parts = scoreParts(hit);
    const table = el('table', { cls: 'parts-table' });
    table.appendChild(el('caption', { cls: 'visually-hidden', text: 'How the score was made' }));
    const body = el('tbody');
    parts.forEach((p, i) => {
      body.appendChild(
        el('tr', { cls: 'part-row', attrs: { 'data-stage': p.stage } }, [
          el('th', { attrs: { scope: 'row' } }, [
            el('span', { cls: 'swatch swatch-' + (PART_LABELS[p.stage] ? p.stage : 'other') + (p.amount < 0 ? ' swatch-minus' : '') }),
            PART_LABELS[p.stage] || p.stage,
          ]),
          el('td', { cls: 'num', text: signed(p.amount, i === 0) }),
          el('td', { cls: 'part-what muted', text: PART_TITLES[p.stage] || '' }),
        ])
      );
    });
    const score = num(hit.score);
    if (score !== null) {
      body.appendChild(
        el('tr', { cls: 'part-total' }, [
          el('th', { text: 'score', attrs: { scope: 'row' } }),
          el('td', { cls: 'num', text: score.toFixed(3) }),
          el('td', { cls: 'part-what muted', text: 'the sum: what the hits are ranked by' }),
        ])
      );
    }
    table.appendChild(body);
    return table;
  }

  function renderDetails(box, hit, item) {
    clear(box);
    const dl = el('dl', { cls: 'details-list' });
    const parts = scoreParts(hit);
    if (parts.length > 0) detailRow(dl, 'Score', scoreTable(hit));
    if (isObj(item)) {
      if (num(item.row) !== null) detailRow(dl, 'Row', el('span', { text: String(item.row) }));
      if (isText(item.caption)) detailRow(dl, 'Caption', el('span', { cls: 'detail-caption', text: item.caption }));
      detailRow(
        dl,
        'Π(caption)',
        isText(item.formula)
          ? el('code', { cls: 'detail-formula', text: item.formula })
          : el('span', { cls: 'muted', text: 'the parser read no formula' })
      );
      const preds = asArray(item.predicates).filter(isText);
      if (preds.length > 0) {
        const ul = el('ul', { cls: 'missed stored-preds' });
        for (const p of preds) ul.appendChild(el('li', { cls: 'pred', text: p }));
        detailRow(dl, 'Predicates', ul);
      }
      if (isText(item.audio)) {
        detailRow(dl, 'Audio', el('a', { text: item.audio, attrs: { href: item.audio, download: '' } }));
      }
    }
    box.appendChild(dl);
  }

  async function toggleDetails(li, hit, toggle) {
    const box = li.querySelector('.hit-details');
    if (!box) return;
    const open = toggle.getAttribute('aria-expanded') !== 'true';
    toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
    toggle.textContent = open ? 'Hide details' : 'Details';
    box.hidden = !open;
    if (!open || box.dataset.loaded === 'true') return;
    renderDetails(box, hit, null);
    box.appendChild(el('p', { cls: 'muted small', text: 'Loading the item…' }));
    try {
      const item = await fetchJSON('/v1/items/' + encodeURIComponent(String(hit.id)));
      renderDetails(box, hit, item);
      box.dataset.loaded = 'true';
    } catch (err) {
      renderDetails(box, hit, null);
      box.appendChild(el('p', { cls: 'status-error', text: err && err.message ? err.message : 'Could not load the item.' }));
    }
  }

  // ---------------------------------------------------------------- paging

  function renderHits(hits, req, keep) {
    clear(hitsList);
    view.hits = hits;
    view.req = req;
    view.shown = 0;
    view.scale = barScale(hits);
    if (legend) {
      const stages = new Set();
      for (const h of hits) for (const p of scoreParts(h)) stages.add(p.amount < 0 ? 'minus' : '').add(p.stage);
      legend.hidden = !hits.some((h) => scoreParts(h).length > 0);
      for (const item of legend.querySelectorAll('.legend-item[data-stage]')) {
        item.hidden = !stages.has(item.dataset.stage);
      }
    }
    showMore(keep > 0 ? keep + PAGE : PAGE);
    if (keep > 0 && keep < hitsList.children.length) hitsList.children[keep].focus();
    if (noHits) noHits.hidden = hits.length > 0;
  }

  /** Whether the server may rank more than it was asked for (k used up, below max_k and the index's size). */
  function canAskMore() {
    if (view.req === null || view.hits.length < view.req.k || view.req.k >= maxK) return false;
    return indexItems === null || view.req.k < indexItems;
  }

  function showMore(count) {
    const until = Math.min(view.hits.length, view.shown + count);
    for (let i = view.shown; i < until; i++) hitsList.appendChild(renderHit(view.hits[i], i));
    view.shown = until;
    const left = view.hits.length - view.shown;
    if (more) more.hidden = !(left > 0 || canAskMore());
    if (shownCount) {
      shownCount.textContent = view.hits.length
        ? 'Showing ' + view.shown + ' of ' + view.hits.length + (canAskMore() && left === 0 ? ' (k = ' + view.req.k + ')' : '')
        : '';
    }
  }

  function onMore() {
    if (view.shown < view.hits.length) {
      const before = view.shown;
      showMore(PAGE);
      const first = hitsList.children[before];
      if (first) first.focus();
    } else if (canAskMore()) {
      runSearch({ k: Math.min(maxK, view.req.k + PAGE), keep: view.shown });
    }
  }

  // ---------------------------------------------------------------- wiring

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    runSearch();
  });

  for (const name of SWITCHES) {
    const select = byId(name);
    if (!select) continue;
    select.addEventListener('change', () => {
      if (queryInput.value.trim()) runSearch();
    });
  }

  if (moreButton) moreButton.addEventListener('click', onMore);
  if (treeDetails) {
    treeDetails.addEventListener('toggle', () => {
      if (treeDetails.open) loadTree();
    });
  }

  async function init() {
    try {
      const info = await fetchJSON('/v1/info');
      renderInfo(info);
    } catch (err) {
      setStatus('Could not load server info: ' + (err && err.message ? err.message : 'unknown error'), 'error');
    }
    const q = readURL();
    if (q !== null && q.trim() && hasIndex) runSearch();
  }

  init();
})();
