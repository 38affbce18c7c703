// The admin console's only script: keeps a live list (data-live) current
// by fetching its server-rendered, escaped HTML every few seconds.
"use strict";
(function () {
  var el = document.querySelector("[data-live]");
  if (!el) {
    return;
  }
  var url = el.getAttribute("data-live");
  var last = null; // the last HTML fetched, as the server sent it
  var busy = false;
  function refresh() {
    if (busy || document.hidden) {
      return;
    }
    busy = true;
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (resp) {
        if (resp.status === 401) {
          el.setAttribute("data-state", "logged-out");
          el.textContent = "Your session has ended; send /login to the bot for a new link.";
          clearInterval(timer);
          return null;
        }
        return resp.ok ? resp.text() : null;
      })
      .then(function (html) {
        if (html !== null && html !== last) {
          if (last !== null || html.trim() !== el.innerHTML.trim()) {
            el.innerHTML = html;
          }
          last = html;
        }
      })
      .catch(function () { /* offline for a moment: the next poll tries again */ })
      .then(function () { busy = false; });
  }
  var timer = setInterval(refresh, 2000);
})();
