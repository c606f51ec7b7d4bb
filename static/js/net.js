// Keeps the link matrix (templates/cluster/_net_links.html) live from the cluster group's
// messages: live.js applies each message (or the snapshot it resyncs from after a gap or a
// reconnect) and dispatches "live:applied"; a message carrying ``net`` (the matrix and the
// rehearsal summary, cluster/core/replication/netview.py) is drawn here. No fetch, no poll.
(function () {
  "use strict";
  var box = document.querySelector("[data-net-matrix]");
  if (!box) { return; }
  function label(state) { return state === "ok" ? "" : state === "self" ? "–" : state; }
  function endName(end) { return end === "controller" || end === "producers" ? end : "SPU " + end; }
  function header(ends) {
    var tr = box.querySelector("[data-net-ends]");
    if (!tr || tr.getAttribute("data-net-ends") === ends.join(",")) { return; }
    tr.setAttribute("data-net-ends", ends.join(","));
    while (tr.children.length > 1) { tr.removeChild(tr.lastChild); }
    ends.forEach(function (end) {
      var th = document.createElement("th");
      th.textContent = endName(end);
      tr.appendChild(th);
    });
  }
  function row(data) {
    var tr = document.createElement("tr"), th = document.createElement("th");
    tr.setAttribute("data-net-spu", data.spu);
    th.textContent = "SPU " + data.spu;
    if (data.expired) {
      var note = document.createElement("small");
      note.className = "down-note";
      note.textContent = "session expired";
      th.append(" ", note);
    }
    tr.appendChild(th);
    data.cells.forEach(function (state, i) {
      var td = document.createElement("td");
      td.className = "net-" + state;
      td.setAttribute("data-net-cell", i);
      td.textContent = label(state);
      tr.appendChild(td);
    });
    return tr;
  }
  function rows(list) {
    var body = box.querySelector("[data-net-rows]");
    if (!body) { return; }
    var fresh = document.createElement("tbody");
    list.forEach(function (r) { fresh.appendChild(row(r)); });
    // Rebuilt only when something changed: a message every write must not churn the DOM.
    if (body.innerHTML !== fresh.innerHTML) { body.innerHTML = fresh.innerHTML; }
    body.closest(".scroll").hidden = list.length === 0;
  }
  function cuts(list) {
    var p = box.querySelector("[data-net-cuts]");
    if (!p) { return; }
    p.textContent = list.length ? "Cuts in force: " : "No cut in force: every link works.";
    list.forEach(function (c) {
      var badge = document.createElement("span");
      badge.className = "badge offline";
      badge.textContent = c.id + ": " + c.label;
      p.append(badge, " ");
    });
  }
  function report(r) {
    var p = box.querySelector("[data-net-report]"), text = box.querySelector("[data-net-report-text]");
    if (!p || !text) { return; }
    p.hidden = !r;
    if (!r) { return; }
    var named = (r.acks1_truncated || []).map(function (t) {
      return " (" + t.topic + "/" + t.partition + " @" + t.offset + ")"; }).join("");
    text.textContent = "Latest rehearsal (" + (r.settled ? "settled" : "running") + "): "
      + r.acknowledged_kept.acks_1 + " answered acks=1 and " + r.acknowledged_kept.acks_all
      + " acks=all writes kept, " + ((r.simulated && r.simulated["1"]) || 0)
      + " unanswered acks=1 writes of the simulated producers, " + r.acks1_truncated_count + " acks=1 writes truncated" + named
      + ", " + r.unacknowledged_lost + " unacknowledged writes lost, " + r.refused_total
      + " writes refused." + (r.counts_complete === false ? " Counts incomplete: sharded ticks "
      + "ran meanwhile and their writes are not counted." : "");
  }
  function apply(net) {
    header(net.ends);
    rows(net.rows);
    cuts(net.cuts);
    report(net.report);
    box.setAttribute("data-net-applied", String((Number(box.getAttribute("data-net-applied")) || 0) + 1));
  }
  window.netApply = apply;  // for the browser tests: patch without a socket
  document.addEventListener("live:applied", function (event) {
    if (event.detail && event.detail.net) { apply(event.detail.net); }
  });
}());
