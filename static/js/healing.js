// The open anomalies of /healing/, refreshed from /api/healing/ every few seconds.
(function () {
  "use strict";
  const script = document.currentScript;
  const planUrl = (id) => script.dataset.planUrl.replace(/0\/$/, id + "/");
  const body = document.querySelector("#open-anomalies tbody");
  const cell = (row, text) => { const td = row.insertCell(); td.textContent = text; return td; };

  function render(status) {
    document.getElementById("healing-mode").textContent = status.mode;
    const waiting = document.getElementById("healing-waiting");
    waiting.hidden = !status.waiting;
    waiting.querySelector("span").textContent = status.waiting;
    body.replaceChildren();
    if (!status.anomalies.length) {
      const row = body.insertRow(); row.className = "none";
      cell(row, "No open anomaly.").colSpan = 7;
      return;
    }
    for (const a of status.anomalies) {
      const row = body.insertRow(); row.dataset.anomaly = a.id;
      [a.type, a.subject, a.state, a.detected_at].forEach((t) => cell(row, t));
      const plan = cell(row, "");
      if (a.plan) {
        const link = document.createElement("a");
        link.href = planUrl(a.plan); link.textContent = "#" + a.plan;
        plan.append(link, " " + (a.plan_state || ""));
      }
      cell(row, a.moves === null ? "" : (a.moves_done || 0) + " / " + a.moves);
      cell(row, a.detail);
    }
  }

  async function refresh() {
    try {
      const answer = await fetch("/api/healing/", {headers: {Accept: "application/json"}});
      if (answer.ok) render(await answer.json());
    } catch (e) { /* the next round tries again */ }
  }
  setInterval(refresh, 3000);
})();
