"""SPU groups, endpoints, names and the connection manager's admission."""
from cluster.core.names import name_problem
from cluster.core.spu_groups import GroupResolution, default_min_id, plan_group
from cluster.core.spus import admit_connection, endpoint_problem


def test_a_new_group_provisions_min_id_to_min_id_plus_replicas_minus_one():
    plan = plan_group(min_id=11, replicas=2, owned=[], others=[0, 1])
    assert plan.resolution is GroupResolution.RESERVED and plan.add == (11, 12)


def test_scaling_down_removes_the_highest_ids():
    plan = plan_group(min_id=10, replicas=2, owned=[10, 11, 12, 13], others=[])
    assert plan.remove == (13, 12) and plan.add == ()


def test_a_group_colliding_with_existing_spus_is_invalid_with_a_reason():
    plan = plan_group(min_id=2, replicas=3, owned=[], others=[3, 4])
    assert plan.resolution is GroupResolution.INVALID
    assert "3, 4 already in use" in plan.reason and plan.add == ()


def test_default_min_id_is_after_every_existing_spu():
    assert default_min_id([]) == 0 and default_min_id([3, 9]) == 10


def test_only_registered_spus_may_connect():
    assert admit_connection(5, registered={1, 2}) is not None
    assert admit_connection(2, registered={1, 2}) is None


def test_endpoints_must_be_host_colon_port():
    assert endpoint_problem("localhost:9005", "public") is None
    assert endpoint_problem("[::1]:9005", "public") is None
    assert endpoint_problem("localhost", "public")
    assert endpoint_problem("host:70000", "public")


def test_topic_names_follow_fluvio_rules():
    assert name_problem("orders-2") is None
    assert name_problem("a" * 63) is None
    assert "at most 63" in name_problem("a" * 64)
    for bad in ["Orders", "orders_x", "-orders", "orders-", "or ders", ""]:
        assert name_problem(bad), bad


def test_a_group_may_not_run_past_the_largest_spu_id():
    from cluster.core.spu_groups import group_input_problems
    from cluster.core.spus import MAX_SPU_ID

    assert group_input_problems("g", 2, MAX_SPU_ID - 1, "1Gi") == []
    assert "go past the largest SPU id" in group_input_problems("g", 3, MAX_SPU_ID - 1, "1Gi")[0]


def test_a_group_rack_follows_the_rack_rules():
    from cluster.core.spu_groups import group_input_problems

    assert group_input_problems("g", 1, 0, "1Gi", rack="rack-a") == []
    assert "rack 'bad rack'" in group_input_problems("g", 1, 0, "1Gi", rack="bad rack")[0]
