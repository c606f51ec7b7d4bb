// A previewed replica map too long for HTML: page through it (the same rows the server
// renders, with the running per-rack counts of the seed's table) and offer it as a file.
(function () {
  "use strict";
  const pager = document.querySelector("[data-map-pager]");
  if (!pager) return;
  const data = JSON.parse(document.getElementById(pager.dataset.mapPager).textContent);
  const table = document.querySelector("table[data-map-table]");
  const body = table.tBodies[0];
  const racks = Array.from(table.tHead.rows[0].cells).slice(2).map((th) => th.textContent);
  const total = data.map.length;
  let start = 0;

  function rackOf(spu) {
    const rack = data.rack_of[String(spu)];
    if (rack === undefined) return "(unregistered)";
    return rack || "(no rack)";
  }
  function cell(text, css) {
    const td = document.createElement("td");
    td.className = css;
    td.textContent = text;
    return td;
  }
  function render() {
    const running = Object.fromEntries(racks.map((r) => [r, [0, 0]]));
    const end = Math.min(total, start + data.rows);
    const rows = [];
    for (let pid = 0; pid < end; pid += 1) {
      data.map[pid].forEach((spu, position) => { running[rackOf(spu)][position === 0 ? 0 : 1] += 1; });
      if (pid < start) continue;
      const tr = document.createElement("tr");
      tr.dataset.partition = pid;
      tr.dataset.replicas = data.map[pid].join(",");
      tr.append(cell(pid, "num"), cell("[" + data.map[pid].join(", ") + "]", "mono"));
      racks.forEach((r) => {
        const [l, f] = running[r];
        tr.append(cell("[" + (l || "\u00a0") + "] " + (f || ""), "num mono"));
      });
      rows.push(tr);
    }
    body.replaceChildren(...rows);
    pager.querySelector("[data-pager-status]").textContent =
      "Rows " + start + "–" + (end - 1) + " of " + total +
      "; the totals above and the per-SPU table count every partition.";
    pager.querySelector('[data-pager="prev"]').disabled = start === 0;
    pager.querySelector('[data-pager="next"]').disabled = end >= total;
  }
  function download() {
    const file = {partitions: data.map.map((replicas, id) => ({id, replicas}))};
    const url = URL.createObjectURL(new Blob([JSON.stringify(file, null, 1)], {type: "application/json"}));
    const link = Object.assign(document.createElement("a"), {href: url, download: data.name + "-assignment.json"});
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }
  pager.addEventListener("click", (event) => {
    const action = event.target.dataset && event.target.dataset.pager;
    if (action === "prev") { start = Math.max(0, start - data.rows); render(); }
    if (action === "next") { start = Math.min(total - 1, start + data.rows); render(); }
    if (action === "download") download();
  });
  pager.querySelector('[data-pager="goto"]').addEventListener("change", (event) => {
    const pid = Number(event.target.value);
    if (Number.isInteger(pid) && pid >= 0 && pid < total) {
      start = pid - (pid % data.rows);
      render();
    }
  });
})();
