"""A package that offers its modules' names but loads each module on first use.

Issue 35: the models need two enums of ``cluster.core.replication``, yet importing any of
its modules ran the package's ``__init__``, which imported every rule of the core (a
tenth of a second of CPU at every command's start). A package keeps its imports, for
readers and mypy, under ``if TYPE_CHECKING:`` and ends with::

    if not TYPE_CHECKING:
        lazy_exports(__name__, __file__)

The imports under ``TYPE_CHECKING`` stay the one list of what the package offers: this
module reads them (once, at the first name asked for) instead of a second copy.
"""
from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from types import ModuleType

Source = tuple[str, str | None]  # (module, attribute; None: the module itself)


def lazy_exports(package: str, init_file: str) -> None:
    """Make ``package`` (whose ``__init__`` is ``init_file``) load its names on first use."""
    _init_files[package] = Path(init_file)
    sys.modules[package].__class__ = LazyPackage


_init_files: dict[str, Path] = {}
_sources: dict[str, dict[str, Source]] = {}


def _sources_of(package: str) -> dict[str, Source]:
    if package not in _sources:
        _sources[package] = _type_checking_imports(package, _init_files[package])
    return _sources[package]


class LazyPackage(ModuleType):
    def __getattr__(self, name: str) -> object:
        source = _sources_of(self.__name__).get(name)
        if source is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        module = importlib.import_module(source[0])
        value = module if source[1] is None else getattr(module, source[1])
        setattr(self, name, value)  # later lookups find it without this method
        return value

    def __setattr__(self, name: str, value: object) -> None:
        # Importing a submodule sets it on its package under its name, which ``produce``
        # shares with the function the package offers from it (``from .produce import
        # produce``): the package keeps offering the function, as its eager imports did.
        if isinstance(value, ModuleType):
            source = _sources_of(self.__name__).get(name)
            if source is not None and source[1] is not None and source[0] == value.__name__:
                value = getattr(value, source[1])
        super().__setattr__(name, value)


def _init_source(package: str, init_file: Path) -> str:
    """The package's ``__init__`` source, through its loader where it has one: a package
    imported from a zip (Spark's executors get the planner's core so) has no file to read."""
    spec = getattr(sys.modules.get(package), "__spec__", None)
    get_source = getattr(getattr(spec, "loader", None), "get_source", None)
    source = get_source(package) if get_source is not None else None
    return source if source is not None else init_file.read_text(encoding="utf-8")


def _type_checking_imports(package: str, init_file: Path) -> dict[str, Source]:
    tree = ast.parse(_init_source(package, init_file))
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
