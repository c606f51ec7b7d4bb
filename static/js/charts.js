// Draw every .chart from the JSON figure the server embedded (id in data-figure).
(function () {
  "use strict";
  function readJson(id) {
    const node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }
  function draw(root) {
    const config = readJson("plotly-config") || {displaylogo: false, responsive: true};
    (root || document).querySelectorAll(".chart[data-figure]").forEach((el) => {
      const figure = readJson(el.dataset.figure);
      if (!figure || !window.Plotly) return;
      const options = Object.assign({}, config, {
        toImageButtonOptions: Object.assign({}, config.toImageButtonOptions || {}, {filename: el.id}),
      });
      window.Plotly.react(el, figure.data, figure.layout, options);
      el.dataset.drawn = "1";
    });
  }
  window.drawCharts = draw;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => draw());
  else draw();
})();
