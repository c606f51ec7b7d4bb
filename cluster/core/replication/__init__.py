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
* ``StartElectionTimer`` action: a countdown task that later feeds
  ``TimerFired(topic, partition, candidate, attempt)``; stale ones are no-ops;
* periodic reconciliation: ``handle(state, ReconcileElections())``;
* produce: ``produce(state, ProduceRequest(...))`` for a ProduceResult (or
  ``handle`` for its actions); read: ``consume(state, topic, partition, offset)``;
* ``ResolutionChanged`` / ``LeaderChanged`` / ``LrsChanged`` /
  ``ReplicaTruncated`` / ack actions: persist and publish; ``partition_list``
  gives the `fluvio partition list` rows.
"""
from __future__ import annotations

from .connections import connection_count, connection_counts
from .controller import handle
from .election import (choose_candidate, promotion_failed, promotion_succeeded,
                       reconcile_elections, spu_offline, spu_online,
                       spu_receive_notice, timer_fired)
from .events import (INVALID_REQUEST, LEADER_LOST, NOT_ENOUGH_REPLICAS,
                     NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER,
                     UNKNOWN_TOPIC_OR_PARTITION, AckFailed, Action, Event,
                     FollowerFetch, LeaderChanged, LrsChanged, NotifyCandidate,
                     ProduceAccepted, ProduceRefused, ProduceRequest,
                     PromotionFailed, PromotionSucceeded, ReconcileElections,
                     RecordsAcknowledged, ReplicaTruncated, ReplicationTick,
                     ResolutionChanged, SpuOffline, SpuOnline,
                     StartElectionTimer, TimerFired)
from .invariants import InvariantChecker, InvariantViolation
from .produce import ConsumeResult, ProduceResult, consume, produce
from .serial import (cluster_from_dict, cluster_meta_to_dict, cluster_to_dict,
                     message_from_dict, message_to_dict, replica_set_from_dict,
                     replica_set_to_dict)
from .state import (Acks, ClusterState, Isolation, Key, NoLeader, Replica,
                    ReplicaSet, ReplicationError, Resolution, TopicConfig,
                    UnknownPartition, new_cluster, register_spu)
from .summary import PartitionSummary, partition_list, partition_summary
from .sync import follower_fetch, leader_update, replication_step
from .topology import add_topic

__all__ = [
    "AckFailed", "Acks", "Action", "ClusterState", "ConsumeResult", "Event",
    "FollowerFetch", "INVALID_REQUEST", "InvariantChecker", "InvariantViolation",
    "Isolation", "Key", "LEADER_LOST", "LeaderChanged", "LrsChanged",
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
    "partition_summary", "produce", "promotion_failed", "promotion_succeeded",
    "reconcile_elections", "register_spu", "replica_set_from_dict",
    "replica_set_to_dict", "replication_step", "spu_offline", "spu_online",
    "spu_receive_notice", "timer_fired",
]
