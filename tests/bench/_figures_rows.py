"""A design measurement for the columnar tier (docs/engine-throughput.md, rounds 16 and 20),
not the product's save: the loop a save would run if a steady set's row entry carried its
moving figures (HW, LEO, log start, the records' count and last id, the tail's ids) in its
block's arrays instead of a whole status (``status_rows``), so no template is filled and no
status compared. It keeps what such a save would still do a set: read the figures, check
and follow the set's records run (``set_records.Writes.append``), and, unless ``summaries``
is false, sum the set up for the projections. Compaction is left out (a rare step). Used by
``bench_save_loop.py --figures-rows``; nothing reads what it builds. (Round 24 built its
stored half in the product, save_encoding's figures path; this stays as the floor the
design measured, summaries included or not.)"""
from __future__ import annotations

from array import array

from cluster.adapters import set_records
from cluster.adapters.hot_types import HotState
from cluster.adapters.set_codec import RECORDS_BLOCK, Summary, _new_summary


def figures_rows(hot: HotState, block: int, *, summaries: bool = True) -> int:
    """Every loaded set's figures into its block's columns; returns how many sets."""
    sets = hot.state.replica_sets
    hot.state.steady.settle_levels(sets)
    stored, after = hot.stored, hot.after
    writes = set_records.Writes()
    append, follow = writes.append, writes.follow
    at_block, columns, n = -1, None, 0
    rows = {}
    for set_key, rs in sets.items():
        ref = rs.replica[rs.leader]  # type: ignore[index]
        hw, log, start = rs.hw, ref.log, ref.start
        leo = start + len(log)
        end = leo - (leo + set_key[1]) % RECORDS_BLOCK
        count = end - start if end > start else 0
        number = set_key[1] // block
        if number != at_block:
            at_block = number
            columns = rows[number] = (array("q"), array("q"), array("q"), array("I"),
                                      array("q"), array("B"), array("q"))
        h, le, st, c, last, tails, ids = columns  # type: ignore[misc]
        h.append(hw)
        le.append(leo)
        st.append(start)
        c.append(count)
        last.append(log[count - 1] if count else -1)
        tail = log[count:]
        tails.append(len(tail))
        ids.extend(tail)
        before = stored.get(set_key)
        kept = before is not None and append(set_key, before, ref)
        if kept is not before:
            stored[set_key] = kept or follow(set_key, before, ref)
        if summaries:
            x, y, z = rs.replicas
            after[set_key] = _new_summary(Summary, (
                rs.leader, (x, y, z), rs.resolution, hw, leo,
                ((x, leo if x == rs.leader else hw, hw), (y, leo if y == rs.leader else hw, hw),
                 (z, leo if z == rs.leader else hw, hw)), rs.epoch))
        n += 1
    for columns in rows.values():
        b"".join([column.tobytes() for column in columns])
    return n
