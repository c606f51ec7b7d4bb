// The history scrubber: move the slider (or play it at 1x-60x) and the page shows the
// cluster at that moment, read from /api/history/ (replayed from the nearest snapshot).
(function () {
  "use strict";
  const form = document.getElementById("scrubber");
  const slider = document.getElementById("history-slider");
  if (!form || !slider) return;
  const api = form.dataset.api;
  const lo = Number(slider.min), hi = Number(slider.max);
  let playing = null, pending = null, inFlight = false, wanted = null;

  document.querySelectorAll(".scrub-marks .mark").forEach((el) => {
    const span = Math.max(1, hi - lo);
    // An event row is written just after its log entry: keep its mark on the track.
    el.style.left = Math.min(100, Math.max(0, 100 * (Number(el.dataset.at) - lo) / span)) + "%";
  });

  function text(sel, value) {
    const el = document.querySelector(sel);
    if (el) el.textContent = value;
  }

  function cell(tag, value, cls) {
    const td = document.createElement(tag);
    td.textContent = value;
    if (cls) td.className = cls;
    return td;
  }

  function rows(tbody, items, make) {
    if (!tbody) return;
    tbody.replaceChildren(...items.map(make));
  }

  function show(data) {
    text("[data-field=offset]", data.moment.offset);
    text("[data-field=time]", data.moment.time || "");
    text("[data-field=replayed]", data.replayed_from);
    text("[data-field=count]", data.count);
    text("[data-field=page]", data.page);
    text("[data-field=pages]", data.pages);
    Object.entries(data.totals).forEach(([k, v]) => text(`[data-total="${k}"]`, v));
    rows(document.querySelector("#history-spus tbody"), data.spus, (s) => {
      const tr = document.createElement("tr");
      tr.dataset.spu = s.spu;
      tr.className = "spu-" + s.state;
      const state = cell("td", s.state);
      state.dataset.field = "state";
      tr.append(cell("td", "SPU " + s.spu), cell("td", s.rack), state,
                cell("td", s.leaders, "num"), cell("td", s.replicas, "num"));
      return tr;
    });
    rows(document.querySelector("#history-partitions tbody"), data.partitions, (r) => {
      const tr = document.createElement("tr");
      tr.append(cell("td", r.topic), cell("td", r.partition, "num"),
                cell("td", r.leader === null ? "none" : r.leader, "num"),
                cell("td", r.replicas.join(", ")), cell("td", r.lrs.join(", ")),
                cell("td", r.resolution), cell("td", r.hw, "num"));
      return tr;
    });
    if (data.charts && window.Plotly) {
      Object.entries(data.charts).forEach(([id, fig]) => {
        const el = document.getElementById(id);
        if (el) window.Plotly.react(el, fig.data, fig.layout);
      });
    }
    const compare = document.getElementById("history-compare");
    if (compare) compare.href = compare.href.replace(/from=\d+/, "from=" + data.moment.offset);
    document.getElementById("scrubber").dataset.shown = data.moment.offset;
  }

  async function load(at) {
    if (inFlight) { wanted = at; return; }
    inFlight = true;
    const iso = new Date(at).toISOString();
    const topic = document.getElementById("history-topic").value.trim();
    const url = `${api}?at=${encodeURIComponent(iso)}&charts=1` +
                (topic ? `&topic=${encodeURIComponent(topic)}` : "");
    try {
      const response = await fetch(url, {headers: {Accept: "application/json"}});
      if (response.ok) {
        show(await response.json());
        document.getElementById("history-at").value = iso;
        history.replaceState(null, "", `?at=${encodeURIComponent(iso)}`);
      }
    } finally {
      inFlight = false;
      if (wanted !== null) { const next = wanted; wanted = null; load(next); }
    }
  }

  slider.addEventListener("input", () => {
    clearTimeout(pending);
    pending = setTimeout(() => load(Number(slider.value)), 150);
  });

  const play = document.getElementById("history-play");
  const speed = document.getElementById("history-speed");
  const STEP_MS = 500;
  play.addEventListener("click", () => {
    if (playing) {
      clearInterval(playing); playing = null; play.textContent = "Play"; return;
    }
    play.textContent = "Pause";
    playing = setInterval(() => {
      const next = Math.min(hi, Number(slider.value) + STEP_MS * Number(speed.value));
      slider.value = next;
      load(next);
      if (next >= hi) { clearInterval(playing); playing = null; play.textContent = "Play"; }
    }, STEP_MS);
  });
})();
