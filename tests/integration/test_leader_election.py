"""Preferred-leader election, the automatic rebalancer and the unclean override (CLI and API)."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from cluster.models import Event, Partition
from tests.helpers import refused, register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def rows(topic: str = "t") -> list[dict]:
    return json.loads(run("partition", "list", "--topic", topic, "--json"))


def not_preferred() -> list[str]:
    return [f"{r['topic']}/{r['partition']}" for r in rows() if r["leader"] != r["replicas"][0]]


@pytest.fixture
def after_outage(redis_url):
    """Six partitions over SPUs 0-2; SPU 0 went down and came back, so it leads none."""
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "3")
    run("produce", "t", "--value", "a", "--acks", "all")
    run("spu", "offline", "0")
    run("spu", "online", "0")
    led_by_0 = [r for r in rows() if r["replicas"][0] == 0]
    assert led_by_0 and all(r["leader"] != 0 for r in led_by_0)
    return led_by_0


def test_preferred_election_after_an_outage_gives_every_partition_its_first_replica(after_outage):
    report = json.loads(run("leader", "elect", "--preferred", "--json"))
    assert sorted(m["partition"] for m in report["moved"]) == sorted(
        r["partition"] for r in after_outage)
    assert all(m["to"] == 0 for m in report["moved"]) and report["not_moved"] == []
    assert not_preferred() == []
    assert Partition.objects.filter(leader=0).count() == len(after_outage)


def test_preferred_election_names_the_partitions_it_could_not_move_and_why(after_outage):
    run("spu", "offline", "0")
    report = json.loads(run("leader", "elect", "--preferred", "--topic", "t", "--json"))
    assert report["moved"] == []
    assert {n["reason"] for n in report["not_moved"]} == {"the preferred leader's SPU is offline"}
    assert len(report["not_moved"]) == len(after_outage)


def test_the_text_output_lists_moved_partitions(after_outage):
    text = run("leader", "elect", "--preferred")
    assert f"{len(after_outage)} partition(s) moved" in text and "MOVED" in text


def test_the_automatic_rebalancer_restores_preferred_leaders_on_its_own(after_outage):
    from cluster.tasks import leader_rebalance_check

    leader_rebalance_check.apply()
    assert not_preferred() == []
    assert Event.objects.filter(actor="leader-rebalancer", operation="rebalance").exists()


def test_the_rebalancer_does_nothing_when_turned_off(after_outage, settings):
    from cluster.tasks import leader_rebalance_check

    settings.AUTO_LEADER_REBALANCE = False
    leader_rebalance_check.apply()
    assert len(not_preferred()) == len(after_outage)


def test_the_rebalancer_leaves_an_spu_at_or_under_the_threshold(after_outage, settings):
    from cluster.services.leaders import leader_rebalance

    settings.LEADER_IMBALANCE_PER_SPU_PERCENTAGE = 100
    assert leader_rebalance().moved == ()
    assert len(not_preferred()) == len(after_outage)


def test_the_rebalancer_loads_no_replica_set_while_the_counts_show_no_spu_over(
        after_outage, monkeypatch):
    """The check reads the per-SPU counts kept beside the rows; only an SPU over the
    threshold there takes the whole state (every shard's lease) to elect."""
    from cluster.services import leaders

    loads = []
    real = leaders.unit_now

    def counted(*args, **kwargs):
        loads.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(leaders, "unit_now", counted)
    assert leaders.leader_rebalance().moved != ()  # SPU 0 leads none of its partitions
    assert len(loads) == 1 and not_preferred() == []
    assert leaders.leader_rebalance().moved == ()  # balanced now: the counts say so alone
    assert len(loads) == 1


def counted_units(monkeypatch) -> list:
    from cluster.services import leaders

    loads: list = []
    real = leaders.unit_now

    def counted(*args, **kwargs):
        loads.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(leaders, "unit_now", counted)
    return loads


def test_the_rebalancer_loads_only_the_partitions_of_the_spus_over_the_threshold(
        after_outage, monkeypatch):
    from cluster.services import leaders

    run("topic", "create", "u", "--partitions", "9", "--replication", "2")
    loads = counted_units(monkeypatch)
    assert leaders.leader_rebalance().moved != ()
    preferred_by_0 = sorted((r["topic"], r["partition"]) for topic in ("t", "u")
                            for r in rows(topic) if r["replicas"][0] == 0)
    assert loads == [(preferred_by_0,)]  # SPU 0's preferred partitions, none else
    assert not_preferred() == []


def test_the_rebalancer_loads_nothing_for_an_spu_that_is_offline(after_outage, monkeypatch):
    """SPU 0 is over the threshold while it is down, but the core could give it nothing."""
    from cluster.services import leaders

    run("spu", "offline", "0")
    loads = counted_units(monkeypatch)
    assert leaders.leader_rebalance().moved == ()
    assert loads == []
    run("spu", "online", "0")
    assert leaders.leader_rebalance().moved != ()
    assert not_preferred() == []


def test_an_unknown_topic_is_refused_with_exit_2(after_outage):
    assert "not found" in str(refused("leader", "elect", "--preferred", "--topic", "nope"))


# ---- unclean ----------------------------------------------------------------------

def lose_the_last_lrs_member(*create_flags: str) -> tuple[int, int]:
    """Leader L alone in the LRS with 5 committed records, follower F with 2; L dies, F returns."""
    register_spus(0, 1, online=True)
    run("topic", "create", "u", "--partitions", "1", "--replication", "2", *create_flags)
    run("produce", "u", "--value", "a", "--value", "b", "--acks", "all")
    row = rows("u")[0]
    leader, follower = row["leader"], [s for s in row["replicas"] if s != row["leader"]][0]
    run("spu", "offline", str(follower))
    run("produce", "u", "--value", "c", "--value", "d", "--value", "e", "--acks", "all")
    run("spu", "offline", str(leader))
    run("spu", "online", str(follower))
    return leader, follower


def test_an_offline_partition_names_the_spu_it_waits_for(redis_url):
    leader, _ = lose_the_last_lrs_member()
    row = rows("u")[0]
    assert row["resolution"] == "Offline" and row["waiting_for"] == [leader]
    assert f"waiting for SPU {leader}" in row["reason"]
    stored = json.loads(run("partition", "list", "--topic", "u", "--json"))[0]
    assert stored["waiting_for"] == [leader]


def test_the_unclean_override_elects_the_live_replica_and_warns_of_the_lost_offsets(redis_url):
    _, follower = lose_the_last_lrs_member()
    out, err = StringIO(), StringIO()
    call_command("leader", "elect", "--unclean", "--topic", "u", "--partition", "0", "--json",
                 stdout=out, stderr=err)
    report = json.loads(out.getvalue())
    assert (report["spu"], report["old_hw"], report["new_hw"], report["offsets_lost"]) == (
        follower, 5, 2, 3)
    assert "3 committed offset(s)" in err.getvalue()
    assert rows("u")[0]["leader"] == follower
    event = Event.objects.get(operation="unclean-election", object_name="u/0")
    assert event.params["offsets_lost"] == 3 and event.params["forced"] is True


def test_the_unclean_override_refuses_a_partition_that_has_a_leader(redis_url):
    register_spus(0, 1, online=True)
    run("topic", "create", "u", "--partitions", "1", "--replication", "2")
    run("produce", "u", "--value", "a", "--acks", "all")
    assert "already has leader" in str(refused(
        "leader", "elect", "--unclean", "--topic", "u", "--partition", "0"))


def test_a_topic_created_with_unclean_election_elects_by_itself_and_logs_the_loss(redis_url):
    _, follower = lose_the_last_lrs_member("--unclean-leader-election")
    assert rows("u")[0]["leader"] == follower
    event = Event.objects.get(operation="unclean-election", object_name="u/0")
    assert event.params["offsets_lost"] == 3 and event.params["forced"] is False


def test_unclean_election_is_off_by_default_and_stored_per_topic(redis_url):
    register_spus(0, 1, online=True)
    run("topic", "create", "a", "-p", "1", "-r", "1")
    run("topic", "create", "b", "-p", "1", "-r", "1", "--unclean-leader-election")
    described = [json.loads(run("topic", "describe", n, "--json")) for n in ("a", "b")]
    assert [d["unclean_leader_election"] for d in described] == [False, True]


# ---- API --------------------------------------------------------------------------

def test_the_api_runs_a_preferred_election_for_an_operator(after_outage, api):
    response = api.post("/api/leaders/elect/", {"type": "preferred", "topic": "t"}, format="json")
    assert response.status_code == 200
    assert len(response.json()["moved"]) == len(after_outage)
    assert not_preferred() == []


def test_the_api_refuses_a_viewer_and_changes_nothing(after_outage, viewer):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(viewer)
    response = client.post("/api/leaders/elect/", {"type": "preferred"}, format="json")
    assert response.status_code == 403 and set(response.json()) == {"error", "details"}
    assert len(not_preferred()) == len(after_outage)


def test_the_api_unclean_election_warns_of_the_lost_offsets(redis_url, api):
    _, follower = lose_the_last_lrs_member()
    response = api.post("/api/leaders/elect/", {"type": "unclean", "topic": "u",
                                                "partition": 0}, format="json")
    assert response.status_code == 200
    assert response.json()["offsets_lost"] == 3 and "given up" in response.json()["warning"]


def test_the_api_refuses_an_unclean_election_without_a_partition(redis_url, api):
    response = api.post("/api/leaders/elect/", {"type": "unclean", "topic": "u"}, format="json")
    assert response.status_code == 400 and set(response.json()) >= {"error", "details"}


def test_the_topic_api_takes_and_shows_the_unclean_setting(redis_url, api):
    register_spus(0, 1, online=True)
    response = api.post("/api/topics/", {"name": "u", "partition_count": 1, "replication": 2,
                                         "unclean_leader_election": True}, format="json")
    assert response.status_code == 201 and response.json()["unclean_leader_election"] is True
    assert api.get("/api/topics/u/").json()["unclean_leader_election"] is True
