"""The demo cluster of `make run`: the seed's 12 SPUs in 4 racks, two topics."""
from __future__ import annotations

from django.db import transaction

from cluster.core.spus import SpuResolution
from cluster.models import Spu, Topic
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
    """Idempotent: registers what is missing and connects the SPUs."""
    done = []
    for rack, spu_ids in DEMO_RACKS.items():
        for spu_id in spu_ids:
            if not Spu.objects.filter(pk=spu_id).exists():
                spu_register(spu_id=spu_id, rack=rack, by=by)
                done.append(f"SPU {spu_id} ({rack})")
            if Spu.objects.get(pk=spu_id).resolution != SpuResolution.ONLINE.value:
                spu_connect(spu_id=spu_id)
    for spec in DEMO_TOPICS:
        if not Topic.objects.filter(name=spec["name"]).exists():
            topic_create(**spec, by=by)
            done.append(f"topic {spec['name']}")
        topic_set_producer_rate(name=spec["name"], rate=DEMO_PRODUCER_RATES[spec["name"]], by=by)
    return done
