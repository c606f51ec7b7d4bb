"""The engine's wiring is arguments of one object (composition/bootstrap.py, issue 32): no new
hook registry (an ``install_*`` / ``register_*`` function that an app fills at ready), no
new ContextVar, no Django signal carrying wiring and no new module-level cache in the
product code (what a process keeps between units of work is the engine's).

What is left is listed by name in the ``KNOWN_*`` sets, each with why; the tests fail on a
new one and on a listed one that is gone, so the lists can only shrink.
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PRODUCT = ("cluster", "planner", "healing", "history", "webapp", "composition")
# A function that fills a module-level registry: ``install``, ``install_x``, ``register_x``.
REGISTRY = re.compile(r"^(install|register)(_\w+)?$")
# Pure-core functions of the same shape that are rules, not wiring (election's "install this
# replica as the leader", the state's "register an SPU").
NOT_WIRING = frozenset({"cluster.core.replication.election.install_leader",
                        "cluster.core.replication.state.register_spu"})

KNOWN_REGISTRIES: frozenset[str] = frozenset()
KNOWN_CONTEXT_VARS: frozenset[str] = frozenset({
    # The store's namespace bound for a use case, read by ``key()``: 45 calls in 15 modules
    # (hot state, metadata log, leases, counters, live sequences, shard owners, services).
    # Every shell binds it through the engine (a request: webapp.middleware.BindStore; a
    # command: _cli.handle; a task: webapp.celery.StoreTask; the worker's presence thread;
    # the live flush timer runs in the binding's context) and a key made outside any binding
    # is an error (redis_keys.UnboundStore), no provider behind it. A unit's HotState carries
    # it (``namespace``); the other keys of a unit still read the binding. Explicit, it is a
    # namespace argument of every one of those functions: not done in this round (issue 32).
    "cluster.adapters.redis_keys._bound",
})


KNOWN_MODULE_STATE: frozenset[str] = frozenset({
    # The engine's one handle (cluster/engine/engine.py says why).
    "cluster.engine.engine._current",
    # The lazy core packages' import machinery (which module defines which name): a fact of
    # the source tree, the same for every store and lease, never engine state.
    "cluster.core.lazy._init_files",
    "cluster.core.lazy._sources",
    # Connections and senders per settings (tests switch Redis), not engine state.
    "cluster.adapters.redis_keys._clients", "cluster.adapters.live_batches._senders",
    # The live groups whose window this process holds, each with the loads builder its
    # stager handed down: the flush timer's state (a thread's), not the engine's.
    "cluster.adapters.live_batches._held",
    # Shells' and readers' caches outside the engine: a consumer's reader, a worker's
    # threads, the moments page, history's decoded sets, the planner's moves, healing's.
    "cluster.consumers._readers", "cluster.tasks._node_queue", "cluster.tasks._presence",
    "cluster.selectors.moments._cache", "history.selectors._decoded",
    "planner.running._moves_cache", "healing.members._kept", "healing.snapshot._read",
})
MUTABLE_CALLS = ("dict", "list", "set", "defaultdict", "OrderedDict")


def _modules() -> dict[str, ast.Module]:
    return _parsed()


@functools.cache
def _parsed() -> dict[str, ast.Module]:
    found = {}
    for app in PRODUCT:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = ast.parse(path.read_text(), filename=str(path))
    return found


def registries() -> set[str]:
    return {f"{module}.{node.name}" for module, tree in _modules().items()
            for node in tree.body if isinstance(node, ast.FunctionDef)
            and REGISTRY.match(node.name)} - NOT_WIRING


def _called(node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name)


def module_level(name: str) -> set[str]:
    """``module.target`` for each ``target = name(...)`` at a module's top level."""
    found = set()
    for module, tree in _modules().items():
        for node in tree.body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if value is None or not _called(value, name):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {f"{module}.{t.id}" for t in targets if isinstance(t, ast.Name)}
    return found


def _is_empty_mutable(value: ast.expr) -> bool:
    if isinstance(value, ast.Dict):
        return not value.keys
    if isinstance(value, (ast.List, ast.Set)):
        return not value.elts
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id in MUTABLE_CALLS and not value.args)


def module_state() -> set[str]:
    """``module.name`` for each empty dict, list or set a module starts with (a cache or a
    registry: something filled while the process runs), constants in capitals aside."""
    found = set()
    for module, tree in _modules().items():
        for node in tree.body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if value is None or not _is_empty_mutable(value):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {f"{module}.{t.id}" for t in targets
                      if isinstance(t, ast.Name) and not t.id.isupper()}
    return found


def test_no_module_cache_beyond_the_known_ones():
    assert sorted(module_state() - KNOWN_MODULE_STATE) == [], \
        "keep it in an object the Engine holds (engine.mirror, say), issue 32"


def test_every_known_module_cache_still_exists_so_the_list_only_shrinks():
    assert sorted(KNOWN_MODULE_STATE - module_state()) == [], "gone: delete it from the list"


def test_no_hook_registry_beyond_the_known_ones():
    assert sorted(registries() - KNOWN_REGISTRIES) == [], \
        "wire it as an argument of Engine in composition/bootstrap.py (issue 32)"


def test_every_known_registry_still_exists_so_the_list_only_shrinks():
    assert sorted(KNOWN_REGISTRIES - registries()) == [], "gone: delete it from the list"


def test_no_context_var_beyond_the_known_ones():
    assert sorted(module_level("ContextVar") - KNOWN_CONTEXT_VARS) == [], \
        "pass the unit of work (HotState: log, stage, after_commit) instead (issue 32)"


def test_every_known_context_var_still_exists_so_the_list_only_shrinks():
    assert sorted(KNOWN_CONTEXT_VARS - module_level("ContextVar")) == [], \
        "gone: delete it from the list"


def test_no_signal_carries_wiring():
    assert sorted(module_level("Signal")) == [], "an Engine argument, not a signal"


def test_the_finders_see_a_planted_registry_and_context_var(monkeypatch):
    planted = ast.parse("from contextvars import ContextVar\n"
                        "_x: ContextVar[int] = ContextVar('x')\n"
                        "_seen: dict[str, int] = {}\n"
                        "def install_thing(f): ...\n")
    real = _modules()
    monkeypatch.setattr(__import__(__name__, fromlist=["_modules"]), "_modules",
                        lambda: {**real, "cluster.adapters.planted": planted})
    assert "cluster.adapters.planted.install_thing" in registries()
    assert "cluster.adapters.planted._x" in module_level("ContextVar")
    assert "cluster.adapters.planted._seen" in module_state()
