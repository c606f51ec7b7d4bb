"""The hot state's meta as JSON, its large parts encoded again only when they change.

The meta (hot_state ``meta`` key) is written with every save: the core's cluster meta,
the shell's topic table, the Redis run id last checked and the SPUs' racks. With
producers running it changes every tick (their clocks and carries), but its two large
parts seldom do: each topic's partition primary keys (10,000 ints for a topic of 10,000
partitions) and the SPUs' fetch connections (up to one per SPU pair). Their JSON text
is kept from the last write and reused while they are equal (a compare in C, where
encoding them again was most of a save's meta). The text is what ``json.dumps`` of the
whole meta gives, but for the order of the core's keys: readers parse it.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Callable
from typing import Any

from cluster.core.replication import ClusterState, cluster_meta_to_dict

_MAX_PARTS = 4096


class MetaParts:
    """The large parts' JSON text last written, by part: ``(namespace, "connections")`` and
    ``(namespace, "partitions", topic)`` -> (the value encoded, as an immutable copy; its
    text). A text is reused only while the value equals the one it was made of, so it is
    right whatever wrote the meta since; it only saves the encoding. The engine keeps one
    (``Engine.sets.meta``, handed to a unit of work's load with the set cache, so the save
    finds it on ``HotState.meta_parts``); a save without one encodes every part."""

    def __init__(self) -> None:
        self.texts: dict[Any, tuple[Any, str]] = {}

    def part(self, name: Any, frozen: Any, value: Callable[[], Any]) -> str:
        """The JSON of ``value()``, encoded again only when ``frozen`` (what it is made of)
        differs from last time."""
        last = self.texts.get(name)
        if last is not None and last[0] == frozen:
            return last[1]
        if len(self.texts) > _MAX_PARTS:
            self.texts.clear()
        text = json.dumps(value())
        self.texts[name] = (frozen, text)
        return text


def _topic(parts: MetaParts, namespace: str, name: str, table: Mapping[str, Any]) -> str:
    fields = []
    for field, value in table.items():
        if field == "partitions":
            text = parts.part((namespace, "partitions", name), tuple(value), lambda: value)
        else:
            text = json.dumps(value)
        fields.append(f"{json.dumps(field)}: {text}")
    return "{" + ", ".join(fields) + "}"


def meta_json(namespace: str, state: ClusterState, topics: Mapping[str, Mapping[str, Any]],
              checked: str | None, racks: dict[str, str],
              adopted: Mapping[str, Any] | None = None, *,
              parts: MetaParts | None = None) -> str:
    """``json.dumps`` of {"core", "topics", "checked", "racks", "adopted"}, reusing the
    unchanged parts ``parts`` kept (``namespace``: the store's, so two stores in one
    process keep apart)."""
    if parts is None:
        parts = MetaParts()
    pairs = frozenset(state.connections)
    connections = parts.part((namespace, "connections"), pairs,
                        lambda: sorted([list(c) for c in pairs]))
    core_text = json.dumps(cluster_meta_to_dict(state, connections=False))[:-1]
    core_text += f', "connections": {connections}}}'
    topics_text = ", ".join(f"{json.dumps(name)}: {_topic(parts, namespace, name, table)}"
                            for name, table in topics.items())
    return (f'{{"core": {core_text}, "topics": {{{topics_text}}}, '
            f'"checked": {json.dumps(checked)}, "racks": {json.dumps(racks)}, '
            f'"adopted": {json.dumps(dict(adopted or {}))}}}')
