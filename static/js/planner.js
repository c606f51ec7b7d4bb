// Planner pages: a computing job's progress over its WebSocket, the grid table's
// sorting, and picking a grid row from the chart.
(function () {
  "use strict";

  function follow(box) {
    const kind = box.dataset.jobKind, id = box.dataset.jobId;
    const snapshot = kind === "plan" ? "/api/plans/" + id + "/?limit=1" : "/api/plans/grids/" + id + "/";
    let delay = 1000;
    function show(message) {
      if (message.state && message.state !== "computing") { window.location.reload(); return; }
      const progress = message.progress || message;
      if (progress.stage) box.querySelector(".job-stage").textContent = progress.stage;
      if (typeof progress.fraction === "number") box.querySelector(".job-bar").value = progress.fraction;
      box.querySelector(".job-eta").textContent = progress.eta_s == null ? "estimating…"
        : "about " + Math.round(progress.eta_s) + " s left";
    }
    function resync() {
      // A reconnect may have missed the last message: read the job's state once.
      fetch(snapshot, {credentials: "same-origin"}).then((r) => r.ok ? r.json() : null)
        .then((body) => { if (body) show(body); }).catch(() => {});
    }
    function connect() {
      const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
      const socket = new WebSocket(scheme + window.location.host + "/ws/" + kind + "s/" + id + "/");
      socket.onopen = () => { delay = 1000; resync(); };
      socket.onmessage = (event) => show(JSON.parse(event.data));
      socket.onclose = (event) => {
        if (event.code === 4401) return;
        // Without a socket the snapshot still tells when the job ends.
        resync();
        setTimeout(connect, delay);
        delay = Math.min(delay * 2, 8000);
      };
    }
    if ("WebSocket" in window) connect();
  }

  function sortable(table) {
    table.querySelectorAll("th[data-sort]").forEach((th, column) => {
      th.tabIndex = 0;
      th.addEventListener("click", () => {
        const ascending = th.dataset.order !== "asc";
        table.querySelectorAll("th[data-sort]").forEach((h) => { delete h.dataset.order; });
        th.dataset.order = ascending ? "asc" : "desc";
        const body = table.tBodies[0];
        const key = (row) => {
          const cell = row.cells[column];
          if (th.dataset.sort === "text") return cell.textContent.trim();
          const value = parseFloat(cell.dataset.value);
          return isNaN(value) ? Infinity : value;
        };
        const rows = Array.from(body.rows).sort((a, b) => {
          const x = key(a), y = key(b);
          return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
        });
        rows.forEach((row) => body.appendChild(row));
      });
    });
  }

  function pickFromChart(chart, table) {
    if (!chart || !table || !chart.on) return;
    chart.on("plotly_click", (event) => {
      const index = event.points[0].customdata;
      table.querySelectorAll("tr.picked").forEach((r) => r.classList.remove("picked"));
      const row = table.querySelector('tr[data-index="' + index + '"]');
      if (row) { row.classList.add("picked"); row.scrollIntoView({block: "center"}); }
    });
  }

  function start() {
    const box = document.getElementById("job-progress");
    if (box && box.dataset.state === "computing") follow(box);
    const table = document.getElementById("grid-table");
    if (table) sortable(table);
    const chart = document.getElementById("chart-scatter");
    if (chart) {
      const hook = () => chart.dataset.drawn ? pickFromChart(chart, table) : setTimeout(hook, 200);
      hook();
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
