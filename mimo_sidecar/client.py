"""A small client for Python agent hosts: spawns the sidecar and speaks JSON-RPC over its stdio.

    with SidecarClient.spawn(on_notification=print) as client:
        client.initialize(memory_root="/path/to/memory")
        client.request("session/open", {"sessionId": "s1", "messages": [...]})

Requests can be sent concurrently (`request_async` returns a Future); responses are matched by id
on a reader thread, and notifications (`rebuild/status`, `window/logMessage`) go to the callback.
It does not import pygls: it is plain Content-Length framing over pipes.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import IO, Any

import orjson

Notification = Callable[[str, Any], None]


class RpcError(Exception):
    """An error response: `code`, `message` and `data` as the sidecar sent them."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class SidecarClosed(RpcError):
    def __init__(self, detail: str) -> None:
        super().__init__(-32099, f"sidecar connection closed: {detail}")


def frame(body: bytes) -> bytes:
    """A Content-Length frame around a UTF-8 JSON body (the byte length, not characters)."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode_frame(message: dict[str, Any]) -> bytes:
    return frame(orjson.dumps(message))


def read_frame(stream: IO[bytes]) -> dict[str, Any] | None:
    """One framed message, or None at end of stream."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None:
        raise ValueError("frame without Content-Length")
    body = stream.read(length)
    if len(body) < length:
        return None
    return orjson.loads(body)


class SidecarClient:
    def __init__(self, proc: subprocess.Popen[bytes], on_notification: Notification | None = None) -> None:
        self.proc = proc
        self.on_notification = on_notification
        self._ids = itertools.count(1)
        self._pending: dict[int | str, Future[Any]] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_loop, name="sidecar-reader", daemon=True)
        self._reader.start()

    @classmethod
    def spawn(
        cls,
        *,
        on_notification: Notification | None = None,
        args: list[str] | None = None,
        stderr: IO[Any] | int | None = None,
        env: dict[str, str] | None = None,
    ) -> SidecarClient:
        cmd = [sys.executable, "-m", "mimo_sidecar", *(args or [])]
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env or dict(os.environ)
        )
        return cls(proc, on_notification)

    # -- requests --------------------------------------------------------------------------------
    def request_async(self, method: str, params: Any = None) -> Future[Any]:
        msg_id = next(self._ids)
        fut: Future[Any] = Future()
        with self._lock:
            self._pending[msg_id] = fut
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        fut.msg_id = msg_id  # type: ignore[attr-defined]  # for cancel()
        return fut

    def request(self, method: str, params: Any = None, timeout: float | None = 120) -> Any:
        return self.request_async(method, params).result(timeout)

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def cancel(self, fut: Future[Any]) -> None:
        self.notify("$/cancelRequest", {"id": fut.msg_id})  # type: ignore[attr-defined]

    def initialize(self, memory_root: str, config: dict[str, Any] | None = None, **capabilities: Any) -> Any:
        options: dict[str, Any] = {"memoryRoot": memory_root}
        if config is not None:
            options["config"] = config
        result = self.request(
            "initialize",
            {"processId": os.getpid(), "capabilities": capabilities, "initializationOptions": options},
        )
        self.notify("initialized", {})
        return result

    def shutdown(self, timeout: float = 10) -> int:
        """`shutdown` then `exit`; returns the process's exit code."""
        try:
            self.request("shutdown", timeout=timeout)
            self.notify("exit")
        except (RpcError, OSError):
            pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def __enter__(self) -> SidecarClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.shutdown()

    # -- plumbing --------------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(encode_frame(message))
            self.proc.stdin.flush()

    def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        try:
            while (message := read_frame(self.proc.stdout)) is not None:
                self._dispatch(message)
        except (OSError, ValueError) as exc:
            self._fail_all(str(exc))
            return
        self._fail_all("end of stream")

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message:
            if "id" in message:  # a request from the sidecar (work-done progress): decline politely
                self._send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "not supported by this client"},
                    }
                )
            elif self.on_notification is not None:
                self.on_notification(message["method"], message.get("params"))
            return
        with self._lock:
            fut = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
        if fut is None:
            return
        error = message.get("error")
        if error is not None:
            fut.set_exception(RpcError(error.get("code", 0), error.get("message", ""), error.get("data")))
        else:
            fut.set_result(message.get("result"))

    def _fail_all(self, detail: str) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(SidecarClosed(detail))
