"""Reading the meta's two keys back (meta_json.py writes them; hot_state.py loads them).

The topics' text (``meta:topics``) is read and parsed only when it is not the one this
process last wrote: a save keeps its text with the values it was made of
(``MetaParts.parsed``) and names its digest in the small key, and a load whose small key
names that digest copies those values, without reading the text. At 10,000 topics
reading and parsing it was 25 ms of every unit of work, a produce from the web included,
whatever the unit touched. Otherwise both keys are read again in one command (so a
reader that holds no lease gets the text that goes with the small key), and a large
partition list this process wrote and the text still holds, byte for byte, is rebuilt
from the value it was made of rather than parsed (``meta_loads``).

A meta written before the split (one ``meta`` key: its topics inside it, the producers'
accounting in the tables) is read as it stands; the next save writes both keys.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from cluster.adapters.meta_json import FORMAT, PARTITIONS_AT, MetaParts
from cluster.core.replication import TopicConfig

# What a reused part's text is replaced with before the rest is parsed: a JSON string no
# meta holds (a NUL, then the part's place in the parts taken), and how it reads back.
_TAKEN = "\0part:"
_SENTINEL = '"\\u0000part:{}"'
# The producers' accounting, which a meta of one key kept in each topic's table.
_PRODUCER_FIELDS = ("last_ms", "carry", "next")


class LoadedMeta(NamedTuple):
    """A stored meta, read back. Its dictionaries are fresh; the configs are frozen and
    the tables may be read-only views of a kept parse (``MetaParts.parsed_topics``): a
    unit replaces a table or config, never changes one in place."""
    core: dict[str, Any]                 # serial.cluster_meta_to_dict's, without its topics
    configs: dict[str, TopicConfig]      # the core's topics
    tables: dict[str, Any]               # the shell's topic tables (hot_types.TopicTable)
    producers: dict[str, dict[str, Any]]  # the simulated producers' accounting, by topic
    checked: str | None
    racks: dict[str, str]
    adopted: dict[str, Any]


def read_meta(small: bytes, namespace: str, parts: MetaParts | None,
              both: Callable[[], tuple[bytes | None, bytes | None]]
              ) -> tuple[LoadedMeta, bytes, bytes | None]:
    """The meta from its small key's bytes ``small`` and, unless ``parts`` (what this
    process wrote last under ``namespace``) holds the topics' text it names, from both
    keys read again together (``both``). With it, the two keys' bytes it stands for (the
    topics' None: that key is missing, as in a meta of one key)."""
    meta = json.loads(small)
    if meta.get("format") != FORMAT:
        return _one_key(meta), small, None
    found: tuple[bytes | None, dict[str, TopicConfig], dict[str, Any]] | None = (
        parts.parsed_topics(namespace, meta.get("topics_digest")) if parts else None)
    if found is None:
        again, topics = both()
        if again is not None and again != small:  # written since the first read
            small, meta = again, json.loads(again)
            if meta.get("format") != FORMAT:
                return _one_key(meta), small, None
        loaded = meta_loads(topics, namespace, parts) if topics else {}
        found = (topics, {c["name"]: TopicConfig(**c) for c in loaded.get("configs", ())},
                 loaded.get("tables", {}))
        if parts is not None and topics:  # kept, and handed out as a kept parse is
            kept = parts.keep_parse(namespace, topics, found[1], found[2])
            found = parts.parsed_topics(namespace, kept) or found
    raw, configs, tables = found
    return LoadedMeta(meta["core"], configs, tables, meta.get("producers") or {},
                      meta.get("checked"), meta.get("racks", {}),
                      meta.get("adopted") or {}), small, raw


def _one_key(meta: dict[str, Any]) -> LoadedMeta:
    """A meta written before the split: the core's topics in the core, the producers'
    accounting in the tables (taken out: the tables hold neither from now on)."""
    core = meta["core"]
    configs = {c["name"]: TopicConfig(**c) for c in core.pop("topics", ())}
    tables, producers = meta.get("topics", {}), {}
    for name, table in tables.items():
        moving = {f: table.pop(f) for f in _PRODUCER_FIELDS if f in table}
        if moving:
            producers[name] = moving
    return LoadedMeta(core, configs, tables, producers, meta.get("checked"),
                      meta.get("racks", {}), meta.get("adopted") or {})


def meta_loads(raw: bytes, namespace: str, parts: MetaParts | None) -> dict[str, Any]:
    """``json.loads(raw)`` of a stored topics' text, each large topic partition list that
    ``parts`` wrote last and ``raw`` still holds rebuilt from its value instead of parsed.
    A text that is not found (another process wrote the meta since, with other partitions)
    is parsed as usual; should a sentinel not land as a topic's partitions (it cannot: a
    list of several hundred primary keys is that topic's alone), the whole is parsed
    again."""
    reusable = parts.reusable(namespace) if parts is not None else []
    original = raw
    taken: list[Sequence[int]] = []
    for text, frozen in reusable:
        at = raw.find(text)
        if at < 0:
            continue
        sentinel = _SENTINEL.format(len(taken)).encode()
        raw = b"%b%b%b" % (raw[:at + len(PARTITIONS_AT)], sentinel, raw[at + len(text):])
        taken.append(frozen)
    meta = json.loads(raw)
    if not taken:
        return meta
    placed = 0
    for table in meta.get("tables", {}).values():
        value = table.get("partitions") if isinstance(table, dict) else None
        if isinstance(value, str) and value.startswith(_TAKEN):
            table["partitions"] = list(taken[int(value[len(_TAKEN):])])
            placed += 1
    return meta if placed == len(taken) else json.loads(original)
