"""The ``kafka-configs.sh`` commands that throttle a reassignment, and undo it.

As Kafka's own reassignment tool sets them: on every broker that sends or receives a
copy, ``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate``;
on every topic with a moving partition, ``leader.replication.throttled.replicas`` (each
moving partition's current replicas, which may serve the copy) and
``follower.replication.throttled.replicas`` (its new replicas), as ``partition:broker``
lists for exactly the moved partitions. The removal runs once ``--verify`` reports the
reassignment complete.
"""
from __future__ import annotations

from collections.abc import Sequence

from planner.core.model import Move

TOOL = "kafka-configs.sh --bootstrap-server \"$BOOTSTRAP\""


def throttle_commands(moves: Sequence[Move], rate: int) -> dict[str, list[str]]:
    copying = [m for m in moves if m.added]
    brokers = sorted({s for m in copying for s in (*m.before, *m.added)})
    leader: dict[str, list[str]] = {}
    follower: dict[str, list[str]] = {}
    for move in copying:
        leader.setdefault(move.topic, []).extend(f"{move.partition}:{s}" for s in move.before)
        follower.setdefault(move.topic, []).extend(f"{move.partition}:{s}" for s in move.added)
    apply, remove = [], []
    for broker in brokers:
        apply.append(f"{TOOL} --entity-type brokers --entity-name {broker} --alter "
                     f"--add-config leader.replication.throttled.rate={rate},"
                     f"follower.replication.throttled.rate={rate}")
        remove.append(f"{TOOL} --entity-type brokers --entity-name {broker} --alter "
                      "--delete-config leader.replication.throttled.rate,"
                      "follower.replication.throttled.rate")
    for topic in sorted(leader):
        apply.append(f"{TOOL} --entity-type topics --entity-name {topic} --alter --add-config "
                     f"'leader.replication.throttled.replicas=[{','.join(leader[topic])}],"
                     f"follower.replication.throttled.replicas=[{','.join(follower[topic])}]'")
        remove.append(f"{TOOL} --entity-type topics --entity-name {topic} --alter "
                      "--delete-config leader.replication.throttled.replicas,"
                      "follower.replication.throttled.replicas")
    return {"apply": apply, "remove": remove}


def throttle_script(moves: Sequence[Move], rate: int) -> str:
    commands = throttle_commands(moves, rate)
    return "\n".join([
        "#!/bin/sh", "# Throttle for the reassignment (run before --execute):",
        ': "${BOOTSTRAP:?set BOOTSTRAP to host:port}"', *commands["apply"], "",
        "# After kafka-reassign-partitions.sh --verify reports every partition complete,",
        "# remove the throttle (what --verify does itself when it is given the throttle):",
        "remove_throttle() {", *[f"  {c}" for c in commands["remove"]], "}", ""])
