// Ask before destructive forms (those with data-confirm). Forms with data-api call that JSON
// endpoint instead of posting, so a live page stays where it is and shows the answer inline.
(function () {
  "use strict";
  function say(form, text, ok) {
    const region = form.closest("details, section, main").querySelector(".action-result");
    if (!region) return;
    region.textContent = text;
    region.className = "action-result " + (ok ? "ok" : "bad");
  }
  async function callApi(form) {
    const token = form.querySelector("input[name=csrfmiddlewaretoken]");
    const response = await fetch(form.dataset.api, {
      method: "POST", credentials: "same-origin",
      headers: {"X-CSRFToken": token ? token.value : "", Accept: "application/json"}});
    const body = await response.json().catch(() => ({}));
    if (response.ok) say(form, "SPU " + (body.spus || []).join(", ") + ": " + body.resolution, true);
    else say(form, body.error || "Refused (" + response.status + ")", false);
  }
  document.addEventListener("submit", (event) => {
    const form = event.target;
    const question = form.dataset && form.dataset.confirm;
    if (question && !window.confirm(question)) { event.preventDefault(); return; }
    if (form.dataset && form.dataset.api && window.fetch) {
      event.preventDefault();
      callApi(form).catch(() => say(form, "The server did not answer; try again.", false));
    }
  });
})();
