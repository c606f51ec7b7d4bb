// A plan being carried out: its progress arrives over ws/plans/<id>/ as `plan.progress`
// messages (the whole record, at most ~10 a second) and patches the Apply card in place.
// The JSON API is read once when the socket opens, after it drops and when a sequence
// number is skipped; never on a timer while the socket is up. The page reloads when the
// state changes, so the buttons match it, and when the plan ends (a cancelled plan ends
// once its moves in flight are rolled back), so the moves' outcomes are final.
(function () {
  "use strict";
  const card = document.getElementById("apply");
  if (!card || !card.dataset.planApi) return;
  const progress = document.getElementById("apply-progress");
  const SPU_FIELDS = ["moves_in_done", "moves_in_total", "moves_out_done", "moves_out_total",
                      "moves_in_flight", "bytes_moved"];
  let reloading = false;
  window.planApply = {messages: 0, reads: 0, open: false};

  function text(value) {
    return value === null || value === undefined || value === "" ? "–" : String(value);
  }

  // The same units as the server's filters (cluster/templatetags/numbers.py).
  const UNITS = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
  function bytes(value) {
    let size = Number(value), unit = 0;
    while (Math.abs(size) >= 1024 && unit < UNITS.length - 1) { size /= 1024; unit += 1; }
    if (unit === 0) return Math.trunc(size).toLocaleString("en-US") + (Math.trunc(size) === 1 ? " byte" : " bytes");
    return (Math.abs(size) < 100 ? String(Number(size.toPrecision(3)))
      : Math.round(size).toLocaleString("en-US")) + " " + UNITS[unit];
  }
  function duration(value) {
    const s = Math.round(Number(value));
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
    return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  }
  function put(el, value) {
    const blank = value === null || value === undefined || value === "";
    const format = el.dataset.format;
    if (blank || !format) { el.textContent = text(value); return; }
    if (format === "time") {
      const time = document.createElement("time");
      time.setAttribute("datetime", value);
      time.textContent = String(value).replace("T", " ").slice(0, 16);
      el.replaceChildren(time);
      if (window.localTimes) window.localTimes(el);
    } else if (format === "bytes") el.textContent = bytes(value);
    else if (format === "rate") el.textContent = bytes(value) + "/s";
    else if (format === "duration") el.textContent = duration(value);
    else el.textContent = text(value);
  }

  function showSpus(rows) {
    const body = document.querySelector("#apply-spus tbody");
    if (!body || !Array.isArray(rows)) return;
    rows.forEach((row) => {
      const tr = body.querySelector('tr[data-spu="' + row.spu + '"]');
      if (!tr) return;  // the plan's SPUs never change; the page rendered every row
      SPU_FIELDS.forEach((name) => {
        const cell = tr.querySelector('[data-field="' + name + '"]');
        if (cell) put(cell, row[name]);
      });
    });
  }

  function show(record) {
    if (!record || !record.state) return;
    card.querySelectorAll(":scope > dl [data-field], :scope > p[data-field]").forEach((el) => {
      if (el.dataset.field in record) put(el, record[el.dataset.field]);
    });
    const note = document.getElementById("rate-note");
    if (note && "bytes_per_s" in record) {
      // Never a rate above the throttle without the reason beside it.
      note.hidden = !(record.bytes_per_s && record.throttle_bytes_per_s
                      && record.bytes_per_s > record.throttle_bytes_per_s);
    }
    if (progress) { progress.max = Math.max(record.moves_total, 1); progress.value = record.moves_done; }
    showSpus(record.per_spu);
    const ended = record.finished_at && !card.dataset.finished;
    if ((record.state !== card.dataset.state || ended) && !reloading) {
      reloading = true;
      window.location.reload();
    }
  }

  async function read() {
    // One read of the plan: what the socket may have missed while it was down or skipped.
    window.planApply.reads += 1;
    const heard = window.planApply.messages;
    try {
      const response = await fetch(card.dataset.planApi + "?limit=1",
        {headers: {Accept: "application/json"}, credentials: "same-origin"});
      if (response.ok) {
        const body = await response.json();
        // A message that arrived meanwhile is newer than this answer.
        if (window.planApply.messages === heard) show(body.execution || body);
      }
    } catch (e) { /* the next reconnect reads again */ }
  }

  window.planApply.show = show;  // for tests: patch the card with one record
  const sequences = window.ctrlSocket ? window.ctrlSocket.Sequences() : null;
  function onMessage(message) {
    if (message.type !== "plan.progress") return;
    window.planApply.messages += 1;
    const seen = sequences.check("plan", message.seq);
    if (seen === "old") return;  // older than what is shown
    sequences.set("plan", message.seq);
    show(message);
    if (seen === "gap") read();
  }

  // The shared socket (static/js/socket.js): back-off up to 4 s, no retry on 4401/4403/4404.
  if (window.ctrlSocket && "WebSocket" in window) {
    window.ctrlSocket.open("/ws/plans/" + card.dataset.planId + "/", {
      onOpen() { window.planApply.open = true; sequences.reset(); read(); },
      onMessage,
      onClose(event, final) { window.planApply.open = false; if (!final) read(); },
    }, 4000);
  } else {
    setInterval(read, 2000);
  }
})();
