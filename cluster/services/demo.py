"""The demo cluster of `make run`: the seed's 12 SPUs in 4 racks, two topics.

Loaded once per store (``ClusterState.demo_loaded``): what an operator removes
afterwards (a drained and unregistered SPU, a deleted topic, an SPU taken
offline) stays as they left it across restarts. A store that already holds
SPUs or topics from before the flag existed counts as loaded.
"""
from __future__ import annotations

from django.db import transaction

from cluster.models import ClusterState, Spu, Topic
from cluster.services.records import topic_set_producer_rate
from cluster.services.spus import spu_connect, spu_register
from cluster.services.topics import topic_create

DEMO_RACKS = {"rack-a": [0, 1, 2], "rack-b": [3, 4, 5],
              "rack-c": [6, 7, 8], "rack-d": [9, 10, 11]}
DEMO_TOPICS = [
    {"name": "orders", "partitions": 12, "replication": 3, "min_lrs": 2},
    {"name": "clickstream", "partitions": 8, "replication": 2},
]
# Records per second of the simulated producers, so `make run` shows HW/LEO moving.
DEMO_PRODUCER_RATES = {"orders": 6.0, "clickstream": 16.0}


@transaction.atomic
def demo_load(*, by: str = "demo") -> list[str]:
    """Register the demo SPUs and topics and connect the SPUs, once per store; afterwards
    (and on a store that already has a cluster) it changes nothing and answers []."""
    state, _ = ClusterState.objects.select_for_update().get_or_create(pk=ClusterState.SINGLETON)
    if state.demo_loaded or Spu.objects.exists() or Topic.objects.exists():
        ClusterState.objects.filter(pk=state.pk).update(demo_loaded=True)
        return []
    done = _load(by)
    ClusterState.objects.filter(pk=state.pk).update(demo_loaded=True)
    return done


def _load(by: str) -> list[str]:
    done = []
    for rack, spu_ids in DEMO_RACKS.items():
        for spu_id in spu_ids:
            spu_register(spu_id=spu_id, rack=rack, by=by)
            spu_connect(spu_id=spu_id)
            done.append(f"SPU {spu_id} ({rack})")
    for spec in DEMO_TOPICS:
        topic_create(**spec, by=by)
        topic_set_producer_rate(name=spec["name"], rate=DEMO_PRODUCER_RATES[spec["name"]], by=by)
        done.append(f"topic {spec['name']}")
    return done
