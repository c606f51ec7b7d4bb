"""The hot state follows the store's spec: SPUs registered and their status, topics
provisioned or deleted, topic settings; and the connection manager (003) marks
silent SPUs offline. Every change is noted into the unit of work's log entries;
the store hears of the engine's own decisions only through their projection."""
from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace
from typing import Any, NamedTuple

from django.conf import settings

from cluster.adapters import hot_state
from cluster.adapters.hot_state import HotState
from cluster.core import replication as core
from cluster.core.replication import Action
from cluster.core.replication.controllers import (AloneChanges, SpuSpec, TopicChanges,
                                                  adoptable_alone)
from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution
from cluster.models import Partition, Spu, Topic
from cluster.selectors.sql import in_lists

CONNECTION_MANAGER = "connection-manager"
ONLINE, OFFLINE = SpuResolution.ONLINE.value, SpuResolution.OFFLINE.value


TopicRow = tuple[int, int, int, float, bool]  # pk, min_lrs, max_lag, rate, unclean


def sync_topology(hot: HotState) -> list[Action]:
    """The full comparison with every SPU and topic row: SPUs registered/unregistered,
    their racks and Online/Offline status, topics provisioned/deleted, topic settings.
    The engine's controllers (engine/controllers.py) run it as their periodic fallback
    and otherwise fold the intent entries into the same reconcile steps."""
    rows = list(Spu.objects.values_list("id", "resolution", "rack"))
    store = {spu: resolution for spu, resolution, _ in rows}
    racks = {str(spu): rack or "" for spu, _, rack in rows}
    actions = reconcile_spus(hot, store, racks)
    return actions + _sync_topics(hot, provisioned_topics())


def reconcile_spus(hot: HotState, store: dict[int, str], racks: dict[str, str]
                   ) -> list[Action]:
    """Bring the hot state's SPUs to ``store`` (every registered SPU's status) and
    ``racks`` (every registered SPU's rack, by its id as text)."""
    _sync_registered(hot, store, racks)
    sync_racks(hot, racks)
    return _sync_status(hot, store)


def provisioned_topics(names: Iterable[str] | None = None) -> dict[str, TopicRow]:
    """The provisioned topics' rows (of those ``names`` only, when given)."""
    rows = Topic.objects.filter(resolution=TopicResolution.PROVISIONED.value)
    if names is not None:
        rows = rows.filter(name__in=list(names))
    return {name: (pk, min_lrs, max_lag, rate, unclean)
            for pk, name, min_lrs, max_lag, rate, unclean in
            rows.values_list("id", "name", "min_lrs", "max_lag", "producer_rate",
                             "unclean_leader_election")}


def reconcile_topics(hot: HotState, rows: dict[str, TopicRow], names: Iterable[str]
                     ) -> list[Action]:
    """Bring the topics ``names`` to their ``rows`` (a name without a row is not
    provisioned: the engine drops it), leaving every other topic as it is."""
    actions: list[Action] = []
    names = sorted(names)
    # The topics (re-)added below: a topic new here, or re-created under its name.
    added = _partitions_of([rows[n][0] for n in names if n in rows and (
        n not in hot.topics or hot.topics[n]["pk"] != rows[n][0])])
    for name in names:
        row = rows.get(name)
        if name in hot.topics and (row is None or row[0] != hot.topics[name]["pk"]):
            _drop_topic(hot, name)
        if row is not None and name not in hot.topics:
            actions += _add_topic(hot, name, row[0], row[1], row[2], added.get(row[0], []))
        if row is not None and name in hot.state.topics:
            _apply_settings(hot, name, row)
    return actions


def drop_topic(hot: HotState, name: str, pk: int | None) -> None:
    """A deleted topic, when the engine replicates it (under that row id, when given)."""
    table = hot.topics.get(name)
    if table is not None and pk in (None, table["pk"]):
        _drop_topic(hot, name)


def apply_settings(hot: HotState, name: str, changed: Mapping[str, Any]) -> None:
    """Settings of a replicated topic changed (by a topic row's field names)."""
    cfg, table = hot.state.topics[name], hot.topics[name]
    _apply_settings(hot, name, (
        table["pk"], int(changed.get("min_lrs", cfg.min_lrs)),
        int(changed.get("max_lag", cfg.max_lag)),
        float(changed.get("producer_rate", table.get("rate", 0.0))),
        bool(changed.get("unclean_leader_election", cfg.unclean_leader_election))))


def registered_spus(hot: HotState) -> SpuSpec:
    """The registered SPUs as the engine holds them (``hot.racks`` names every one)."""
    racks = {int(s): rack for s, rack in hot.racks.items()}
    return SpuSpec(racks, {s: bool(hot.state.spus.get(s)) for s in racks})


class RowsChanged(NamedTuple):
    """What the rows differ by (``changed_in_rows``), to be adopted on its sets alone."""
    alone: AloneChanges
    kept: dict[str, TopicRow]  # the rows of the topics the engine replicates and keeps
    store: dict[int, str]  # every registered SPU's status, as ``reconcile_spus`` takes it
    racks: dict[str, str]  # ... and its rack, by its id as text
    # Topics made again under their name: dropped now, made by the next comparison.
    again: frozenset[str] = frozenset()


def changed_in_rows(hot: HotState) -> RowsChanged | None:
    """What the rows differ by when the replica sets it touches can adopt it alone
    (core.replication.controllers.adoptable_alone): SPUs registered, forgotten or changing
    status, topics provisioned that the hot state does not replicate yet, topics it
    replicates whose row is gone or another (by name, with the id it replicates them
    under: one made again is made by the next comparison, ``again``, as both at once need
    every set loaded); with the rows of the topics it replicates and keeps, whose settings
    ``apply_rows`` applies once the sets adopted the rest."""
    rows = list(Spu.objects.values_list("id", "resolution", "rack"))
    store = {spu: resolution for spu, resolution, _ in rows}
    racks = {str(spu): rack or "" for spu, _, rack in rows}
    topics = provisioned_topics()
    again = frozenset(n for n, t in hot.topics.items() if n in topics and topics[n][0] != t["pk"])
    dropped = {n: t["pk"] for n, t in hot.topics.items() if n not in topics or n in again}
    held = registered_spus(hot)
    spec = SpuSpec({spu: rack for spu, _, rack in rows},
                   {spu: resolution == ONLINE for spu, resolution in store.items()})
    changed = adoptable_alone(held, spec, TopicChanges(dropped,
                                                       topics.keys() - hot.topics.keys()),
                              hot.state.spus)
    if changed is None:
        return None
    kept = {name: row for name, row in topics.items() if name in hot.topics and name not in again}
    return RowsChanged(changed, kept, store, racks, again)


def apply_rows(hot: HotState, rows: Mapping[str, TopicRow]) -> None:
    """The settings of these topic rows, on the topics the engine still replicates."""
    for name, row in rows.items():
        if name in hot.state.topics:
            _apply_settings(hot, name, row)


def _apply_settings(hot: HotState, name: str, row: TopicRow) -> None:
    """A topic row's settings in the core's config and the shell's table, each replaced
    when it differs, never changed in place: both may be the ones this process kept as
    its meta's parse (meta_json.MetaParts.parsed), shared by its units of work."""
    _, min_lrs, max_lag, rate, unclean = row
    cfg = hot.state.topics[name]
    if (cfg.min_lrs, cfg.max_lag, cfg.unclean_leader_election) != (min_lrs, max_lag, unclean):
        hot.log.append({"type": "topic-config", "topic": name, "min_lrs": min_lrs,
                        "max_lag": max_lag, "unclean_leader_election": unclean})
    if _differs((cfg.min_lrs, cfg.max_lag, cfg.unclean_leader_election),
                (min_lrs, max_lag, unclean)):
        hot.state.topics[name] = replace(cfg, min_lrs=min_lrs, max_lag=max_lag,
                                         unclean_leader_election=unclean)
    table = hot.topics[name]
    if _differs((table.get("rate"),), (rate,)):
        hot.topics[name] = {**table, "rate": rate}  # type: ignore[typeddict-item]


def _differs(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    """Another value, or the same of another type (1 and 1.0 are stored apart)."""
    return old != new or tuple(map(type, old)) != tuple(map(type, new))


def _sync_registered(hot: HotState, store: dict[int, str], racks: dict[str, str]) -> None:
    state = hot.state
    for spu in sorted(store.keys() - state.spus.keys()):
        core.register_spu(state, spu, online=False)
        # The rack too: history draws an SPU in the rack it had then (docs/history.md).
        rack = racks.get(str(spu), "")
        hot.log.append({"type": "spu-registered", "spu": spu, "rack": rack})
        hot.racks[str(spu)] = rack
    for spu in sorted(state.spus.keys() - store.keys()):
        # An unregistered SPU named in a replica map stays, offline, for the election rules.
        if not state.sets_of(spu):
            del state.spus[spu]
            hot_state.forget_heartbeat(spu)
            hot.log.append({"type": "spu-forgotten", "spu": spu})


def sync_racks(hot: HotState, racks: dict[str, str]) -> None:
    """A registered SPU's new rack (`spu update --rack`), and racks not yet in the log
    (SPUs registered before racks were logged) as ``spu-rack`` entries."""
    for spu, rack in sorted(racks.items()):
        if hot.racks.get(spu) != rack:
            hot.log.append({"type": "spu-rack", "spu": int(spu), "rack": rack})
    hot.racks = dict(racks)


def _sync_status(hot: HotState, store: dict[int, str]) -> list[Action]:
    actions: list[Action] = []
    for spu, online in sorted(hot.state.spus.items()):
        wanted = store.get(spu) == ONLINE
        if wanted != online:
            hot.log.append({"type": "spu-sync", "spu": spu, "online": wanted})
            actions += core.handle(hot.state, core.SpuOnline(spu) if wanted
                                   else core.SpuOffline(spu))
    return actions


def _sync_topics(hot: HotState, rows: dict[str, TopicRow]) -> list[Action]:
    for name in [n for n, t in hot.topics.items() if rows.get(n, (None,))[0] != t["pk"]]:
        _drop_topic(hot, name)
    actions: list[Action] = []
    added = _partitions_of([row[0] for name, row in rows.items() if name not in hot.topics])
    for name, row in rows.items():
        if name not in hot.topics:
            actions += _add_topic(hot, name, row[0], row[1], row[2], added.get(row[0], []))
        if name in hot.state.topics:  # else deleted while this tick read the store
            _apply_settings(hot, name, row)
    return actions


def _partitions_of(pks: list[int]) -> dict[int, list[tuple[int, list[int]]]]:
    """The partition rows (pk, replicas) of each topic ``pks`` names, in index order: one
    query for them all (a query a topic was 0.7 ms each, seconds of the first tick of a
    cluster of thousands of topics)."""
    out: dict[int, list[tuple[int, list[int]]]] = {}
    for chunk in in_lists(pks):
        for topic, pk, replicas in (Partition.objects.filter(topic_id__in=chunk)
                                    .order_by("topic_id", "index")
                                    .values_list("topic_id", "id", "replicas")):
            out.setdefault(topic, []).append((pk, replicas))
    return out


def _drop_topic(hot: HotState, name: str) -> None:
    hot.log.append({"type": "topic-dropped", "topic": name, "topic_pk": hot.topics[name]["pk"]})
    for key in [k for k in hot.state.replica_sets if k[0] == name]:
        del hot.state.replica_sets[key]
        hot.state.steady.drop(key, gone=True)
        hot.raw.pop(key, None)
        hot.rowed.pop(key, None)  # a topic re-created under this name starts with fields
        hot.before.pop(key, None)
        hot.stored.pop(key, None)
    hot.state.topics.pop(name, None)
    hot.topics.pop(name, None)
    hot.producers.pop(name, None)
    hot.dropped.add(name)
    hot.state.reindex()


def _add_topic(hot: HotState, name: str, pk: int, min_lrs: int, max_lag: int,
               rows: list[tuple[int, list[int]]]) -> list[Action]:
    """The topic and its partitions in the hot state; ``rows``: its partition rows (pk,
    replicas, in index order), read with the other topics added (``_partitions_of``)."""
    if not rows:
        return []  # deleted since this tick read the topic list: the next tick drops it
    for spu in {s for _, replicas in rows for s in replicas} - hot.state.spus.keys():
        core.register_spu(hot.state, spu, online=False)
    lag_time = settings.REPLICATION_LAG_TIME_MAX_MS or None
    actions = core.add_topic(hot.state, name, [replicas for _, replicas in rows],
                             max_lag=max_lag, min_lrs=min_lrs, lag_time_max_ms=lag_time)
    hot.topics[name] = {"pk": pk, "partitions": [p for p, _ in rows], "rate": 0.0}
    hot.added.add(name)  # its first statuses go in one topic-replicated entry
    return actions


def run_spu_loops(hot: HotState, at: int, stopped: set[int]) -> list[Action]:
    """Every live loop beats and fetches; then silent SPUs are dropped (003)."""
    state = hot.state
    # A cut between an SPU and the SC drops its heartbeats (the session rule: core.links).
    hot_state.beat([s for s, up in state.spus.items()
                    if up and s not in stopped and core.links.beats(state, s)], at)
    actions = connection_manager(hot, at, stopped)
    max_records = settings.REPLICATION_MAX_RECORDS_PER_FETCH or None
    # Moves decide before the fetches, on the state the previous step left (core.reassign).
    actions += core.advance_moves(state, at)
    return actions + core.replication_step(state, at, max_records,
                                           stopped={s for s in stopped if state.spus.get(s)})


def connection_manager(hot: HotState, at: int, stopped: set[int] = frozenset(), *,
                       only: Collection[int] | None = None) -> list[Action]:
    """An SPU whose heartbeat stopped loses its connection and is marked offline (of the
    SPUs ``only`` names, when given: a unit that loaded their sets alone)."""
    timeout_ms = settings.REPLICATION_HEARTBEAT_TIMEOUT_S * 1000
    beats = hot_state.heartbeats()
    actions: list[Action] = []
    for spu in [s for s, up in hot.state.spus.items() if up and (only is None or s in only)]:
        last = beats.get(spu)
        if last is None:
            hot_state.beat([spu], at)  # first sight: the clock starts now
        elif at - last > timeout_ms:
            # The store's SPU row follows from this entry once the commit lands.
            hot.log.append({"type": "spu", "spu": spu, "resolution": OFFLINE,
                            "from": ONLINE, "by": CONNECTION_MANAGER,
                            "silent_ms": at - last})
            # A silent SPU whose loop still runs (a cut) may go on leading: core.links.
            actions += core.handle(hot.state, core.links.SessionExpired(
                spu, running=spu not in stopped))
    return actions
