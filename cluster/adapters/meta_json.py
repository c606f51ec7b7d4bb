"""The hot state's meta as JSON, its large parts encoded again only when they change.

The meta (hot_state ``meta`` key) is written with every save: the core's cluster meta,
the shell's topic table, the Redis run id last checked and the SPUs' racks. With
producers running it changes every tick (their clocks and carries), but its two large
parts seldom do: each topic's partition primary keys (10,000 ints for a topic of 10,000
partitions) and the SPUs' fetch connections (up to one per SPU pair). Their JSON text
is kept from the last write and reused while they are equal (a compare in C, where
encoding them again was most of a save's meta). So is each topic's shell table and core
config, small but one of each a topic: at 1,000 topics encoding them all again was half
of an idle tick (issue 33, round 20). The text is what ``json.dumps`` of the
whole meta gives, but for the order of the core's keys: readers parse it.

A unit of work's load parses it back (``meta_loads``) with the same kept texts: a large
part whose text is in the stored meta, byte for byte, is not parsed again but rebuilt
from the value it was made of (a topic of 100,000 partitions made the meta 0.7 MB, and
parsing it was 15 ms of every unit of work, a third of a mostly steady tick).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from itertools import chain
from operator import attrgetter, methodcaller
from typing import Any

from cluster.core.replication import ClusterState, TopicConfig, cluster_meta_to_dict
from cluster.core.replication.serial import TOPIC_FIELDS

# The texts kept beyond three a topic (its partitions, its shell table, its core config)
# before they are all dropped: those of topics gone since.
_MAX_PARTS = 4096
# A part whose text is shorter is parsed with the rest: looking it up costs more than that.
_REUSED_TEXT = 4096
# Where a topic's partition list stands in the meta's text.
_PARTITIONS = b'"partitions": '
# What a reused part's text is replaced with before the rest is parsed: a JSON string no
# meta holds (a NUL, then the part's place in the parts taken), and how it reads back.
_TAKEN = "\0part:"
_SENTINEL = '"\\u0000part:{}"'


class MetaParts:
    """The large parts' JSON text last written, by part: ``(namespace, "connections")`` and
    ``(namespace, "partitions", topic)`` -> (the value encoded, as a copy nothing changes; its
    text). A text is reused only while the value equals the one it was made of, so it is
    right whatever wrote the meta since; it only saves the encoding. The engine keeps one
    (``Engine.sets.meta``, handed to a unit of work's load with the set cache, so the save
    finds it on ``HotState.meta_parts``); a save without one encodes every part."""

    def __init__(self) -> None:
        self.texts: dict[Any, tuple[Any, str]] = {}
        # The names in ``texts`` of the partition lists long enough to be reused by
        # ``meta_loads`` (``reusable``): looked up without a pass over every kept text.
        self.long: dict[Any, None] = {}
        # The large partition lists' texts as a stored meta holds them (bytes, after
        # ``"partitions": ``), made on first use: encoding 0.9 MB was 0.8 ms a load.
        self.encoded: dict[Any, bytes] = {}

    def part(self, name: Any, frozen: Any, value: Callable[[], Any],
             encode: Callable[[Any], str] = json.dumps) -> str:
        """``encode(value())`` (its JSON), encoded again only when ``frozen`` (what it is
        made of) differs from last time."""
        last = self.texts.get(name)
        if last is not None and last[0] == frozen:
            return last[1]
        text = encode(value())
        self.texts[name] = (frozen, text)
        self.encoded.pop(name, None)
        if name[1:2] == ("partitions",) and len(text) >= _REUSED_TEXT:
            self.long[name] = None
        return text

    def bound(self, topics: int) -> None:
        """Drop every kept text once they are many more than the meta of ``topics`` topics
        holds (those of topics dropped since)."""
        if len(self.texts) > 3 * topics + _MAX_PARTS:
            self.texts.clear()
            self.encoded.clear()
            self.long.clear()

    def reusable(self, namespace: str) -> list[tuple[bytes, Sequence[int]]]:
        """The large topic partition lists kept for ``namespace``: (their text as the
        stored meta holds it, bytes, ``"partitions": `` first; the value), for
        ``meta_loads``."""
        out = []
        for name in self.long:
            found = self.texts.get(name)
            if name[0] != namespace or found is None or len(found[1]) < _REUSED_TEXT:
                continue
            frozen, text = found
            encoded = self.encoded.get(name)
            if encoded is None:
                encoded = self.encoded[name] = _PARTITIONS + text.encode()
            out.append((encoded, frozen))
        return out


def meta_loads(raw: bytes, namespace: str, parts: MetaParts | None) -> dict[str, Any]:
    """``json.loads(raw)`` of a stored meta, each large topic partition list that ``parts``
    wrote last and ``raw`` still holds rebuilt from its value instead of parsed. A text
    that is not found (another process wrote the meta since, with other partitions) is
    parsed as usual; should a sentinel not land as a topic's partitions (it cannot: a list
    of several hundred primary keys is that topic's alone), the whole is parsed again."""
    reusable = parts.reusable(namespace) if parts is not None else []
    original = raw
    taken: list[Sequence[int]] = []
    for text, frozen in reusable:
        at = raw.find(text)
        if at < 0:
            continue
        sentinel = _SENTINEL.format(len(taken)).encode()
        raw = b"%b%b%b" % (raw[:at + len(_PARTITIONS)], sentinel, raw[at + len(text):])
        taken.append(frozen)
    meta = json.loads(raw)
    if not taken:
        return meta
    placed = 0
    for table in meta.get("topics", {}).values():
        value = table.get("partitions") if isinstance(table, dict) else None
        if isinstance(value, str) and value.startswith(_TAKEN):
            table["partitions"] = list(taken[int(value[len(_TAKEN):])])
            placed += 1
    return meta if placed == len(taken) else json.loads(original)


# The types a topic table's field may hold for its text to be kept: immutable, so the
# value compared next time is the one the text was made of.
_SCALARS = frozenset({int, float, str, bool, type(None)})
# ... and a table's snapshot (``_topic``: its partitions as a list of ints, copied).
_KEPT_TYPES = _SCALARS | {list}
# A partition list at least this long is kept as a part of its own (its text reused when
# the table around it changes, as the producers' clocks do every tick); a shorter one is
# encoded with its table, in C.
_LONG_LIST = 256
# Where a long list's text goes in its table's (a JSON string no table holds).
_LISTED = "\0listed"
_LISTED_TEXT = json.dumps(_LISTED)
_CONFIG_VALUES = attrgetter(*TOPIC_FIELDS)
_VALUES = methodcaller("values")


def _topic(parts: MetaParts, namespace: str, name: str, table: Mapping[str, Any]
           ) -> tuple[str, dict[str, Any] | None]:
    """A shell topic table's JSON: kept while its fields (and its partitions) stay as they
    were, else encoded in one C call (at 2,000 topics with producers, whose clocks change
    every tick, encoding each table field by field was a quarter of a busy tick); and the
    table's snapshot that text was made of (None: a field of a mutable type)."""
    partitions = table.get("partitions")
    snapshot = dict(table)
    listed: str | None = None
    if partitions is not None:
        # One copy: the snapshot's, and what a long list's own text is kept against.
        snapshot["partitions"] = copied = list(partitions)
        if len(copied) >= _LONG_LIST:
            listed = parts.part((namespace, "partitions", name), copied, lambda: copied)
    types = tuple(map(type, snapshot.values()))
    # A field of another type (mutable: it could change in place) is never taken as kept;
    # the types make 1 and 1.0 (equal, their texts not) two values.
    kept = _KEPT_TYPES.issuperset(types) and types.count(list) <= (partitions is not None)
    frozen = (snapshot, types) if kept else object()

    def encode(fields: Mapping[str, Any]) -> str:
        if listed is None:
            return json.dumps(fields)
        return json.dumps({**fields, "partitions": _LISTED}).replace(_LISTED_TEXT, listed, 1)

    return (parts.part((namespace, "topic", name), frozen, lambda: table, encode),
            snapshot if kept else None)


def _topics(parts: MetaParts, namespace: str, topics: Mapping[str, Mapping[str, Any]]) -> str:
    """The shell topic tables' JSON (the object's inside): kept whole while no table
    changed, a compare in C (an idle tick at 10,000 topics spent 25 ms asking each topic);
    else topic by topic (``_topic``)."""
    whole = (namespace, "topics")
    last = parts.texts.get(whole)
    if last is not None:
        snapshots, names, types = last[0]
        # Equal values (deep, stopping at the first difference), in the same order, of the
        # same types.
        if topics == snapshots and list(topics) == names and _types(topics) == types:
            return last[1]
    pieces: list[str] = []
    kept: dict[str, Any] | None = {}
    for name, table in topics.items():
        text, snapshot = _topic(parts, namespace, name, table)
        pieces.append(f"{_name_json(name)}: {text}")
        if kept is not None:
            if snapshot is None:
                kept = None
            else:
                kept[name] = snapshot
    text = ", ".join(pieces)
    if kept is None:
        parts.texts.pop(whole, None)
    else:
        parts.texts[whole] = ((kept, list(kept), _types(kept)), text)
    return text


def _types(topics: Mapping[str, Mapping[str, Any]]) -> list[type]:
    """Every table's values' types, in order, in one pass in C."""
    return list(map(type, chain.from_iterable(map(_VALUES, topics.values()))))


def _configs(parts: MetaParts, namespace: str, topics: Mapping[str, TopicConfig]) -> str:
    """The core topics' configs as JSON (serial.topic_to_dict, the list's inside): kept
    whole while every config's fields and their types are as they were (read in C), else
    config by config."""
    values = list(map(_CONFIG_VALUES, topics.values()))
    frozen = (values, list(map(type, chain.from_iterable(values))))
    whole = (namespace, "configs")
    last = parts.texts.get(whole)
    if last is not None and last[0] == frozen:
        return last[1]
    text = ", ".join([_core_topic(parts, namespace, v) for v in values])
    parts.texts[whole] = (frozen, text)
    return text


def _core_topic(parts: MetaParts, namespace: str, values: tuple[Any, ...]) -> str:
    """A core topic's config as JSON (``values``: its fields'), kept while its fields are."""
    return parts.part((namespace, "config", values[0]), (values, tuple(map(type, values))),
                      lambda: dict(zip(TOPIC_FIELDS, values)))


@lru_cache(maxsize=1 << 16)
def _name_json(name: str) -> str:
    return json.dumps(name)


def meta_json(namespace: str, state: ClusterState, topics: Mapping[str, Mapping[str, Any]],
              checked: str | None, racks: dict[str, str],
              adopted: Mapping[str, Any] | None = None, *,
              parts: MetaParts | None = None) -> str:
    """``json.dumps`` of {"core", "topics", "checked", "racks", "adopted"}, reusing the
    unchanged parts ``parts`` kept (``namespace``: the store's, so two stores in one
    process keep apart)."""
    if parts is None:
        parts = MetaParts()
    parts.bound(max(len(topics), len(state.topics)))
    pairs = frozenset(state.connections)
    connections = parts.part((namespace, "connections"), pairs,
                        lambda: sorted([list(c) for c in pairs]))
    configs = _configs(parts, namespace, state.topics)
    core_text = json.dumps(cluster_meta_to_dict(state, connections=False, topics=False))[:-1]
    core_text += f', "topics": [{configs}], "connections": {connections}}}'
    topics_text = _topics(parts, namespace, topics)
    return (f'{{"core": {core_text}, "topics": {{{topics_text}}}, '
            f'"checked": {json.dumps(checked)}, "racks": {json.dumps(racks)}, '
            f'"adopted": {json.dumps(dict(adopted or {}))}}}')
