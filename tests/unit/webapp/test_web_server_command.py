"""The ASGI server listens with a deep backlog and gives a burst of sockets time to be
accepted, in `make run`, the Procfile and the test stacks alike."""
from __future__ import annotations

from pathlib import Path

from webapp.web_server import BACKLOG, CONNECT_TIMEOUT_S, daphne_command, endpoint

ROOT = Path(__file__).resolve().parents[3]


def test_the_listener_asks_for_a_backlog_far_above_twisteds_fifty():
    assert endpoint("127.0.0.1", 8000) == f"tcp:port=8000:interface=127.0.0.1:backlog={BACKLOG}"
    assert BACKLOG >= 1024


def test_an_ipv6_address_has_its_colons_escaped_for_twisted():
    assert endpoint("::1", 8000).startswith("tcp:port=8000:interface=\\:\\:1:")


def test_a_socket_has_more_than_daphnes_five_seconds_to_be_accepted():
    command = daphne_command("127.0.0.1", 8000, "python")
    flag = command.index("--websocket_connect_timeout")
    assert int(command[flag + 1]) == CONNECT_TIMEOUT_S > 5
    assert "-b" not in command and command[-1] == "webapp.asgi:application"


def test_the_procfile_starts_daphne_with_the_same_listener_and_timeout():
    web = next(line for line in (ROOT / "Procfile").read_text().splitlines()
               if line.startswith("web:"))
    assert f"backlog={BACKLOG}" in web
    assert f"--websocket_connect_timeout {CONNECT_TIMEOUT_S}" in web


def test_make_run_and_the_test_stacks_start_the_same_command():
    for path in ("scripts/run.py", "tests/live_stack.py"):
        assert "daphne_command(" in (ROOT / path).read_text()
