"""A status row's bytes (cluster/adapters/status_rows.py): the format, written by ``row_of``
and read by ``entries`` (every entry) or ``entries_of`` (some partitions' alone)."""
from __future__ import annotations

from array import array
from collections.abc import Iterator
from functools import lru_cache
from itertools import accumulate, chain
from struct import Struct, iter_unpack

from cluster.adapters.steady_codec import Figures

# A row: how many entries (uint32), then each entry's head (its partition, uint32, and the
# anchor of the field it overrides, 8 bytes), then each status's length (uint32s), then the
# statuses end to end. By columns, so a row is joined from its sets' heads (kept while
# they stay in rows: ``HotState.rowed``) and statuses with no work a set in Python.
# Then, when the row holds any, its *figures* entries (steady_codec.Figures: a steady set's
# moving values, whose status is rebuilt from its anchored field by ``overlay``): how many,
# their heads, each tail's length (uint32s), then int64s: five columns (HW, LEO, start,
# last id apart, clock) and the tails' ids end to end. A busy save fills no template
# and packs no status for such a set: its figures are a tuple, joined a column at a time.
COUNT = Struct(">I")
HEAD = Struct(">I8s")
# (The lengths as ``array("I")`` and the figures as ``array("q")``: native order, checked to
# be 4 and 8 bytes wide.)
assert array("I").itemsize == 4 and array("q").itemsize == 8


def row_of(heads: list[bytes], statuses: list[bytes], figures: list[Figures] | None = None
           ) -> bytes:
    """A row of these entries (``heads[i]`` is ``statuses[i]``'s; each of ``figures`` holds
    its head last, as ``HotState.raw`` keeps it)."""
    out = [COUNT.pack(len(heads)), *heads, array("I", map(len, statuses)).tobytes(), *statuses]
    if figures:
        hw, leo, start, last, clock, tails, figure_heads, *_ = zip(*figures)
        # One pack of every int64 (a column at a time through ``array`` cost twice as much).
        ids = [*hw, *leo, *start, *last, *clock, *chain.from_iterable(tails)]
        out += [COUNT.pack(len(figures)), *figure_heads, array("I", map(len, tails)).tobytes(),
                _int64s(len(ids)).pack(*ids)]
    return b"".join(out)


@lru_cache(maxsize=256)
def _int64s(n: int) -> Struct:
    """``n`` int64s in native order, as ``array("q")`` reads them back."""
    return Struct(f"={n}q")


def entries(row: bytes) -> Iterator[tuple[int, bytes, bytes | Figures]]:
    """A row's entries: (partition, anchor, status or figures)."""
    if not row:
        return
    statuses, at = status_entries(row)
    yield from statuses
    if at < len(row):
        yield from figure_entries(row, at)


def status_entries(row: bytes) -> tuple[list[tuple[int, bytes, bytes]], int]:
    """A row's status entries (partition, anchor, status), and where its figures start."""
    (n,) = COUNT.unpack_from(row)
    at = COUNT.size + n * HEAD.size
    lengths = array("I")
    lengths.frombytes(row[at:at + 4 * n])
    at += 4 * n
    heads = iter_unpack(HEAD.format, row[COUNT.size:COUNT.size + n * HEAD.size])
    out = []
    for (partition, anchored), length in zip(heads, lengths):
        out.append((partition, anchored, row[at:at + length]))
        at += length
    return out, at


def entries_of(row: bytes, partitions: set[int]) -> Iterator[tuple[int, bytes, bytes | Figures]]:
    """``entries`` of ``partitions`` alone: their figures taken from the columns by index
    (most of the row wanted: zipped in C, as ``entries``)."""
    if not row:
        return
    statuses, at = status_entries(row)
    yield from (entry for entry in statuses if entry[0] in partitions)
    if at >= len(row):
        return
    n, heads, ids, ends = _figures_columns(row, at)
    picked = [i for i, (partition, _) in enumerate(heads) if partition in partitions]
    if len(picked) * 2 > n:
        yield from (entry for entry in _zipped(n, heads, ids, ends) if entry[0] in partitions)
        return
    for i in picked:
        partition, anchored = heads[i]
        yield partition, anchored, (ids[i], ids[n + i], ids[2 * n + i], ids[3 * n + i],
                                    ids[4 * n + i], ids[ends[i]:ends[i + 1]].tolist())


def figure_entries(row: bytes, at: int) -> Iterator[tuple[int, bytes, Figures]]:
    return _zipped(*_figures_columns(row, at))


def _figures_columns(row: bytes, at: int
                     ) -> tuple[int, list[tuple[int, bytes]], array[int], list[int]]:
    """The figures section from ``at``: its count, heads, int64s and where each tail ends."""
    (n,) = COUNT.unpack_from(row, at)
    at += COUNT.size
    heads = list(iter_unpack(HEAD.format, row[at:at + n * HEAD.size]))
    at += n * HEAD.size
    lengths = array("I")
    lengths.frombytes(row[at:at + 4 * n])
    ids = array("q")
    ids.frombytes(row[at + 4 * n:])
    return n, heads, ids, list(accumulate(lengths, initial=5 * n))


def _zipped(n: int, heads: list[tuple[int, bytes]], ids: array[int], ends: list[int]
            ) -> Iterator[tuple[int, bytes, Figures]]:
    tails = [ids[a:b].tolist() for a, b in zip(ends, ends[1:])]
    # Each entry's figures zipped from the columns in C (a produce reads a whole row).
    columns = [ids[k * n:(k + 1) * n] for k in range(5)]
    for (partition, anchored), figures in zip(heads, zip(*columns, tails)):
        yield partition, anchored, figures
