"""Apps are layered one way: the planner uses the cluster, the cluster never names the
planner (issue 18: drain belongs to the planner app; `spu drain` is installed at ready)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_no_module_of_the_cluster_app_imports_the_planner():
    offenders = {str(p.relative_to(ROOT)): sorted(m for m in imported_modules(p)
                                                  if m.split(".")[0] == "planner")
                 for p in (ROOT / "cluster").rglob("*.py")}
    assert {p: m for p, m in offenders.items() if m} == {}
