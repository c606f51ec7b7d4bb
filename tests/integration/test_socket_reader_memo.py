"""A burst of sockets of one user asks the database for the reader role once; a role
change counts for new sockets once the memo's few seconds have passed."""
from __future__ import annotations

import asyncio
from datetime import datetime
from types import SimpleNamespace

import pytest

from cluster import consumers


@pytest.fixture
def asked(monkeypatch):
    calls: list[int] = []
    answers = {1: True, 2: False}

    def can_read(user) -> bool:
        calls.append(user.pk)
        return answers[user.pk]

    monkeypatch.setattr(consumers, "can_read", can_read)
    monkeypatch.setattr(consumers, "_readers", {})
    return calls, answers


def user(pk: int, joined: int = 1) -> SimpleNamespace:
    return SimpleNamespace(pk=pk, get_username=lambda: f"u{pk}",
                           date_joined=datetime(2026, 1, joined))


def test_a_burst_of_one_users_sockets_asks_once_and_each_user_gets_their_own_answer(asked):
    calls, _ = asked

    async def burst() -> list[bool]:
        return [await consumers.may_read(user(1)) for _ in range(50)] + \
               [await consumers.may_read(user(2)) for _ in range(5)]

    answers = asyncio.run(burst())
    assert answers == [True] * 50 + [False] * 5
    assert calls == [1, 2]


def test_a_role_taken_away_refuses_once_the_memo_expires(asked, monkeypatch):
    calls, answers = asked
    clock = [100.0]
    monkeypatch.setattr(consumers.time, "monotonic", lambda: clock[0])
    assert asyncio.run(consumers.may_read(user(1))) is True
    answers[1] = False
    clock[0] += consumers.READER_CHECK_TTL_S / 2
    assert asyncio.run(consumers.may_read(user(1))) is True
    clock[0] += consumers.READER_CHECK_TTL_S
    assert asyncio.run(consumers.may_read(user(1))) is False
    assert calls == [1, 1]


def test_a_new_user_given_a_deleted_users_id_is_asked_afresh(asked):
    calls, answers = asked
    assert asyncio.run(consumers.may_read(user(1, joined=1))) is True
    answers[1] = False
    assert asyncio.run(consumers.may_read(user(1, joined=2))) is False
    assert calls == [1, 1]
