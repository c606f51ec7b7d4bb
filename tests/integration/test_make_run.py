"""`make run`'s supervisor: it serves the app, and an interrupt stops every process; its
Redis is the private one unless REDIS_URL names another, and is recorded for commands."""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.stack import load_run_script
from webapp.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]


def _wait_for_line(proc: subprocess.Popen, needle: str, seconds: float) -> str:
    deadline, seen = time.monotonic() + seconds, []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        seen.append(line)
        if needle in line:
            return line
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"never printed {needle!r}:\n{''.join(seen)}")


@pytest.mark.redis
def test_run_serves_the_app_and_an_interrupt_stops_every_process(tmp_path, redis_server):
    port = free_port()
    env = {**os.environ, "VAR_DIR": str(tmp_path), "PORT": str(port), "REDIS_URL": redis_server,
           "DATABASE_URL": f"sqlite:///{tmp_path / 'run.sqlite3'}", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "scripts/run.py"], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        said = _wait_for_line(proc, "redis:", 60)
        assert redis_server in said and "external, from REDIS_URL" in said, said
        url = _wait_for_line(proc, "Control room running at", 120).split()[-1]
        assert (tmp_path / "operator-password.txt").exists()
        children = psutil.Process(proc.pid).children(recursive=True)
        assert len(children) >= 3
        with urllib.request.urlopen(url + "login/", timeout=10) as page:
            assert page.status == 200 and b"Log in" in page.read()
        assert (tmp_path / "redis.url").read_text().strip() == redis_server
        # A second shell without REDIS_URL reaches the Redis make run uses.
        second_shell = {k: v for k, v in env.items() if k != "REDIS_URL"}
        status = subprocess.run([sys.executable, "manage.py", "store", "status", "--json"],
                                cwd=ROOT, env=second_shell, text=True, capture_output=True,
                                timeout=60)
        assert status.returncode == 0, status.stderr
        reached = json.loads(status.stdout)
        assert reached["reached_redis"]["url"] == redis_server
        assert reached["verdict"] in ("ok", "unclaimed"), reached
        # A second start on the same var/ (another port) is refused, naming the first.
        second = subprocess.Popen([sys.executable, "scripts/run.py"], cwd=ROOT, text=True,
                                  env={**env, "PORT": str(free_port())},
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            refusal = second.communicate(timeout=120)[0].strip()
        finally:
            _kill_tree(second)  # today's code started a second stack here
        assert second.returncode != 0, refusal
        assert len(refusal.splitlines()) == 1, refusal
        assert f"PID {proc.pid}" in refusal and url in refusal, refusal
        assert (tmp_path / "redis.url").read_text().strip() == redis_server
        with urllib.request.urlopen(url + "login/", timeout=10) as page:
            assert page.status == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
        gone, alive = psutil.wait_procs(children, timeout=15)
        assert not alive, [p.cmdline() for p in alive]
        assert (tmp_path / "redis.url").read_text().strip() == redis_server
        assert (tmp_path / "run.lock").read_text() == ""  # a clean stop leaves nothing stale
    finally:
        _kill_tree(proc)


# A stand-in for a supervisor: takes var/'s lock as scripts/run.py does, starts a child
# in its own session (as run.py starts each of its processes), says so, and waits.
HOLDER = """
import subprocess, sys, time
from pathlib import Path
from webapp import install_lock
lock = install_lock.acquire(Path(sys.argv[1]))
child = subprocess.Popen(["sleep", "300"], start_new_session=True)
lock.describe("http://127.0.0.1:1/", [child.pid])
print(child.pid, flush=True)
time.sleep(300)
"""


def _holder(var: Path) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(var)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE)
    return proc, int(proc.stdout.readline())


def test_a_second_installation_on_one_var_is_refused_and_a_killed_ones_lock_taken_over(
        tmp_path):
    from webapp import install_lock

    holder, child = _holder(tmp_path)
    try:
        with pytest.raises(install_lock.AlreadyRunning) as refused:
            install_lock.acquire(tmp_path)
        assert f"PID {holder.pid}" in str(refused.value)
        assert "http://127.0.0.1:1/" in str(refused.value)
        holder.kill()  # SIGKILL: no clean-up; its child lives on in its own session
        holder.wait(10)
        with pytest.raises(install_lock.AlreadyRunning) as survivors:
            install_lock.acquire(tmp_path)
        assert f"PIDs {child}" in str(survivors.value) and "killed" in str(survivors.value)
    finally:
        holder.kill()
        os.kill(child, signal.SIGKILL)
    psutil.wait_procs([psutil.Process(child)], timeout=10)
    lock = install_lock.acquire(tmp_path)  # the stale lock, taken over
    try:
        assert lock.stale_pid == holder.pid
        with pytest.raises(install_lock.AlreadyRunning):
            install_lock.acquire(tmp_path)
    finally:
        lock.release()
    install_lock.acquire(tmp_path).release()  # released: free again, nothing stale


def test_a_private_redis_is_never_started_on_a_data_directory_a_live_one_holds(tmp_path):
    from webapp.redis_server import DataDirInUse, start_private_redis

    first, url = start_private_redis(tmp_path / "redis")
    try:
        with pytest.raises(DataDirInUse) as refused:
            start_private_redis(tmp_path / "redis")
        assert f"PID {first.pid}" in str(refused.value)
        assert len([p for p in psutil.process_iter(["name"]) if p.info["name"] == "redis-server"
                    and _cwd(p) == tmp_path / "redis"]) == 1
    finally:
        first.terminate()
        first.wait(10)
    again, _ = start_private_redis(tmp_path / "redis")  # the holder gone: it starts
    again.terminate()
    again.wait(10)


def _cwd(proc: psutil.Process) -> Path | None:
    try:
        return Path(proc.cwd())
    except psutil.Error:
        return None


def _kill_tree(proc: subprocess.Popen) -> None:
    """Never leave the supervisor's children behind, even when the test fails."""
    try:
        family = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        family = []
    for child in family:
        child.kill()
    if proc.poll() is None:
        proc.kill()
    psutil.wait_procs(family, timeout=10)


@pytest.fixture
def run(monkeypatch):
    """scripts/run.py as a module, gone from sys.modules after the test."""
    return load_run_script("make_run_script",
                           lambda name, module: monkeypatch.setitem(sys.modules, name, module))


@pytest.mark.redis
def test_run_starts_its_private_redis_unless_redis_url_is_set_and_records_it(
        tmp_path, redis_server, monkeypatch, capsys, run):
    monkeypatch.delenv("REDIS_PRIVATE", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    stack = run.Stack()
    try:
        private = run.start_redis(stack, tmp_path)
        assert stack.redis is not None and private != redis_server
        assert "private" in capsys.readouterr().out
        recorded = tmp_path / "redis.url"
        assert recorded.read_text().strip() == private
        assert recorded.stat().st_mode & 0o777 == 0o600
        run.stop(stack.processes())
        monkeypatch.delenv("REDIS_URL")
        again = run.Stack()
        assert run.start_redis(again, tmp_path) == private  # same port: same URL next run
        run.stop(again.processes())
    finally:
        run.stop(stack.processes())
    monkeypatch.setenv("REDIS_URL", redis_server)
    external = run.Stack()
    assert run.start_redis(external, tmp_path) == redis_server and external.redis is None
    assert "external, from REDIS_URL" in capsys.readouterr().out
    assert (tmp_path / "redis.url").read_text().strip() == redis_server


def test_run_refuses_a_redis_url_that_does_not_answer_instead_of_starting_another(
        tmp_path, monkeypatch, run):
    monkeypatch.setenv("REDIS_URL", f"redis://:pw@127.0.0.1:{free_port()}/0")
    with pytest.raises(SystemExit) as refused:
        run.start_redis(run.Stack(), tmp_path)
    assert "does not answer" in str(refused.value) and "pw" not in str(refused.value)
    assert not (tmp_path / "redis.url").exists()


def test_logs_past_their_cap_are_kept_once_and_emptied_and_beat_logs_warnings_only(
        tmp_path, run):
    log, quiet = tmp_path / "beat.log", tmp_path / "web.log"
    writer = open(log, "ab")  # as a child holds its log: O_APPEND
    writer.write(b"x" * 2000)
    writer.flush()
    quiet.write_bytes(b"short\n")
    assert run.rotate_logs([log, quiet, tmp_path / "none.log"], 1000) == [log]
    assert (tmp_path / "beat.log.1").read_bytes() == b"x" * 2000
    writer.write(b"next line\n")  # lands at the start of the emptied file, no hole
    writer.close()
    assert log.read_bytes() == b"next line\n" and quiet.read_bytes() == b"short\n"
    beat = next(c for c in run.children("127.0.0.1", free_port()) if c.name == "beat")
    assert beat.args[beat.args.index("-l") + 1] == "warning"
