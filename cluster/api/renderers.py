"""DRF's JSON renderer with a faster encoder for the large answers.

A topic of 50,000 partitions describes itself as 50,000 ``{"id", "replicas"}`` objects:
DRF's renderer (the standard library's C encoder) took 35 ms of the answer's 70 ms of CPU,
the slowest API answer while the engine steps 100,000 partitions (issue 33,
``bench_pages.py --stepping``); ujson (already installed, daphne's autobahn needs it)
writes the same bytes in a third of that. What ujson refuses (a date, a set, a lazy
string, NaN: a TypeError or OverflowError) and an indented answer go to DRF's renderer, so
the bytes are DRF's (tests/integration/test_api_renderer.py compares them). Used by the
views whose answers are plain dicts, lists, strings and numbers (the topic description).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ujson
from rest_framework.renderers import JSONRenderer


class FastJSONRenderer(JSONRenderer):
    def render(self, data: Any, accepted_media_type: str | None = None,
               renderer_context: Mapping[str, Any] | None = None) -> bytes:
        indent = self.get_indent(accepted_media_type, renderer_context or {})
        if (data is None or indent is not None or not self.compact or self.ensure_ascii
                or not self.strict):
            return super().render(data, accepted_media_type, renderer_context)
        try:
            text = ujson.dumps(data, ensure_ascii=False, escape_forward_slashes=False,
                               allow_nan=False, reject_bytes=True)
            # As DRF: the output stays a strict JavaScript subset.
            return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()
        except (TypeError, ValueError, OverflowError, UnicodeError):
            return super().render(data, accepted_media_type, renderer_context)

