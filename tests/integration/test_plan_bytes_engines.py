"""Byte plans and engines (issue 34): ``plan rebalance --balance bytes --engine spark`` is
planned on the driver and equals the in-process plan; ``plan grid --balance bytes`` plans
every scenario by bytes (on Spark: tests/integration/planner_spark)."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from planner.models import Plan

pytestmark = pytest.mark.django_db
KAFKA = Path(__file__).resolve().parents[1] / "fixtures" / "kafka"


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def imported() -> None:
    run("cluster", "import", "--kafka-describe", str(KAFKA / "describe_new.txt"),
        "--kafka-log-dirs", str(KAFKA / "log_dirs_new.txt"),
        "--kafka-brokers", str(KAFKA / "brokers_new.txt"))


def test_a_byte_plan_with_the_spark_engine_equals_in_process_and_says_where_it_ran(imported):
    local = json.loads(run("plan", "rebalance", "--balance", "bytes", "--json")[0])
    out, err = run("plan", "rebalance", "--balance", "bytes", "--engine", "spark", "--json")
    spark = json.loads(out)
    assert "planned on the driver" in err
    assert spark["moves"] == local["moves"] and spark["target"] == local["target"]
    assert spark["bytes_moved"] == local["bytes_moved"] > 0
    assert spark["per_spu"] == local["per_spu"] and spark["risk"] == local["risk"]


def test_a_byte_grid_plans_every_scenario_by_bytes(imported):
    rows = json.loads(run("plan", "grid", "--balance", "bytes", "--up-to", "1", "--json")[0])
    counts = json.loads(run("plan", "grid", "--up-to", "1", "--json")[0])
    assert [r["scenario"] for r in rows] == [r["scenario"] for r in counts]
    good = [r for r in rows if r["error"] is None]
    assert good and all(r["disk_spread"] is not None for r in good)
    assert all("disk_spread" not in r for r in counts)
    assert not Plan.objects.exists()  # a grid stores no plan


@pytest.mark.parametrize("args, reason", [
    (("--max-disk-percent", "50"), "need --balance bytes"),
    (("--balance", "bytes", "--max-disk-percent", "0"), "--max-disk-percent must be"),
    (("--balance", "bytes", "--capacity", "x:1"), "--capacity"),
])
def test_bad_byte_grid_flags_exit_2(imported, args, reason):
    with pytest.raises(CommandError) as error:
        run("plan", "grid", *args)
    assert error.value.returncode == 2 and reason in str(error.value)


def test_a_byte_grid_without_sizes_is_refused(db):
    run("cluster", "import", "--kafka-describe", str(KAFKA / "describe_new.txt"))
    with pytest.raises(CommandError) as error:
        run("plan", "grid", "--balance", "bytes")
    assert error.value.returncode == 2 and "needs partition sizes" in str(error.value)
