"""/metrics through the endpoint, parsed with prometheus-client's own parser."""
from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import recount_partitions, register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def scrape(client, **headers) -> dict[tuple[str, tuple], float]:
    """Every sample as (name, sorted labels) -> value."""
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(response.content.decode())
            for s in family.samples}


def sample(samples: dict, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def under_replicated(samples: dict, topic: str = "t") -> float:
    return sample(samples, "controlroom_partitions_under_replicated", topic=topic)


@pytest.fixture
def cluster(redis_url):
    for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3)), ("rack-c", (4, 5))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "3")
    run("produce", "t", "--count", "5", "--acks", "all")


def test_an_spu_outage_and_return_move_the_figures_and_count_the_election(client, cluster):
    before = scrape(client)
    assert under_replicated(before) == 0
    assert sample(before, "controlroom_spu_up", spu="0", rack="rack-a") == 1
    run("spu", "offline", "0")
    during = scrape(client)
    assert under_replicated(during) > 0
    assert sample(during, "controlroom_spu_up", spu="0", rack="rack-a") == 0
    assert sample(during, "controlroom_spu_leader_partitions", spu="0", rack="rack-a") == 0
    assert sample(during, "controlroom_elections_total", outcome="elected") > \
        sample(before, "controlroom_elections_total", outcome="elected")
    assert sample(during, "controlroom_lrs_shrinks_total") > 0
    run("spu", "online", "0")
    run("produce", "t", "--count", "1", "--acks", "all")
    after = scrape(client)
    assert under_replicated(after) == 0
    assert sample(after, "controlroom_spu_up", spu="0", rack="rack-a") == 1
    assert sample(after, "controlroom_lrs_expands_total") > 0


def test_partition_and_spu_figures_match_the_store(client, cluster):
    from cluster.models import Partition

    samples = scrape(client)
    assert sample(samples, "controlroom_partitions_total", topic="t") == 6
    assert sample(samples, "controlroom_partitions_offline", topic="t") == 0
    for spu in range(6):
        rack = f"rack-{'abc'[spu // 2]}"
        leading = Partition.objects.filter(leader=spu).count()
        hosted = sum(spu in p.replicas for p in Partition.objects.all())
        labels = {"spu": str(spu), "rack": rack}
        assert sample(samples, "controlroom_spu_leader_partitions", **labels) == leading
        assert sample(samples, "controlroom_spu_replicas", **labels) == hosted
        assert sample(samples, "controlroom_leader_imbalance_ratio", spu=str(spu)) == 0


def test_leader_imbalance_counts_preferred_partitions_an_spu_no_longer_leads(client, cluster):
    from cluster.models import Partition

    assert Partition.objects.filter(initial_leader=0).exists()
    run("spu", "offline", "0")
    run("spu", "online", "0")
    # Leadership does not move back by itself: SPU 0 leads none of the partitions it prefers.
    assert not Partition.objects.filter(initial_leader=0, leader=0).exists()
    assert sample(scrape(client), "controlroom_leader_imbalance_ratio", spu="0") == 1.0


def test_produced_and_refused_records_are_counted_by_acks_and_reason(client, cluster):
    run("produce", "t", "--count", "3", "--acks", "1")
    run("topic", "create", "idle", "--partitions", "1", "--replication", "1")
    from cluster.services.records import records_produce

    records_produce(topic="idle", count=2, acks=1)  # not replicated yet: refused
    samples = scrape(client)
    assert sample(samples, "controlroom_records_produced_total", acks="all") == 5
    assert sample(samples, "controlroom_records_produced_total", acks="1") == 3
    assert sample(samples, "controlroom_produce_refused_total",
                  reason="UNKNOWN_TOPIC_OR_PARTITION") == 2


def test_ticks_are_timed_in_the_histogram(client, cluster):
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue

    count = sample(scrape(client), "controlroom_replication_tick_seconds_count")
    for _ in range(3):
        replication_tick(dispatch=LocalQueue())
    samples = scrape(client)
    assert sample(samples, "controlroom_replication_tick_seconds_count") == count + 3
    assert sample(samples, "controlroom_replication_tick_seconds_bucket", le="+Inf") == count + 3
    assert sample(samples, "controlroom_replication_tick_seconds_sum") > 0


def test_worker_presence_and_redis_are_exposed(client, cluster):
    from cluster.adapters import hot_state

    assert sample(scrape(client), "controlroom_worker_up") == 0
    hot_state.client().set(hot_state.WORKER, "test-worker", ex=5)
    samples = scrape(client)
    assert sample(samples, "controlroom_worker_up") == 1
    assert sample(samples, "controlroom_redis_up") == 1


def test_the_web_process_request_metrics_come_from_the_library(client, cluster):
    client.get("/healthz")
    names = {name for name, _ in scrape(client)}
    assert "django_http_requests_total_by_method_total" in names


def test_plan_execution_reports_its_moves_in_flight_through_the_engines_sources(
        client, cluster):
    from cluster.engine.engine import current, using

    assert sample(scrape(client), "controlroom_plan_moves_in_flight") == 0
    with using(current().replaced(moves_in_flight=(lambda: 3, lambda: 2))):
        assert sample(scrape(client), "controlroom_plan_moves_in_flight") == 5


def test_another_apps_series_reach_the_scrape_through_the_engine(client, cluster):
    from prometheus_client.core import GaugeMetricFamily

    from cluster.engine.engine import current, using

    def planted():
        yield GaugeMetricFamily("controlroom_planted", "a family an engine was given", value=7)

    assert ("controlroom_planted", ()) not in scrape(client)
    with using(current().replaced(metric_families=(planted,))):
        assert sample(scrape(client), "controlroom_planted") == 7


def test_a_reordered_lrs_is_not_under_replicated_and_a_leaderless_partition_is_offline(
        client, cluster):
    from cluster.models import Partition

    rows = list(Partition.objects.filter(topic__name="t").order_by("index"))
    Partition.objects.filter(pk=rows[0].pk).update(lrs=list(reversed(rows[0].replicas)))
    Partition.objects.filter(pk=rows[1].pk).update(lrs=rows[1].replicas[:1])
    Partition.objects.filter(pk=rows[2].pk).update(leader=None)
    recount_partitions()
    samples = scrape(client)
    assert under_replicated(samples) == 1
    assert sample(samples, "controlroom_partitions_offline", topic="t") == 1


def test_a_tick_whose_save_fails_counts_neither_its_time_nor_its_records(
        client, cluster, monkeypatch):
    from cluster.adapters import hot_state
    from cluster.services import replication
    from cluster.services.records import topic_set_producer_rate
    from cluster.services.waiting import LocalQueue

    topic_set_producer_rate(name="t", rate=1000)
    replication.replication_tick(dispatch=LocalQueue())
    before = scrape(client)

    def unreachable(*args, **kwargs):
        raise ConnectionError("Redis went away")

    monkeypatch.setattr(hot_state, "save", unreachable)
    with pytest.raises(ConnectionError):
        replication.replication_tick(dispatch=LocalQueue(), now=replication.now_ms() + 1000)
    monkeypatch.undo()
    topic_set_producer_rate(name="t", rate=0)
    replication.replication_tick(dispatch=LocalQueue())
    after = scrape(client)
    assert sample(after, "controlroom_replication_tick_seconds_count") == \
        sample(before, "controlroom_replication_tick_seconds_count") + 1
    assert sample(after, "controlroom_records_produced_total", acks="1") == \
        sample(before, "controlroom_records_produced_total", acks="1")
