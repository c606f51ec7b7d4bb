"""Pure replication and election core (no Django, Celery or Redis).

Drive it with ``handle(state, event) -> list[Action]``; the state is updated in
place. See ``state`` for the offset convention (LEO = next offset) and
``election`` for where the rules of 001 were read the safe way.

How a shell drives it (load state, call, persist state, then act on actions):
* beat tick: ``handle(state, ReplicationTick(now_ms))`` (or one
  ``FollowerFetch`` per follower for per-SPU loops);
* SPU down / up: ``handle(state, SpuOffline(spu))`` / ``SpuOnline(spu)``;
* ``NotifyCandidate`` action: an SPU task calls ``spu_receive_notice(state,
  notice)`` and, if it returns a ``PromotionSucceeded``, feeds it to ``handle``;
* or, as the running engine does: ``run_elections(state, now_ms, stopped)`` after
  every step answers notices and fires the timers whose deadline (kept in the
  replica set) passed (``timers``);
* ``StartElectionTimer`` action: fed back later as ``TimerFired(topic, partition,
  candidate, attempt)``; stale ones are no-ops;
* periodic reconciliation: ``handle(state, ReconcileElections())``;
* produce: ``produce(state, ProduceRequest(...))`` for a ProduceResult (or
  ``handle`` for its actions); read: ``consume(state, topic, partition, offset)``;
* ``ResolutionChanged`` / ``LeaderChanged`` / ``LrsChanged`` /
  ``ReplicaTruncated`` / ack actions: persist and publish; ``partition_list``
  gives the `fluvio partition list` rows.

Reassignment (``reassign``; Kafka's kafka-reassign-partitions):
* a plan executor picks the moves to start with ``moves_to_start`` (Cruise
  Control's caps: 5 per SPU, a total), feeds ``ReassignPartition(topic,
  partition, target)`` for each and ``CancelReassignment`` to stop one (plan
  order and rack rules are the planner's: the core moves one partition as asked);
  bad input raises ``ReplicationError`` before anything changes;
* moves advance inside ``ReplicationTick`` / ``FollowerFetch`` (pass ``now_ms``
  so a new replica offline past the move's timeout rolls the move back);
* ``ReplicasChanged``: write the partition's replica map (and its in-flight
  adding / removing lists); ``MoveStarted`` / ``MoveProgressed`` /
  ``MoveCompleted`` / ``MoveRolledBack``: update the plan's progress and the
  event log. A move is done when its set has ``move is None`` again;
  ``move_progress`` / ``moves_in_flight`` give records copied per move for pages.

Leadership (``leadership``): ``ElectPreferredLeaders(topic)`` for the
`leader elect --preferred` command (or ``elect_preferred_leaders`` /
``plan_preferred`` for the moved / not-moved lists with reasons);
``RebalanceLeaders(threshold)`` from the periodic auto-rebalance check;
``leader_imbalance`` for pages.

Network cuts (``links``; rules there, accounting in ``ledger``): feed
``links.CutLinks`` / ``links.HealLinks`` from operator actions and
``links.SessionExpired(spu)`` when the SC's session timeout passes for an SPU
whose heartbeats stop (``links.beats`` says whose get through).

Unclean election (``unclean``): topics created with
``unclean_leader_election=True`` elect a live non-LRS replica by themselves;
``ElectUncleanLeader(topic, partition, spu)`` is the operator's override. Both
emit ``UncleanLeaderElected`` with ``offsets_lost`` for the event log.
``waiting_for(rs, spus)`` names the SPUs a leaderless partition waits for.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from cluster.core.lazy import lazy_exports

# Each module loads when one of its names is first used (cluster/core/lazy.py): the
# models need a few enums, not every rule of the core, at every command's start.
if TYPE_CHECKING:
    from . import ledger, links, netview
    from .acks import AckOutcome, ack_outcome, outcome_on_append
    from .connections import connection_count, connection_counts
    from .controller import handle
    from .election import (choose_candidate, promotion_failed, promotion_succeeded,
                           reconcile_elections, spu_offline, spu_online,
                           spu_receive_notice, timer_fired)
    from .events import (CancelReassignment, ElectPreferredLeaders,
                         ElectUncleanLeader, MoveCompleted, MoveProgressed,
                         MoveRolledBack, MoveStarted, ReassignPartition,
                         RebalanceLeaders, ReplicasChanged, UncleanLeaderElected)
    from .events import (INVALID_REQUEST, LEADER_LOST, NETWORK_EXCEPTION, NOT_ENOUGH_REPLICAS,
                         NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER,
                         UNKNOWN_TOPIC_OR_PARTITION, AckFailed, Action, Event,
                         FollowerFetch, LeaderChanged, LrsChanged, NotifyCandidate,
                         ProduceAccepted, ProduceRefused, ProduceRequest,
                         PromotionFailed, PromotionSucceeded, ReconcileElections,
                         RecordsAcknowledged, ReplicaTruncated, ReplicationTick,
                         ResolutionChanged, SpuOffline, SpuOnline,
                         StartElectionTimer, TimerFired)
    from .leadership import (DEFAULT_IMBALANCE_THRESHOLD, LeaderImbalance,
                             LeaderMove, NotMoved, NotMovedReason,
                             PreferredElection, elect_preferred_leaders,
                             imbalanced_spus, leader_imbalance, plan_preferred,
                             rebalance_leaders, transfer_leadership)
    from .produce import (ConsumeResult, ProduceResult, consume, produce, produce_many,
                          produce_spread)
    from .serial import (cluster_from_dict, cluster_meta_to_dict, cluster_to_dict,
                         message_from_dict, message_to_dict, replica_set_from_dict,
                         replica_set_to_dict)
    from .reassign import (MoveProgress, advance_move, advance_moves, cancel_move,
                           move_progress, moves_in_flight, start_move, waiting_on)
    from .state import (Acks, ClusterState, Isolation, Key, MovePhase, NoLeader,
                        Reassignment, Replica, ReplicaSet, ReplicationError,
                        Resolution, TopicConfig, UnknownPartition, new_cluster,
                        register_spu)
    from .summary import PartitionSummary, partition_list, partition_summary
    from .sync import follower_fetch, leader_update, replication_step
    from .throttle import PlannedMove, moved_spus, moves_to_start, spu_load
    from .topology import add_topic
    from .unclean import waiting_for
    from .timers import next_deadline, run_elections


__all__ = [
    "AckFailed", "Acks", "Action", "ClusterState", "ConsumeResult", "Event",
    "FollowerFetch", "INVALID_REQUEST", "Isolation", "Key", "LEADER_LOST", "LeaderChanged",
    "LrsChanged",
    "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "NOT_LEADER",
    "NoLeader", "NotifyCandidate", "PartitionSummary", "ProduceAccepted",
    "ProduceRefused", "ProduceRequest", "ProduceResult", "PromotionFailed",
    "PromotionSucceeded", "ReconcileElections", "RecordsAcknowledged", "Replica",
    "ReplicaSet", "ReplicaTruncated", "ReplicationError", "ReplicationTick",
    "Resolution", "ResolutionChanged", "SpuOffline", "SpuOnline",
    "StartElectionTimer", "TimerFired", "TopicConfig", "UNKNOWN_TOPIC_OR_PARTITION",
    "UnknownPartition", "add_topic", "choose_candidate", "cluster_from_dict",
    "cluster_meta_to_dict", "cluster_to_dict", "connection_count",
    "connection_counts", "consume", "follower_fetch", "handle", "leader_update",
    "message_from_dict", "message_to_dict", "new_cluster", "partition_list",
    "partition_summary", "produce", "produce_many", "produce_spread", "promotion_failed",
    "promotion_succeeded",
    "reconcile_elections", "register_spu", "replica_set_from_dict",
    "replica_set_to_dict", "replication_step", "spu_offline", "spu_online",
    "spu_receive_notice", "timer_fired",
    "CancelReassignment", "DEFAULT_IMBALANCE_THRESHOLD", "ElectPreferredLeaders",
    "ElectUncleanLeader", "LeaderImbalance", "LeaderMove", "MoveCompleted",
    "MovePhase", "MoveProgress", "MoveProgressed", "MoveRolledBack", "MoveStarted",
    "NotMoved", "NotMovedReason", "PreferredElection", "ReassignPartition",
    "Reassignment", "RebalanceLeaders", "ReplicasChanged", "UncleanLeaderElected",
    "advance_move", "advance_moves", "cancel_move", "elect_preferred_leaders",
    "imbalanced_spus", "leader_imbalance", "move_progress", "moves_in_flight",
    "plan_preferred", "rebalance_leaders", "start_move", "transfer_leadership",
    "waiting_for", "waiting_on", "PlannedMove", "moved_spus", "moves_to_start", "spu_load",
    "next_deadline", "run_elections", "AckOutcome", "ack_outcome", "outcome_on_append",
    "NETWORK_EXCEPTION", "ledger", "links", "netview",
]

if not TYPE_CHECKING:
    lazy_exports(__name__, __file__)
