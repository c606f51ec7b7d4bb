"""A hot state missing or older than the store is reported, never silently zeroed.

The store mirrors every partition's HW after Redis saved it, so the store's HW
is never ahead of a hot state that survived. When it is (Redis restarted
without its append-only file, or from an older one, or its keys were removed),
the partition's sets are brought up to the store's HW with compacted logs: the
store's figures are kept, offsets go on from there, the topic carries the
reason and the event log counts the committed records that are gone.
"""
from __future__ import annotations

from collections.abc import Iterable

from cluster.adapters import hot_state
from cluster.adapters.hot_state import HotState
from cluster.models import Partition, Topic
from cluster.services.events import log_event

ACTOR = "partition-controller"
REASON = ("hot state lost: {missing} committed records of {partitions} partition(s) are gone "
          "(Redis came back without them: no append-only file, or an older one); "
          "offsets, HW and LEO go on from the store's figures")


def hot_state_check_against_store(hot: HotState) -> int:
    """Once per Redis server run: restore sets the store knows more of; return records lost."""
    run = hot_state.redis_run_id()
    if hot.checked == run:
        return 0
    lost = hot_state_recover(hot, list(hot.topics))
    hot.checked = run
    return lost


def hot_state_recover(hot: HotState, names: Iterable[str]) -> int:
    """Bring every set below its store HW up to it; log one event per topic."""
    pks = {hot.topics[n]["pk"]: n for n in names if n in hot.topics}
    lost: dict[str, dict[int, int]] = {}
    rows = Partition.objects.filter(topic_id__in=pks).values_list("topic_id", "index", "hw")
    for topic_pk, index, hw in rows:
        rs = hot.state.replica_sets.get((pks[topic_pk], index))
        if rs is not None and hw > rs.hw:
            lost.setdefault(pks[topic_pk], {})[index] = hot_state.restore_at(rs, hw)
    if lost:
        # Values of records the lost state had allocated may survive: ids must stay above them.
        floor = hot_state.highest_value_id(hot.topics) + 1
        hot.state.next_record_id = max(hot.state.next_record_id, floor)
    for name, partitions in lost.items():
        _report(name, partitions)
    return sum(n for parts in lost.values() for n in parts.values())


def _report(name: str, partitions: dict[int, int]) -> None:
    missing = sum(partitions.values())
    reason = REASON.format(missing=missing, partitions=len(partitions))
    Topic.objects.filter(name=name).update(reason=reason)
    log_event(ACTOR, "topic", name, "hot-state-lost",
              {"missing_records": missing,
               "partitions": {str(i): n for i, n in sorted(partitions.items())}}, result=reason)
