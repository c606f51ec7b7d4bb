// The one WebSocket client every live page uses (live.js, plan_apply.js): connect, back off
// and reconnect, stop for good on the close codes that will not change by retrying, and
// number each group's messages so a skipped sequence number is noticed.
(function () {
  "use strict";
  // 4401 not signed in, 4403 no reader role, 4404 no such page (cluster/consumers.py):
  // retrying cannot help, so the page stops and says so.
  const FINAL_CODES = [4401, 4403, 4404];
  const FIRST_DELAY_MS = 1000;

  // Per group, the last sequence number applied. ``check`` says what a message is:
  // "old" (already applied, drop it), "next", "first" (nothing known yet) or "gap"
  // (numbers were skipped: the caller reads the group's state again).
  function Sequences() {
    const last = {};
    return {
      check(group, seq) {
        const known = last[group];
        if (known === undefined) return "first";
        if (seq <= known) return "old";
        return seq === known + 1 ? "next" : "gap";
      },
      set(group, seq) { last[group] = seq; },
      get(group) { return last[group]; },
      forget(group) { delete last[group]; },
      reset() { Object.keys(last).forEach((g) => delete last[g]); },
    };
  }

  // open(path, handlers): handlers.onOpen(), onMessage(parsed JSON), onClose(event, final).
  // ``maxDelayMs`` caps the doubling back-off. Returns the connection's state object.
  function open(path, handlers, maxDelayMs) {
    const cap = maxDelayMs || 30000;
    const state = {socket: null, open: false, ever: false, final: false, closedAt: null,
                   delay: FIRST_DELAY_MS, closeCode: null};
    function connect() {
      const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
      const socket = new WebSocket(scheme + window.location.host + path);
      state.socket = socket;
      socket.onopen = () => {
        state.open = true;
        state.closedAt = null;
        state.delay = FIRST_DELAY_MS;
        if (handlers.onOpen) handlers.onOpen(state.ever);
        state.ever = true;
      };
      socket.onmessage = (event) => {
        let message;
        try { message = JSON.parse(event.data); } catch (e) { return; }
        handlers.onMessage(message);
      };
      socket.onclose = (event) => {
        state.open = false;
        state.closeCode = event.code;
        if (state.closedAt === null) state.closedAt = Date.now();
        state.final = FINAL_CODES.includes(event.code);
        if (handlers.onClose) handlers.onClose(event, state.final);
        if (state.final) return;
        setTimeout(connect, state.delay);
        state.delay = Math.min(state.delay * 2, cap);
      };
    }
    if ("WebSocket" in window) connect();
    return state;
  }

  window.ctrlSocket = {open, Sequences, FINAL_CODES};
})();
