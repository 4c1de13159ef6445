/* fortekit pages: the helpers both pages share (window.fortekit), loaded before each page's script.
 *
 * Plain ES2020, no framework, no build step.  Every element holding data is
 * built with document.createElement + textContent (never an HTML string).
 */
'use strict';

(() => {
  const byId = (id) => document.getElementById(id);

  /** Create an element; opts: {cls, text, attrs}; children: nodes/strings. */
  function el(tag, opts, children) {
    const node = document.createElement(tag);
    const o = opts || {};
    if (o.cls) node.className = o.cls;
    if (o.text !== undefined && o.text !== null) node.textContent = String(o.text);
    if (o.attrs) {
      for (const [name, value] of Object.entries(o.attrs)) {
        if (value === undefined || value === null || value === false) continue;
        node.setAttribute(name, value === true ? '' : String(value));
      }
    }
    if (children) {
      for (const child of children) {
        if (child === undefined || child === null || child === false) continue;
        node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
      }
    }
    return node;
  }

  function clear(node) {
    while (node && node.firstChild) node.removeChild(node.firstChild);
  }

  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  const asArray = (v) => (Array.isArray(v) ? v : []);
  const isText = (v) => typeof v === 'string' && v.length > 0;

  function num(v) {
    if (v === null || v === undefined || v === '') return null;
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }

  function formatInt(n) {
    try {
      return n.toLocaleString('en-US');
    } catch (e) {
      return String(n);
    }
  }

  /** fetch + JSON, turning the server's error envelope into an Error. */
  async function fetchJSON(url, init) {
    const opts = Object.assign({}, init || {});
    opts.headers = Object.assign({ Accept: 'application/json' }, opts.headers || {});
    let resp;
    try {
      resp = await fetch(url, opts);
    } catch (err) {
      throw new Error('Could not reach the server' + (err && err.message ? ': ' + err.message : '.'));
    }
    let body = null;
    let raw = '';
    try {
      raw = await resp.text();
    } catch (e) {
      raw = '';
    }
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch (e) {
        body = null;
      }
    }
    if (!resp.ok) {
      const envelope = isObj(body) && isObj(body.error) ? body.error : null;
      let message = envelope && isText(envelope.message) ? envelope.message : '';
      if (!message && isObj(body) && isText(body.detail)) message = body.detail;
      if (!message) message = ('HTTP ' + resp.status + ' ' + (resp.statusText || '')).trim();
      const err = new Error(message);
      err.status = resp.status;
      err.code = envelope ? envelope.code : undefined;
      throw err;
    }
    if (body === null) throw new Error('The server sent a response that is not JSON.');
    return body;
  }

  window.fortekit = Object.freeze({ byId, el, clear, isObj, asArray, isText, num, formatInt, fetchJSON });
})();
