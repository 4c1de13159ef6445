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

  function formatMs(ms) {
    if (ms < 10) return ms.toFixed(1);
    return String(Math.round(ms));
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
  const pipelineKind = byId('pipeline-kind');
  const treeLink = byId('stage1-tree-link');
  const hitsList = byId('hits');
  const noHits = byId('no-hits');
  const summary = byId('index-summary');
  const evalLink = byId('eval-link');
  const noIndex = byId('no-index');
  const noIndexEvalLink = byId('no-index-eval-link');

  let maxK = num(kInput && kInput.max) || 100;
  let hasIndex = true;
  let requestSeq = 0;

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
    if (pipelineKind) pipelineKind.textContent = '';
    if (panel) panel.hidden = true;
  }

  async function runSearch() {
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
    const req = { query: query, k: readK(), explain: true };
    for (const name of SWITCHES) {
      const select = byId(name);
      req[name] = select ? select.value : 'auto';
    }

    const mine = ++requestSeq;
    button.disabled = true;
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
      renderResponse(isObj(data) ? data : {}, req);
    } catch (err) {
      if (mine !== requestSeq) return;
      clearResults();
      setStatus(err && err.message ? err.message : 'Search failed.', 'error');
    } finally {
      if (mine === requestSeq) {
        button.disabled = false;
        hitsList.removeAttribute('aria-busy');
      }
    }
  }

  function renderResponse(data, req) {
    const results = asArray(data.results);
    const result = isObj(results[0]) ? results[0] : null;
    const hits = result ? asArray(result.hits).filter(isObj) : [];
    const took = num(data.took_ms);
    const tookText = took !== null ? ' in ' + formatMs(took) + ' ms' : '';

    if (hits.length === 0) setStatus('No hits' + tookText);
    else setStatus(hits.length + (hits.length === 1 ? ' hit' : ' hits') + tookText);

    renderFormula(result, isObj(data.pipeline) ? data.pipeline : null, req.query);
    renderHits(hits);
  }

  // ---------------------------------------------------------------- query panel

  function row(dl, label, valueNode, cls) {
    dl.appendChild(el('dt', { text: label, cls: cls ? cls + '-label' : null }));
    const dd = el('dd', { cls: cls || null });
    dd.appendChild(valueNode);
    dl.appendChild(dd);
  }

  function renderFormula(result, pipeline, query) {
    clear(formulaBody);
    const r = result || {};

    const dl = el('dl', { cls: 'formula' });
    const phi0 = isText(r.phi0) ? r.phi0 : null;
    const phiStar = isText(r.phi_star) ? r.phi_star : null;
    if (phi0) row(dl, 'φ₀ (parsed)', el('code', { cls: 'phi0', text: phi0 }), 'formula-phi0');
    if (phiStar && phiStar !== phi0) {
      row(dl, 'φ* (refined)', el('code', { cls: 'phi-star', text: phiStar }), 'formula-phi-star');
    }
    if (isText(r.refined_text)) {
      row(dl, 'Refined text', el('span', { cls: 'refined-text', text: r.refined_text }), 'formula-refined');
    }
    if (isText(r.source)) {
      row(dl, 'Formula from', el('span', { text: SOURCE_LABELS[r.source] || r.source }), 'formula-source');
    }

    const clauses = asArray(r.clauses).filter(isObj);
    if (clauses.length > 0) {
      const ul = el('ul', { cls: 'clauses' });
      for (const c of clauses) {
        const negated = c.negated === true;
        const li = el('li', { cls: negated ? 'clause negated' : 'clause' });
        if (negated) li.appendChild(el('span', { cls: 'not', text: 'not' }));
        li.appendChild(el('span', { cls: 'clause-text', text: isText(c.text) ? c.text : '' }));
        ul.appendChild(li);
      }
      row(dl, 'Clauses', ul, 'formula-clauses');
    }
    if (dl.firstChild) formulaBody.appendChild(dl);

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

    panel.hidden = false;
  }

  function renderPipeline(pipeline) {
    clear(pipelineList);
    pipelineKind.textContent = '';
    if (!pipeline) return;
    if (isText(pipeline.kind)) pipelineKind.textContent = 'Pipeline: ' + pipeline.kind;
    const stages = isObj(pipeline.stages) ? pipeline.stages : {};
    for (const [name, st] of Object.entries(stages)) {
      const stage = isObj(st) ? st : {};
      const on = stage.on === true;
      const li = el('li', { cls: 'stage ' + (on ? 'stage-on' : 'stage-off'), attrs: { 'data-stage': name } });
      const why = isText(stage.why) ? stage.why : '';
      const detail = isText(stage.detail) ? stage.detail : '';
      const tip = [why, detail].filter(Boolean).join(' — ');
      if (tip) li.title = tip;

      const head = el('span', { cls: 'stage-head' }, [
        el('span', { cls: 'stage-name', text: STAGE_LABELS[name] || name }),
        el('span', { cls: 'stage-state', text: on ? 'on' : 'off' }),
      ]);
      if (isText(stage.source) && stage.source !== 'default') {
        head.appendChild(el('span', { cls: 'stage-source', text: stage.source }));
      }
      li.appendChild(head);
      if (why) li.appendChild(el('span', { cls: 'stage-why', text: why }));
      pipelineList.appendChild(li);
    }
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

  function renderHit(hit, position) {
    const id = hit.id === undefined || hit.id === null ? '' : String(hit.id);
    const violated = asArray(hit.violated).filter(isText);
    const rank = num(hit.rank) !== null ? num(hit.rank) : position + 1;
    const li = el('li', {
      cls: violated.length > 0 ? 'hit violated' : 'hit',
      attrs: { 'data-id': id },
    });

    const head = el('div', { cls: 'hit-head' });
    head.appendChild(el('span', { cls: 'rank', text: '#' + rank }));
    const score = num(hit.score);
    if (score !== null) {
      head.appendChild(
        el('span', { cls: 'score-wrap' }, [
          el('span', { cls: 'score-label', text: 'score ' }),
          el('span', { cls: 'score', text: score.toFixed(4) }),
        ])
      );
    }
    if (id) {
      head.appendChild(el('code', { cls: 'hit-id', text: id }));
      head.appendChild(
        el('a', {
          cls: 'item-link',
          text: 'details',
          attrs: {
            href: '/v1/items/' + encodeURIComponent(id),
            target: '_blank',
            rel: 'noopener',
            'aria-label': 'Details for ' + id,
          },
        })
      );
    }
    if (violated.length > 0) {
      head.appendChild(el('span', { cls: 'violates-badge', text: '✗ violates' }));
    }
    li.appendChild(head);

    if (isText(hit.caption)) li.appendChild(el('p', { cls: 'caption', text: hit.caption }));

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

    const groups = [
      predicateGroup('matched', 'matched', hit.matched),
      predicateGroup('missed', 'missed', hit.missed),
      predicateGroup('violated', 'violates', violated),
    ].filter(Boolean);
    if (groups.length > 0) li.appendChild(el('div', { cls: 'predicates' }, groups));

    const sims = asArray(hit.clause_similarities).map(num).filter((v) => v !== null);
    if (sims.length > 0) {
      li.appendChild(
        el('p', { cls: 'sims', text: 'clause similarities: ' + sims.map((v) => v.toFixed(3)).join(', ') })
      );
    }
    return li;
  }

  function renderHits(hits) {
    clear(hitsList);
    hits.forEach((hit, i) => hitsList.appendChild(renderHit(hit, i)));
    if (noHits) noHits.hidden = hits.length > 0;
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
