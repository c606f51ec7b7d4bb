"""A wall-clock sampling profile for the benchmarks: every ``interval_s`` a thread reads the
main thread's stack and counts each function on it once, so a function's share is the
share of wall time the main thread spent inside it (waiting on Redis included), without
cProfile's cost per call, which inflates the many small calls of a busy tick several
times over. ``enable``/``disable`` as a cProfile.Profile (the benchmark brackets the
ticks it measures)."""
from __future__ import annotations

import collections
import sys
import threading
import time


class Sampler:
    def __init__(self, interval_s: float = 0.002, lines: bool = False) -> None:
        self.interval_s = interval_s
        # Each frame also by its line (``file:function:line``): where inside a function.
        self.lines = lines
        self.on = False
        self.samples = 0
        self.counts: collections.Counter[str] = collections.Counter()
        self._main = threading.main_thread().ident
        # The main thread hands the GIL over at this interval: without it, a sample could
        # be taken only when the main thread blocks, and waits would be over-counted.
        sys.setswitchinterval(min(sys.getswitchinterval(), interval_s / 10))
        threading.Thread(target=self._run, name="bench-sampler", daemon=True).start()

    def enable(self) -> None:
        self.on = True

    def disable(self) -> None:
        self.on = False

    def _run(self) -> None:
        while True:
            time.sleep(self.interval_s)
            if not self.on:
                continue
            frame = sys._current_frames().get(self._main)
            seen = set()
            while frame is not None:
                code = frame.f_code
                name = f"{'/'.join(code.co_filename.rsplit('/', 2)[-2:])}:{code.co_name}"
                if name not in seen:
                    seen.add(name)
                    self.counts[name] += 1
                if self.lines:
                    self.counts[f"{name}:{frame.f_lineno}"] += 1
                frame = frame.f_back
            self.samples += 1

    def report(self, what: str = "the ticks with producers", top: int = 70) -> str:
        top = 400 if self.lines else top
        lines = [f"--- wall-clock samples of {what}: {self.samples} "
                 f"(every {self.interval_s * 1000:.0f} ms); share of wall time inside ---"]
        lines += [f"{100 * n / max(1, self.samples):5.1f}%  {name}"
                  for name, n in self.counts.most_common(top)]
        return "\n".join(lines)
