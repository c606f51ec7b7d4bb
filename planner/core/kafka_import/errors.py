"""What a refused file and a contradiction between files look like."""
from __future__ import annotations

from planner.core.model import PlanError


class ImportFormatError(PlanError):
    """A file does not parse: names the file, the line and what was expected."""

    def __init__(self, source: str, line: int, expected: str, got: str = "") -> None:
        self.source, self.line, self.expected = source, line, expected
        shown = got if len(got) <= 80 else got[:77] + "..."
        tail = f" (got {shown!r})" if got else ""
        super().__init__(f"{source}, line {line}: expected {expected}{tail}")
