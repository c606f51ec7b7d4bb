"""The cores' packages load their modules on first use (cluster/core/lazy.py, issue 35.6)
yet offer every name their imports list, as eager imports did."""
from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
PACKAGES = ("cluster.core.replication", "planner.core", "healing.core")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_in_all_is_offered(package):
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []


def test_an_unknown_name_is_an_attribute_error():
    module = importlib.import_module("cluster.core.replication")
    with pytest.raises(AttributeError, match="no_such_rule"):
        module.no_such_rule  # noqa: B018
    with pytest.raises(ImportError):
        exec("from cluster.core.replication import no_such_rule", {})


# In a fresh process: what importing one small module of a package loads, and what the
# package offers under a name it shares with one of its modules once that module loaded.
PROBE = """
import json, sys
import cluster.core.replication.state, planner.core.jobs, healing.core.model
loaded = sorted(m for m in ("cluster.core.replication.events", "cluster.core.replication.produce",
                            "planner.core.planner", "healing.core.detect") if m in sys.modules)
import cluster.core.replication.produce, healing.core.detect
from cluster.core.replication import produce
from healing.core import detect
print(json.dumps({"loaded": loaded, "produce": type(produce).__name__,
                  "detect": type(detect).__name__}))
"""


def test_a_small_module_loads_alone_and_shared_names_stay_the_functions():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == {"loaded": [], "produce": "function",
                                       "detect": "function"}


# Spark's executors import the planner's core from the zip the driver ships
# (planner/spark/session.py): no package there has a file to read its imports from.
ZIPPED = """
import json, sys
sys.path.insert(0, sys.argv[1])
from planner.core import plan, Cluster
print(json.dumps({"from": sys.modules["planner.core"].__spec__.origin,
                  "names": [plan.__name__, Cluster.__name__]}))
"""


def test_a_core_package_loads_its_names_from_a_shipped_zip(tmp_path):
    import zipfile

    archive = tmp_path / "core.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for entry in ("planner/__init__.py", "planner/core", "cluster/__init__.py",
                      "cluster/core/__init__.py", "cluster/core/lazy.py"):
            path = ROOT / entry
            for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
                out.write(file, str(file.relative_to(ROOT)))
    done = subprocess.run([sys.executable, "-c", ZIPPED, str(archive)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["from"].startswith(str(archive)) and out["names"] == ["plan", "Cluster"]
