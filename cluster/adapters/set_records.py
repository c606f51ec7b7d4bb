"""Each replica set's retained record ids, kept apart from its status, append-only.

``repl:{…}:recs:<topic>:<partition>`` holds the reference log's retained ids up to a
block boundary (set_codec.apart_count) as int64s (set_codec.records_bytes); the status
(set_codec.encode_status) names their count and last id, and holds the few ids after them.
A save appends what the part kept apart gained (a set gaining a record a tick: once in
``RECORDS_BLOCK`` ticks), drops the head of the run in Redis when compaction moved its
start (``_TRIM``), and rewrites the whole run only when another replica's log became the
reference or the stored run no longer overlaps the log, in one script
that also sets the changed statuses (``Writes.op``: a few packed arguments a topic), so a
set's status and records land in the same fenced transaction (a large save has one script
per piece, save_pieces.py). A load reads the runs of the sets it must decode, and of a set
this process knew before (hot_types.Known) only the ids appended since (``fetch``).
"""
from __future__ import annotations

import sys
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping
from struct import Struct, iter_unpack, pack
from typing import Any

import redis

from cluster.adapters.lease import WriteOp
from cluster.adapters.redis_keys import client, key
from cluster.adapters.hot_types import Known, Stored
from cluster.adapters.set_codec import (RECORDS_BLOCK, apart_count, records_bytes,
                                        records_from, start_and_apart, status_fields)
from cluster.core.replication import Key, Replica, ReplicaSet
from cluster.core.replication.compaction import reference_replica

# A set whose format kept its records inside: nothing usable apart, so its next save
# writes the whole run.
INSIDE: Stored = (-1, 0, None)

# One script for every records key and every status a save (or one of its pieces)
# writes, both packed by topic, so redis-py packs a few arguments a topic, never one a set.
# ARGV[1] counts the status hashes; each is four arguments: the hash's key, its fields'
# names joined by commas (partition numbers: the bytes ``str`` gives), their values'
# lengths (little-endian uint32s) and the values end to end, set with HSET a batch of
# fields at a time (a call a field costs Redis several times more). Two arguments a set
# (field and value) were 200-280 ms of redis-py's packing a busy tick at 100,000
# partitions. Then, for each topic, the records keys' prefix and one string of entries,
# each a partition (uint32), a mode ('a' appends, 's' replaces, 'd' deletes, 't' trims: drops
# the head's ids, a uint32 count, and appends the rest of the payload), the payload's length
# (uint32) and the payload (``Writes.op``); the keys are built here, on
# the server that holds them all (hot_servers.py: a set's records live with its status,
# never across servers). Returns how many keys and fields it wrote.
_WRITE = """
local n = 0
local last = 1 + 4 * tonumber(ARGV[1])
for i = 2, last, 4 do
  local hash, names, lengths, values = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local batch, k, at, l = {}, 0, 1, 1
  for name in string.gmatch(names, '[^,]+') do
    local length = struct.unpack('<I4', lengths, l)
    batch[k + 1] = name
    batch[k + 2] = string.sub(values, at, at + length - 1)
    l, at, k = l + 4, at + length, k + 2
    if k == _BATCH_ then
      redis.call('HSET', hash, unpack(batch, 1, k))
      k = 0
    end
  end
  if k > 0 then redis.call('HSET', hash, unpack(batch, 1, k)) end
  n = n + (l - 1) / 4
end
for i = last + 1, #ARGV, 2 do
  local prefix, packed = ARGV[i], ARGV[i + 1]
  local at, size = 1, #packed
  while at <= size do
    local partition, mode, length
    partition, mode, length, at = struct.unpack('<I4c1I4', packed, at)
    local name = prefix .. string.format('%d', partition)
    if mode == 'a' then redis.call('APPEND', name, string.sub(packed, at, at + length - 1))
    elseif mode == 's' then redis.call('SET', name, string.sub(packed, at, at + length - 1))
    elseif mode == 't' then
      local drop = struct.unpack('<I4', packed, at)
      redis.call('SET', name, redis.call('GETRANGE', name, 8 * drop, -1)
                 .. string.sub(packed, at + 4, at + length - 1))
    else redis.call('DEL', name) end
    at = at + length
    n = n + 1
  end
end
return n
""".replace("_BATCH_", str(2 * 256))  # 256 fields a HSET: few calls, a small Lua stack
# An entry's head: partition, mode, payload length.
_HEAD = Struct("<IcI")
# The entry of one record appended, in one pack: its id as records_bytes stores it, a
# native int64 (little-endian on every machine this runs on; checked, else two packs).
_ONE = Struct("<IcIq") if sys.byteorder == "little" else None
_APPEND, _SET, _DELETE, _TRIM = b"a", b"s", b"d", b"t"
# A trim's head: how many ids it drops.
_DROP = Struct("<I")


def records_key(topic: str, partition: int | str) -> str:
    return key(f"recs:{topic}:{partition}")


class Writes:
    """The records keys one save writes, by set, as one script per piece (save_pieces)."""

    def __init__(self) -> None:
        # Set -> its packed entry (``_WRITE``), in the order written.
        self.writes: dict[Key, bytes] = {}
        # Each ``follow``/``append``'s entry (None: records unchanged), in call order: the
        # save's loop calls one of them per changed set, so this lines up with its keys
        # and a piece that is a slice of them joins a slice of this (``packed_op``).
        self.aligned: list[bytes | None] = []
        self.deletes = 0  # ``delete``s: entries ``aligned`` lacks (hot_save then goes set by set)

    def follow(self, set_key: Key, before: Stored | None, ref: Replica) -> Stored:
        """Bring the key from ``before`` to the part of ``ref``'s retained log kept apart
        (set_codec.apart_count); return what it holds."""
        log = ref.log
        count = apart_count(set_key[1], ref.start, len(log))
        write = _write(before, ref, count)
        entry = None
        if write is not None:
            mode, payload = write
            entry = self.writes[set_key] = _HEAD.pack(set_key[1], mode, len(payload)) + payload
        self.aligned.append(entry)
        return ref.start, count, log[count - 1] if count else None

    def append(self, set_key: Key, before: Stored, ref: Replica) -> Stored | None:
        """``follow`` when the part of ``ref``'s log kept apart is the run the key holds
        (``before``), or that run and records after it: the case of nearly every set of a
        busy tick (seven ticks in eight the former), tested first and alone; None when it
        is not that case (nothing noted: ``follow`` then decides)."""
        start, n, last = before
        log = ref.log
        if start != ref.start or n > len(log) or (n and log[n - 1] != last):
            return None
        # set_codec.apart_count, spelled out (a busy tick asks it of every set).
        leo = start + len(log)
        end = leo - (leo + set_key[1]) % RECORDS_BLOCK
        count = end - start if end > start else 0
        if count < n:  # a run longer than the part kept apart: ``follow`` rewrites it
            return None
        if count == n:  # the block not yet full: the ids are in the status
            self.aligned.append(None)
            return before
        last = log[count - 1]
        entry = self.writes[set_key] = (
            _ONE.pack(set_key[1], _APPEND, 8, last) if count == n + 1 and _ONE else
            _HEAD.pack(set_key[1], _APPEND, 8 * (count - n))
            + array("q", log[n:count]).tobytes())
        self.aligned.append(entry)
        return start, count, last

    def delete(self, set_key: Key) -> None:
        """(Of a dropped topic's set: not in ``aligned``, whose sets are the changed ones.)"""
        self.writes[set_key] = _HEAD.pack(set_key[1], _DELETE, 0)
        self.deletes += 1

    def op(self, only: Iterable[Key] | None = None,
           statuses: Mapping[str, Mapping[str, bytes]] | None = None) -> WriteOp | None:
        """The script writing every set's key (``only``: those sets' keys) and the
        ``statuses`` (fields by hash key: what a HSET of each would write), in one
        transaction's command."""
        statuses = statuses or {}
        return _script_op(((hash_key, fields, fields.values())
                           for hash_key, fields in statuses.items()),
                          self._by_topic(self.writes if only is None else only))

    def _by_topic(self, keys: Iterable[Key]) -> Iterator[tuple[str, bytes]]:
        """The entries of ``keys`` (those with one), joined per run of one topic."""
        writes = self.writes
        entries: list[bytes] = []
        topic = ""
        for set_key in keys:
            entry = writes.get(set_key)
            if entry is None:
                continue  # (of ``only``) its records unchanged
            if set_key[0] != topic:  # sets come topic by topic, or nearly
                if entries:
                    yield topic, b"".join(entries)
                topic, entries = set_key[0], []
            entries.append(entry)
        if entries:
            yield topic, b"".join(entries)


# One topic's run of a piece's sets, as slices of the save's aligned lists: the status
# hash's key, the topic, the fields' names, their values, the records entries (None:
# unchanged).
Run = tuple[str, str, list[str], list[bytes], list[bytes | None]]


def packed_op(runs: list[Run]) -> WriteOp | None:
    """``Writes.op`` for a piece whose sets come as ``runs``, each topic in one run: the
    same script and arguments, joined from slices with no Python work a set (at 100,000
    partitions, ``Writes.op``'s and save_pieces.set_ops' work a set was 130-200 ms a busy
    tick)."""
    return _script_op(((hash_key, names, values) for hash_key, _, names, values, _ in runs),
                      ((topic, b"".join(filter(None, entries)))
                       for _, topic, _, _, entries in runs))


def _script_op(statuses: Iterable[tuple[str, Iterable[str], Collection[bytes]]],
               records: Iterable[tuple[str, bytes]]) -> WriteOp | None:
    """The records script's command (``_WRITE``): ARGV[1] the number of status hashes, then
    4 arguments a hash (its key, the field names joined by commas, the values' lengths as
    uint32s, the values end to end), then each topic's records prefix and its packed
    entries. Named by its first topic's records prefix (save_pieces' tests read it)."""
    args: list[str | bytes] = [""]
    for hash_key, names, values in statuses:
        if values:
            args += (hash_key, ",".join(names), pack(f"<{len(values)}I", *map(len, values)),
                     b"".join(values))
    args[0] = str((len(args) - 1) // 4)
    prefix = ""
    keys = records_key("", "")[:-1]  # a topic's prefix is this, its name and ":"
    for topic, packed in records:
        if packed:
            named = f"{keys}{topic}:"
            prefix = prefix or named
            args += (named, packed)
    if len(args) == 1:
        return None
    return WriteOp("eval", prefix or str(args[1]), (_WRITE, [], args))


def unpacked(op: WriteOp) -> list[tuple[str, bytes, bytes]]:
    """The records keys a ``Writes.op`` script writes, with each one's mode and payload, in
    its order (what ``_WRITE`` reads: for tests and tools)."""
    args, out = op.arg[2], []
    records = args[1 + 4 * int(args[0]):]
    for prefix, packed in zip(records[::2], records[1::2]):
        at = 0
        while at < len(packed):
            partition, mode, length = _HEAD.unpack_from(packed, at)
            at += _HEAD.size
            out.append((f"{prefix}{partition}", mode, bytes(packed[at:at + length])))
            at += length
    return out


def statuses_of(op: WriteOp) -> dict[str, dict[str, bytes]]:
    """The status fields a ``Writes.op`` script sets, by hash key (what ``_WRITE`` reads:
    for tests and tools)."""
    args = op.arg[2]
    out: dict[str, dict[str, bytes]] = {}
    for n in range(int(args[0])):
        hash_key, names, lengths, values = args[1 + 4 * n:5 + 4 * n]
        fields = out.setdefault(hash_key, {})
        at = 0
        for name, (length,) in zip(names.split(","), iter_unpack("<I", lengths)):
            fields[name] = bytes(values[at:at + length])
            at += length
    return out


def _write(before: Stored | None, ref: Replica, count: int) -> tuple[bytes, bytes] | None:
    """The write that brings the key from ``before`` to the first ``count`` ids of
    ``ref``'s retained log (None: it holds them)."""
    log = ref.log
    if before is not None:
        start, n, last = before
        # The same start and the same id where the stored run ends: the same run up to
        # there (record ids are unique; the rule encode_status's followers rely on too).
        if start == ref.start and count >= n and (n == 0 or log[n - 1] == last):
            return (_APPEND, records_bytes(log[n:count])) if count > n else None
        # Compaction moved the start up within the stored run, whose last id is still
        # there: Redis drops the head and takes what follows. Sending the whole run again
        # cost a copy of every retained id at each cut (retention / step times the ids
        # produced, once logs are full), in Python, redis-py and the script alike.
        drop = ref.start - start
        if 0 < drop < n <= count + drop and log[n - drop - 1] == last:
            return _TRIM, _DROP.pack(drop) + records_bytes(log[n - drop:count])
    return (_SET, records_bytes(log[:count])) if count else (_DELETE, b"")


def stored_of(rs: ReplicaSet, apart: tuple[int, int | None] | None) -> Stored:
    """What the records key holds for a set just decoded (``apart``: its status's count
    and last id, None for a format that kept them inside)."""
    if apart is None:
        return INSIDE
    return reference_replica(rs).start, apart[0], apart[1]


# A set to decode: its key, its status unpacked, what this process knew of its run.
Missed = tuple[Key, list[Any], Known | None]


def fetch(missed: list[Missed], r: redis.Redis | None = None) -> dict[Key, list[int] | None]:
    """The records kept apart of each missed set (None: its format kept them inside), in
    one round trip, and one more for a run cut and written again elsewhere; read from
    ``r``, the sets' server (hot_servers.py), or the first."""
    r = r or client()
    pipe = r.pipeline(transaction=False)
    asked: list[tuple[Key, int, Known | None]] = []
    out: dict[Key, list[int] | None] = {}
    for set_key, fields, known in missed:
        start, apart = start_and_apart(fields)
        if apart is None or not apart[0]:
            out[set_key] = None if apart is None else []
            continue
        overlap = _overlap(known, start, apart[0])
        if overlap is None:
            pipe.get(records_key(*set_key))
        else:
            # From the last id known on: it must still be there, or the run was cut.
            pipe.getrange(records_key(*set_key), 8 * (overlap - start), -1)
        asked.append((set_key, start, known if overlap is not None else None))
    found = pipe.execute() if asked else []
    retry = []
    for (set_key, start, known), data in zip(asked, found):
        fetched = records_from(data)
        if known is None:
            out[set_key] = fetched
        elif fetched and fetched[0] == known.records[-1]:
            out[set_key] = known.records[start - known.start:] + fetched[1:]
        else:
            retry.append(set_key)
    if retry:
        pipe = r.pipeline(transaction=False)
        for set_key in retry:
            pipe.get(records_key(*set_key))
        out.update((k, records_from(data)) for k, data in zip(retry, pipe.execute()))
    return out


def _overlap(known: Known | None, start: int, count: int) -> int | None:
    """The offset of the last id ``known`` holds, if the stored run [start, start + count)
    still covers it and nothing before it (compaction only moves starts up)."""
    if known is None or not known.records or start < known.start:
        return None
    last = known.start + len(known.records) - 1
    return last if start <= last < start + count else None


# A set whose records key disagrees with its status: its key, its status unpacked, and
# how many ids the key holds.
Disagreeing = tuple[Key, list[Any], int]


def disagreeing(statuses: list[tuple[Key, bytes]], r: redis.Redis | None = None
                ) -> list[Disagreeing]:
    """Of the stored ``statuses``, those a load would refuse (set_codec._checked_records's
    rule): the key holds fewer ids than the status counts, or another id where it ends.
    Two reads a set, never the whole run: a check of every set stays cheap. Read from
    ``r``, the sets' server, or the first."""
    pipe = (r or client()).pipeline(transaction=False)
    asked: list[tuple[Key, list[Any], int, int | None]] = []
    for set_key, data in statuses:
        fields = status_fields(data)
        apart = start_and_apart(fields)[1]
        if apart is None or not apart[0]:
            continue  # records inside the status, or none: nothing apart to disagree
        count, last = apart
        pipe.strlen(records_key(*set_key))
        pipe.getrange(records_key(*set_key), 8 * (count - 1), 8 * count - 1)
        asked.append((set_key, fields, count, last))
    found = pipe.execute() if asked else []
    out = []
    for n, (set_key, fields, count, last) in enumerate(asked):
        held, at_end = found[2 * n] // 8, records_from(found[2 * n + 1])
        if held < count or at_end != [last]:
            out.append((set_key, fields, held))
    return out
