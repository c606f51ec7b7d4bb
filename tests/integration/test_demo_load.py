"""`demo load` loads the demo once per store: what an operator removed stays removed."""
from __future__ import annotations

import pytest

from cluster.models import ClusterState, Event, Spu, Topic
from tests.helpers import run

pytestmark = [pytest.mark.django_db]


def test_the_first_load_registers_the_demo_cluster_and_marks_the_store():
    assert "SPU 0 (rack-a)" in run("demo", "load")
    assert Spu.objects.count() == 12
    assert set(Topic.objects.values_list("name", flat=True)) == {"orders", "clickstream"}
    assert ClusterState.objects.get().demo_loaded


def test_a_restart_never_brings_back_what_an_operator_removed():
    run("demo", "load")
    run("topic", "delete", "clickstream")
    run("spu", "unregister", "4", "--force")
    registrations = Event.objects.filter(actor="demo", operation="register").count()
    assert "already loaded" in run("demo", "load")
    assert not Spu.objects.filter(pk=4).exists()
    assert not Topic.objects.filter(name="clickstream").exists()
    assert Event.objects.filter(actor="demo", operation="register").count() == registrations


def test_a_store_that_already_has_a_cluster_gets_no_demo():
    run("spu", "register", "--id", "40", "--rack", "x")
    assert "already loaded" in run("demo", "load")
    assert list(Spu.objects.values_list("id", flat=True)) == [40]
