"""Each live group's sequence, and who watches which group (cluster/live.py's protocol).

A group's sequence is a Redis counter, so every process numbers one sequence; a page
embeds the sequence its render read and a socket's hello says the current one.

Who watches: a tick changes every partition of a busy cluster, and staging each row for
groups nobody watches was a tenth of its CPU. A consumer counts itself into a group
(``watch``) before its hello reads the sequences; the staging asks, in one script, which
of its block groups have viewers (``watched``) and steps the others' sequences instead,
so a page rendered before the change and greeted after it sees the hello beyond its
render and fetches a snapshot (static/js/live.js). Either the script saw the viewer
(rows are staged for it) or the hello sees the step. A daphne that dies leaves its
counts up: those groups are staged for nobody, which costs only the work this saves.
"""
from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings

from cluster.adapters import hot_state

_WATCHED = """
local out = {}
local anyone = redis.call('HLEN', KEYS[1]) > 0
for i = 1, #ARGV do
  if anyone and tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0') > 0 then
    out[#out + 1] = ARGV[i]
  else
    redis.call('INCR', KEYS[i + 1])
  end
end
return out
"""
_UNWATCH = """
for i = 1, #ARGV do
  if redis.call('HINCRBY', KEYS[1], ARGV[i], -1) <= 0 then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
"""


def live_key(kind: str, group: str) -> str:
    # Per installation (settings.LIVE_NAMESPACE), as the channel layer's groups are.
    return f"{hot_state.PREFIX}live:{settings.LIVE_NAMESPACE}:{kind}:{group}"


def next_seq(group: str) -> int:
    return int(hot_state.client().incr(live_key("seq", group)))


def current_seq(group: str) -> int:
    return int(hot_state.client().get(live_key("seq", group)) or 0)


def current_seqs(groups: Iterable[str]) -> dict[str, int]:
    groups = list(groups)
    values = hot_state.client().mget([live_key("seq", g) for g in groups]) if groups else []
    return {g: int(v or 0) for g, v in zip(groups, values)}


def watchers_key() -> str:
    return live_key("watchers", "all")


def watch(groups: Iterable[str]) -> None:
    """A viewer joined ``groups`` (before its hello reads their sequences)."""
    pipe = hot_state.client().pipeline(transaction=False)
    for group in groups:
        pipe.hincrby(watchers_key(), group, 1)
    pipe.execute()


def unwatch(groups: Iterable[str]) -> None:
    groups = list(groups)
    if groups:
        hot_state.client().eval(_UNWATCH, 1, watchers_key(), *groups)


# Groups asked in one script: each asks a hash field and may step a counter, a few
# microseconds of Redis a group, so a script for a busy tick's 10,000 block groups (a
# cluster of 10,000 topics) held Redis 80-100 ms. Each group's check and step stay atomic.
WATCHED_CHUNK = 500


def watched(groups: list[str]) -> set[str]:
    """Of ``groups``, those a viewer watches; the others' sequences are stepped (a script
    a ``WATCHED_CHUNK`` groups, sent together)."""
    if not groups:
        return set()
    pipe = hot_state.client().pipeline(transaction=False)
    seqs, watchers = live_key("seq", ""), watchers_key()  # a group's key: seqs + its name
    for at in range(0, len(groups), WATCHED_CHUNK):
        chunk = groups[at:at + WATCHED_CHUNK]
        pipe.eval(_WATCHED, 1 + len(chunk), watchers, *[seqs + g for g in chunk], *chunk)
    return {g.decode() if isinstance(g, bytes) else g
            for found in pipe.execute() for g in found}
