"""A package that offers its modules' names but loads each module on first use (PEP 562).

Issue 35: the models need two enums of ``cluster.core.replication``, yet importing any of
its modules ran the package's ``__init__``, which imported every rule of the core (a
tenth of a second of CPU at every command's start). A package keeps its imports, for
readers and mypy, under ``if TYPE_CHECKING:`` and ends with::

    if not TYPE_CHECKING:
        __getattr__ = lazy_exports(__name__, __file__)

The imports under ``TYPE_CHECKING`` stay the one list of what the package offers: this
module reads them (once, at the first name asked for) instead of a second copy.
"""
from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path

Source = tuple[str, str | None]  # (module, attribute; None: the module itself)


def lazy_exports(package: str, init_file: str) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``package``, whose ``__init__`` is ``init_file``."""
    sources: dict[str, Source] = {}

    def __getattr__(name: str) -> object:
        if not sources:
            sources.update(_type_checking_imports(package, Path(init_file)))
        if name not in sources:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, attribute = sources[name]
        module = importlib.import_module(module_name)
        value = module if attribute is None else getattr(module, attribute)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    return __getattr__


def _type_checking_imports(package: str, init_file: Path) -> dict[str, Source]:
    tree = ast.parse(init_file.read_text(encoding="utf-8"))
    found: dict[str, Source] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    found.update(_names(package, statement))
    return found


def _names(package: str, statement: ast.ImportFrom) -> dict[str, Source]:
    base = package.rsplit(".", statement.level - 1)[0] if statement.level else ""
    module = ".".join(p for p in (base, statement.module or "") if p)
    names: dict[str, Source] = {}
    for alias in statement.names:
        if module == package:  # ``from . import ledger``: a submodule
            names[alias.asname or alias.name] = (f"{package}.{alias.name}", None)
        else:
            names[alias.asname or alias.name] = (module, alias.name)
    return names
