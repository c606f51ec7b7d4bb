"""The hot state's meta as JSON, its large parts encoded again only when they change.

The meta is two keys, written together in a unit's fenced save (hot_save.py) and read
together in one command (meta_reading.py):
* ``meta``, small and moving: the core's cluster meta but its topics (SPUs, the next
  record id, cuts, the SPUs' fetch connections), the simulated producers' accounting
  (their clocks, carries, round robins), the Redis run id last checked, the SPUs' racks and
  what the engine's controllers adopted. A produce or a producer's run changes it.
* ``meta:topics``: the core's topic configs and the shell's topic tables (primary keys,
  partition primary keys, producer rates): a cluster's largest meta (3 MB at 10,000
  topics) changes only when a topic is added, dropped or set, and a save whose text is
  the one read writes none (issue 33, round 22: before, every produce and every tick with
  producers parsed and wrote all of it).

Each text's large parts are kept from the last write and reused while their values are
equal (a compare in C, where encoding them again was most of a save's meta): each topic's
partition list, shell table and core config, the whole tables and configs, the
connections. The texts are what ``json.dumps`` gives, but for the order of the core's keys.
A text written from kept values is kept as its own parse too (``MetaParts.parsed``): the
next load of the same bytes copies them instead of parsing.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from itertools import chain
from operator import attrgetter, is_, methodcaller
from types import MappingProxyType
from typing import Any, NamedTuple

from cluster.core.replication import ClusterState, TopicConfig, cluster_meta_to_dict
from cluster.core.replication.serial import TOPIC_FIELDS

# The meta's format: 2 since the meta is two keys (round 22); a meta without it is one key.
FORMAT = 2
# The stores whose topics' parse a process keeps (``MetaParts.parsed``): tests make many.
_PARSED_STORES = 4
# The texts kept beyond three a topic (its partitions, its shell table, its core config)
# before they are all dropped: those of topics gone since.
_MAX_PARTS = 4096
# A part whose text is shorter is parsed with the rest: looking it up costs more than that.
_REUSED_TEXT = 4096
# Where a topic's partition list stands in the topics' text (meta_reading.meta_loads).
PARTITIONS_AT = b'"partitions": '


class Parsed(NamedTuple):
    """A topics' text this process wrote or read, and what it reads back as."""
    raw: bytes
    digest: str                         # ``digest(raw)``, which the small key names
    configs: dict[str, TopicConfig]     # the configs (frozen: shared as they are)
    tables: dict[str, dict[str, Any]]   # each table's snapshot (shared read-only)
    # The configs' and tables' texts it was joined from, when this process wrote it: a
    # save whose parts are those very texts (kept whole) neither joins, encodes nor
    # digests 3 MB again.
    made_of: tuple[str, str] | None = None
    # Each table behind a read-only view, made once (``MetaParts.remember``): every load of
    # this text hands out these very objects, so a save finds its tables unchanged by
    # identity (``_topics_text``), without comparing or even visiting their values.
    views: dict[str, Any] | None = None


def digest(raw: bytes) -> str:
    """The topics' text's digest, which the small key holds: a load whose process kept
    the text of that digest reads neither the text nor parses it (meta_reading.py)."""
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


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
        # By namespace: the last topics' text this process wrote or read (``Parsed``):
        # what it reads back as, values nothing changes (``remember``, ``parsed_topics``).
        self.parsed: dict[str, Parsed] = {}

    def remember(self, namespace: str, parsed: Parsed) -> None:
        """``parsed.raw`` (the topics' JSON) reads back as its configs and tables, which
        nothing changes from now on."""
        self.parsed.pop(namespace, None)
        while len(self.parsed) >= _PARSED_STORES:
            del self.parsed[next(iter(self.parsed))]
        tables = parsed.tables
        self.parsed[namespace] = parsed._replace(
            views=dict(zip(tables, map(MappingProxyType, tables.values()))))

    def keep_parse(self, namespace: str, raw: bytes, configs: dict[str, TopicConfig],
                   tables: dict[str, Any]) -> str | None:
        """Keep what a topics' text ``raw`` read from Redis parsed as (nothing changes
        ``configs`` and ``tables`` from now on), when every table holds values of immutable
        types but its partition list; return the text's digest (None: not kept). A
        process that reads the meta without writing it (a page, ``replicated_topics``)
        parses the text once a change."""
        if not all(type(t) is dict and _kept_types(t) is not None for t in tables.values()):
            return None
        sum_ = digest(raw)
        self.remember(namespace, Parsed(raw, sum_, configs, tables))
        return sum_

    def parsed_topics(self, namespace: str, digest: str | None
                      ) -> tuple[bytes, dict[str, TopicConfig], dict[str, Any]] | None:
        """The topics' text whose digest is ``digest`` and what it reads back as, when it is
        the text kept (``remember``); None: not kept. The dictionaries are fresh (a unit
        adds and drops topics); the configs in them are the kept ones (frozen), and each
        table is the kept snapshot behind a read-only view, so a unit that would change one
        in place fails at once instead of changing what this process reads next (a unit
        replaces a table: spu_loops._apply_settings). Copying them was 1.5 us a topic, 15
        ms of every unit at 10,000 topics."""
        found = self.parsed.get(namespace)
        if found is None or digest is None or found.digest != digest or found.views is None:
            return None
        return found.raw, found.configs.copy(), found.views.copy()

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
                encoded = self.encoded[name] = PARTITIONS_AT + text.encode()
            out.append((encoded, frozen))
        return out


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


def _kept_types(table: Mapping[str, Any]) -> tuple[type, ...] | None:
    """A table's fields' types, when every one is immutable but its partition list (a
    list, the only one); None otherwise: a field of another type could change in place,
    so the table is never kept. (The types also make 1 and 1.0, equal but not their texts,
    two values.)"""
    types = tuple(map(type, table.values()))
    if _KEPT_TYPES.issuperset(types) and types.count(list) <= (
            type(table.get("partitions")) is list):
        return types
    return None


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
    types = _kept_types(snapshot)
    kept = types is not None
    frozen = (snapshot, types) if kept else object()

    def encode(fields: Mapping[str, Any]) -> str:
        if listed is None:  # (a kept table comes as a read-only view: MetaParts.parsed)
            return json.dumps(fields if isinstance(fields, dict) else dict(fields))
        return json.dumps({**fields, "partitions": _LISTED}).replace(_LISTED_TEXT, listed, 1)

    return (parts.part((namespace, "topic", name), frozen, lambda: table, encode),
            snapshot if kept else None)


def _topics(parts: MetaParts, namespace: str, topics: Mapping[str, Mapping[str, Any]]
            ) -> tuple[str, dict[str, Any] | None]:
    """The shell topic tables' JSON (the object's inside): kept whole while no table
    changed, a compare in C (an idle tick at 10,000 topics spent 25 ms asking each topic);
    else topic by topic (``_topic``). With it, the tables' snapshots it was made of (None:
    a field of a mutable type)."""
    whole = (namespace, "topics")
    last = parts.texts.get(whole)
    if last is not None:
        snapshots, names, types = last[0]
        # Equal values (deep, stopping at the first difference), in the same order, of the
        # same types.
        if topics == snapshots and list(topics) == names and _types(topics) == types:
            return last[1], snapshots
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
    return text, kept


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


def _same(values: Mapping[str, Any], kept: Mapping[str, Any]) -> bool:
    """Whether ``values`` holds the very objects ``kept`` does, under the same names in the
    same order (checked in C)."""
    return (len(values) == len(kept) and all(map(is_, values.values(), kept.values()))
            and list(values) == list(kept))


@lru_cache(maxsize=1 << 16)
def _name_json(name: str) -> str:
    return json.dumps(name)


class MetaTexts(NamedTuple):
    """The meta's two texts (hot_state ``meta`` and ``meta:topics``), encoded."""
    small: bytes   # the core but its topics, the producers' accounting, checked, racks,
    #                adopted, and the topics' text's digest
    topics: bytes  # the core's topic configs and the shell's topic tables


def meta_texts(namespace: str, state: ClusterState, topics: Mapping[str, Mapping[str, Any]],
               producers: Mapping[str, Any], checked: str | None, racks: dict[str, str],
               adopted: Mapping[str, Any] | None = None, *,
               parts: MetaParts | None = None) -> MetaTexts:
    """The meta's texts, reusing the unchanged parts ``parts`` kept (``namespace``: the
    store's, so two stores in one process keep apart). The small text changes with every
    produce (the next record id) and every producer's run; the topics' only when a topic
    is added, dropped or set, and the small one names it by its digest. When the topics'
    text is made of kept values, ``parts`` also keeps them as that text's parse
    (``MetaParts.parsed``): this process's next load of a meta naming that digest copies
    them instead of reading and parsing the text."""
    if parts is None:
        parts = MetaParts()
    parts.bound(max(len(topics), len(state.topics)))
    pairs = frozenset(state.connections)
    connections = parts.part((namespace, "connections"), pairs,
                             lambda: sorted([list(c) for c in pairs]))
    raw, sum_ = _topics_text(parts, namespace, state, topics)
    core_text = json.dumps(cluster_meta_to_dict(state, connections=False, topics=False))[:-1]
    small = (f'{{"format": {FORMAT}, "topics_digest": "{sum_}", "core": {core_text}, '
             f'"connections": {connections}}}, "producers": {json.dumps(producers)}, '
             f'"checked": {json.dumps(checked)}, "racks": {json.dumps(racks)}, '
             f'"adopted": {json.dumps(dict(adopted or {}))}}}')
    return MetaTexts(small.encode(), raw)


def _topics_text(parts: MetaParts, namespace: str, state: ClusterState,
                 topics: Mapping[str, Mapping[str, Any]]) -> tuple[bytes, str]:
    """The topics' text, encoded, and its digest; the text's parse kept when its values
    are (``MetaParts.remember``)."""
    last = parts.parsed.get(namespace)
    if (last is not None and last.views is not None and _same(state.topics, last.configs)
            and _same(topics, last.views)):
        # The very configs and tables the kept text reads back as (a unit replaces what it
        # changes: they are frozen and read-only): that text. Comparing them by value was
        # 15 ms of every idle tick at 10,000 topics, a cost a topic whatever changed.
        return last.raw, last.digest
    configs = _configs(parts, namespace, state.topics)
    tables, kept = _topics(parts, namespace, topics)
    if last is not None and last.made_of is not None and (
            last.made_of[0] is configs and last.made_of[1] is tables):
        return last.raw, last.digest  # the very texts of the last save: kept whole
    raw = f'{{"configs": [{configs}], "tables": {{{tables}}}}}'.encode()
    sum_ = digest(raw)
    if kept is not None:
        parts.remember(namespace, Parsed(raw, sum_, dict(state.topics), kept,
                                         (configs, tables)))
    return raw, sum_
