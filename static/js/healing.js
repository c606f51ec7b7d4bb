// The open anomalies of /healing/, live: every automatic action of self-healing is an event
// of the cluster group (/ws/cluster/) carrying the anomaly's row, so the table patches itself
// from the message, and a closed one moves to History; on connecting and after a skipped
// sequence number it reads /api/healing/ and the closed anomalies.
(function () {
  "use strict";
  const script = document.currentScript;
  const OPEN = ["detected", "alerting", "planned", "applying", "preempted"];
  const planUrl = (id) => script.dataset.planUrl.replace(/0\/$/, id + "/");
  const body = document.querySelector("#open-anomalies tbody");
  const rows = new Map();  // anomaly id -> its row as /api/healing/ gives it
  const history = document.querySelector("#anomaly-history tbody");
  const HISTORY_SHOWN = Number(history.dataset.keep) || 50;  // as the page's render

  const cell = (row, text) => { const td = row.insertCell(); td.textContent = text; return td; };

  function draw() {
    body.replaceChildren();
    if (!rows.size) {
      const row = body.insertRow(); row.className = "none";
      cell(row, "No open anomaly.").colSpan = 7;
      return;
    }
    for (const a of [...rows.values()].sort((x, y) => (x.detected_at < y.detected_at ? 1 : -1))) {
      const row = body.insertRow(); row.dataset.anomaly = a.id;
      [a.type, a.subject].forEach((t) => cell(row, t));
      const state = cell(row, a.state);
      if (a.state === "preempted" && a.preempted_by) {  // the operator's plan it made way for
        const link = document.createElement("a");
        link.href = planUrl(a.preempted_by); link.textContent = "#" + a.preempted_by;
        state.append(" by ", link);
      }
      const when = document.createElement("time");  // shown short and local by time.js
      when.setAttribute("datetime", a.detected_at); when.textContent = a.detected_at;
      cell(row, "").append(when);
      const plan = cell(row, "");
      if (a.plan) {
        const link = document.createElement("a");
        link.href = planUrl(a.plan); link.textContent = "#" + a.plan;
        plan.append(link, " " + (a.plan_state || ""));
      }
      cell(row, a.moves === null || a.moves === undefined ? "" : (a.moves_done || 0) + " / " + a.moves);
      cell(row, a.detail);
    }
    if (window.localTimes) window.localTimes(body);
  }

  const timeCell = (row, iso) => {
    const td = cell(row, "");
    if (!iso) return;
    const when = document.createElement("time");  // shown short and local by time.js
    when.setAttribute("datetime", iso); when.textContent = iso;
    td.append(when);
  };

  // A closed anomaly's History row, from /api/healing/anomalies/?state=closed or from the
  // event that closed it (healing/services.py _save: the History columns travel in it).
  function historyRow(a) {
    const row = document.createElement("tr"); row.dataset.anomaly = a.id;
    [a.type, a.subject, a.state].forEach((t) => cell(row, t));
    [a.detected_at, a.planned_at, a.finished_at].forEach((iso) => timeCell(row, iso));
    const plan = cell(row, "");
    if (a.plan) {
      const link = document.createElement("a");
      link.href = planUrl(a.plan); link.textContent = "#" + a.plan;
      plan.append(link);
    }
    cell(row, a.moves === null || a.moves === undefined ? "" : (a.moves_done || 0) + " / " + a.moves);
    cell(row, a.bytes_moved ? String(a.bytes_moved) : "");
    cell(row, a.duration_s === null || a.duration_s === undefined ? "" : a.duration_s + " s");
    cell(row, a.detail || "");
    return row;
  }

  function addHistory(a) {
    history.querySelectorAll("tr.none").forEach((r) => r.remove());
    const again = history.querySelector('tr[data-anomaly="' + CSS.escape(String(a.id)) + '"]');
    if (again) again.remove();
    const row = historyRow(a);
    history.prepend(row);
    while (history.rows.length > HISTORY_SHOWN) history.deleteRow(history.rows.length - 1);
    if (window.localTimes) window.localTimes(row);
  }

  function drawHistory(closed) {
    if (!closed.length) return;  // the rendered "Nothing yet." stands
    history.replaceChildren(...closed.slice(0, HISTORY_SHOWN).map(historyRow));
    if (window.localTimes) window.localTimes(history);
  }

  function status(s) {
    document.getElementById("healing-mode").textContent = s.mode;
    // The active mode's button stays marked when another operator switches it.
    document.querySelectorAll('#mode-form button[name="mode"]').forEach((b) => {
      const on = b.value === s.mode;
      b.setAttribute("aria-pressed", on ? "true" : "false");
      b.classList.toggle("active", on);
    });
    const waiting = document.getElementById("healing-waiting");
    waiting.hidden = !s.waiting;
    waiting.querySelector("span").textContent = s.waiting;
    rows.clear();
    s.anomalies.forEach((a) => rows.set(String(a.id), a));
    draw();
  }

  async function resync() {
    try {
      const answer = await fetch("/api/healing/", {credentials: "same-origin",
                                                   headers: {Accept: "application/json"}});
      if (answer.ok) status(await answer.json());
      const closed = await fetch("/api/healing/anomalies/?state=closed&limit=" + HISTORY_SHOWN,
                                 {credentials: "same-origin", headers: {Accept: "application/json"}});
      if (closed.ok) drawHistory((await closed.json()).results || []);
    } catch (e) { /* the next gap or reconnect tries again */ }
  }

  function event(e) {
    if (e.object_type === "anomaly") {
      const id = String(e.object_name);
      if (!OPEN.includes(e.operation)) {  // closed: it leaves the open table for History
        rows.delete(id);
        addHistory({...e.params, id, state: e.operation, detail: e.result});
        return;
      }
      const known = rows.get(id) || {id, moves: null, plan_state: null};
      rows.set(id, {...known, type: e.params.type, subject: e.params.subject, state: e.operation,
                    plan: e.params.plan, preempted_by: e.params.preempted_by, detail: e.result,
                    detected_at: e.params.detected_at});
    } else if (e.object_type === "plan") {
      for (const a of rows.values()) {
        if (String(a.plan) === String(e.object_name)) a.plan_state = e.operation;
      }
    }
  }

  function progress(p) {
    for (const a of rows.values()) {
      if (String(a.plan) === String(p.plan)) {
        Object.assign(a, {plan_state: p.state, moves_done: p.moves_done, moves: p.moves_total});
      }
    }
  }

  let sequences = null;
  // For tests and the curious: whether the socket is open, and how many messages were applied.
  const state = window.healingLive = {open: false, applied: 0};
  // For the browser tests: apply one socket message as it would come.
  window.healingReceive = (message) => receive(message);
  // The socket's beacon (each group's sequence, every few seconds): a group still beyond
  // what this page applied a moment later lost a message; the page reads the list again.
  function beacon(groups) {
    const behind = () => Object.entries(groups).some(([group, seq]) => {
      const known = sequences.get(group);
      return known !== undefined && known < seq;
    });
    if (!behind()) return;
    setTimeout(() => {
      if (!behind()) return;
      Object.entries(groups).forEach(([group, seq]) => sequences.set(group, seq));
      resync();
    }, 1000);
  }
  function receive(message) {
    if (message.type === "live.seqs") { beacon(message.groups); return; }
    state.applied += 1;
    if (message.type === "live.hello") { resync(); return; }
    if (message.type === "plan.progress") progress(message);
    if (message.seq === undefined) { draw(); return; }
    const seen = sequences.check(message.group, message.seq);
    if (seen === "old") return;
    sequences.set(message.group, message.seq);
    if (seen === "gap") { resync(); return; }
    (message.events || []).forEach(event);
    draw();
  }
  // socket.js is deferred after this script (it closes the base template's body).
  document.addEventListener("DOMContentLoaded", () => {
    if (!window.ctrlSocket) return;
    sequences = window.ctrlSocket.Sequences();
    window.ctrlSocket.open("/ws/cluster/", {
      onMessage: receive,
      onOpen() { state.open = true; },
      onClose() { state.open = false; },
    });
  });
})();
