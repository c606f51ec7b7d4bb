// Live updates: listen on the page's WebSocket group and refresh its [data-live-fragment]
// parts from a fresh copy of the page, at most ~10 times a second, reconnecting with backoff.
(function () {
  "use strict";
  const path = document.body.dataset.liveWs;
  if (!path || !("WebSocket" in window)) return;
  const MIN_GAP_MS = 100;   // at most ~10 refreshes a second, however fast messages come
  let lastRefresh = 0, pending = null, backoff = 1000, socket = null, everConnected = false;

  async function refresh() {
    pending = null;
    lastRefresh = Date.now();
    const response = await fetch(window.location.href, {headers: {"X-Requested-With": "live"}, credentials: "same-origin"});
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    document.querySelectorAll("[data-live-fragment]").forEach((old) => {
      const next = fresh.getElementById(old.id);
      if (next) old.replaceWith(next);
    });
    if (window.drawCharts) window.drawCharts();
    document.dispatchEvent(new CustomEvent("live:refreshed"));
  }

  function schedule() {
    if (pending) return;
    const wait = Math.max(0, lastRefresh + MIN_GAP_MS - Date.now());
    pending = setTimeout(refresh, wait);
  }

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + path);
    socket.onopen = () => {
      if (everConnected) schedule();  // resync: messages may have been missed while away
      everConnected = true; backoff = 1000;
    };
    socket.onmessage = schedule;
    socket.onclose = () => { setTimeout(connect, backoff); backoff = Math.min(backoff * 2, 30000); };
  }
  connect();
})();
