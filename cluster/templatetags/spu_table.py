"""The SPUs page's table rows and the overview's SPUs by rack, built in Python rather than
by the template engine.

200 rows of 30 cells each went through the engine's variable lookups, number formatting
and escaping one node at a time: two thirds of the page's CPU, the heaviest page while
the engine steps 100,000 partitions on a 2-core machine (issue 33, ``bench_pages.py
--stepping``: p99 over 300 ms). Here a row is one f-string with each value escaped as the
engine escapes it; the markup is byte for byte what spus.html rendered before
(tests/integration/test_spu_table_rows.py renders both), and the same for the overview's
200 list items. The outage buttons and the
Unregister form stay templates, stamped per SPU (stamps.py).
"""
from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from django import template
from django.template import Context
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from cluster.cells import Cell
from cluster.selectors.stats import SpuStats
from cluster.templatetags.stamps import STAND_IN, spu_fragment

register = template.Library()

OUTAGE_BUTTONS = "cluster/_spu_outage_buttons.html"
UNREGISTER_FORM = "cluster/_spu_unregister_form.html"


def _e(value: object) -> str:
    """As the engine shows a value: str() and escaped unless marked safe (ints as text:
    no thousands separator is configured). ``conditional_escape``'s own steps, without
    its lazy-string wrapper (a check of every argument per call: a third of the rows'
    CPU for 3,600 values); the rows never hold a lazy string, and str() would evaluate
    one the same way."""
    as_html = getattr(value, "__html__", None)
    return str(as_html()) if as_html is not None else html.escape(str(value))


def _or_dash(value: object) -> str:
    """``{{ value|default:"–" }}``."""
    return _e(value) if value else "–"


def _can_operate(context: Context) -> bool:
    perms = context.get("perms")
    return bool(perms and perms["cluster"]["operate_cluster"])


@register.simple_tag(takes_context=True)
def spu_table_rows(context: Context, rows: Sequence[Mapping[str, Any]]) -> SafeString:
    """Every ``<tr>`` of the SPUs table, each preceded by its line break and indent."""
    operate = _can_operate(context)
    drain = reverse("planner:spu-drain", args=[STAND_IN]) if operate else ""
    return mark_safe("".join(_row(context, row, operate, drain) for row in rows))


def _row(context: Context, row: Mapping[str, Any], operate: bool, drain: str) -> str:
    spu: SpuStats = row["spu"]
    sid = str(spu.id)
    status: Cell = row["status"]
    leader_skew: Cell = row["leader_skew"]
    replica_skew: Cell = row["replica_skew"]
    share: Cell = row["preferred_share"]
    actions = ""
    if operate:
        buttons = spu_fragment(context, OUTAGE_BUTTONS, spu.id)
        drain_link = (f'<a class="button small" href="{drain.replace(str(STAND_IN), sid)}" '
                      f'title="Preview the moves of its {_e(spu.replicas)} replicas (nothing '
                      f'changes until you apply)">Drain…</a>' if spu.replicas else "")
        unregister = (spu_fragment(context, UNREGISTER_FORM, spu.id)
                      if spu.spu_type == "custom" else '<small class="muted">managed</small>')
        actions = (f'<td class="actions"><div class="row-actions">{buttons}{drain_link}'
                   f'{unregister}</div></td>')
    return (
        f'\n  <tr data-spu="{sid}" class="{_e(status.css)}" data-cell-class="status">\n'
        f'    <td><a href="/partitions/?spu={sid}">SPU {sid}</a> <small class="muted">'
        f'{_e(spu.spu_type)}</small></td><td>{_or_dash(spu.rack)}</td>\n'
        f'    <td><span class="badge {_e(str(spu.resolution).lower())}">{_e(spu.resolution)}'
        f'</span> <small class="down-note" data-cell="status">{_e(status.text)}</small></td>'
        f'<td>{_or_dash(spu.group)}</td>\n'
        f'    <td class="num" data-field="leaders">{_e(spu.leaders)}</td><td class="num '
        f'{_e(leader_skew.css)}" data-cell="leader_skew">{_e(leader_skew.text)}</td>\n'
        f'    <td class="num" data-field="followers">{_e(spu.followers)}</td><td class="num" '
        f'data-field="replicas">{_e(spu.replicas)}</td><td class="num {_e(replica_skew.css)}" '
        f'data-cell="replica_skew">{_e(replica_skew.text)}</td>\n'
        f'    <td class="num {_e(share.css)}" data-cell="preferred_share"><span data-cell-text>'
        f'{_e(share.text)}</span> <small>(<span data-field="preferred_leading">'
        f'{_e(spu.preferred_leading)}</span>/<span data-field="preferred">{_e(spu.preferred)}'
        f'</span>)</small></td>\n'
        f'    {actions}\n'
        f'  </tr>')


@register.simple_tag(takes_context=True)
def spu_rack_items(context: Context, rows: Sequence[Mapping[str, Any]]) -> SafeString:
    """Every ``<li>`` of one rack's SPUs on the overview."""
    operate = _can_operate(context)
    return mark_safe("".join(_rack_item(context, row, operate) for row in rows))


def _rack_item(context: Context, row: Mapping[str, Any], operate: bool) -> str:
    spu: SpuStats = row["spu"]
    sid = str(spu.id)
    status: Cell = row["status"]
    resolution = _e(spu.resolution)
    lower = _e(str(spu.resolution).lower())
    buttons = spu_fragment(context, OUTAGE_BUTTONS, spu.id) if operate else ""
    return (
        f'\n        <li class="spu {lower} {_e(status.css)}" data-spu="{sid}" data-state '
        f'data-cell-class="status">\n'
        f'          <a href="/partitions/?spu={sid}"><b>SPU {sid}</b></a>\n'
        f'          <small>{_e(spu.spu_type)}</small>\n'
        f'          <span class="badge {lower}">{resolution}</span>\n'
        f'          <span class="down-note" data-cell="status">{_e(status.text)}</span>\n'
        f'          <span class="counts" title="leaders / followers" data-field="counts">'
        f'<span class="{_e(row["leader_skew"].css)}" data-cell-class="leader_skew">'
        f'L {_e(spu.leaders)}</span> · F {_e(spu.followers)}</span>\n'
        f'          {buttons}\n'
        f'        </li>')
