"""A minimal blocking JSON-RPC 2.0 client over a child process's stdio (Content-Length framing).

Deliberately independent of pygls: orjson for the JSON, `select` on the pipes so a multi-megabyte
request is written while responses and notifications are read (no pipe deadlock), and a deadline
on every wait. Requests can be encoded ahead of time (`prepare`) so that a benchmark times the
exchange, not the client's own serialization.

    with RpcClient([sys.executable, "-m", "mimo_sidecar"], stderr_path="sidecar.log") as rpc:
        rpc.call("initialize", {...})
        result = rpc.call("session/open", {...})
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from mimo_sidecar.client import frame

METHOD_NOT_FOUND = -32601
CHUNK = 1 << 20


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.data = code, message, data

    @property
    def method_missing(self) -> bool:
        return self.code == METHOD_NOT_FOUND


class RpcTimeout(Exception):
    pass


class RpcClosed(Exception):
    pass


@dataclass
class Prepared:
    """A request already encoded as one frame."""

    id: int
    method: str
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass
class Response:
    result: Any
    size: int  # body bytes of the response frame
    notifications: list[dict[str, Any]] = field(default_factory=list)


class RpcClient:
    def __init__(
        self,
        argv: Sequence[str],
        *,
        stderr_path: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120.0,
    ) -> None:
        self._stderr = open(stderr_path or os.devnull, "ab")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=cwd,
            env=env,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        self.timeout = timeout
        self._buf = bytearray()
        self._next_id = 0
        self._responses: dict[int, tuple[dict[str, Any], int]] = {}
        self._outbox = bytearray()  # replies to server requests, written with the next exchange
        self.notifications: list[dict[str, Any]] = []

    @property
    def pid(self) -> int:
        return self.proc.pid

    # -- encoding ---------------------------------------------------------------------------------
    def prepare(self, method: str, params: Any = None, *, params_json: bytes | None = None) -> Prepared:
        """Encode a request; `params_json` splices already-serialized params (no re-encoding)."""
        self._next_id += 1
        body = b'{"jsonrpc":"2.0","id":%d,"method":%s' % (self._next_id, orjson.dumps(method))
        if params_json is not None:
            body += b',"params":' + params_json
        elif params is not None:
            body += b',"params":' + orjson.dumps(params)
        return Prepared(self._next_id, method, frame(body + b"}"))

    # -- exchanges --------------------------------------------------------------------------------
    def send(self, prepared: Prepared) -> Response:
        """Write a prepared request and wait for its response; raises RpcError on an error reply."""
        seen = len(self.notifications)
        self._exchange(prepared.data, prepared.id)
        msg, size = self._responses.pop(prepared.id)
        if "error" in msg:
            err = msg["error"] or {}
            raise RpcError(err.get("code", 0), err.get("message", ""), err.get("data"))
        return Response(msg.get("result"), size, self.notifications[seen:])

    def call(self, method: str, params: Any = None) -> Any:
        return self.send(self.prepare(method, params)).result

    def notify(self, method: str, params: Any = None) -> None:
        body = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        self._exchange(frame(orjson.dumps(body)), None)

    def close(self, timeout: float = 5.0) -> int | None:
        """shutdown + exit, then wait; the process is killed if it does not go."""
        try:
            if self.proc.poll() is None:
                self.call("shutdown")
                self.notify("exit")
        except (RpcError, RpcClosed, RpcTimeout, OSError):
            pass
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self._stderr):
            if f is not None:
                f.close()
        return code

    def __enter__(self) -> RpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the pump ---------------------------------------------------------------------------------
    def _exchange(self, data: bytes, want_id: int | None) -> None:
        """Write `data` (and pending replies) while reading; return once `want_id` has answered."""
        out = memoryview(bytes(self._outbox) + data)
        self._outbox.clear()
        pos = 0
        deadline = time.monotonic() + self.timeout
        while pos < len(out) or (want_id is not None and want_id not in self._responses):
            left = deadline - time.monotonic()
            if left <= 0:
                raise RpcTimeout(f"no response within {self.timeout:.0f}s (request {want_id})")
            readable, writable, _ = select.select([self._out], [self._in] if pos < len(out) else [], [], left)
            if writable:
                pos += self._write(out[pos : pos + CHUNK])
            if readable:
                self._read()
            if self._outbox and pos >= len(out):  # a server request arrived: answer it now
                out, pos = memoryview(bytes(self._outbox)), 0
                self._outbox.clear()

    def _write(self, chunk: memoryview) -> int:
        try:
            return os.write(self._in, chunk)
        except BlockingIOError:
            return 0
        except BrokenPipeError as exc:
            raise RpcClosed(f"sidecar closed its stdin (exit code {self.proc.poll()})") from exc

    def _read(self) -> None:
        chunk = os.read(self._out, CHUNK)
        if not chunk:
            raise RpcClosed(f"sidecar closed its stdout (exit code {self.proc.wait(5)})")
        self._buf += chunk
        while (msg := self._take_frame()) is not None:
            self._dispatch(*msg)

    def _take_frame(self) -> tuple[dict[str, Any], int] | None:
        end = self._buf.find(b"\r\n\r\n")
        if end < 0:
            return None
        length = None
        for line in bytes(self._buf[:end]).split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length is None:
            raise RpcClosed(f"frame without Content-Length: {bytes(self._buf[:end])!r}")
        start = end + 4
        if len(self._buf) < start + length:
            return None
        body = bytes(self._buf[start : start + length])
        del self._buf[: start + length]
        return orjson.loads(body), length

    def _dispatch(self, msg: dict[str, Any], size: int) -> None:
        if "method" not in msg:
            self._responses[msg.get("id")] = (msg, size)
        elif "id" in msg:  # a server request (work-done progress create, ...): accept it
            self._outbox += frame(orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": None}))
        else:
            self.notifications.append(msg)


def peak_rss_bytes(pid: int) -> dict[str, int]:
    """VmHWM (peak) and VmRSS (current) of a live process, from /proc (Linux), in bytes."""
    out: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            out[key] = int(value.split()[0]) * 1024
    return out
