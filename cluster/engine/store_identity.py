"""The database and its Redis namespace name each other; a mismatch is refused.

Hot-state keys carry the store id (``repl:{<store id>}:...``, redis_keys.py): a
database made anew gets a new id, hence an empty namespace, and never reads or
deletes another store's keys. That alone cannot tell a Redis that lost this
store's state, or another Redis reached by mistake (REDIS_URL forgotten in a
second shell), from a fresh one. So, both ways:

* the namespace holds an owner marker (``repl:{<store id>}:owner``): a uuid and
  the owning database's identity (engine, host, port and name, or the SQLite
  file; never a password);
* the database records that marker and the Redis URL (password left out) in
  ``ClusterState``.

A Redis without this store's marker, while the store holds committed records,
is refused: ``HotStateMismatch`` names both sides in one line and nothing is
written anywhere. ``manage.py store adopt-redis`` adopts it explicitly (the
engine's recovery then reports what is missing, once); a copied database (same
store id, another database identity) is told to take its own identity with
``manage.py store reidentify``. Each check judges afresh (the store row and one GET of
the marker, read anyway; the judging itself is ~25 us on SQLite, where a verdict kept per
process saved it at the cost of module state and of a ``forget`` after every change of
identity).
"""
from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Literal

from django.conf import settings
from django.db import connection
from django.db.models import Max

from cluster.adapters import lease, shards
from cluster.adapters.lease import Held
from cluster.adapters.redis_keys import bound_to_store, client, home_url, key
from cluster.errors import Unavailable
from cluster.models import ClusterState, Partition
from cluster.redis_urls import redacted

OWNER = "owner"
ADOPT = "manage.py store adopt-redis"
TAKE_OVER = "manage.py store adopt-redis --take-over"
REIDENTIFY = "manage.py store reidentify"


class HotStateMismatch(Unavailable):
    """The Redis reached does not hold this store's hot state (or holds another database's)."""


@dataclass(frozen=True)
class Owner:
    """The marker a namespace carries: who claimed it, and when."""
    marker: str
    database: str
    store: str
    claimed_at: str

    def encode(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


@dataclass(frozen=True)
class Verdict:
    """What to do with the Redis reached: ``ok``, ``claim`` (fresh store) or ``refuse``."""
    action: Literal["ok", "claim", "refuse"]
    reason: str = ""
    kind: Literal["", "missing", "copy"] = ""  # missing: no marker, or another one


def database_identity() -> str:
    """Where this database lives, without credentials: a copy elsewhere differs."""
    db = connection.settings_dict
    name = str(db.get("NAME") or "")
    if connection.vendor == "sqlite":
        in_memory = name.startswith("file:") or name == ":memory:"
        return f"sqlite:{name if in_memory else os.path.realpath(name)}"
    host = db.get("HOST") or "localhost"
    return f"{connection.vendor}://{host}:{db.get('PORT') or 'default'}/{name}"


def reached_redis() -> str:
    return redacted(home_url())


def store_row() -> ClusterState:
    return ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)[0]


def store_id() -> str:
    return str(store_row().store_id)


def read_owner(store: str) -> Owner | None:
    raw = client().get(key(OWNER, store))
    return _decode_owner(raw)


def _decode_owner(raw: bytes | str | None) -> Owner | None:
    if raw is None:
        return None
    try:
        fields = json.loads(raw)
        return Owner(**{f: str(fields[f]) for f in Owner.__dataclass_fields__})
    except (ValueError, TypeError, KeyError):
        # Not ours to interpret: treated as another owner, never overwritten silently.
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        found = " ".join(text.split())[:80]  # kept on one line
        return Owner(marker="unreadable", database=found, store="", claimed_at="")


def holds_committed_records(row: ClusterState) -> bool:
    """What an empty Redis would silently lose if it were adopted."""
    return bool(row.redis_marker) or row.applied_offset > 0 or \
        Partition.objects.filter(hw__gt=0).exists()


def judge(row: ClusterState, owner: Owner | None, here: str) -> Verdict:
    """The one decision: is the Redis reached (its marker ``owner``) this store's?"""
    store = str(row.store_id)
    if owner is None:
        if not holds_committed_records(row) or _kept_from_before_markers(row, store):
            return Verdict("claim")
        return Verdict("refuse", _missing(row, f"{reached_redis()} has no marker of store "
                                               f"{store}"), "missing")
    if owner.database != here:
        return Verdict("refuse", (
            f"hot state refused: namespace repl:{{{store}}} in {reached_redis()} belongs to "
            f"database {owner.database} (marker {owner.marker}), not to this database {here}: "
            f"a copy gets its own identity with `{REIDENTIFY}` (a database moved from there "
            f"takes it over with `{TAKE_OVER}`)"), "copy")
    if row.redis_marker and owner.marker != row.redis_marker:
        return Verdict("refuse", _missing(row, f"{reached_redis()} holds marker {owner.marker} "
                                               f"(claimed {owner.claimed_at}) instead"),
                       "missing")
    return Verdict("ok")


def _kept_from_before_markers(row: ClusterState, store: str) -> bool:
    """A store from before owner markers finds its own state in the namespace (every key
    carries its store id, and the engine's meta is there): that Redis is its own, not an
    empty or foreign one, so it is claimed without asking (an upgrade, not a loss)."""
    return not row.redis_marker and bool(client().exists(key("meta", store)))


def _missing(row: ClusterState, found: str) -> str:
    if row.redis_marker:
        ours = f"{row.redis_url or 'an unrecorded Redis'} (marker {row.redis_marker})"
    else:
        ours = "a Redis it never recorded (it holds committed records)"
    return (f"hot state refused: store {row.store_id} (database {database_identity()}) keeps "
            f"its hot state in {ours}, but {found}; set REDIS_URL to the store's Redis, or "
            f"adopt this one and record the loss with `{ADOPT}`")


def check_hot_state_identity() -> str:
    """Refuse (HotStateMismatch, one line) a Redis that is not this store's; return the store id.

    A fresh store claims the namespace it reaches. Called at the start of every
    unit of work that touches the hot state, before anything is written: a
    refusal leaves Redis and the database as they were.
    """
    row = store_row()
    store = str(row.store_id)
    raw = client().get(key(OWNER, store))
    here = database_identity()
    owner = _decode_owner(raw)
    verdict = judge(row, owner, here)
    if verdict.action == "refuse":
        raise HotStateMismatch(verdict.reason)
    if verdict.action == "claim":
        owner = claim_namespace(new_owner(store, here))
        if owner is None:  # another process claimed it meanwhile: judge what it wrote
            return check_hot_state_identity()
    assert owner is not None  # judged "ok": the namespace holds its marker
    record_owner(row, owner)
    return store


def new_owner(store: str, here: str) -> Owner:
    return Owner(marker=uuid.uuid4().hex, database=here, store=store,
                 claimed_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))


def claim_namespace(owner: Owner, *, replace: bool = False) -> Owner | None:
    """Write ``owner`` as the namespace's marker; None when one was there (unless ``replace``).

    The ``store`` key (the store id, for people reading Redis) is written with it,
    once, instead of at every unit of work. The namespace's fence counter is first
    brought past the store's highest token: an adopted Redis that lost it, or a new
    namespace, would otherwise give out tokens the store's rows refuse.
    """
    lease.raise_fence(store_highest_token(), owner.store)
    pipe = client().pipeline(transaction=False)
    pipe.set(key(OWNER, owner.store), owner.encode(), nx=not replace)
    pipe.set(key("store", owner.store), owner.store, nx=True)
    written, _ = pipe.execute()
    return owner if written else None


def store_highest_token() -> int:
    """The newest fencing token that wrote a partition row (0 for a store without rows)."""
    return Partition.objects.aggregate(top=Max("written_by"))["top"] or 0


def record_owner(row: ClusterState, owner: Owner) -> None:
    """The database's half: which Redis (URL, marker) holds this store, and who it is."""
    wanted = {"redis_marker": owner.marker, "redis_url": reached_redis(),
              "database_identity": owner.database}
    if any(getattr(row, f) != v for f, v in wanted.items()):
        ClusterState.objects.filter(pk=row.pk).update(**wanted)
        for field, value in wanted.items():
            setattr(row, field, value)


def ensure_hot_state_is_ours() -> None:
    """Readers call this: the identity check (which claims a fresh store's namespace)."""
    check_hot_state_identity()


@contextmanager
def locked_for_this_store(timeout_s: float | None = None, *,
                          locks: Sequence[str] | None = None) -> Iterator[Held]:
    """The store's fenced leases (``locks``, or by default every one: the whole state),
    with its namespace resolved once for the use case, after the identity check
    (a refused Redis gets no lock key either). What is held is the holder's to pass to
    every write it fences (lease.py's ``Held``)."""
    ours = check_hot_state_identity()
    wait_s = timeout_s or settings.REPLICATION_LOCK_TIMEOUT_S
    names = shards.every_lock() if locks is None else locks
    with bound_to_store(ours), lease.held_all(wait_s, names) as held:
        yield held


def identity_status() -> dict[str, object]:
    """Both identities as the database records them and as the Redis reached shows them."""
    row = store_row()
    store = str(row.store_id)
    owner = read_owner(store)
    verdict = judge(row, owner, database_identity())
    return {
        "store_id": store,
        "database": {"identity": database_identity(), "recorded": row.database_identity},
        "recorded_redis": {"url": row.redis_url, "marker": row.redis_marker},
        "reached_redis": {"url": reached_redis(),
                          "owner": asdict(owner) if owner is not None else None},
        "holds_committed_records": holds_committed_records(row),
        "verdict": {"ok": "ok", "claim": "unclaimed"}.get(verdict.action, "refused"),
        "reason": verdict.reason or None,
    }
