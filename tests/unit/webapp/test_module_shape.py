"""No import circle among the product modules, and every one under 400 lines (issue 32).

A circle is a set of modules each of which reaches all the others through imports: a
reader who follows them never gets to the bottom. Every import counts, inside functions
and under TYPE_CHECKING too (the graph is the layering test's). Today's circles and
oversized modules are listed by name in ``KNOWN_CIRCLES`` and ``KNOWN_OVERSIZED``; the
tests fail on a new one, on a listed one that is gone and on a listed module that grew,
so both lists can only shrink.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.unit.webapp.test_app_layering import APPS, ROOT, Graph, import_graph

PRODUCT = (*APPS, "scripts")  # not tests, not migrations (import_graph leaves those out)
MAX_LINES = 400  # STYLE.md: small modules, fewer than this many lines

# Today's circles, each the set of its modules. Break one, then delete its line.
KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset()

# Today's modules of MAX_LINES or more, with their length now: they may only shrink.
KNOWN_OVERSIZED: dict[str, int] = {}


def circles(graph: Graph) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (imports of modules
    outside the graph, the standard library say, are left out)."""
    reach = {module: _reachable(graph, module) for module in graph}
    found: set[frozenset[str]] = set()
    for module, reached in reach.items():
        component = frozenset({module} | {m for m in reached if module in reach[m]})
        if len(component) > 1:
            found.add(component)
    return found


def _reachable(graph: Graph, start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for imported in graph.get(todo.pop(), ()):
            if imported in graph and imported not in seen:
                seen.add(imported)
                todo.append(imported)
    return seen


def line_counts(root: Path = ROOT, apps: Iterable[str] = PRODUCT) -> dict[str, int]:
    return {str(p.relative_to(root)): len(p.read_text().splitlines())
            for app in apps for p in sorted((root / app).rglob("*.py"))
            if "migrations" not in p.parts}


def oversized(counts: dict[str, int]) -> dict[str, int]:
    return {path: n for path, n in counts.items() if n >= MAX_LINES}


def _names(found: Iterable[frozenset[str]]) -> list[list[str]]:
    return sorted(sorted(circle) for circle in found)


def test_no_import_circle_beyond_the_known_ones():
    new = circles(import_graph(ROOT, PRODUCT)) - KNOWN_CIRCLES
    assert _names(new) == [], "these modules import each other round a circle (issue 32)"


def test_every_known_circle_still_exists_so_the_list_only_shrinks():
    gone = KNOWN_CIRCLES - circles(import_graph(ROOT, PRODUCT))
    assert _names(gone) == [], "broken or changed: update KNOWN_CIRCLES"


def test_every_product_module_is_under_400_lines_but_the_known_ones():
    big = oversized(line_counts())
    new = {path: n for path, n in big.items() if path not in KNOWN_OVERSIZED}
    grown = {path: n for path, n in big.items() if n > KNOWN_OVERSIZED.get(path, n)}
    assert new == {} and grown == {}, "split these modules (STYLE.md: under 400 lines)"


def test_every_known_oversized_module_still_is_so_the_list_only_shrinks():
    counts = line_counts()
    shrunk = {path: counts.get(path) for path, n in KNOWN_OVERSIZED.items()
              if counts.get(path, 0) < n}
    assert shrunk == {}, "shorter now: lower or delete these lines of KNOWN_OVERSIZED"


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for package in path.relative_to(root).parents:
            if package != Path("."):
                (root / package / "__init__.py").touch()
        path.write_text(text)


@pytest.mark.parametrize("files, expected", [
    # Two modules, one import each way; the second only while type checking.
    ({"cluster/adapters/a.py": "from cluster.adapters.b import B\n",
      "cluster/adapters/b.py": "from typing import TYPE_CHECKING\n"
                               "if TYPE_CHECKING:\n    from cluster.adapters.a import A\n"},
     [["cluster.adapters.a", "cluster.adapters.b"]]),
    # Three modules round a circle, through a relative import and one inside a function.
    ({"planner/core/x.py": "from . import y\n",
      "planner/core/y.py": "def f():\n    from planner.core.z import g\n",
      "planner/core/z.py": "import planner.core.x\n",
      "planner/core/w.py": "from planner.core import x\n"},
     [["planner.core.x", "planner.core.y", "planner.core.z"]]),
    # Across apps and into scripts.
    ({"history/h.py": "from scripts.s import run\n",
      "scripts/s.py": "from history import h\n"},
     [["history.h", "scripts.s"]]),
    # One way only: no circle.
    ({"healing/a.py": "from healing import b\n", "healing/b.py": "from healing import c\n",
      "healing/c.py": "import json\n"},
     []),
])
def test_a_planted_circle_is_caught(tmp_path, files, expected):
    for app in PRODUCT:
        (tmp_path / app).mkdir()
    _tree(tmp_path, files)
    assert _names(circles(import_graph(tmp_path, PRODUCT))) == expected


def test_a_planted_long_module_is_caught(tmp_path):
    _tree(tmp_path, {"webapp/long.py": "x = 1\n" * MAX_LINES,
                     "webapp/short.py": "x = 1\n" * (MAX_LINES - 1),
                     "webapp/migrations/0001_initial.py": "x = 1\n" * 1000,
                     "tests/test_long.py": "x = 1\n" * 1000})
    assert oversized(line_counts(tmp_path)) == {"webapp/long.py": MAX_LINES}
