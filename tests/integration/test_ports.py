"""cluster/ports.py is a facade over the engine's modules, never a copy of their names:
a test that patches ``cluster.adapters.<module>.<name>`` must be seen by an app that
reaches the engine through the port (issue 32, "one public surface")."""
from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

import pytest

from cluster import ports
from cluster.adapters import hot_state, live_seqs, metadata_log, redis_keys
from cluster.engine import engine as engine_module
from cluster.projections import store as store_projection

SENTINEL = object()


@pytest.mark.parametrize("port, module, name, args", [
    (ports.log_head, metadata_log, "head", ()),
    (ports.log_start, metadata_log, "start", ()),
    (ports.log_stream_key, metadata_log, "stream_key", ()),
    (ports.read_log, metadata_log, "read", (3, 10)),
    (ports.read_log_from, metadata_log, "read_all", (3, 10)),
    (ports.applied_offset, store_projection, "applied_offset", ()),
    (ports.catch_up_store, store_projection, "catch_up", ()),
    (ports.summary, hot_state, "summary", ("a set",)),
    (ports.engine, engine_module, "current", ()),
    (ports.next_live_seq, live_seqs, "next_seq", ("cluster",)),
])
def test_a_port_calls_the_module_that_owns_it_so_its_patches_are_seen(
        monkeypatch, port: Callable[..., Any], module: Any, name: str,
        args: tuple[Any, ...]):
    calls: list[tuple[Any, ...]] = []

    def patched(*given: Any, **_options: Any) -> object:
        calls.append(given)
        return SENTINEL

    monkeypatch.setattr(module, name, patched)
    returned = port(*args)
    assert calls == [args]
    assert returned in (SENTINEL, None)


def test_a_unit_through_the_port_is_the_current_engines_with_the_scope_given(monkeypatch):
    scopes: list[dict[str, Any]] = []

    class Engine:
        def unit(self, **scope: Any) -> object:
            scopes.append(scope)
            return SENTINEL

    monkeypatch.setattr(engine_module, "current", Engine)
    assert ports.unit(keys=[], now=5) is SENTINEL
    assert scopes == [{"keys": [], "now": 5}]


def test_the_store_namespace_outside_any_binding_is_read_from_the_engines_store_id():
    def unbound() -> None:
        assert ports.store_namespace() == "store-e"
        with ports.bound_to_store() as namespace:
            assert namespace == "store-e"
            assert redis_keys.store_namespace() == "store-e"
        with ports.bound_to_store("store-a"):
            assert ports.store_namespace() == "store-a"  # a use case's binding comes first

    with engine_module.using(ports.engine().replaced(store_id=lambda: "store-e")):
        contextvars.Context().run(unbound)


def test_a_key_made_outside_any_binding_is_refused_rather_than_guessed():
    def unbound() -> None:  # a fresh context: no shell's binding, not even the test's
        with pytest.raises(redis_keys.UnboundStore):
            redis_keys.key("meta")
        with pytest.raises(redis_keys.UnboundStore):
            hot_state.META  # noqa: B018  the module attribute is a key too

    with engine_module.using(ports.engine().replaced(store_id=lambda: "store-e")):
        contextvars.Context().run(unbound)


def test_a_shells_binding_reads_the_store_id_at_its_first_key_and_only_once():
    reads: list[str] = []

    def store_id() -> str:
        reads.append("read")
        return "store-s"

    def shell() -> None:
        with ports.engine().serving():
            assert reads == []  # a request that makes no key reads no store row
            assert redis_keys.key("meta") == "repl:{store-s}:meta"
            assert redis_keys.key("fence") == "repl:{store-s}:fence"
            with ports.bound_to_store() as inner:
                assert inner == "store-s"  # a use case inside the shell reads no row again
            with ports.bound_to_store("store-b") as inner:
                assert inner == "store-b"  # an id a use case was given comes first

    with engine_module.using(ports.engine().replaced(store_id=store_id)):
        contextvars.Context().run(shell)
    assert reads == ["read"]


def test_binding_the_store_through_the_port_binds_the_adapters_namespace():
    with ports.bound_to_store("store-a") as namespace:
        assert namespace == "store-a"
        assert redis_keys.store_namespace() == "store-a"
        with ports.bound_to_store("store-b") as inner:
            assert inner == "store-a"  # nested binds keep the outer one
