"""Load the seeds' tables kept as data in tests/fixtures/."""
from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def seed_table(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())
