"""A topic page's two long tables' rows (partition status, replica map by rack), built in
Python rather than by the template engine.

Each lists up to 200 partitions; through the engine, a node at a time, the two loops
were most of the topic page's CPU, and the topic pages' p99 was over 300 ms while the
engine stepped 100,000 partitions on a 2-core machine (issue 33, ``bench_pages.py
--stepping``). Here a row is one f-string, each value escaped as the engine escapes it:
byte for byte what topic_detail.html and _map_table.html rendered before
(tests/integration/test_topic_table_rows.py renders both).
"""
from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from cluster.models import Partition

register = template.Library()


def _e(value: object) -> str:
    """As the engine shows a value: str() and escaped unless marked safe (ints as text:
    no thousands separator is configured)."""
    return str(conditional_escape(value))


def _join(values: Iterable[object], sep: str) -> str:
    """``{{ values|join:sep }}`` under autoescape (``sep`` here is never markup)."""
    return sep.join(_e(v) for v in values)


@register.simple_tag
def partition_rows(partitions: Sequence[Partition], topic_name: str,
                   down_spus: Collection[int]) -> SafeString:
    """Every ``<tr>`` of the partition status table."""
    name = _e(topic_name)
    return mark_safe("".join(_partition_row(p, name, down_spus) for p in partitions))


def _partition_row(p: Partition, name: str, down_spus: Collection[int]) -> str:
    index, replicas, leader = _e(p.index), p.replicas, p.leader
    if leader is None:
        leader_cell = '<span class="bad">none</span>'
    elif leader == p.initial_leader:
        leader_cell = f'SPU {_e(leader)} <span class="pref" title="preferred leader">★</span>'
    else:
        first = _e(replicas[0]) if replicas else ""
        leader_cell = f'SPU {_e(leader)} <small class="warn">not preferred (SPU {first})</small>'
    spans = "".join(
        f'<span class="replica{" preferred" if n == 0 else ""}{" leader" if r == leader else ""}'
        f'{" spu-down" if r in down_spus else ""}" data-spu="{_e(r)}" '
        f'data-cell-class="status">{_e(r)}</span>' for n, r in enumerate(replicas))
    short = " warn" if len(p.lrs) < len(replicas) else ""
    resolution = _e(p.resolution)
    return (
        f'<tr data-partition="{index}" data-row="{name}/{index}" '
        f'data-replicas="{_join(replicas, ",")}">\n'
        f'<td class="num">{index}</td>\n'
        f'<td class="leader">{leader_cell}</td>\n'
        f'<td class="mono replicas">{spans}</td>\n'
        f'<td class="mono lrs{short}">[{_join(p.lrs, ", ")}]</td>\n'
        f'<td class="num hw">{_e(p.hw)}</td><td class="num leo">{_e(p.leo)}</td>'
        f'<td class="res"><span class="badge {_e(str(p.resolution).lower())}">{resolution}'
        f'</span></td></tr>')


@register.simple_tag
def map_rows(rows: Sequence[dict[str, Any]]) -> SafeString:
    """Every ``<tr>`` of the replica map by rack (cluster/views/tables.py ``MapTable.rows``)."""
    return mark_safe("".join(_map_row(row) for row in rows))


def _map_row(row: dict[str, Any]) -> str:
    pid, replicas = _e(row["id"]), row["replicas"]
    racks = "".join(
        f'<td class="num mono">[{_e(leaders) if leaders else "&nbsp;"}] '
        f'{_e(followers) if followers else ""}</td>' for leaders, followers in row["racks"])
    return (f'<tr data-partition="{pid}" data-replicas="{_join(replicas, ",")}">'
            f'<td class="num">{pid}</td><td class="mono">[{_join(replicas, ", ")}]</td>'
            f'{racks}</tr>')
