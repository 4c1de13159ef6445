/* fortekit evaluation page.
 *
 * Plain ES2020, no framework, no build step.  Every element holding data is
 * built with document.createElement + textContent (never an HTML string), and
 * every id that goes into a URL path is passed through encodeURIComponent.
 */
'use strict';

(() => {
  const DEFAULT_MEASURES = ['nDCG@10', 'AP', 'P@10', 'R@1', 'R@5', 'R@10', 'violation@10', 'violated@10'];
  const TOP_N = 10;
  const DASH = '—';

  // ---------------------------------------------------------------- helpers

  const { byId, el, clear, isObj, asArray, isText, num, formatInt, fetchJSON } = window.fortekit;

  function fmt3(v) {
    const n = num(v);
    return n === null ? DASH : n.toFixed(3);
  }

  function fmtGain(v) {
    const n = num(v);
    if (n === null) return DASH;
    const s = n.toFixed(3);
    return n > 0 && s !== '0.000' ? '+' + s : s;
  }

  function gainClass(v) {
    const n = num(v);
    if (n === null || Math.abs(n) < 5e-4) return 'gain-zero';
    return n > 0 ? 'gain-pos' : 'gain-neg';
  }

  const lowerIsBetter = (measure) => /^violat/i.test(measure);

  // ---------------------------------------------------------------- elements

  const statusEl = byId('status');
  const runSummary = byId('run-summary');
  const searchLink = byId('search-link');
  const metricsTable = byId('metrics');
  const metricsHead = byId('metrics-head');
  const systemSelect = byId('system');
  const baselineSelect = byId('baseline');
  const queriesTable = byId('queries');
  const queriesBody = queriesTable.querySelector('tbody');
  const queriesCaption = byId('queries-caption');
  const queriesEmpty = byId('queries-empty');
  const detail = byId('detail');
  const sortButtons = Array.from(queriesTable.querySelectorAll('thead th[data-key] button.sort'));

  let summary = null;
  let queries = [];
  let sortKey = 'gain';
  let sortDir = 'desc';
  let selectedQuery = null;
  let queriesSeq = 0;
  let detailSeq = 0;

  function setStatus(text, kind) {
    statusEl.textContent = text || '';
    statusEl.classList.toggle('status-error', kind === 'error');
    statusEl.classList.toggle('status-busy', kind === 'busy');
  }

  // ---------------------------------------------------------------- URL state

  function readURL() {
    try {
      const p = new URLSearchParams(window.location.search);
      return { system: p.get('system'), baseline: p.get('baseline'), query: p.get('query') };
    } catch (e) {
      return { system: null, baseline: null, query: null };
    }
  }

  function writeURL() {
    if (!window.history || typeof window.history.replaceState !== 'function') return;
    const p = new URLSearchParams();
    if (systemSelect.value) p.set('system', systemSelect.value);
    if (baselineSelect.value && (!summary || baselineSelect.value !== summary.baseline)) {
      p.set('baseline', baselineSelect.value);
    }
    if (selectedQuery !== null) p.set('query', selectedQuery);
    const qs = p.toString();
    try {
      window.history.replaceState(null, '', window.location.pathname + (qs ? '?' + qs : ''));
    } catch (e) {
      /* ignore */
    }
  }

  // ---------------------------------------------------------------- summary

  function systemsOf(s) {
    return asArray(s && s.systems).filter((x) => isObj(x) && isText(x.name));
  }

  function measuresOf(s) {
    const m = asArray(s && s.measures).filter(isText);
    return m.length > 0 ? m : DEFAULT_MEASURES;
  }

  function renderSummary(s) {
    const parts = [];
    if (isText(s.run)) parts.push('run ' + s.run);
    if (isText(s.collection)) parts.push(s.collection);
    const nq = num(s.queries);
    if (nq !== null) parts.push(formatInt(nq) + (nq === 1 ? ' query' : ' queries'));
    const ni = num(s.items);
    if (ni !== null) parts.push(formatInt(ni) + (ni === 1 ? ' item' : ' items'));
    runSummary.textContent = parts.join(' · ');
  }

  function renderMetrics(s) {
    const measures = measuresOf(s);
    const systems = systemsOf(s);

    clear(metricsHead);
    metricsHead.appendChild(el('th', { text: 'System', attrs: { scope: 'col' } }));
    for (const m of measures) {
      const th = el('th', { cls: 'num', text: m, attrs: { scope: 'col' } });
      if (lowerIsBetter(m)) th.title = 'lower is better';
      metricsHead.appendChild(th);
    }

    // best value per column
    const best = {};
    for (const m of measures) {
      const values = systems.map((sys) => num(sys[m])).filter((v) => v !== null);
      if (values.length === 0) continue;
      best[m] = lowerIsBetter(m) ? Math.min(...values) : Math.max(...values);
    }

    const tbody = metricsTable.querySelector('tbody');
    clear(tbody);
    for (const sys of systems) {
      const tr = el('tr', { attrs: { 'data-system': sys.name } });
      const th = el('th', { attrs: { scope: 'row' } }, [el('span', { cls: 'system-name', text: sys.name })]);
      if (sys.name === s.baseline) th.appendChild(el('span', { cls: 'tag', text: 'baseline' }));
      if (isText(sys.description)) th.appendChild(el('span', { cls: 'system-desc', text: sys.description }));
      tr.appendChild(th);
      for (const m of measures) {
        const v = num(sys[m]);
        const isBest = v !== null && best[m] !== undefined && Math.abs(v - best[m]) < 1e-12;
        tr.appendChild(el('td', { cls: isBest ? 'num best' : 'num', text: fmt3(v) }));
      }
      tbody.appendChild(tr);
    }
    markSelectedRows();
  }

  function markSelectedRows() {
    const rows = metricsTable.querySelectorAll('tbody tr');
    for (const tr of rows) {
      const name = tr.getAttribute('data-system');
      tr.classList.toggle('is-system', name === systemSelect.value);
      tr.classList.toggle('is-baseline', name === baselineSelect.value);
    }
  }

  function fillSelects(s, wanted) {
    const names = systemsOf(s).map((x) => x.name);
    for (const select of [systemSelect, baselineSelect]) {
      clear(select);
      for (const name of names) {
        const opt = el('option', { text: name });
        opt.value = name;
        select.appendChild(opt);
      }
    }
    const baseline =
      wanted.baseline && names.includes(wanted.baseline)
        ? wanted.baseline
        : names.includes(s.baseline)
        ? s.baseline
        : names[0];
    // the page opens on the server's choice (`default`, what `fortekit search` runs, when the run has it)
    const opening = [s.system, 'default'].find((n) => isText(n) && n !== baseline && names.includes(n));
    const system =
      wanted.system && names.includes(wanted.system)
        ? wanted.system
        : opening ||
          names.find((n) => n !== baseline && n !== s.baseline) ||
          names.find((n) => n !== baseline) ||
          names[0];
    if (baseline !== undefined) baselineSelect.value = baseline;
    if (system !== undefined) systemSelect.value = system;
  }

  // ---------------------------------------------------------------- per-query table

  function sortValue(q, key) {
    switch (key) {
      case 'query':
        return isText(q.query) ? q.query.toLowerCase() : null;
      case 'kind':
        return isText(q.kind) ? q.kind.toLowerCase() : null;
      case 'excluded':
        return isText(q.excluded) ? q.excluded.toLowerCase() : null;
      case 'baseline':
        return isObj(q.baseline) ? num(q.baseline['nDCG@10']) : null;
      case 'system':
        return isObj(q.system) ? num(q.system['nDCG@10']) : null;
      case 'gain':
        return num(q.gain);
      default:
        return null;
    }
  }

  function sortedQueries() {
    const dir = sortDir === 'asc' ? 1 : -1;
    return queries
      .map((q, i) => ({ q, i }))
      .sort((a, b) => {
        const va = sortValue(a.q, sortKey);
        const vb = sortValue(b.q, sortKey);
        if (va === null && vb === null) return a.i - b.i;
        if (va === null) return 1; // missing values always last
        if (vb === null) return -1;
        let c;
        if (typeof va === 'number' && typeof vb === 'number') c = va - vb;
        else c = String(va).localeCompare(String(vb));
        return c !== 0 ? c * dir : a.i - b.i;
      })
      .map((x) => x.q);
  }

  function updateSortHeaders() {
    for (const btn of sortButtons) {
      const th = btn.closest('th');
      if (!th) continue;
      if (th.getAttribute('data-key') === sortKey) {
        th.setAttribute('aria-sort', sortDir === 'asc' ? 'ascending' : 'descending');
      } else {
        th.removeAttribute('aria-sort');
      }
    }
  }

  function renderQueries() {
    clear(queriesBody);
    updateSortHeaders();
    const list = sortedQueries();
    for (const q of list) {
      const id = q.query_id === undefined || q.query_id === null ? '' : String(q.query_id);
      const tr = el('tr', { attrs: { 'data-query-id': id } });
      if (id && id === selectedQuery) tr.classList.add('selected');

      const btn = el('button', {
        cls: 'query-button link-button',
        text: isText(q.query) ? q.query : id,
        attrs: { type: 'button', 'data-query-id': id },
      });
      if (id && id === selectedQuery) btn.setAttribute('aria-current', 'true');
      btn.addEventListener('click', () => selectQuery(id, true));
      tr.appendChild(el('td', { cls: 'query-cell' }, [btn]));
      tr.appendChild(el('td', { cls: 'kind', text: isText(q.kind) ? q.kind : DASH }));
      tr.appendChild(el('td', { cls: 'excluded', text: isText(q.excluded) ? q.excluded : DASH }));
      tr.appendChild(el('td', { cls: 'num', text: fmt3(isObj(q.baseline) ? q.baseline['nDCG@10'] : null) }));
      tr.appendChild(el('td', { cls: 'num', text: fmt3(isObj(q.system) ? q.system['nDCG@10'] : null) }));
      tr.appendChild(el('td', { cls: 'num gain ' + gainClass(q.gain), text: fmtGain(q.gain) }));
      queriesBody.appendChild(tr);
    }
    queriesEmpty.hidden = list.length > 0;
  }

  async function loadQueries() {
    const mine = ++queriesSeq;
    const system = systemSelect.value;
    const baseline = baselineSelect.value;
    queriesCaption.textContent = 'Per-query nDCG@10: ' + system + ' against ' + baseline;
    const p = new URLSearchParams({ system: system, baseline: baseline });
    queriesTable.setAttribute('aria-busy', 'true');
    setStatus('Loading queries…', 'busy');
    try {
      const data = await fetchJSON('/v1/eval/queries?' + p.toString());
      if (mine !== queriesSeq) return;
      queries = asArray(data).filter(isObj);
      renderQueries();
      setStatus(queries.length + (queries.length === 1 ? ' query' : ' queries') + ': ' + system + ' against ' + baseline);
    } catch (err) {
      if (mine !== queriesSeq) return;
      queries = [];
      renderQueries();
      setStatus(err && err.message ? err.message : 'Could not load queries.', 'error');
    } finally {
      if (mine === queriesSeq) queriesTable.removeAttribute('aria-busy');
    }
  }

  // ---------------------------------------------------------------- detail

  function markSelectedQuery() {
    for (const tr of queriesBody.querySelectorAll('tr')) {
      const on = selectedQuery !== null && tr.getAttribute('data-query-id') === selectedQuery;
      tr.classList.toggle('selected', on);
      const btn = tr.querySelector('button.query-button');
      if (btn) {
        if (on) btn.setAttribute('aria-current', 'true');
        else btn.removeAttribute('aria-current');
      }
    }
  }

  function selectQuery(id, focus) {
    selectedQuery = id || null;
    markSelectedQuery();
    writeURL();
    if (selectedQuery !== null) loadDetail(focus);
  }

  async function loadDetail(focus) {
    const id = selectedQuery;
    if (id === null) return;
    const mine = ++detailSeq;
    const p = new URLSearchParams({ system: systemSelect.value, baseline: baselineSelect.value });
    detail.setAttribute('aria-busy', 'true');
    try {
      const data = await fetchJSON('/v1/eval/queries/' + encodeURIComponent(id) + '?' + p.toString());
      if (mine !== detailSeq) return;
      renderDetail(isObj(data) ? data : {});
      if (focus) {
        const h = byId('detail-heading');
        if (h) h.focus();
      }
    } catch (err) {
      if (mine !== detailSeq) return;
      clear(detail);
      detail.hidden = true;
      setStatus(err && err.message ? err.message : 'Could not load the query.', 'error');
    } finally {
      if (mine === detailSeq) detail.removeAttribute('aria-busy');
    }
  }

  // The grounded check (the one behind violated@10) names the excluded sounds the item's captions
  // hold; an item with no caption to judge falls back to the concept annotation (item_concepts.jsonl).
  function violatesBadge(item, excluded) {
    const sounds = asArray(item.violated).filter(isText);
    if (item.judged_by === 'captions' || sounds.length > 0) {
      return el('span', {
        cls: 'badge badge-violates',
        text: sounds.length > 0 ? '✗ violates ' + sounds.join('; ') : '✗ violates',
        attrs: { title: 'its captions hold a sound the query excludes (the grounded check of violated@10)' },
      });
    }
    return el('span', {
      cls: 'badge badge-violates',
      text: isText(excluded) ? '✗ mentions ' + excluded : '✗ violates',
      attrs: { title: 'no caption to judge: the concept annotation (item_concepts.jsonl) of violation@10' },
    });
  }

  function renderColumn(side, label, data, excluded) {
    const d = isObj(data) ? data : {};
    const name = isText(d.name) ? d.name : '';
    const section = el('section', {
      cls: 'detail-col detail-' + side,
      attrs: { 'aria-label': label + (name ? ': ' + name : '') },
    });
    section.appendChild(
      el('h3', null, [label + ': ', el('span', { cls: 'system-name', text: name || DASH })])
    );
    const metrics = ['nDCG@10 ' + fmt3(d['nDCG@10'])];
    if (num(d['violation@10']) !== null) metrics.push('violation@10 ' + fmt3(d['violation@10']));
    if (num(d['violated@10']) !== null) metrics.push('violated@10 ' + fmt3(d['violated@10']));
    section.appendChild(el('p', { cls: 'col-metrics', text: metrics.join(' · ') }));

    const top = asArray(d.top).filter(isObj).slice(0, TOP_N);
    if (top.length === 0) {
      section.appendChild(el('p', { cls: 'empty', text: 'No results' }));
      return section;
    }
    const ol = el('ol', { cls: 'top' });
    top.forEach((item, i) => {
      const id = item.id === undefined || item.id === null ? '' : String(item.id);
      const relevance = num(item.relevance);
      const relevant = relevance !== null && relevance > 0;
      const violates = item.violates === true;
      const classes = ['top-item'];
      if (relevant) classes.push('relevant');
      if (violates) classes.push('violates');
      const rank = num(item.rank) !== null ? Math.floor(num(item.rank)) : i + 1;
      const li = el('li', { cls: classes.join(' '), attrs: { value: rank, 'data-id': id } });

      li.appendChild(el('p', { cls: 'caption', text: isText(item.caption) ? item.caption : id }));
      const meta = el('div', { cls: 'item-meta' });
      if (id) meta.appendChild(el('code', { cls: 'item-id', text: id }));
      if (relevant) {
        meta.appendChild(
          el('span', { cls: 'badge badge-relevant', text: relevance > 1 ? 'relevant (' + relevance + ')' : 'relevant' })
        );
      }
      if (violates) meta.appendChild(violatesBadge(item, excluded));
      li.appendChild(meta);
      ol.appendChild(li);
    });
    section.appendChild(ol);
    return section;
  }

  function renderDetail(d) {
    clear(detail);
    const excluded = isText(d.excluded) ? d.excluded : null;
    const heading = el('h2', {
      text: isText(d.query) ? d.query : String(d.query_id || selectedQuery || ''),
      attrs: { id: 'detail-heading', tabindex: '-1' },
    });
    detail.appendChild(heading);

    const meta = [];
    if (d.query_id !== undefined && d.query_id !== null) meta.push('query ' + d.query_id);
    if (isText(d.kind)) meta.push(d.kind);
    const relevant = num(d.relevant);
    if (relevant !== null) meta.push(formatInt(relevant) + ' relevant');
    detail.appendChild(el('p', { cls: 'detail-meta', text: meta.join(' · ') }));

    if (excluded) {
      detail.appendChild(
        el('p', { cls: 'detail-excluded' }, ['Excluded: ', el('strong', { cls: 'excluded', text: excluded })])
      );
    }
    if (num(d.gain) !== null) {
      detail.appendChild(
        el('p', { cls: 'detail-gain' }, [
          'Gain in nDCG@10: ',
          el('span', { cls: 'gain ' + gainClass(d.gain), text: fmtGain(d.gain) }),
        ])
      );
    }

    detail.appendChild(
      el('div', { cls: 'detail-columns' }, [
        renderColumn('baseline', 'Baseline', d.baseline, excluded),
        renderColumn('system', 'System', d.system, excluded),
      ])
    );
    detail.hidden = false;
  }

  // ---------------------------------------------------------------- wiring

  for (const btn of sortButtons) {
    btn.addEventListener('click', () => {
      const th = btn.closest('th');
      const key = th ? th.getAttribute('data-key') : null;
      if (!key) return;
      if (key === sortKey) sortDir = sortDir === 'asc' ? 'desc' : 'asc';
      else {
        sortKey = key;
        sortDir = 'asc';
      }
      renderQueries();
    });
  }

  function onSelectionChange() {
    markSelectedRows();
    writeURL();
    loadQueries();
    if (selectedQuery !== null) loadDetail(false);
  }
  systemSelect.addEventListener('change', onSelectionChange);
  baselineSelect.addEventListener('change', onSelectionChange);
  byId('compare-form').addEventListener('submit', (event) => event.preventDefault());

  async function loadInfo() {
    try {
      const info = await fetchJSON('/v1/info');
      if (isObj(info) && isObj(info.index)) searchLink.hidden = false;
    } catch (e) {
      /* the search link simply stays hidden */
    }
  }

  async function init() {
    loadInfo();
    const wanted = readURL();
    setStatus('Loading evaluation…', 'busy');
    try {
      const s = await fetchJSON('/v1/eval');
      summary = isObj(s) ? s : {};
    } catch (err) {
      setStatus(err && err.message ? err.message : 'Could not load the evaluation.', 'error');
      return;
    }
    renderSummary(summary);
    fillSelects(summary, wanted);
    renderMetrics(summary);
    if (isText(wanted.query)) selectedQuery = wanted.query;
    writeURL();
    await loadQueries();
    if (selectedQuery !== null) {
      markSelectedQuery();
      loadDetail(false);
    }
  }

  init();
})();
