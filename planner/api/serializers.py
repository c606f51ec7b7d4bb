"""Plan API shapes: the request spells a what-if as ``plan rebalance`` does."""
from __future__ import annotations

from rest_framework import serializers

from planner.core.execution import ExecutionState
from planner.core.jobs import EngineChoice, GridState, PlanState
from planner.core.scenarios import MAX_UP_TO
from planner.core.spu_progress import MoveOutcome
from planner.services import MAX_GRID_SCENARIOS

MAX_ITEMS = 1000
BYTES_ONLY = ("max_disk_percent", "capacity", "topics", "exclude_topics", "leaders_only",
              "snapshot")
SPU_ID = {"min_value": 0, "max_value": 2**31 - 1}
# Named in SPECTACULAR_SETTINGS so the schema calls the two state enums by name.
PLAN_STATES = [s.value for s in PlanState]
GRID_STATES = [s.value for s in GridState]
EXECUTION_STATES = [s.value for s in ExecutionState if s is not ExecutionState.PENDING]
MOVE_OUTCOMES = [o.value for o in MoveOutcome]


def _texts(help_text: str) -> serializers.ListField:
    return serializers.ListField(child=serializers.CharField(max_length=300), required=False,
                                 default=list, max_length=MAX_ITEMS, help_text=help_text)


class ScenarioSerializer(serializers.Serializer):
    """A what-if: the flags of ``plan rebalance``; none of them plans the cluster as it is."""
    name = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    add_spu = serializers.ListField(
        child=serializers.RegexField(r"^[0-9]{1,10}(:.{0,253})?$", max_length=300),
        required=False, default=list, max_length=MAX_ITEMS,
        help_text="ID:RACK (or ID) of each SPU to add, as --add-spu")
    remove_spu = serializers.ListField(child=serializers.IntegerField(**SPU_ID), required=False,
                                       default=list, max_length=MAX_ITEMS,
                                       help_text="SPU ids to decommission, as --remove-spu")
    lose_rack = _texts("racks lost, as --lose-rack")
    replication = _texts("TOPIC:RF replication changes, as --replication")


class OptionsSerializer(serializers.Serializer):
    anti_affinity = serializers.BooleanField(default=True)
    leader_balance = serializers.BooleanField(default=True)
    order_optimisation = serializers.BooleanField(default=True)
    engine = serializers.ChoiceField(choices=[e.value for e in EngineChoice],
                                     default=EngineChoice.AUTO.value,
                                     help_text="auto: in-process, Spark past "
                                               "PLANNER_SPARK_PARTITIONS")


class PlanRequestSerializer(ScenarioSerializer, OptionsSerializer):
    """A what-if as ``plan rebalance``, with its ``--balance`` and cost flags."""
    balance = serializers.ChoiceField(choices=["counts", "bytes"], default="counts",
                                      help_text="balance replica counts, or disk bytes per "
                                                "SPU (needs imported sizes)")
    throttle_bytes_per_s = serializers.IntegerField(
        min_value=1, max_value=2**53, required=False, allow_null=True, default=None,
        help_text="replication throttle the ETA assumes, as --throttle-bytes-per-s")
    max_moves_per_spu = serializers.IntegerField(
        min_value=1, max_value=10**6, required=False, allow_null=True, default=None,
        help_text="moves at a time per SPU the ETA assumes")
    max_disk_percent = serializers.FloatField(
        min_value=0.001, max_value=100, required=False, allow_null=True, default=None,
        help_text="bytes: no SPU above this share of its disk (default 80)")
    capacity = serializers.ListField(
        child=serializers.RegexField(r"^[0-9]{1,10}:[1-9][0-9]{0,19}$", max_length=40),
        required=False, default=list, max_length=MAX_ITEMS,
        help_text="bytes: SPU:BYTES disk capacities, as --capacity")
    topics = _texts("bytes: only these topics' partitions move")
    exclude_topics = _texts("bytes: these topics' partitions stay")
    leaders_only = serializers.BooleanField(default=False,
                                            help_text="bytes: move leadership only")
    snapshot = serializers.IntegerField(min_value=1, max_value=2**31 - 1, required=False,
                                        allow_null=True, default=None,
                                        help_text="bytes: plan a cluster import --plan-only "
                                                  "snapshot, not the store")

    def validate(self, data: dict) -> dict:
        if data["balance"] != "bytes":
            given = [f for f in BYTES_ONLY if data.get(f) not in (None, False, [])]
            if given:
                raise serializers.ValidationError({given[0]: "needs balance bytes"})
        # A byte plan is one cluster-wide greedy pass: any engine plans it in-process.
        return data


class GridRequestSerializer(OptionsSerializer):
    scenarios = ScenarioSerializer(many=True, required=False, max_length=MAX_GRID_SCENARIOS,
                                   help_text="omit for the standard grid")
    up_to = serializers.IntegerField(min_value=0, max_value=MAX_UP_TO, default=3,
                                     help_text="standard grid: add 1..up_to SPUs per rack")


class ProgressSerializer(serializers.Serializer):
    stage = serializers.CharField(required=False)
    fraction = serializers.FloatField(required=False)
    eta_s = serializers.FloatField(required=False, allow_null=True)


class PlanStatusSerializer(serializers.Serializer):
    """``plan status --json``."""
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=PLAN_STATES)
    moves_total = serializers.IntegerField()
    moves_done = serializers.IntegerField()
    moves_in_flight = serializers.IntegerField()
    bytes_moved = serializers.IntegerField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)


class PlanSummarySerializer(PlanStatusSerializer):
    name = serializers.CharField(allow_blank=True)
    engine = serializers.CharField()
    created_by = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    replicas_moved = serializers.IntegerField(allow_null=True)
    lower_bound = serializers.IntegerField(allow_null=True)
    progress = ProgressSerializer()


class SpuCostSerializer(serializers.Serializer):
    spu = serializers.IntegerField()
    bytes_in = serializers.IntegerField(help_text="bytes of the copies this SPU receives")
    bytes_out = serializers.IntegerField(help_text="bytes it sends as the leader followers "
                                                   "fetch from")
    moves_in = serializers.IntegerField()
    moves_out = serializers.IntegerField()


class EtaSerializer(serializers.Serializer):
    bytes_per_s = serializers.IntegerField()
    eta_s = serializers.FloatField()


class PlanCostSerializer(serializers.Serializer):
    """What ``plan rebalance --json`` prints at its top (planner/core/cost.py, risk.py)."""
    bytes_moved = serializers.IntegerField(help_text="bytes copied by the plan")
    per_spu = SpuCostSerializer(many=True)
    bottleneck_spu = serializers.IntegerField(allow_null=True)
    eta_s = serializers.FloatField(allow_null=True, help_text="null without a throttle")
    throttle_bytes_per_s = serializers.FloatField(allow_null=True)
    max_moves_per_spu = serializers.IntegerField(allow_null=True)
    eta_by_throttle = EtaSerializer(many=True)
    risk = serializers.DictField(help_text="before, after: per SPU and rack failure, "
                                           "leaders_lost, offline, below_min_lrs; worse")


class MoveSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    before = serializers.ListField(child=serializers.IntegerField())
    after = serializers.ListField(child=serializers.IntegerField())
    added = serializers.ListField(child=serializers.IntegerField())
    removed = serializers.ListField(child=serializers.IntegerField())
    leader_change = serializers.BooleanField()
    outcome = serializers.ChoiceField(choices=MOVE_OUTCOMES, allow_null=True,
                                      help_text="once the plan is applied: waiting, in flight, "
                                                "done, failed (rolled back or could not "
                                                "start), or not started (the plan ended "
                                                "first); null before")


class MovesPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = MoveSerializer(many=True)


class SpuProgressSerializer(serializers.Serializer):
    """One SPU the plan adds replicas to (in) or drops them from (out)."""
    spu = serializers.IntegerField()
    moves_in_done = serializers.IntegerField()
    moves_in_total = serializers.IntegerField()
    moves_out_done = serializers.IntegerField()
    moves_out_total = serializers.IntegerField()
    moves_in_flight = serializers.IntegerField()
    bytes_moved = serializers.IntegerField(help_text="bytes copied onto this SPU")


class ExecutionSerializer(serializers.Serializer):
    """The applied plan's record; also the payload of ``plan.progress`` on ws/plans/<id>/."""
    state = serializers.ChoiceField(choices=EXECUTION_STATES)
    applied_by = serializers.CharField(allow_blank=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    duration_s = serializers.FloatField(allow_null=True,
                                        help_text="start to finish, or to now while it runs")
    moves_total = serializers.IntegerField()
    moves_done = serializers.IntegerField()
    moves_failed = serializers.IntegerField()
    moves_in_flight = serializers.IntegerField()
    bytes_moved = serializers.IntegerField()
    max_moves_per_spu = serializers.IntegerField()
    max_moves = serializers.IntegerField()
    reason = serializers.CharField(allow_blank=True)
    throttle_bytes_per_s = serializers.IntegerField(allow_null=True,
                                                    help_text="null: no byte-rate throttle")
    bytes_copied = serializers.IntegerField(help_text="landed moves and the new replicas of "
                                                      "moves in flight so far")
    bytes_per_s = serializers.FloatField(allow_null=True, help_text="bytes copied per second "
                                                                    "since the plan started")
    eta_s = serializers.FloatField(allow_null=True, help_text="seconds left at the pace so "
                                                              "far, while running")
    estimated_finish_at = serializers.DateTimeField(allow_null=True)
    per_spu = SpuProgressSerializer(many=True)


class PlanCreatedSerializer(PlanSummarySerializer):
    cost = PlanCostSerializer(allow_null=True, help_text="cost and risk (as plan rebalance "
                                                         "--json); null while it is computed")


class PlanDetailSerializer(PlanCreatedSerializer):
    scenario = serializers.DictField()
    options = serializers.DictField()
    metrics = serializers.DictField(help_text="planner/core/metrics.py defines every key")
    before = serializers.DictField(help_text="the layout metrics before the plan")
    elapsed_ms = serializers.IntegerField()
    execution = ExecutionSerializer(allow_null=True, help_text="null until the plan is applied")
    moves = MovesPageSerializer()


class GridRowSerializer(serializers.Serializer):
    scenario = serializers.CharField()
    index = serializers.IntegerField()
    error = serializers.CharField(allow_null=True)
    kafka = serializers.DictField(allow_null=True, help_text="kafka-reassign-partitions "
                                                             "--generate's cost")


class GridSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=GRID_STATES)
    engine = serializers.CharField()
    created_by = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    options = serializers.DictField()
    scenarios = serializers.ListField(child=serializers.DictField())
    rows = GridRowSerializer(many=True)
    progress = ProgressSerializer()
    reason = serializers.CharField(allow_blank=True)
    elapsed_ms = serializers.IntegerField()


class MoveFilterSerializer(serializers.Serializer):
    topic = serializers.CharField(required=False, default="", allow_blank=True, max_length=300)
    spu = serializers.IntegerField(required=False, **SPU_ID)
