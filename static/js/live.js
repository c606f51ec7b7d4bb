// Live pages: patch the page in place from the data each WebSocket message carries
// (format in cluster/live.py); never refetch the page. A gap in a group's sequence, or a
// reconnect, fetches that group's JSON snapshot and continues from it.
(function () {
  "use strict";
  // The groups a first hello says changed after the page's render: the page embeds the
  // sequence each group had before its data was read (cluster/views/live.py). After a
  // reconnect every group resyncs. Pure, so a test can call it on a blank page.
  function groupsToResync(rendered, helloGroups, reconnected) {
    return Object.keys(helloGroups).filter((group) => reconnected
      || (rendered[group] !== undefined && helloGroups[group] > rendered[group]));
  }
  window.liveGroupsToResync = groupsToResync;
  window.liveApply = (data) => apply(data);  // for the browser tests: patch without a socket
  const path = document.body.dataset.liveWs;
  if (!path || !("WebSocket" in window)) return;
  const seqsNode = document.getElementById("live-seqs");
  const rendered = seqsNode ? JSON.parse(seqsNode.textContent) : {};  // group -> seq of the render
  const VERSION = 1;
  const STALE_AFTER_MS = 5000;      // reconnecting this long: the data may be out of date
  const resyncing = {};             // group -> messages held while its snapshot is fetched
  const live = {open: false, ever: false, final: false, dataAt: Date.now(), closedAt: null,
                applied: 0, snapshots: 0};
  window.liveState = live;          // read by the browser tests and the indicator
  const status = document.getElementById("live-status");

  // ---- the connection indicator ------------------------------------------------
  function age(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    return s < 60 ? s + " s" : Math.round(s / 60) + " min";
  }
  function showStatus() {
    if (!status) return;
    const now = Date.now();
    let state = "live", text = "live";
    if (!live.open && live.final) {
      state = "stale";
      text = "not live: sign in again or reload";
    } else if (!live.open) {
      const stale = live.closedAt !== null && now - live.closedAt > STALE_AFTER_MS;
      state = stale ? "stale" : "reconnecting";
      text = stale ? "stale: data " + age(now - live.dataAt) + " old" : "reconnecting…";
    }
    status.hidden = false;
    status.dataset.state = state;
    status.textContent = text;
    status.title = "last update " + age(now - live.dataAt) + " ago";
  }
  setInterval(showStatus, 1000);

  // ---- patching ------------------------------------------------------------------
  function setText(el, value) {
    const text = String(value);
    if (el && el.textContent !== text) el.textContent = text;
  }
  function setBadge(el, value) {
    if (!el) return;
    setText(el, value);
    el.className = "badge " + String(value).toLowerCase();
  }
  function leaderCell(cell, leader, replicas, wide) {
    cell.textContent = "";
    if (leader === null || leader === undefined) {
      cell.insertAdjacentHTML("beforeend", '<span class="bad">none</span>');
      return;
    }
    cell.append("SPU " + leader + " ");
    if (replicas.length && leader === replicas[0]) {
      cell.insertAdjacentHTML("beforeend", '<span class="pref" title="preferred leader">★</span>');
    } else {
      const note = document.createElement("small");
      note.className = "warn";
      note.textContent = wide ? "not preferred (SPU " + replicas[0] + ")" : "not preferred";
      cell.append(note);
    }
  }
  function patchPartition(row) {
    const tr = document.querySelector('tr[data-row="' + CSS.escape(row.topic + "/" + row.partition) + '"]');
    if (!tr) return;
    const replicas = (tr.dataset.replicas || "").split(",").filter(Boolean).map(Number);
    const cell = tr.querySelector("td.leader");
    if (cell && cell.dataset.leader !== String(row.leader)) {
      leaderCell(cell, row.leader, replicas, tr.hasAttribute("data-partition"));
      cell.dataset.leader = String(row.leader);
      tr.querySelectorAll("td.replicas .replica").forEach((span) => {
        span.classList.toggle("leader", Number(span.textContent) === row.leader);
      });
    }
    const lrs = tr.querySelector("td.lrs");
    if (lrs) {
      setText(lrs, "[" + row.lrs.join(", ") + "]");
      lrs.classList.toggle("warn", row.lrs.length < replicas.length);
    }
    setText(tr.querySelector("td.hw"), row.hw);
    setText(tr.querySelector("td.leo"), row.leo);
    setBadge(tr.querySelector("td.res .badge"), row.resolution);
  }
  function patchSpu(spu) {
    document.querySelectorAll('[data-spu="' + spu.id + '"]').forEach((el) => {
      if (spu.resolution) {
        setBadge(el.querySelector(".badge"), spu.resolution);
        if (el.hasAttribute("data-state")) {
          el.classList.remove("online", "offline", "init");
          el.classList.add(spu.resolution.toLowerCase());
        }
        // Not Online: down at once. Online may still hide a killed loop, which only the
        // status cell of the load that follows can say (cluster/views/tables.py status_cell).
        if (spu.resolution !== "Online" && !(spu.cells && spu.cells.status)
            && el.hasAttribute("data-cell-class")) {
          setCellClass(el, "spu-down");
        }
      }
      const counts = el.querySelector('[data-field="counts"]');
      if (counts && spu.leaders !== undefined && counts.firstElementChild) {
        setText(counts.firstElementChild, "L " + spu.leaders);
        counts.lastChild.textContent = " · F " + spu.followers;
      }
      ["leaders", "followers", "replicas", "preferred", "preferred_leading"].forEach((field) => {
        if (spu[field] !== undefined) {
          el.querySelectorAll('[data-field="' + field + '"]').forEach((c) => setText(c, spu[field]));
        }
      });
      // Skew and share cells come rendered by the server (cluster/views/tables.py's rules).
      Object.entries(spu.cells || {}).forEach(([name, cell]) => {
        el.querySelectorAll('[data-cell="' + name + '"]').forEach((c) => {
          setText(c.querySelector("[data-cell-text]") || c, cell.text);
          setCellClass(c, cell.css);
        });
        const classed = '[data-cell-class="' + name + '"]';
        if (el.matches(classed)) setCellClass(el, cell.css);  // the row itself (status)
        el.querySelectorAll(classed).forEach((c) => setCellClass(c, cell.css));
      });
    });
  }
  function setCellClass(el, css) {
    el.classList.remove("muted", "skew-ok", "skew-warn", "skew-bad", "spu-up", "spu-down");
    if (css) el.classList.add(css);
  }
  // As cluster/views/tables.py share_cell: amber below 90%, red below 50%.
  function setShare(el, led, of) {
    if (!el || led === undefined) return;
    const share = of ? led / of : null;
    setText(el, share === null ? "–" : Math.round(share * 100) + "%");
    el.classList.remove("muted", "skew-ok", "skew-warn", "skew-bad");
    el.classList.add(share === null ? "muted" : share >= 0.9 ? "skew-ok" : share >= 0.5 ? "skew-warn" : "skew-bad");
  }
  function setCount(el, value, css) {
    if (!el || value === undefined) return;
    setText(el, value);
    el.classList.toggle(css, value > 0);
  }
  function patchTopic(topic) {
    document.querySelectorAll('[data-topic="' + CSS.escape(topic.name) + '"]').forEach((el) => {
      setBadge(el.querySelector(".badge"), topic.resolution);
      const reason = el.querySelector('[data-field="reason"]');
      if (reason) setText(reason, topic.reason);
      setCount(el.querySelector('[data-field="leaderless"]'), topic.leaderless, "bad");
      setCount(el.querySelector('[data-field="under_replicated"]'), topic.under_replicated, "warn");
      setShare(el.querySelector('[data-field="preferred"]'), topic.preferred_leading, topic.partitions);
    });
  }
  function patchTotals(totals) {
    Object.entries(totals).forEach(([name, value]) => {
      document.querySelectorAll('[data-total="' + name + '"]').forEach((el) => setText(el, value));
    });
    document.querySelectorAll("[data-total-flag]").forEach((el) => {
      const value = totals[el.dataset.totalFlag];
      if (value !== undefined) el.classList.toggle("bad", value > 0);
    });
    document.querySelectorAll('[data-share="preferred"]').forEach(
      (el) => setShare(el, totals.preferred_leading, totals.partitions));
  }
  function patchHealth(reasons, totals) {
    const box = document.querySelector("[data-live-health]");
    if (!box) return;
    const list = document.createElement(reasons.length ? "ul" : "p");
    if (reasons.length) {
      list.className = "reasons";
      reasons.forEach((r) => {
        const li = document.createElement("li"), a = document.createElement("a");
        li.className = r.severity;
        a.href = r.link;
        a.textContent = r.message;
        li.append(a);
        list.append(li);
      });
    } else {
      const none = totals && totals.spus === 0;
      list.className = none ? "empty" : "ok";
      list.textContent = none ? box.dataset.empty : box.dataset.ok;
    }
    if (box.innerHTML !== list.outerHTML) box.replaceChildren(list);
  }
  // As cluster/views/events.py param_text: long lists say how many more, long text is cut.
  function paramText(value) {
    if (Array.isArray(value) && value.length > 8) {
      return "[" + value.slice(0, 8).map((v) => JSON.stringify(v)).join(", ") + ", … "
        + (value.length - 8) + " more]";
    }
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return text.length <= 80 ? text : text.slice(0, 79) + "…";
  }
  function eventRow(e, withParams) {
    const tr = document.createElement("tr");
    const cells = [e.actor, e.object_type + " " + e.object_name, e.operation];
    if (withParams) {
      cells.push(Object.entries(e.params || {}).filter(([, v]) => v !== null)  // as the page: no null
        .map(([k, v]) => k + "=" + paramText(v)).join(" ") || "–");
    }
    cells.push(e.result || (withParams ? "ok" : ""));
    const when = document.createElement("td"), time = document.createElement("time");
    when.className = "nowrap";
    time.setAttribute("datetime", e.at);
    time.setAttribute("data-date", "");  // events always show their day (static/js/time.js)
    time.textContent = e.at.replace("T", " ").slice(0, 19);
    when.append(time);
    if (withParams) {
      // As the events page's rows: a link to the moment, by log offset or else by time.
      const view = document.createElement("a");
      view.className = "moment-link";
      view.title = "View the cluster at this moment";
      view.textContent = "view";
      // An event written directly has no entry of its own: the page finds the one that
      // carried its change when the link is followed (/history/?event=).
      const byOffset = e.log_offset !== undefined && e.log_offset !== null;
      view.href = byOffset ? "/history/?at=" + String(e.log_offset)
        : e.id ? "/history/?event=" + String(e.id) : "/history/?at=" + encodeURIComponent(e.at);
      when.append(" ", view);
    }
    tr.append(when);
    cells.forEach((text) => { const td = document.createElement("td"); td.textContent = text; tr.append(td); });
    if (window.localTimes) window.localTimes(tr);
    return tr;
  }
  function addEvents(events) {
    document.querySelectorAll("tbody[data-live-events]").forEach((body) => {
      const keep = Number(body.dataset.liveEvents) || 10;
      // Only the rows kept: a message carries up to 200 events (a failover logs thousands).
      events.slice(-keep).forEach((e) => body.prepend(eventRow(e, body.hasAttribute("data-live-params"))));
      while (body.rows.length > keep) body.deleteRow(body.rows.length - 1);
    });
  }
  // "Rack online" is offered only for a rack with an SPU down (cluster/views/tables.py
  // racks_down): the forms are rendered for every rack and shown or hidden here.
  function patchRacksDown(down) {
    document.querySelectorAll("form[data-rack-online]").forEach((form) => {
      form.hidden = !down.includes(form.dataset.rackOnline);
    });
  }
  function drawCharts(charts) {
    if (!window.Plotly) return;
    const node = document.getElementById("plotly-config");
    const config = node ? JSON.parse(node.textContent) : {displaylogo: false, responsive: true};
    Object.entries(charts).forEach(([id, figure]) => {
      const el = document.getElementById(id);
      if (el) window.Plotly.react(el, figure.data, figure.layout, config);
    });
  }
  function apply(data) {
    if (data.type === "partition.changed") patchPartition(data);
    (data.partitions || []).forEach(patchPartition);
    (data.spus || []).forEach(patchSpu);
    (data.topics || []).forEach(patchTopic);
    if (data.totals) patchTotals(data.totals);
    if (data.health) patchHealth(data.health, data.totals);
    if (data.racks_down) patchRacksDown(data.racks_down);
    if (data.events && data.events.length && data.type !== "live.snapshot") addEvents(data.events);
    if (data.charts) drawCharts(data.charts);
    if (data.at) live.dataAt = data.at;
    live.applied += 1;
    document.dispatchEvent(new CustomEvent("live:applied", {detail: data}));
  }

  // ---- sequences and resync ------------------------------------------------------
  const sequences = window.ctrlSocket.Sequences();
  async function resync(group) {
    if (resyncing[group]) return;
    resyncing[group] = [];
    try {
      const response = await fetch("/api/live/snapshot/?group=" + encodeURIComponent(group),
                                   {credentials: "same-origin", headers: {Accept: "application/json"}});
      if (!response.ok) throw new Error("snapshot " + response.status);
      const snapshot = await response.json();
      if (snapshot.v !== VERSION) { window.location.reload(); return; }
      live.snapshots += 1;
      apply(snapshot);
      // The snapshot's number as is: every message of the group was held meanwhile, and a
      // sequence that started over (a flushed Redis, a new namespace) must not stall the page.
      sequences.set(group, snapshot.seq);
    } catch (error) {
      sequences.forget(group);  // the next message is taken as it comes
    } finally {
      const held = resyncing[group] || [];
      delete resyncing[group];
      held.forEach(receive);
    }
  }
  function receive(message) {
    const group = message.group;
    if (resyncing[group]) { resyncing[group].push(message); return; }
    const seen = sequences.check(group, message.seq);
    if (seen === "old") return;  // the snapshot already holds it
    apply(message);
    sequences.set(group, message.seq);
    if (seen === "gap") resync(group);
  }
  function hello(message) {
    // Away for a while, or changed between the render and this hello: resync those groups.
    const stale = groupsToResync(live.ever ? {} : rendered, message.groups, live.ever);
    Object.entries(message.groups).forEach(([group, seq]) => {
      if (stale.includes(group)) resync(group);
      else sequences.set(group, seq);
    });
    live.ever = true;
  }
  // A beacon (each group's sequence, every few seconds): a group beyond what this page
  // applied lost a message, or has one in flight. Still behind a moment later: resync.
  const BEACON_GRACE_MS = 1000;
  function beacon(message) {
    Object.entries(message.groups).forEach(([group, seq]) => {
      if (!behind(group, seq)) return;
      setTimeout(() => { if (behind(group, seq)) resync(group); }, BEACON_GRACE_MS);
    });
  }
  function behind(group, seq) {
    const known = sequences.get(group);
    return !resyncing[group] && (known === undefined || known < seq);
  }

  // ---- the socket (static/js/socket.js) ------------------------------------------
  if (!window.ctrlSocket) return;  // the page did not load the socket module
  const connection = window.ctrlSocket.open(path, {
    onOpen() { live.open = true; live.closedAt = null; showStatus(); },
    onMessage(message) {
      if (message.v !== VERSION) { window.location.reload(); return; }
      if (message.type === "live.hello") hello(message);
      else if (message.type === "live.seqs") beacon(message);
      else receive(message);
    },
    onClose(event, final) {
      live.open = false;
      live.final = final;
      if (live.closedAt === null) live.closedAt = Date.now();
      showStatus();
    },
  });
  live.connection = connection;
})();
