/* Start ReDoc on this server's /openapi.json (no inline script: the page's policy forbids one). */
'use strict';

window.Redoc.init('/openapi.json', { disableSearch: false, hideDownloadButton: false }, document.getElementById('redoc'));
