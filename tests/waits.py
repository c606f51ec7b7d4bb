"""How long a test waits for an event before it calls the event missing: generously.

Tests wait for what they expect to happen; how fast it happens is a benchmark's business
(tests/bench/). Under `make test` on a loaded machine a heavy page took 12.5 s to load
and a live update over 2 s, and tests with those as budgets failed on time, not on
behaviour (issue 35). A bound is only there so that a test that will never pass ends.
"""
BROWSER_WAIT_MS = 60_000  # Playwright's default for every action and wait of a test
EVENT_WAIT_S = 60.0
