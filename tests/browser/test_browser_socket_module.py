"""The one socket module every live page uses (static/js/socket.js), against a stand-in
WebSocket: back-off and reconnect, the final close codes, and sequence gaps."""
from __future__ import annotations

from pathlib import Path

import pytest

SOCKET_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "socket.js"
# A WebSocket that records each connection and lets the test close it with a code.
FAKE = """() => {
  window.sockets = [];
  window.WebSocket = class { constructor(url) { this.url = url; window.sockets.push(this); } };
}"""


@pytest.fixture
def page(browser):
    page = browser.new_page()
    page.set_content("<!doctype html><body></body>")
    page.evaluate(FAKE)
    page.add_script_tag(path=str(SOCKET_JS))
    yield page
    page.close()


def open_and_close(page, code: int, wait_ms: int) -> dict:
    return page.evaluate("""async ([code, wait]) => {
      const closes = [];
      const state = window.ctrlSocket.open("/ws/x/", {onMessage() {},
        onClose(event, final) { closes.push([event.code, final]); }}, 4000);
      window.sockets[0].onopen();
      window.sockets[0].onclose({code});
      await new Promise((done) => setTimeout(done, wait));
      return {sockets: window.sockets.length, closes, delay: state.delay, final: state.final};
    }""", [code, wait_ms])


@pytest.mark.parametrize("code", [4401, 4403, 4404])
def test_a_final_close_code_stops_reconnecting(page, code):
    got = open_and_close(page, code, 1500)
    assert got == {"sockets": 1, "closes": [[code, True]], "delay": 1000, "final": True}


def test_any_other_close_reconnects_after_a_second_and_doubles_the_wait(page):
    got = open_and_close(page, 1006, 1500)
    assert got["sockets"] == 2 and got["closes"] == [[1006, False]]
    assert got["delay"] == 2000 and not got["final"]


def test_the_back_off_is_capped_and_reset_by_an_open_connection(page):
    delays = page.evaluate("""() => {
      const realTimeout = window.setTimeout;
      window.setTimeout = (fn) => realTimeout(fn, 0);  // no real waiting
      const state = window.ctrlSocket.open("/ws/x/", {onMessage() {}}, 4000);
      const seen = [];
      for (let i = 0; i < 4; i++) {
        window.sockets[window.sockets.length - 1].onclose({code: 1006});
        seen.push(state.delay);
      }
      return new Promise((done) => realTimeout(() => {
        window.sockets[window.sockets.length - 1].onopen();
        seen.push(state.delay);
        done(seen);
      }, 50));
    }""")
    assert delays == [2000, 4000, 4000, 4000, 1000]


def test_sequences_tell_old_next_and_gap_per_group(page):
    got = page.evaluate("""() => {
      const s = window.ctrlSocket.Sequences();
      const out = [s.check("a", 5)];
      s.set("a", 5);
      out.push(s.check("a", 5), s.check("a", 4), s.check("a", 6), s.check("a", 8),
               s.check("b", 1));
      s.forget("a");
      out.push(s.check("a", 9));
      return out;
    }""")
    assert got == ["first", "old", "old", "next", "gap", "first", "first"]


def test_a_message_that_is_not_json_is_dropped(page):
    got = page.evaluate("""() => {
      const heard = [];
      window.ctrlSocket.open("/ws/x/", {onMessage(m) { heard.push(m); }});
      const socket = window.sockets[0];
      socket.onmessage({data: "not json"});
      socket.onmessage({data: '{"seq": 1}'});
      return heard;
    }""")
    assert got == [{"seq": 1}]
