"""Commands print readable JSON when it is small and compact JSON when it is large."""
from __future__ import annotations

import json

from cluster.management.commands._cli import PRETTY_JSON_UP_TO, json_text


def test_small_outputs_are_indented_for_people():
    text = json_text({"id": 0, "replicas": [0, 1, 2]})
    assert text.startswith("{\n  ")
    assert json.loads(text) == {"id": 0, "replicas": [0, 1, 2]}


def test_large_outputs_are_compact_and_parse_back_the_same():
    data = {"partitions": [{"id": i, "replicas": [i % 7, (i + 1) % 7, (i + 2) % 7]}
                           for i in range(20_000)]}
    text = json_text(data)
    assert len(text) > PRETTY_JSON_UP_TO and "\n" not in text and ", " not in text
    assert json.loads(text) == data
