"""``{% net_links %}``: the link matrix and the latest rehearsal, for the SPU and overview
pages (templates/cluster/_net_links.html; static/js/net.js keeps it live)."""
from __future__ import annotations

import logging
from typing import Any

from django import template

from cluster.services.network import net_matrix, net_report

register = template.Library()
log = logging.getLogger(__name__)


@register.inclusion_tag("cluster/_net_links.html", takes_context=True)
def net_links(context: dict[str, Any]) -> dict[str, Any]:
    try:
        matrix, report = net_matrix(), net_report()
    except Exception:  # noqa: BLE001  a page renders without the engine's state
        log.warning("network state not readable", exc_info=True)
        return {"unavailable": True}
    return {"matrix": matrix, "report": report, "perms": context.get("perms"),
            "request": context.get("request")}
