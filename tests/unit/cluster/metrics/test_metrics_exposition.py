"""The directly written per-topic and per-SPU families (cluster/metrics/exposition.py) read
back as the library writes them, label values escaped."""
from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from cluster.metrics.exposition import Family, render

ODD = 'a "quoted" \\ back\nslash'


def library_text(families: list[Family]) -> str:
    class Registry:
        def collect(self):
            for f in families:
                gauge = GaugeMetricFamily(f.name, f.doc, labels=list(f.labels))
                for values, value in f.samples:
                    gauge.add_metric(list(values), value)
                yield gauge

    return generate_latest(Registry()).decode()


FAMILIES = [
    Family("controlroom_partitions_total", "partitions", ("topic",),
           [(("orders",), 12), (("clicks",), 8), ((ODD,), 0)]),
    Family("controlroom_spu_up", "1 if the SPU is Online, else 0", ("spu", "rack"),
           [(("0", "rack-a"), 1), (("1", "none"), 0)]),
    Family("controlroom_leader_imbalance_ratio", "share not led", ("spu",),
           [(("0",), 0.25), (("1",), 0.0)]),
    Family("controlroom_partitions_offline", "no samples yet", ("topic",), []),
]


def test_the_text_is_the_library_s_text_for_the_same_families():
    assert render(FAMILIES) == library_text(FAMILIES)


def test_label_values_with_quotes_backslashes_and_newlines_read_back_unchanged():
    parsed = list(text_string_to_metric_families(render(FAMILIES[:1])))
    assert [(s.labels["topic"], s.value) for s in parsed[0].samples] == \
        [("orders", 12), ("clicks", 8), (ODD, 0)]
