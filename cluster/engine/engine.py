"""The replication engine as one object: every collaborator it runs, named in one place.

Before issue 32 these were eleven registries that the apps' ``ready()`` methods filled
(``install_tick_step``, ``install_extra_entries``, ``install_projection``,
``install_trim_floor``, ``scheduler.install``, the commands' installed actions, the
``preempting`` signal, ...): the import graph said the cluster never calls the planner,
history or healing, and at run time every tick did. Now the composition root
(``composition/bootstrap.py``) builds one ``Engine`` with its collaborators as constructor
arguments, in the order a tick meets them, and a reader of the engine sees them here.

``current()`` is the one handle on it. It is a module attribute, set once by the
composition root, because the engine's callers are shells Django and Celery construct
(views, commands, tasks) that cannot be handed an object; every other piece of wiring
is an argument of this object. Tests that need other collaborators build an engine with
fakes and run under ``using(engine)`` (or ``current().replaced(...)``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Protocol

from cluster.adapters.hot_state import HotState
from cluster.adapters.redis_keys import bound_to_store, serving
from cluster.adapters.scheduler import Scheduler
from cluster.adapters.set_cache import SetCache
from cluster.core.replication import Action, Key
from cluster.engine import store_identity
from cluster.engine.mirror import OffsetsMirror
from cluster.engine.unit import ExtraEntries, Projection, StoreRows, Unit
from cluster.projections.committed import Committed

__all__ = ["CommandAction", "Committed", "Engine", "ExtraEntries", "Preempting", "Projection",
           "StoreRows", "TickStep", "TrimFloor", "current", "start", "using"]

# Work another app adds to every replication tick, on the state its loops advanced (the
# plan executor): it runs inside the tick's locked load-modify-save, so the moves it starts
# are saved with the tick; writes it defers go to ``hot.after_commit``.
TickStep = Callable[[HotState, int], list[Action]]
# The lowest log offset a reader still needs (history replays from its oldest snapshot);
# None: no such reader.
TrimFloor = Callable[[], "int | None"]
# Told, inside the transaction that cancels it, that a yielding plan's execution gives way
# to an operator's plan (keywords ``execution``, ``plan_id``, ``by``).
Preempting = Callable[..., None]
# Read at every scrape of /metrics (cluster/metrics/collector.py): how many moves another
# app has started and not finished (the planner's executions), and another app's series
# (self-healing's anomalies, prometheus_client metric families).
MovesInFlight = Callable[[], int]
MetricFamilies = Callable[[], Iterable[Any]]
# The rows another app keeps of an operator's intent logged first (the planner's execution
# for a ``plan-control``, healing's settings for a ``healing-set``): given the entry, write
# them and return its event rows, unsaved. Runs inside the store's catch-up transaction, in
# offset order, and again on a replay of the log: it must be idempotent and never raise for
# an entry it cannot apply (it writes nothing then).
IntentProjection = Callable[[dict[str, Any]], list[Any]]


class CommandAction(Protocol):
    """A subcommand another app adds to a cluster command (the planner's ``spu drain``)."""
    name: str

    def add_parser(self, actions: Any) -> None:
        """Add the subcommand's parser to ``actions`` (argparse subparsers)."""

    @property
    def handle(self) -> Callable[..., None]:
        """Run it: ``handle(command, **options)``, ``command`` the host command (emit, fail,
        stdout); each action names the options it takes."""


class Kept:
    """One value a use case keeps from one run to the next, for one store and one thing it
    is valid for (history's last snapshot, by its offset and time). Taken out when used,
    since the user may change it, and kept again once it is right."""

    def __init__(self) -> None:
        self._for: tuple[str, Any] | None = None
        self._value: Any = None

    def take(self, store: str, valid_for: Any) -> Any:
        """The value kept for ``store`` and ``valid_for``, or None; nothing is kept after."""
        found = self._value if self._for == (store, valid_for) else None
        self._for, self._value = None, None
        return found

    def keep(self, store: str, valid_for: Any, value: Any) -> None:
        self._for, self._value = (store, valid_for), value


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Engine:
    """One per process. The order is a tick's: where follow-ups go, the steps a tick runs
    after the SPU loops, the entries a commit adds, the projections that follow it, the
    log's trim floor; then what the shells around the engine are given."""
    scheduler: Scheduler
    # The store's projection, the first a commit runs (its status rows and events): an
    # argument, not an import, since the store's projection hands other apps' intent rows
    # to the projections they give the engine (importing it would close a circle).
    store_rows: StoreRows
    tick_steps: tuple[TickStep, ...] = ()
    extra_entries: Mapping[str, ExtraEntries] = field(default_factory=dict)
    projections: Mapping[str, Projection] = field(default_factory=dict)
    # By intent type: the other apps' rows of operators' intents (cluster/projections/intents.py
    # applies the cluster's own and hands these theirs).
    intent_projections: Mapping[str, IntentProjection] = field(default_factory=dict)
    trim_floor: TrimFloor | None = None
    command_actions: Mapping[str, tuple[CommandAction, ...]] = field(default_factory=dict)
    # Plans made and applied by these actors give way to an operator's apply
    # (planner/preemption.py), and ``preempting`` is told first.
    yielding_actors: frozenset[str] = frozenset()
    preempting: tuple[Preempting, ...] = ()
    # What the scrape (/metrics) reads from the other apps, summed and appended.
    moves_in_flight: tuple[MovesInFlight, ...] = ()
    metric_families: tuple[MetricFamilies, ...] = ()
    # What the engine keeps from one unit of work to the next (``replaced`` keeps them: the
    # same process, other wiring): the offsets rows it last wrote (engine/mirror.py).
    mirror: OffsetsMirror = field(default_factory=OffsetsMirror)
    # The replica sets it last committed, decoded (adapters/set_cache.py): its loads take
    # them rather than decode them again.
    sets: SetCache = field(default_factory=SetCache)
    # The moment history saved last (history/services.py): beat sends the snapshot task to
    # one node, which folds the next snapshot on from it rather than decoding it again.
    snapshot_kept: Kept = field(default_factory=Kept)
    # Where the store's id, the namespace of its Redis keys (adapters/redis_keys.py), is read:
    # the database's store row. A unit binds the id it checked against Redis
    # (store_identity.locked_for_this_store); a reader outside a unit binds it here, once.
    store_id: Callable[[], str] = store_identity.store_id

    def __post_init__(self) -> None:
        # Read-only views: a collaborator is changed by building another engine.
        object.__setattr__(self, "extra_entries", _frozen(self.extra_entries))
        object.__setattr__(self, "projections", _frozen(self.projections))
        object.__setattr__(self, "intent_projections", _frozen(self.intent_projections))
        object.__setattr__(self, "command_actions", _frozen(self.command_actions))

    def unit(self, *, keys: Iterable[Key] | None = None, shard: int | None = None,
             whole: bool = False, **options: Any) -> Unit:
        """A unit of work of this engine (cluster/engine/unit.py): ``with engine.unit(keys=...)
        as u:`` loads under the fenced leases, and leaving the block commits.

        One scope: ``keys`` (those sets), ``shard`` (one shard, whole), ``whole=True`` or,
        as ``options``, ``meta=True`` (the cluster lease, the meta alone); ``options`` also:
        ``record_ids``, ``dispatch``, ``lock_timeout_s``, ``now``, ``elections`` (and
        ``locks`` with ``pick``, the general form ``shard`` is one of)."""
        return Unit(self, keys=keys, shard=shard, whole=whole, **options)

    def replaced(self, **changes: Any) -> Engine:
        """This engine with some collaborators swapped (a test's fake, a timed step)."""
        return replace(self, **changes)

    def bound(self) -> AbstractContextManager[str]:
        """The store's namespace bound for a use case, read from ``store_id`` once (a use
        case already bound keeps its own): ``with engine.bound() as namespace:``."""
        return bound_to_store(self.store_id)

    def serving(self) -> AbstractContextManager[None]:
        """Bind the store for a shell (a request, a command, a task, a thread), its id read
        from ``store_id`` at the first key made inside (none read if none is made)."""
        return serving(self.store_id)

    def namespace(self) -> str:
        """The store's namespace: the use case's bound one, else read from ``store_id``."""
        with self.bound() as namespace:
            return namespace

    def floor(self) -> int | None:
        """The offset below which the log may be trimmed as far as other readers go."""
        return None if self.trim_floor is None else self.trim_floor()

    def actions_of(self, command: str) -> tuple[CommandAction, ...]:
        return tuple(self.command_actions.get(command, ()))

    def tell_preempting(self, **details: Any) -> None:
        for listener in self.preempting:
            listener(**details)


_current: list[Engine] = []


def start(engine: Engine) -> Engine:
    """The composition root's call: this process runs ``engine`` from now on."""
    _current[:] = [engine]
    return engine


def current() -> Engine:
    if not _current:
        raise RuntimeError("no engine built: the composition root (composition/bootstrap.py) "
                           "has not run (the cluster app is not ready)")
    return _current[0]


@contextmanager
def using(engine: Engine) -> Iterator[Engine]:
    """Run with ``engine`` for a while (tests, benchmarks), then the one before it."""
    before = list(_current)
    _current[:] = [engine]
    try:
        yield engine
    finally:
        _current[:] = before
