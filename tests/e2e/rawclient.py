"""A minimal client speaking raw Content-Length frames to a spawned sidecar.

On purpose, it shares no code with the sidecar or with `mimo_sidecar.client` (the one Python
client of the package): its framing and JSON are written here with the standard library, so a bug
in the package's framing or codec cannot hide itself from the tests.

It checks the sidecar's stdout strictly: every byte must belong to a well-formed frame
(`Content-Length: N\\r\\n`, optional other headers, `\\r\\n`, then N bytes of JSON). Anything else
is recorded in `violations`. stderr is collected in `stderr_text()`.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
MISSING = object()


def sidecar_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "mimo_sidecar", *args]


def hook_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, MIMO_SIDECAR_TEST_HOOKS="1", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def encode(payload: Any) -> bytes:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _limit_memory(max_bytes: int) -> None:
    """In the child: cap its address space, so a runaway sidecar fails alone (MemoryError)."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))


class RawClient:
    def __init__(
        self, args: Sequence[str] = (), env: dict[str, str] | None = None, max_memory: int | None = None
    ) -> None:
        self.proc = subprocess.Popen(
            sidecar_command(*args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env or hook_env(),
            cwd=REPO,
            preexec_fn=None if max_memory is None else lambda: _limit_memory(max_memory),
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.violations: list[str] = []
        self._stderr: list[bytes] = []
        self._next_id = 0
        self._pending: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.null_id_errors: list[dict[str, Any]] = []  # every error answered with id null, in order
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # -- reading -------------------------------------------------------------------------------
    def _read_stdout(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line == b"\r\n":
                    break
                if not line.endswith(b"\r\n"):
                    self.violations.append(f"header line without CRLF: {line[:80]!r}")
                    continue
                name, sep, value = line[:-2].partition(b": ")
                if not sep:
                    self.violations.append(f"not a header line: {line[:80]!r}")
                elif name == b"Content-Length" and value.isdigit():
                    length = int(value)
                elif name != b"Content-Type":
                    self.violations.append(f"unexpected header: {line[:80]!r}")
            if length is None:
                self.violations.append("frame without Content-Length")
                continue
            body = out.read(length)
            try:
                message = json.loads(body.decode("utf-8"))
            except ValueError as exc:
                self.violations.append(f"body is not JSON ({exc}): {body[:80]!r}")
                continue
            self.messages.put(message)

    def _read_stderr(self) -> None:
        err = self.proc.stderr
        assert err is not None
        for line in iter(err.readline, b""):
            self._stderr.append(line)

    def stderr_text(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    # -- writing -------------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, payload: Any) -> None:
        self.send_raw(encode(payload))

    def request(self, method: str, params: Any = MISSING, msg_id: Any = None) -> Any:
        """Send a request (params omitted entirely when MISSING); returns its id."""
        if msg_id is None:
            self._next_id += 1
            msg_id = self._next_id
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not MISSING:
            payload["params"] = params
        self.send(payload)
        return msg_id

    def notify(self, method: str, params: Any = MISSING) -> None:
        payload: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not MISSING:
            payload["params"] = params
        self.send(payload)

    def response(self, msg_id: Any, timeout: float = 10.0) -> dict[str, Any]:
        """The response to `msg_id`; notifications and other responses are kept aside."""
        deadline = time.monotonic() + timeout
        while msg_id not in self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no response to {msg_id!r}; stderr:\n{self.stderr_text()}")
            try:
                message = self.messages.get(timeout=remaining)
            except queue.Empty:
                continue
            if "id" in message and ("result" in message or "error" in message):
                self._pending[message["id"]] = message
                if message["id"] is None:
                    self.null_id_errors.append(message["error"])
            elif "id" in message and "method" in message:
                self.on_request(message)
            else:
                self.notifications.append(message)
        return self._pending.pop(msg_id)

    def on_request(self, message: dict[str, Any]) -> None:
        """A request from the sidecar (work-done progress): kept with the notifications, unanswered."""
        self.notifications.append(message)

    def call(self, method: str, params: Any = MISSING, timeout: float = 10.0) -> dict[str, Any]:
        return self.response(self.request(method, params), timeout)

    def initialize(
        self,
        memory_root: Path | str,
        config: dict | None = None,
        process_id: int | None = None,
        capabilities: dict | None = None,
    ) -> dict:
        options: dict[str, Any] = {"memoryRoot": str(memory_root)}
        if config is not None:
            options["config"] = config
        reply = self.call(
            "initialize",
            {"processId": process_id, "capabilities": capabilities or {}, "initializationOptions": options},
        )
        self.notify("initialized", {})
        return reply

    # -- ending --------------------------------------------------------------------------------
    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
