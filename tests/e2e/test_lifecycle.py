"""Process lifecycle: --version, exit codes, end of stdin, parent death, shutdown draining."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mimo_sidecar import __version__

from .rawclient import REPO, RawClient, sidecar_command

pytestmark = pytest.mark.e2e


@pytest.fixture
def memory_root(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def fake_parent() -> Iterator[subprocess.Popen[bytes]]:
    """A process standing in for the IDE; the tests kill it."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(5)


def ready(client: RawClient) -> None:
    """Wait until the process serves requests (imports done)."""
    reply = client.call("session/get", {"sessionId": "x"}, timeout=30)
    assert reply["error"]["code"] in (-32002, 1001)


def test_version_goes_to_stdout() -> None:
    done = subprocess.run(sidecar_command("--version"), capture_output=True, cwd=REPO, timeout=30)
    assert done.returncode == 0
    assert done.stdout.decode() == f"mimo-sidecar {__version__}\n"


def test_shutdown_then_exit_is_code_0(memory_root: Path) -> None:
    with RawClient(["--stdio", "--log-level", "debug"]) as c:
        c.initialize(memory_root)
        assert c.call("shutdown")["result"] is None
        c.notify("exit")
        assert c.wait(5) == 0
        assert c.violations == []


def test_the_debug_timing_log_gives_each_handler_and_its_encode(memory_root: Path) -> None:
    """At DEBUG, each handler's time, and for a result the handler encodes, that encode apart (on
    stderr: stdout carries frames only). The benchmarks tell a build's work from its serialising."""
    with RawClient(["--stdio", "--log-level", "debug"]) as c:
        c.initialize(memory_root)
        opened = {
            "sessionId": "timed",
            "messages": [
                {
                    "info": {"id": "m1", "role": "user"},
                    "parts": [{"id": "p1", "type": "text", "text": "hello"}],
                }
            ],
        }
        assert "result" in c.call("session/open", opened)
        assert "result" in c.call("request/build", {"sessionId": "timed"})
        assert c.call("shutdown")["result"] is None
        c.notify("exit")
        assert c.wait(5) == 0
        log = c.stderr_text()
        assert c.violations == []
    handled = re.findall(r"mimo_sidecar\.timing: request/build ([0-9.]+) ms", log)
    encoded = re.findall(r"mimo_sidecar\.timing: request/build encode ([0-9.]+) ms", log)
    assert len(handled) == len(encoded) == 1 and float(encoded[0]) <= float(handled[0])


def test_exit_without_shutdown_is_code_1(memory_root: Path) -> None:
    with RawClient() as c:
        c.initialize(memory_root)
        c.notify("exit")
        assert c.wait(5) == 1


def test_shutdown_waits_for_in_flight_requests(memory_root: Path) -> None:
    with RawClient() as c:
        c.initialize(memory_root)
        slow = c.request("test/sleep", {"ms": 600})
        started = time.monotonic()
        shutdown = c.request("shutdown")
        assert c.response(shutdown)["result"] is None
        assert time.monotonic() - started >= 0.5
        assert c.response(slow, timeout=1)["result"] == {"slept": 600}  # answered, not cancelled
        c.notify("exit")
        assert c.wait(5) == 0


@pytest.mark.parametrize("busy", [False, True])
def test_end_of_stdin_exits_within_1s(memory_root: Path, busy: bool) -> None:
    with RawClient() as c:
        c.initialize(memory_root)
        if busy:
            c.request("test/sleep", {"ms": 30_000})
            c.request("test/sleep", {"ms": 30_000, "thread": True})  # a worker thread stays blocked
            time.sleep(0.3)
        started = time.monotonic()
        c.close_stdin()
        code = c.wait(5)
        elapsed = time.monotonic() - started
        assert elapsed < 1.0, f"took {elapsed:.2f}s"
        assert code == 1  # no shutdown


def test_parent_death_via_client_process_id(fake_parent: subprocess.Popen[bytes]) -> None:
    with RawClient([f"--clientProcessId={fake_parent.pid}"]) as c:
        ready(c)
        started = time.monotonic()
        fake_parent.kill()
        fake_parent.wait(5)
        c.wait(5)  # stdin is still open: only the watcher can end it
        assert time.monotonic() - started < 3.0
        assert "is gone" in c.stderr_text()


def test_parent_death_via_initialize_process_id(
    memory_root: Path, fake_parent: subprocess.Popen[bytes]
) -> None:
    with RawClient(["--clientProcessId", "0"]) as c:
        c.initialize(memory_root, process_id=fake_parent.pid)
        started = time.monotonic()
        fake_parent.kill()
        fake_parent.wait(5)
        c.wait(5)
        assert time.monotonic() - started < 3.0


@pytest.mark.parametrize(("shut_down", "code"), [(False, 1), (True, 0)])
def test_exit_code_after_the_parent_dies(
    memory_root: Path, fake_parent: subprocess.Popen[bytes], shut_down: bool, code: int
) -> None:
    with RawClient() as client:
        client.initialize(memory_root, process_id=fake_parent.pid)
        if shut_down:
            assert client.call("shutdown")["result"] is None
        fake_parent.kill()
        fake_parent.wait(5)
        assert client.wait(5) == code


def test_log_file(tmp_path: Path, memory_root: Path) -> None:
    log = tmp_path / "sidecar.log"
    with RawClient(["--log-file", str(log)]) as c:
        c.initialize(memory_root)
        c.call("test/fail", {})
        c.close_stdin()
        c.wait(5)
    text = log.read_text()
    assert "serving on stdio" in text and "deliberate failure" in text
