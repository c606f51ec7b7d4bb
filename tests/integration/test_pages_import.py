"""The import page: upload Kafka's tool outputs, read warnings, plan by bytes, see cost."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from cluster.models import Spu, Topic
from planner.models import ClusterImport, Plan

pytestmark = pytest.mark.django_db
KAFKA = Path(__file__).resolve().parents[1] / "fixtures" / "kafka"


def upload(name: str, body: bytes | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, body if body is not None else (KAFKA / name).read_bytes())


def test_upload_plan_by_bytes_and_read_the_cost(operator_client):
    response = operator_client.post(reverse("planner:import-create"), {
        "describe": upload("describe_new.txt"), "log_dirs": upload("log_dirs_new.txt"),
        "brokers": upload("brokers_new.txt"), "plan_only": "on"})
    assert response.status_code == 302
    record = ClusterImport.objects.get()
    assert not record.stored and not Spu.objects.exists()
    page = operator_client.get(response["Location"]).content.decode()
    assert "eu-west-1c" in page and "None: the files agree" in page
    response = operator_client.post(reverse("planner:import-plan", args=[record.pk]), {
        "max_disk_percent": "80", "throttle_bytes_per_s": str(100 * 2 ** 20)})
    assert response.status_code == 302
    plan = Plan.objects.get()
    assert plan.source == Plan.Source.KAFKA_IMPORT
    page = operator_client.get(response["Location"]).content.decode()
    assert 'id="cost-per-spu"' in page and 'id="risk-racks"' in page
    assert f"the bottleneck is SPU {plan.metrics['cost']['bottleneck_spu']}" in page


def test_a_bad_file_is_refused_next_to_its_field_and_nothing_is_stored(operator_client):
    response = operator_client.post(reverse("planner:import-create"), {
        "describe": upload("topics.txt", b"Topic: t\tPartitionCount: x\n"),
        "plan_only": ""})
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="id_describe-error"' in page and "topics.txt, line 1: expected" in page
    assert not ClusterImport.objects.exists() and not Topic.objects.exists()


def test_a_bad_plan_field_is_refused_next_to_it(operator_client):
    operator_client.post(reverse("planner:import-create"), {
        "describe": upload("describe_new.txt"), "log_dirs": upload("log_dirs_new.txt"),
        "plan_only": "on"})
    record = ClusterImport.objects.get()
    response = operator_client.post(reverse("planner:import-plan", args=[record.pk]),
                                    {"max_disk_percent": "0"})
    assert response.status_code == 400
    assert 'id="id_max_disk_percent-error"' in response.content.decode()
    assert not Plan.objects.exists()


def test_viewers_read_imports_but_cannot_upload(viewer_client):
    assert viewer_client.get(reverse("planner:imports")).status_code == 200
    response = viewer_client.post(reverse("planner:import-create"), {
        "describe": upload("describe_new.txt")})
    assert response.status_code in (302, 403) or b"operator" in response.content
    assert not ClusterImport.objects.exists()
