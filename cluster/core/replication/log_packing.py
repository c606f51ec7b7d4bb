"""A new topic's ``topic-replicated`` entry as the metadata log stores it: packed.

The entry carries every partition's first status, about 37 bytes a partition as JSON, in
the one append that lands with the meta naming the topic (3.7 MB at 100,000 partitions,
42 MB for a million made at once, which held Redis 0.4-0.6 s). Most of those statuses are
the usual first one, which its replica list alone says; the replica lists of a topic
follow its assignment's pattern, which compresses well. So the log stores the rows with
the usual statuses cut to their replicas, as compressed JSON (base64 text inside the
entry's JSON), and ``statuses`` empty: a reader from before the packing reads a topic of
no statuses rather than failing. Readers get the entry back whole (``unpacked``).
"""
from __future__ import annotations

import base64
import json
import zlib

from .metadata import Entry
from .state import Resolution

# A new topic's set as the engine makes it when its first replica's SPU is up: that replica
# leads at epoch 1, every replica in the LRS (topology._bootstrap).
_FIRST_EPOCH = 1
_ONLINE = Resolution.ONLINE.value
# zlib's fastest level: a topic of 100,000 round-robin partitions, 1 MB of packed rows,
# compresses to 10 KB in under 3 ms; a higher level buys little on such text.
_LEVEL = 1
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def packed(entry: Entry) -> Entry:
    """``entry`` as the log stores it: a ``topic-replicated`` entry's statuses as ``packed``
    rows (each the replica list alone where the status is the usual first one, the whole
    row otherwise), compressed; any other entry as it is."""
    rows = entry.get("statuses")
    if entry.get("type") != "topic-replicated" or not rows:
        return entry
    cut = [r[0] if (r[0] and r[2] == r[0] and r[1] == r[0][0] and r[3] == _ONLINE
                    and r[4] == _FIRST_EPOCH) else r for r in rows]
    text = zlib.compress(_COMPACT.encode(cut).encode(), _LEVEL)
    return {**entry, "statuses": [], "packed": base64.b64encode(text).decode("ascii")}


def unpacked(entry: Entry) -> Entry:
    """A logged entry as it was made (``packed`` read back); any other entry as it is."""
    rows = entry.pop("packed", None)
    if rows is None:
        return entry
    rows = json.loads(zlib.decompress(base64.b64decode(rows)))
    entry["statuses"] = [r if r and isinstance(r[0], list) else
                         [r, r[0], list(r), _ONLINE, _FIRST_EPOCH] for r in rows]
    return entry
