"""The metadata log in Redis: one ordered truth of every control-plane change.

Entries live in a Redis stream (``mlog``) whose ids are ``<offset>-1``, with
the offset counter beside it (``mlog:head``). They are appended by a script
queued inside the same fenced transaction as the hot state they describe
(``append_op``), so a refused save writes neither, and concurrent shard ticks
get offsets in the order their transactions ran. Each entry is JSON with
``type`` and ``at`` (ms); its offset is its stream id.

The log is bounded as KRaft bounds ``__cluster_metadata``: entries the store's
projection has applied may be trimmed once the log is longer than
``METADATA_LOG_RETENTION``; the store's rows are then the snapshot at the
offset it applied (``ClusterState.applied_offset``), and ``start()`` tells
where the log begins.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple, cast

from django.conf import settings

from cluster.adapters.lease import WriteOp
from cluster.adapters.redis_keys import client, key, store_namespace
from cluster.core.replication.log_packing import packed, unpacked

APPEND = "mlog"
# Offsets come from the counter, never from the stream: XADD with an id that is not
# above the stream's last one fails, and a failed command does not abort a transaction.
# A unit's entries go in one stream entry (``b``: their JSON texts, a line each, at
# consecutive offsets), a lone one as itself (``e``): Redis's work is one XADD a unit,
# where one a log entry cost a failover of 8,000 entries 30-55 ms (each command also fed
# to the append-only file). A stream entry is named by its last offset, so the first one
# named at or above an offset is the one that holds it: a read from any offset is one
# XRANGE, and a trim by name (MINID) keeps a unit that holds its bound whole.
_APPEND_SCRIPT = """
local n = tonumber(ARGV[1])
local last = tonumber(redis.call('incrby', KEYS[1], n))
redis.call('xadd', KEYS[2], last .. '-1', n == 1 and 'e' or 'b', ARGV[2])
return last - n + 1
"""
# A batch's entries are separated by a newline, which no compact JSON text holds.
_LINE = b"\n"
# Stream entries a read asks for at a time: a batch may hold thousands of log entries.
_CHUNK = 500


def append_args(texts: list[str]) -> list[Any]:
    """The append script's arguments for entries' JSON ``texts``: their count, then them
    as one stream entry."""
    return [len(texts), "\n".join(texts)]


class Entry(NamedTuple):
    offset: int
    data: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        """The dump's shape: ``offset``, ``type``, ``at`` and the entry's fields."""
        return {"offset": self.offset, **self.data}


# Each key function takes the store's namespace when its caller resolved it (redis_keys.py):
# a function making several keys resolves it once rather than once per key.
def head_key(namespace: str | None = None) -> str:
    return key("mlog:head", namespace)


def stream_key(namespace: str | None = None) -> str:
    return key("mlog", namespace)


# ``json.dumps(e, separators=(",", ":"))``, without a new encoder made per entry (a
# failover at 100,000 partitions logs 8,000 entries in one tick).
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def append_op(entries: list[dict[str, Any]]) -> WriteOp | None:
    """The write that appends ``entries`` in the fenced transaction (None if none)."""
    if not entries:
        return None
    now = int(time.time() * 1000)
    # Stamped in place: the writer may hand its entries to the store's projection as
    # logged (store.catch_up's ``known``) instead of it reading them back.
    for e in entries:
        e.setdefault("at", now)
    encode = _COMPACT.encode
    payload = append_args([encode(packed(e)) for e in entries])
    ns = store_namespace()
    return WriteOp("eval", APPEND, (_APPEND_SCRIPT, [head_key(ns), stream_key(ns)], payload))


# An operator's intent, appended when it is made, outside any unit of work: no lease guards
# it (it is no engine state), and its offset comes above what the store already applied, so
# an append to a Redis that lost its log is never taken for an entry the store has seen.
# Every entry of ARGV[2..] at consecutive offsets, the intents head (KEYS[3], when given)
# moved to the last, in one script: the engine's controllers never see the head before its
# entries.
_INTENT_SCRIPT = """
local floor = tonumber(ARGV[1])
if tonumber(redis.call('get', KEYS[1]) or '0') < floor then
  redis.call('set', KEYS[1], floor)
end
local offset
for i = 2, #ARGV do
  offset = redis.call('incr', KEYS[1])
  redis.call('xadd', KEYS[2], offset .. '-1', 'e', ARGV[i])
end
if KEYS[3] then redis.call('set', KEYS[3], offset) end
return offset
"""


def append_intent(entry: dict[str, Any], *, floor: int) -> int:
    """Append ``entry`` now, at an offset above ``floor``; returns its offset."""
    return append_intents([entry], floor=floor)[0]


def append_intents(entries: list[dict[str, Any]], *, floor: int) -> list[int]:
    """Append ``entries`` now, in order, at consecutive offsets above ``floor``, in one
    script (an SPU group's hundred SPUs: one round trip, not a hundred); their offsets."""
    return append_now(entries, floor=floor, intents=True)


def append_now(entries: list[dict[str, Any]], *, floor: int, intents: bool = False
               ) -> list[int]:
    """``append_intents``, and for entries that are neither engine state nor an operator's
    intent (a detection run's events) with ``intents`` False: the intents head stays."""
    if not entries:
        return []
    now = int(time.time() * 1000)
    texts = [_COMPACT.encode(e if "at" in e else {**e, "at": now}) for e in entries]
    ns = store_namespace()
    keys = [head_key(ns), stream_key(ns), *([intents_head_key(ns)] if intents else [])]
    last = int(client().eval(_INTENT_SCRIPT, len(keys), *keys, floor, *texts))
    return list(range(last - len(entries) + 1, last + 1))


def intents_head_key(namespace: str | None = None) -> str:
    """The offset of the last intent appended: set by the intent script with the append
    (one script, so the engine's controllers never see the head before its entry)."""
    return key("mlog:intents", namespace)


def intents_head() -> int:
    """The offset of the last operator intent logged (0: none since this log began)."""
    raw = client().get(intents_head_key())
    return int(raw) if raw is not None else 0


def head(namespace: str | None = None) -> int:
    """The last offset written (0 for an empty log)."""
    raw = client().get(head_key(namespace))
    return int(raw) if raw is not None else 0


def start() -> int:
    """The first offset still held (head + 1 when the log holds nothing)."""
    ns = store_namespace()
    first = _entries(client().xrange(stream_key(ns), count=1))
    return first[0][0] if first else head(ns) + 1


def _offset(stream_id: bytes | str) -> int:
    text = stream_id.decode() if isinstance(stream_id, bytes) else stream_id
    return int(text.split("-", 1)[0])


def _decoded(raw: bytes) -> dict[str, Any]:
    """An entry as it was made: a new topic's statuses are stored packed (log_packing)."""
    return unpacked(json.loads(raw))


def read(first: int, limit: int = 1000, last: int | None = None, *,
         namespace: str | None = None) -> list[Entry]:
    """Entries from offset ``first`` on (to ``last`` when given), at most ``limit``, in order."""
    return [Entry(offset, _decoded(raw))
            for offset, raw in read_raw(first, limit, last, namespace=namespace)]


def read_raw(first: int, limit: int = 1000, last: int | None = None, *,
             namespace: str | None = None) -> list[tuple[int, bytes]]:
    """``read``'s entries as (offset, the entry's JSON text): for a reader that decodes only
    the entries it looks for. ``limit`` of them whenever the range holds that many."""
    if limit <= 0 or (last is not None and last < first):
        return []
    redis_client, stream = client(), stream_key(namespace)
    first = max(first, 0)
    end = "+" if last is None else f"{last}-1"
    out: list[tuple[int, bytes]] = []
    at = first
    while len(out) < limit:
        # Each stream entry holds one log entry at least: never more asked for than needed.
        want = min(_CHUNK, limit - len(out))
        found: list[Any] = list(redis_client.xrange(stream, min=f"{at}-0", max=end,
                                                    count=want))
        done = len(found) < want
        if done and last is not None and (not found or _offset(found[-1][0]) < last):
            # The unit holding ``last`` may end past it.
            found += list(redis_client.xrange(stream, min=f"{last + 1}-0", count=1))
        out += [e for e in _entries(found)
                if e[0] >= first and (last is None or e[0] <= last)]
        if done or not found:
            break
        at = _offset(found[-1][0]) + 1
    return out[:limit]


def _entries(found: list[Any]) -> list[tuple[int, bytes]]:
    """Stream entries as the log entries they hold, each with its offset (a stream entry
    is named by its last)."""
    out: list[tuple[int, bytes]] = []
    for sid, fields in found:
        last = _offset(sid)
        one = fields.get(b"e")
        if one is not None:
            out.append((last, cast(bytes, one)))
        else:
            texts = cast(bytes, fields[b"b"]).split(_LINE)
            out += enumerate(texts, last - len(texts) + 1)
    return out


def read_holding(first: int, last: int, needles: Iterable[bytes], *, batch: int = 5000,
                 contiguous: bool = False) -> list[Entry] | None:
    """The entries ``first`` to ``last`` whose JSON text holds one of ``needles`` (say a
    type, as its JSON string: ``needle``), decoded; the others are passed over undecoded
    (the HW checkpoints and an outage's elections, for a reader of intents). None, with
    ``contiguous``, when an offset in the range is missing (trimmed meanwhile)."""
    wanted = tuple(needles)
    out: list[Entry] = []
    at = first
    while at <= last:
        found = read_raw(at, batch, last=last)
        if contiguous and (not found or found[0][0] != at):
            return None
        out += [Entry(offset, _decoded(raw)) for offset, raw in found
                if any(n in raw for n in wanted)]
        if len(found) < batch:
            break
        at = found[-1][0] + 1
    return out


def needle(value: str) -> bytes:
    """``value`` as an entry's JSON text holds it as a string (``read_holding``)."""
    return json.dumps(value).encode()


def read_all(first: int = 0, batch: int = 5000) -> Iterator[Entry]:
    """Every entry from ``first`` on, in batches."""
    ns = store_namespace()
    while True:
        entries = read(first, batch, namespace=ns)
        yield from entries
        if len(entries) < batch:
            return
        first = entries[-1].offset + 1


def set_head_at_least(offset: int) -> None:
    """After a Redis lost entries: offsets go on above what the store already applied."""
    script = ("local h = tonumber(redis.call('get', KEYS[1]) or '0') "
              "if h < tonumber(ARGV[1]) then redis.call('set', KEYS[1], ARGV[1]) end return 0")
    client().eval(script, 1, head_key(), offset)


def trim(applied: int, retention: int | None = None, *, floor: int | None = None) -> int:
    """Drop entries the store applied, keeping the newest ``retention`` and every entry
    from ``floor`` on (the lowest offset another reader still needs: history replays from
    its oldest snapshot; the engine's trim floor); returns how many stream entries went
    (a unit's entries are one)."""
    keep = settings.METADATA_LOG_RETENTION if retention is None else retention
    ns = store_namespace()
    below = min(applied + 1, head(ns) - keep + 1)
    if floor is not None:
        below = min(below, floor)
    if below <= 1:
        return 0
    # By name: a unit's stream entry that holds ``below`` is named above it, kept whole.
    return int(client().xtrim(stream_key(ns), minid=f"{below}-0", approximate=False))
