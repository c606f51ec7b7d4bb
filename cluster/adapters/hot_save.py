"""Saving a unit of work's hot state: compaction, encoding, and the fenced write.

Split from hot_state.py (which loads, and re-exports ``save``, ``save_sets`` and
``save_meta``, so callers and tests keep naming them there). A save encodes the sets that
changed (save_encoding.py; core.replication.steady: steady sets its predecessor encoded
are passed over), then writes them with the meta and the unit's log entries: one fenced
transaction, or bounded pieces for a large save (save_pieces.py), on one server or on each
of several the hot state is spread over (hot_servers.py).
"""
from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import Any


from cluster.adapters import (drop_pieces, hot_servers, lease, metadata_log, redis_keys,
                              save_pieces, set_cache, set_records, shards, spu_index,
                              status_rows)
from cluster.adapters.hot_records import values_key
from cluster.adapters.hot_types import HotState
from cluster.adapters.lease import Held, WriteOp
from cluster.adapters.meta_json import meta_texts
from cluster.adapters.redis_keys import client, key
from cluster.adapters.save_encoding import Encoded, compact_and_encode
from cluster.adapters.set_loading import sets_key
from cluster.core.replication import Key, ReplicaSet

LogEntries = Callable[[list[Key]], list[dict[str, Any]]]


def _meta_ops(hot: HotState) -> list[WriteOp]:
    """The meta's two writes (meta_json.py), each text encoded once (compared as bytes,
    sent as bytes)."""
    texts = meta_texts(hot.namespace or redis_keys.store_namespace(), hot.state, hot.topics,
                       hot.producers, hot.checked, hot.racks, hot.adopted,
                       parts=hot.meta_parts)
    return [WriteOp("set", key("meta"), texts.small),
            WriteOp("set", key("meta:topics"), texts.topics)]


def _meta_writes(hot: HotState, meta: list[WriteOp] | None) -> list[WriteOp]:
    """The meta's writes, but of each key whose text is the very one the load read under
    the leases this save holds (the topics' at nearly every save: at 10,000 topics, 3 MB;
    the small one at a quiet tick)."""
    return [op for op in meta or () if op.arg != hot.meta_raw.get(op.key)]


def save(hot: HotState, held: Held, *, retain: int | None = None,
         log: LogEntries | None = None) -> list[Key]:
    """Write the replica sets whose encoding changed, the meta, and drop the values
    compaction released, fenced by the leases ``held``, with the log entries ``log`` gives
    for the changed sets
    (one transaction, or bounded pieces for a large save: save_pieces; spread over several
    servers, each server's part so: _save_spread); return the keys of the changed sets."""
    later = drop_pieces.later(hot)  # the dropped topics' keys: deleted once this lands
    now = [name for name in sorted(hot.dropped) if name not in later]  # deleted in it
    if hot_servers.spread():
        keys = _save_spread(hot, held, retain, log, whole=True, dropped=now, later=later)
    else:
        records = set_records.Writes()
        for name in now:  # read before the write; the lease is held
            for p in client().hkeys(sets_key(name)):
                records.delete((name, int(p)))
        encoded = compact_and_encode(hot, retain, records, rows=status_rows.allowed(hot))
        head = [WriteOp("del", k) for name in now
                for k in (sets_key(name), values_key(name), status_rows.rows_key(name))]
        keys = _write_sets(hot, held, encoded, records, log,
                           head=head + drop_pieces.noted(later), meta=_meta_ops(hot),
                           kept=lambda name: name in hot.topics)
    drop_pieces.delete(held, later)
    return keys


def _write_sets(hot: HotState, held: Held, encoded: Encoded, records: set_records.Writes,
                log: LogEntries | None, *, head: list[WriteOp], meta: list[WriteOp] | None,
                kept: Callable[[str], bool]) -> list[Key]:
    """The save's fenced write on one server: one transaction, or pieces (save_pieces) when
    it is large, plain (no topic dropped, no entry noted but the SPU table's) and its
    entries allow (a made topic's sets go before the last piece, which names them).
    Returns every changed set's key (``Encoded.every_key``, built once)."""
    every = encoded.every_key
    entries = log(every) if log else []
    whole = save_pieces.whole_for_noted(hot.log) or hot.dropped
    hold = None if whole else save_pieces.held_sets(entries, hot.moved, hot.added)
    pieces = _cut(hot, encoded, records, hold, head + _leftover_ops(hot.added),
                  encoded.released, kept)
    generated: Ops = {}
    token = _generation_ops(generated, held)
    generations = generated.get(hot_servers.HOME, [])
    # The index of the sets by SPU, with the last piece only (the one that lands last).
    tail = _meta_writes(hot, meta) + spu_index.ops(hot, token).get(hot_servers.HOME, [])
    if len(pieces) == 1:
        generations += _noted(hot, token, every)
    else:
        # The first piece stores the staged values and keeps record ids unique (save_pieces).
        floor = ([shards.record_ids_floor_op(hot.state.next_record_id)] if meta is not None
                 else [])
        pieces[0] = hot.staged + floor + pieces[0]
        hot.staged = []
        for piece in pieces[:-1]:
            lease.fenced_write(held, piece + generations)
    _write_with_log(hot, held, {hot_servers.HOME: pieces[-1] + tail + generations}, entries)
    hot.generation = token
    return every


def _leftover_ops(made: Iterable[str], server: int = hot_servers.HOME) -> list[WriteOp]:
    """Deletes of what a save stopped between its pieces (or its servers) left of the
    topics ``made`` on ``server`` (save_pieces.made_ops): read first, under the lease, one
    round trip in all."""
    names = sorted(made)
    if not names:
        return []
    pipe = hot_servers.client_of(server).pipeline(transaction=False)
    for name in names:
        pipe.hkeys(sets_key(name))
    found = {name: [f.decode() for f in fields]
             for name, fields in zip(names, pipe.execute()) if fields}
    # (A name an unfinished drop left in ``dropping``: deleted here, so no later sweep
    # deletes the topic made again.)
    forgotten = drop_pieces.forgotten(names) if server == hot_servers.HOME else []
    return save_pieces.made_ops(found, sets_key, values_key) + forgotten


def _pieces(encoded: Encoded, records: set_records.Writes, parts: list[save_pieces.Group],
            kept: Callable[[str], bool]) -> list[list[WriteOp]]:
    """Each piece's writes of its sets: from slices of the save's aligned lists when the
    pieces are slices of its keys (save_pieces.slice_ops), else set by set (``set_ops``)."""
    keys, released = encoded.keys, encoded.released
    plain = not records.deletes and len(records.aligned) == len(keys)
    spans = save_pieces.spans(keys, parts) if plain else None
    if spans is None:
        return [save_pieces.set_ops(group, encoded.changed, records, released, sets_key,
                                    values_key, kept) for group in parts]
    n = len(keys)
    # The released sets that changed, by their place in ``keys`` (released_at's order).
    places = [(i, k) for k, i in encoded.released_at.items() if i < n and keys[i] == k]
    sets = save_pieces.Aligned(keys, encoded.names, encoded.values, records.aligned,
                               encoded.runs, places)
    pieces = []
    for (start, end), group in zip(spans, parts):
        ops = save_pieces.slice_ops(sets, start, end, released, sets_key, values_key, kept)
        pieces.append(ops if ops is not None else save_pieces.set_ops(
            group, encoded.changed, records, released, sets_key, values_key, kept))
    return pieces


Ops = dict[int, list[WriteOp]]  # each server's part of a commit (hot_servers.py)


def _save_spread(hot: HotState, held: Held, retain: int | None, log: LogEntries | None,
                 *, whole: bool, dropped: list[str] | None = None,
                 later: list[str] | None = None) -> list[Key]:
    """``save`` (``whole``: with the meta and the dropped topics) or ``save_sets`` over
    several servers: each server's part in bounded pieces when it is large and plain (as
    ``_write_sets`` cuts one server's), else in one transaction; every server's last piece
    before the first server's, which carries the log (``_write_with_log``). ``dropped``:
    the dropped topics whose keys it deletes; ``later``: those deleted once it lands
    (drop_pieces)."""
    dropped = dropped or []
    encoded_by = _encode_by_server(hot, retain, dropped)
    keys = [k for encoded, _ in encoded_by.values() for k in encoded.every_key]
    released: dict[Key, list[int]] = {}
    for encoded, _ in encoded_by.values():
        released.update(encoded.released)
    entries = log(keys) if log else []
    plain = not (save_pieces.whole_for_noted(hot.log) or hot.dropped)
    hold = save_pieces.held_sets(entries, hot.moved, hot.added) if plain else None
    ops: Ops = {}
    early: dict[int, list[list[WriteOp]]] = {}
    for server, (encoded, records) in encoded_by.items():
        # The values compaction released live on the first server: dropped there, last.
        head = [WriteOp("del", k) for name in dropped
                for k in (sets_key(name), status_rows.rows_key(name))]
        head += _leftover_ops(hot.added if whole else (), server)
        pieces = _cut(hot, encoded, records, hold, head, {}, lambda _: False)
        early[server], ops[server] = pieces[:-1], pieces[-1]
    home = ops.setdefault(hot_servers.HOME, [])
    if whole:
        home += [WriteOp("del", values_key(name)) for name in dropped]
    home += save_pieces.released_ops(released, values_key, None,
                                     lambda name: not whole or name in hot.topics)
    if whole:
        home += _meta_writes(hot, _meta_ops(hot)) + drop_pieces.noted(later or ())
    generated: Ops = {}
    token = _generation_ops(generated, held)
    for server, written in generated.items():
        ops.setdefault(server, []).extend(written)
    for server, written in spu_index.ops(hot, token).items():  # each with its generation
        ops.setdefault(server, []).extend(written)
    for note in _noted(hot, token, keys):  # beside its lease's generation, on its server
        ops.setdefault(hot_servers.server_of_lock(note.key), []).append(note)
    if any(early.values()):
        _write_early(hot, held, early, generated, floor=whole)
    _write_with_log(hot, held, ops, entries)
    hot.generation = token
    return keys


def _encode_by_server(hot: HotState, retain: int | None, dropped: Iterable[str]
                      ) -> dict[int, tuple[Encoded, set_records.Writes]]:
    """Each server's changed sets encoded (compaction first), with their records' writes
    (and the deletes of the records of ``dropped`` topics, read there under the lease)."""
    groups: dict[int, dict[Key, ReplicaSet]] = {s: {} for s in hot_servers.servers()}
    for set_key, rs in hot.state.replica_sets.items():
        groups[shards.server_of(set_key)][set_key] = rs
    out = {}
    for server, sets in groups.items():
        records = set_records.Writes()
        for name in dropped:  # read before the write; the lease is held
            for p in hot_servers.client_of(server).hkeys(sets_key(name)):
                records.delete((name, int(p)))
        out[server] = (compact_and_encode(hot, retain, records, sets,
                                          rows=status_rows.allowed(hot)), records)
    return out


def _cut(hot: HotState, encoded: Encoded, records: set_records.Writes, hold: set[Key] | None,
         head: list[WriteOp], released: dict[Key, list[int]], kept: Callable[[str], bool]
         ) -> list[list[WriteOp]]:
    """One server's writes of its changed sets, their records, its blocks' rows (a block is
    one shard's, so on one server) and the values of ``released`` their compaction
    released (of the topics ``kept`` says still exist), ``head`` first: one piece, or
    bounded pieces (save_pieces) when ``hold`` is not None and the part is large, the rows
    first and the sets of ``hold`` in the last."""
    rows = save_pieces.row_pieces(encoded.rows, encoded.row_records, hot.raw, hot.rowed,
                                  released, values_key, kept)
    parts = save_pieces.groups(encoded.keys, hold) if hold is not None else [encoded.keys]
    if len(parts) == 1 and (len(rows) <= 1 or hold is None):
        return [head + _present(records.op(None, _by_hash(encoded.changed)))
                + [op for piece in rows for op in piece]
                + save_pieces.released_ops(released, values_key,
                                           encoded.keys if rows else None, kept)]
    pieces = rows + (_pieces(encoded, records, parts, kept) if len(parts) > 1 else [
        _present(records.op(None, _by_hash(encoded.changed)))
        + save_pieces.released_ops(released, values_key, encoded.keys, kept)])
    pieces[0] = head + pieces[0]
    return pieces


def _write_early(hot: HotState, held: Held, early: dict[int, list[list[WriteOp]]],
                 generated: Ops, *, floor: bool) -> None:
    """Every server's pieces but its last, each with its server's generations: the first
    server's first, opening with the unit's staged writes and (``floor``: a save with the
    meta) the record-id counter raised, so no set that lands before the log names an id a
    later holder could give out again (save_pieces)."""
    opening = hot.staged + ([shards.record_ids_floor_op(hot.state.next_record_id)]
                            if floor else [])
    hot.staged = []
    home = early.pop(hot_servers.HOME, [])
    if home:
        home[0] = opening + home[0]
    elif opening:
        home = [opening]
    for piece in home:
        lease.fenced_write(held, piece + generated.get(hot_servers.HOME, []))
    for server in sorted(early):
        for piece in early[server]:
            lease.fenced_write(held, piece + generated.get(server, []), server=server)


def _present(op: WriteOp | None) -> list[WriteOp]:
    return [op] if op is not None else []


def _by_hash(changed: dict[str, dict[str, bytes]]) -> dict[str, dict[str, bytes]]:
    """The changed statuses by their hash's key: the records script writes them with the
    records (set_records.Writes.op), a few arguments a topic for redis-py to pack."""
    return {sets_key(name): fields for name, fields in changed.items()}


def _write_with_log(hot: HotState, held: Held, ops: Ops, entries: list[dict[str, Any]]
                    ) -> None:
    """One fenced transaction: the state's and the unit's staged writes, and their entries.

    Spread over several servers, one per server: each other server's part first, checked
    against the leases that live there (a shard unit's sets are its commit), then the first
    server's (meta, values, tickets, log) checked against the rest, so the log never names
    a change a refused part lacks. A crash between them loses that unit's log entries and
    values (docs/durability.md)."""
    hot.log = hot.log + entries
    append = metadata_log.append_op(hot.log)
    staged, hot.staged = hot.staged, []  # taken once, whether the commit lands or not
    home = ops.pop(hot_servers.HOME, [])
    for server in sorted(ops):
        lease.fenced_write(held, ops[server], server=server)
    # Staged first: the save's compaction may release values the same unit stored.
    replies = lease.fenced_write(held, staged + home + ([append] if append else []))
    # The append is the last command: its reply is the offset of the unit's first entry.
    hot.first_offset = int(replies[-1]) if append else None


def _generation_ops(ops: Ops, holding: Held) -> str:
    """A fresh sets generation for every lease of ``holding`` (set_cache.generation_key),
    added to ``ops`` on the lease's server: every save of sets writes one, so a process whose
    last save's token is still there knows nobody wrote a set under that lease since. A holder
    of the whole state's lease may write any set: every shard's generation moves too,
    whichever shard leases it holds."""
    token = uuid.uuid4().hex
    held = holding.names
    if key(lease.CLUSTER_LOCK) in held:
        held = tuple(dict.fromkeys([*held, *(key(name) for name in shards.every_lock())]))
    for k in held:
        ops.setdefault(hot_servers.server_of_lock(k), []).append(
            WriteOp("set", set_cache.generation_key(k), token))
    return token


def _noted(hot: HotState, token: str, keys: list[Key]) -> list[WriteOp]:
    """The save's note of the sets it wrote (set_cache ``written_since``), one per lease it
    loaded under, when it writes few and knows the generation it follows; else, for a
    holder of every lease sharded, one per shard (``_noted_by_shard``); else none."""
    if hot.dropped:
        return []
    if hot.generation is None or len(keys) > set_cache.NOTED_SETS:
        return _noted_by_shard(hot, token, keys)
    entry = set_cache.note(hot.generation, token, keys)
    return [WriteOp("lpush", set_cache.noted_key(k), (entry, set_cache.NOTED_SAVES))
            for k in hot.scope]


def _noted_by_shard(hot: HotState, token: str, keys: list[Key]) -> list[WriteOp]:
    """A holder of every lease whose shards' generations differ (each shard saved on its
    own since) notes for each shard the sets it wrote there, from that shard's own
    generation: each shard's next unit then reads those sets alone. An SPU changing status
    writes its sets under every lease (engine/controllers.adopt_alone); without these
    notes every shard's next tick read and compared all its sets' bytes (2.7 s at
    100,000 partitions)."""
    if key(lease.CLUSTER_LOCK) not in hot.scope or not shards.sharded():
        return []
    n = shards.count()
    by_shard: dict[int, list[Key]] = {}
    for set_key in keys:
        by_shard.setdefault(shards.shard_of(set_key, n), []).append(set_key)
    ops = []
    for shard in range(n):
        lock_key = key(shards.lock_name(shard))
        before, written = hot.generations.get(lock_key), by_shard.get(shard, [])
        # (A shard left without a note reads every set of its own next: its way is broken.)
        if before is not None and len(written) <= set_cache.NOTED_SETS_BY_SHARD:
            entry = set_cache.note(before, token, written)
            ops.append(WriteOp("lpush", set_cache.noted_key(lock_key),
                               (entry, set_cache.NOTED_SAVES)))
    return ops


def save_sets(hot: HotState, held: Held, *, retain: int | None = None,
              log: LogEntries | None = None) -> list[Key]:
    """``save`` for a holder of some shards' leases: the replica sets whose encoding changed
    and the values compaction released, never the meta (the coordinator owns it)."""
    if hot_servers.spread():
        return _save_spread(hot, held, retain, log, whole=False)
    records = set_records.Writes()
    encoded = compact_and_encode(hot, retain, records, rows=status_rows.allowed(hot))
    return _write_sets(hot, held, encoded, records, log, head=[], meta=None,
                       kept=lambda _: True)


def save_meta(hot: HotState, held: Held, *, log: LogEntries | None = None) -> list[Key]:
    """Only the meta (SPUs, topic settings, the producers' table): the coordinator's quiet
    tick, which loaded no replica set."""
    _write_with_log(hot, held, {hot_servers.HOME: _meta_writes(hot, _meta_ops(hot))},
                    log([]) if log else [])
    return []
