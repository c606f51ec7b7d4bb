// Keeps the link matrix (templates/cluster/_net_links.html) live: cuts are control-plane
// state read from /api/net/matrix/ every few seconds; only classes and texts change.
(function () {
  "use strict";
  var box = document.querySelector("[data-net-matrix]");
  if (!box) { return; }
  var EVERY_MS = 3000;
  function label(state) { return state === "ok" ? "" : state === "self" ? "–" : state; }
  function apply(data) {
    data.rows.forEach(function (row) {
      var tr = box.querySelector('[data-net-spu="' + row.spu + '"]');
      if (!tr) { return; }
      row.cells.forEach(function (state, i) {
        var td = tr.querySelector('[data-net-cell="' + i + '"]');
        if (td && td.className !== "net-" + state) {
          td.className = "net-" + state;
          td.textContent = label(state);
        }
      });
    });
    var cuts = box.querySelector("[data-net-cuts]");
    if (cuts) {
      cuts.textContent = data.cuts.length ? "Cuts in force: " + data.cuts.map(function (c) {
        return c.id + ": " + c.label; }).join("; ") : "No cut in force: every link works.";
    }
  }
  function poll() {
    fetch(box.getAttribute("data-net-matrix"), {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) { if (data) { apply(data); } })
      .catch(function () {})
      .then(function () { setTimeout(poll, EVERY_MS); });
  }
  setTimeout(poll, EVERY_MS);
}());
