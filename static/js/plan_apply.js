// A plan being carried out: follow its status from the JSON API once a second and patch the
// Apply card in place (no page refetch); reload once when it ends so the buttons match.
(function () {
  "use strict";
  const card = document.getElementById("apply");
  if (!card || !card.dataset.planApi) return;
  const progress = document.getElementById("apply-progress");

  function show(status) {
    card.querySelectorAll("[data-field]").forEach((el) => {
      const value = status[el.dataset.field];
      el.textContent = value === null || value === undefined || value === "" ? "–" : value;
    });
    if (progress) { progress.max = Math.max(status.moves_total, 1); progress.value = status.moves_done; }
  }

  async function poll() {
    try {
      const response = await fetch(card.dataset.planApi, {headers: {Accept: "application/json"}, credentials: "same-origin"});
      if (response.ok) {
        const status = await response.json();
        show(status);
        if (!["running", "paused"].includes(status.state)) { window.location.reload(); return; }
        if (status.state !== card.dataset.state) { window.location.reload(); return; }
      }
    } catch (e) { /* a missed poll is retried at the next one */ }
    setTimeout(poll, 1000);
  }
  setTimeout(poll, 1000);
})();
