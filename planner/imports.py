"""``cluster import``: a real cluster from Kafka's tool outputs, into the store or kept
as a planning snapshot (the parsing itself is pure: planner/core/kafka_import/).

A store import goes through the cluster's services (SPU register/update, topic create
with the described replica map as a manual assignment), with each partition's
leader and LRS as the describe says (topic create takes them instead of guessing them
from which SPUs are online). Everything happens in one transaction: a refusal stores nothing.
Sizes and disk capacities have no column in the store; they live in the ClusterImport
row, which byte plans read (``import_sizes``).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from cluster.core.names import name_problem
from cluster.core.spus import endpoint_problem
from cluster.errors import Conflict, InvalidInput
from cluster.models import Spu as SpuRow
from cluster.models import Topic as TopicRow
from cluster.services.events import Actor, actor_name, log_event
from cluster.services.spus import spu_register, spu_update
from cluster.services.topics import topic_create
from planner import core
from planner.core.kafka_import import ImportFormatError, Snapshot, import_texts
from planner.core.kafka_import.fluvio import import_fluvio
from planner.models import ClusterImport


@dataclass(frozen=True)
class ImportOutcome:
    record: ClusterImport
    snapshot: Snapshot

    def as_json(self) -> dict[str, Any]:
        return {"id": self.record.pk, "stored": self.record.stored, **self.snapshot.summary(),
                "renamed": self.record.renamed, "files": self.record.files}


def import_cluster(*, describe: str, log_dirs: str | None = None, brokers: str | None = None,
                   names: tuple[str, str, str] = ("describe", "log-dirs", "brokers"),
                   plan_only: bool = False, by: Actor = None) -> ImportOutcome:
    snapshot = _parsed(lambda: import_texts(describe, log_dirs, brokers, names=names))
    files = {"describe": names[0], "log_dirs": names[1] if log_dirs is not None else None,
             "brokers": names[2] if brokers is not None else None}
    return _imported(snapshot, files, plan_only, by)


def import_fluvio_cluster(*, partitions: str, spus: str | None = None,
                          names: tuple[str, str] = ("partitions", "spus"),
                          plan_only: bool = False, by: Actor = None) -> ImportOutcome:
    """The same from ``fluvio partition list -O json`` and ``fluvio cluster spu list -O
    json`` (planner/core/kafka_import/fluvio.py)."""
    snapshot = _parsed(lambda: import_fluvio(partitions, spus, names=names))
    files = {"fluvio_partitions": names[0], "fluvio_spus": names[1] if spus else None}
    return _imported(snapshot, files, plan_only, by)


def _parsed(parse: Callable[[], Snapshot]) -> Snapshot:
    try:
        return parse()
    except ImportFormatError as exc:
        raise InvalidInput(str(exc), field="file",
                           details={"file": exc.source, "line": exc.line,
                                    "expected": exc.expected}) from None


def _imported(snapshot: Snapshot, files: dict, plan_only: bool, by: Actor) -> ImportOutcome:
    if plan_only:
        return ImportOutcome(_record(snapshot, snapshot.cluster, {}, files, False, by), snapshot)
    return _store_import(snapshot, files, by)


@transaction.atomic
def _store_import(snapshot: Snapshot, files: dict, by: Actor) -> ImportOutcome:
    renamed = store_names([t.name for t in snapshot.cluster.topics])
    taken = set(TopicRow.objects.filter(name__in=[renamed.get(t.name, t.name) for t in
                                                  snapshot.cluster.topics])
                .values_list("name", flat=True))
    if taken:
        raise Conflict(f"topic {sorted(taken)[0]!r} already exists: nothing was imported "
                       f"({len(taken)} of the file's topics are in the store)", field="file")
    _spus(snapshot, by)
    for topic in snapshot.cluster.topics:
        name = renamed.get(topic.name, topic.name)
        # Leader and LRS as the describe has them, not guessed from which SPUs are online.
        leaders = topic.leaders or tuple(r[0] for r in topic.replicas)
        created = topic_create(
            name=name, min_lrs=snapshot.min_insync.get(topic.name, 1),
            replica_assignment={"partitions": [{"id": p, "replicas": list(r)}
                                               for p, r in enumerate(topic.replicas)]},
            status=(leaders, snapshot.isr[topic.name]), by=by)
        if not created.stored or created.resolution != "Provisioned":
            raise InvalidInput(f"topic {name!r} could not be provisioned: {created.reason}",
                               field="file")
    cluster = core.Cluster(snapshot.cluster.spus, tuple(
        core.Topic(renamed.get(t.name, t.name), t.replicas, t.sizes, t.leaders)
        for t in snapshot.cluster.topics))
    record = _record(snapshot, cluster, renamed, files, True, by)
    return ImportOutcome(record, snapshot)


def store_names(kafka_names: list[str]) -> dict[str, str]:
    """Kafka name -> store name where they differ: the store's names are DNS labels
    (lowercase, digits, '-'), Kafka's may hold '.', '_' and capitals. Two Kafka names that
    would meet, or one that stays invalid, refuse the import."""
    renamed: dict[str, str] = {}
    seen: dict[str, str] = {}
    for name in kafka_names:
        store = re.sub(r"[._]+", "-", name.lower()).strip("-")
        problem = name_problem(store)
        if problem:
            raise InvalidInput(f"Kafka topic {name!r} has no store name: {problem} "
                               f"(use --plan-only to plan it without the store)", field="file")
        if store in seen:
            raise InvalidInput(f"Kafka topics {seen[store]!r} and {name!r} would both be "
                               f"stored as {store!r}", field="file")
        seen[store] = name
        if store != name:
            renamed[name] = store
    return renamed


def _spus(snapshot: Snapshot, by: Actor) -> None:
    existing = dict(SpuRow.objects.values_list("id", "rack"))
    for spu in snapshot.cluster.spus:
        rack = spu.rack or ""
        if spu.id in existing:
            if rack and existing[spu.id] != rack:
                spu_update(spu_id=spu.id, rack=rack, by=by)
            continue
        endpoint = snapshot.endpoints.get(spu.id, "")
        public = endpoint if endpoint and not endpoint_problem(endpoint, "public") else ""
        spu_register(spu_id=spu.id, rack=rack, public=public, by=by)


def _record(snapshot: Snapshot, cluster: core.Cluster, renamed: Mapping[str, str],
            files: dict, stored: bool, by: Actor) -> ClusterImport:
    record = ClusterImport.objects.create(
        created_by=actor_name(by), stored=stored, files=files,
        current=core.cluster_to_dict(cluster),
        min_insync={renamed.get(k, k): v for k, v in snapshot.min_insync.items()},
        capacities={str(k): v for k, v in snapshot.capacities.items()},
        renamed=dict(renamed), warnings=list(snapshot.warnings))
    log_event(by, "import", record.pk, "import" if stored else "snapshot",
              {"files": files, "stored": stored},
              result=f"{len(cluster.spus)} SPUs, {len(cluster.topics)} topics, "
                     f"{len(snapshot.warnings)} warnings")
    return record
