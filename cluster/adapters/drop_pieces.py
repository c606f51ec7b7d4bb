"""A dropped topic's keys deleted in bounded pieces, after the save that stops naming it.

Deleting a topic of 100,000 partitions in the save's one transaction held Redis 504 ms
(its records keys deleted by one script: 422 ms; its hashes: 82 ms), and every page,
produce and lease renewal waited. Now the save lands first, with the meta that no longer
names the topic, its ``topic-dropped`` entry, and the topic's name added to the set
``dropping``; then the topic's sets go in pieces of ``REPLICATION_DROP_PIECE_SETS`` (about
4 us a set in Redis: 16 ms a piece of 4,000, the default), each deleting
those sets' records keys and their status fields together, on the server that holds them;
the last deletes the topic's hashes (rows, values) with ``UNLINK`` (freed off Redis's main
thread) and takes the name out of ``dropping``.

No reader looks a topic up but by the meta's names, so what a stop between pieces leaves
(status fields and their records keys, no meta naming them) is never read: the next save
that makes a topic under that name deletes it first (``hot_save._leftover_ops``, which
also takes the name out of ``dropping``), and the next save with the meta that makes or
drops any topic, or follows a whole-state load that did not take this process's own image
(the next holder's first tick), finishes every name still in ``dropping`` that no meta
names (``later``). A topic
dropped and made again in one unit is deleted in that unit's one transaction, as before.
"""
from __future__ import annotations

from collections.abc import Collection, Iterable

from django.conf import settings

from cluster.adapters import hot_servers, lease, status_rows
from cluster.adapters.hot_records import values_key
from cluster.adapters.hot_types import HotState
from cluster.adapters.lease import Held, WriteOp
from cluster.adapters.redis_keys import key
from cluster.adapters.set_loading import sets_key
from cluster.adapters.set_records import Writes

def dropping_key() -> str:
    """The names of topics dropped whose keys are not all deleted yet (first server)."""
    return key("dropping")


def later(hot: HotState) -> list[str]:
    """The topics this save deletes after it lands: those it drops, but one it makes again
    under the same name (deleted before its new sets, in the one transaction), and those
    an earlier save left in ``dropping`` that no meta names (read when topics change, and
    at a whole-state load that did not take this process's own image: a process starting,
    a holder after another, after its own failed unit; so the next holder finishes a drop
    its predecessor stopped in, and a tick that follows this process's own save reads
    nothing more)."""
    names = [name for name in sorted(hot.dropped) if name not in hot.added]
    if hot.dropped or hot.added or (hot.complete and not hot.own):
        left = hot_servers.client_of(hot_servers.HOME).smembers(dropping_key())
        names += sorted(n for n in (m.decode() if isinstance(m, bytes) else m for m in left)
                        if n not in hot.topics and n not in hot.added and n not in names)
    return names


def noted(names: Iterable[str]) -> list[WriteOp]:
    """The save's writes naming the topics it deletes after it lands."""
    return [WriteOp("sadd", dropping_key(), name) for name in names]


def forgotten(names: Iterable[str]) -> list[WriteOp]:
    """``dropping`` without ``names`` (their keys are deleted, or a topic made again under
    the name deleted them first)."""
    return [WriteOp("srem", dropping_key(), name) for name in names]


def delete(held: Held, names: Collection[str]) -> None:
    """Delete every key of the topics ``names`` (no meta names them) in bounded pieces,
    on each server the hot state is spread over, then take them out of ``dropping``."""
    if not names:
        return
    for server in hot_servers.servers():
        pipe = hot_servers.client_of(server).pipeline(transaction=False)
        for name in names:
            pipe.hkeys(sets_key(name))
        for name, fields in zip(names, pipe.execute()):
            for ops in pieces(name, sorted(int(f) for f in fields)):
                lease.fenced_write(held, ops, server=server)
            lease.fenced_write(held, [WriteOp("unlink", sets_key(name)),
                                      WriteOp("unlink", status_rows.rows_key(name))],
                               server=server)
    lease.fenced_write(held, [WriteOp("unlink", values_key(name)) for name in names]
                       + forgotten(names))


def pieces(name: str, partitions: list[int]) -> list[list[WriteOp]]:
    """The writes deleting the sets ``partitions`` of topic ``name``: each piece their
    records keys (one script) and their status fields together."""
    out, size = [], settings.REPLICATION_DROP_PIECE_SETS
    for at in range(0, len(partitions), size):
        chunk = partitions[at:at + size]
        records = Writes()
        for p in chunk:
            records.delete((name, p))
        op = records.op()
        out.append(([op] if op is not None else [])
                   + [WriteOp("hdel", sets_key(name), [str(p) for p in chunk])])
    return out
