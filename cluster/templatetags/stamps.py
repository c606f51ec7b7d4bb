"""Per-SPU fragments rendered once per page, then stamped with each SPU's id.

The outage buttons are the same forms for every SPU but for its id: rendered
through the template engine for each of 200 SPUs they took a third of the SPUs
page, the overview and a topic page's CPU, pages that must answer in 300 ms
while the engine shares the machine (issue 22). So a fragment is rendered once
with a stand-in id, and each SPU gets a copy with its own id put in. The
fragment's markup stays in its template; it may read ``spu.id`` and the fields
passed to the tag (one rendering per distinct value of them), nothing else of
the SPU.
"""
from __future__ import annotations

from typing import Any

from django import template
from django.template import Context
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# An id no SPU has (ids are small integers) and an int, so the fragment's {% url %}
# tags accept it; digits no other part of the fragment holds (checked below).
STAND_IN = 1_987_654_321


@register.simple_tag(takes_context=True)
def spu_fragment(context: Context, name: str, spu_id: int, **fields: Any) -> SafeString:
    """``name`` rendered for the SPU ``{"id": spu_id, **fields}``."""
    key = (__name__, name, tuple(sorted(fields.items())))
    stamp = context.render_context.get(key)
    if stamp is None:
        stamp = context.render_context[key] = _stamp(context, name, fields)
    if stamp is False:  # the page's own text held the stand-in's digits: render each
        return _render(context, name, {"id": spu_id, **fields})
    return mark_safe(stamp.replace(str(STAND_IN), str(spu_id)))


def _stamp(context: Context, name: str, fields: dict[str, Any]) -> str | bool:
    probe = _render(context, name, {"id": STAND_IN + 1, **fields})
    if str(STAND_IN) in probe:
        return False
    return _render(context, name, {"id": STAND_IN, **fields})


def _render(context: Context, name: str, spu: dict[str, Any]) -> SafeString:
    fragment = context.template.engine.get_template(name)
    with context.push(spu=spu):
        return fragment.render(context)
