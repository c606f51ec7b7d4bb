"""Settings helpers fail loudly on bad values."""
import pytest

from webapp.env import (EnvError, database_token, env_bool, env_int, env_token, env_url,
                        env_url_list)


def test_booleans_accept_the_usual_spellings(monkeypatch):
    monkeypatch.setenv("X", "yes")
    assert env_bool("X", False) is True
    monkeypatch.setenv("X", "0")
    assert env_bool("X", True) is False


def test_a_bad_boolean_raises(monkeypatch):
    monkeypatch.setenv("X", "maybe")
    with pytest.raises(EnvError, match="not a boolean"):
        env_bool("X", False)


def test_integers_are_checked(monkeypatch):
    monkeypatch.setenv("N", "ten")
    with pytest.raises(EnvError):
        env_int("N", 1)
    monkeypatch.setenv("N", "-1")
    with pytest.raises(EnvError, match="at least 0"):
        env_int("N", 1, minimum=0)


def test_urls_must_use_an_allowed_scheme(monkeypatch):
    monkeypatch.setenv("U", "mysql://x")
    with pytest.raises(EnvError):
        env_url("U", "sqlite:///x", ("sqlite", "postgres"))
    monkeypatch.delenv("U")
    assert env_url("U", "sqlite:///x", ("sqlite",)) == "sqlite:///x"


def test_a_url_list_is_comma_separated_empty_by_default_and_checked(monkeypatch):
    monkeypatch.delenv("L", raising=False)
    assert env_url_list("L", ("redis",)) == []
    monkeypatch.setenv("L", " redis://a:1/0, redis://b:2/3 ,")
    assert env_url_list("L", ("redis",)) == ["redis://a:1/0", "redis://b:2/3"]
    monkeypatch.setenv("L", "redis://a:1/0,http://b")
    with pytest.raises(EnvError, match="must use one of"):
        env_url_list("L", ("redis",))


def test_the_secret_key_is_generated_once_and_reused(tmp_path, monkeypatch):
    from webapp.secret import load_or_create_secret

    monkeypatch.delenv("SECRET_KEY", raising=False)
    first = load_or_create_secret(tmp_path)
    assert first == load_or_create_secret(tmp_path) and len(first) > 40
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_a_namespace_token_is_a_short_key_safe_name(monkeypatch):
    monkeypatch.setenv("NS", "blue-1_a")
    assert env_token("NS", "x") == "blue-1_a"
    for bad in ("a b", "a:b", "x" * 65):
        monkeypatch.setenv("NS", bad)
        with pytest.raises(EnvError, match="NS="):
            env_token("NS", "x")


def test_the_database_token_names_one_database_whatever_its_other_settings():
    one = {"ENGINE": "django.db.backends.postgresql", "HOST": "db", "PORT": 5432, "NAME": "a"}
    assert database_token(one) == database_token({**one, "CONN_MAX_AGE": 60})
    assert database_token(one) != database_token({**one, "NAME": "b"})
    assert database_token(one) != database_token({**one, "HOST": "other"})
