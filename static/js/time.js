// Times for people: every <time datetime> the server renders (in UTC, cluster/templatetags/
// numbers.py local_time) is shown short in the reader's own zone: "14:03:12" today,
// "24 Nov 09:15" this year, "24 Nov 2025" before. The title keeps the full UTC moment.
// Where the day matters (events: a list read days later), a <time data-date> or one inside
// [data-dates] always shows its day: "27 Nov 14:03:12", "24 Nov 2025 09:15".
(function () {
  "use strict";
  function pad(n) { return String(n).padStart(2, "0"); }
  function short(date, now, withDay) {
    const clock = pad(date.getHours()) + ":" + pad(date.getMinutes());
    const day = date.toLocaleDateString(undefined, {day: "numeric", month: "short"});
    if (date.toDateString() === now.toDateString()) {
      const seconds = clock + ":" + pad(date.getSeconds());
      return withDay ? day + " " + seconds : seconds;
    }
    if (date.getFullYear() === now.getFullYear()) return day + " " + clock;
    return withDay ? day + " " + date.getFullYear() + " " + clock : day + " " + date.getFullYear();
  }
  function localise(root) {
    const now = new Date();
    (root || document).querySelectorAll("time[datetime]").forEach((el) => {
      const date = new Date(el.getAttribute("datetime"));
      if (isNaN(date)) return;
      el.textContent = short(date, now, el.hasAttribute("data-date") || !!el.closest("[data-dates]"));
      el.title = date.toISOString().replace("T", " ").slice(0, 19) + " UTC";
    });
  }
  window.localTimes = localise;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => localise());
  else localise();
})();
