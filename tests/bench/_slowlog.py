"""The private Redis's slow log around a benchmark's ticks (split from
bench_replication_shell.py, which re-exports it)."""
from __future__ import annotations

from collections import Counter

# The commands the bench sends to read the slow log itself: never counted.
_OURS = ("SLOWLOG", "CONFIG")


class SlowLog:
    """The private Redis's slow log around the ticks: every command is logged (threshold
    0), and each tick's entries are read and dropped so the log never overflows.

    EXEC is not logged; a transaction's commands are, one by one, back to back. So
    besides the longest command, a *burst* is a run of one client's consecutive entries
    (MULTI and WATCH left out), ended by another client or a new transaction (MULTI,
    WATCH): the longest burst bounds the longest transaction (or pipeline) that held
    Redis from above."""

    def __init__(self, redis: object = None) -> None:
        """``redis``: the server's client (None: the hot state's first server)."""
        from cluster.adapters.redis_keys import client

        self.redis = redis if redis is not None else client()
        self.longest_us = 0
        self.longest_command = ""
        # The longest command's arguments (a script's body left out, each argument cut
        # short, as the slow log keeps them) and the tick it fell in (0: the first collected).
        self.longest_detail = ""
        self.longest_tick = -1
        self.longest_burst_us = 0
        self.tick_totals_us: list[int] = []
        # Each kind of command's time in all (``by_kind``: a script by its first key's kind),
        # from ``start`` on: what the ticks ask of Redis, by what asks it.
        self.kinds: Counter[str] = Counter()
        self.tick_cpu_s: list[float] = []
        # Put back as they were once the ticks are measured.
        self.saved = {name: self.redis.config_get(name)[name]
                      for name in ("slowlog-max-len", "slowlog-log-slower-than")}

    def report(self, top: int = 8) -> str:
        """The kinds of command that took Redis longest since ``start``, in ms."""
        return ", ".join(f"{kind} {us / 1000:.1f}" for kind, us in self.kinds.most_common(top))

    def start(self) -> None:
        self.redis.config_set("slowlog-max-len", 1_000_000)
        self.redis.config_set("slowlog-log-slower-than", 0)
        self.redis.slowlog_reset()
        self.kinds.clear()
        self.cpu = self._cpu()

    def collect(self) -> None:
        """The entries since the last call (one tick's): its longest command and burst."""
        self.tick_cpu_s.append(self._cpu() - self.cpu)
        entries = self.redis.slowlog_get(self.redis.slowlog_len())
        self.redis.slowlog_reset()
        total, burst, burst_client = 0, 0, None
        for entry in sorted(entries, key=lambda e: e["id"]):
            name = _name(entry)
            if name in _OURS:
                continue
            us, who = entry["duration"], entry.get("client_address")
            if who in (b"?:0", "?:0"):
                continue  # a script's own call (6.2 logs them): already in its EVAL's time
            total += us
            self.kinds[_kind(entry.get("command"), name)] += us
            # Another client, or a new transaction of the same one (a save in pieces):
            # between two transactions Redis serves whoever is waiting.
            if who != burst_client or name in ("MULTI", "WATCH"):
                burst, burst_client = 0, who
            if name not in ("MULTI", "WATCH"):
                burst += us
                self.longest_burst_us = max(self.longest_burst_us, burst)
            if us > self.longest_us:
                self.longest_us, self.longest_command = us, name
                self.longest_detail = _detail(entry.get("command"), name)
                self.longest_tick = len(self.tick_totals_us)
        self.tick_totals_us.append(total)
        self.cpu = self._cpu()  # from here: reading the log costs Redis too

    def forget(self) -> None:
        """Start the figures over (the longest command and burst, the ticks' totals)."""
        self.longest_us, self.longest_command, self.longest_detail = 0, "", ""
        self.longest_tick, self.longest_burst_us = -1, 0
        self.tick_totals_us.clear()
        self.tick_cpu_s.clear()

    def _cpu(self) -> float:  # Redis's CPU seconds so far: main process, user + system
        info = self.redis.info("cpu")
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])

    def stop(self) -> None:
        for name, value in self.saved.items():
            self.redis.config_set(name, value)
        self.redis.slowlog_reset()


def _kind(command: object, name: str) -> str:
    """A command's kind: its name, and for a script the kind of its first key (the key's
    parts but numbers, names with dashes and the store's namespace: ``EVAL rows:orders``)."""
    if name not in ("EVAL", "EVALSHA"):
        return name
    words = _detail(command, name).split(" ")
    if len(words) < 4 or words[2] == "0":
        return f"{name} (no keys)"
    parts = [p for p in words[3].split(":")[1:]
             if p and not p.isdigit() and "-" not in p and not p.startswith("{")]
    return f"{name} {':'.join(parts[:2])}"


def _detail(command: object, name: str) -> str:
    """A logged command as text, a script's body (EVAL's first argument) left out."""
    text = command.decode(errors="replace") if isinstance(command, bytes) else str(command)
    if name == "EVAL" and "more bytes)" in text:  # the body, cut short by the slow log
        return ("EVAL <script> " + text.split("more bytes)", 1)[1].strip())[:240]
    words = text.split(" ")
    if name == "EVAL" and len(words) > 2:
        words = [words[0], "<script>", *words[2:]]
    return " ".join(words)[:240]


# A window's slow log, kept to commands over this (a scale-out round's window runs
# thousands of commands a second: logging every one would cost what it measures).
WINDOW_THRESHOLD_US = 10_000


def open_window(clients: dict[str, object], threshold_us: int = WINDOW_THRESHOLD_US) -> None:
    """Each server's slow log emptied, logging commands over ``threshold_us``."""
    for client in clients.values():
        client.config_set("slowlog-max-len", 100_000)  # type: ignore[attr-defined]
        client.config_set("slowlog-log-slower-than", threshold_us)  # type: ignore[attr-defined]
        client.slowlog_reset()  # type: ignore[attr-defined]


def close_window(clients: dict[str, object]) -> dict[str, dict[str, object]]:
    """Each server's longest command since ``open_window`` and how many took over 50 ms
    (a server's commands are not ours alone: the broker's Redis serves Celery too)."""
    out: dict[str, dict[str, object]] = {}
    for name, client in clients.items():
        entries = [e for e in client.slowlog_get(100_000)  # type: ignore[attr-defined]
                   if _name(e) not in _OURS]
        client.config_set("slowlog-log-slower-than", 10_000)  # type: ignore[attr-defined]
        client.slowlog_reset()  # type: ignore[attr-defined]
        longest = max(entries, key=lambda e: e["duration"], default=None)
        out[name] = {
            "max_command_ms": round(longest["duration"] / 1000, 1) if longest else 0.0,
            "command": _detail(longest["command"], _name(longest))[:160] if longest else "",
            "over_50_ms": sum(e["duration"] > 50_000 for e in entries)}
    return out


def _name(entry: dict) -> str:
    command = entry["command"]
    text = command.decode(errors="replace") if isinstance(command, bytes) else str(command)
    return text.split(" ", 1)[0].upper()
