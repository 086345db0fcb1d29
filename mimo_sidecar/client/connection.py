"""The JSON connection to a sidecar: spawns it and speaks JSON-RPC over its stdio, with plain dicts.

    with SidecarClient.spawn(on_notification=print) as client:
        client.initialize(memory_root="/path/to/memory")
        client.request("session/open", {"sessionId": "s1", "messages": [...]})

Requests can be sent concurrently (`request_async` returns a Future); responses are matched by id
on a reader thread, and notifications (`rebuild/status`, `window/logMessage`) go to the callback.
A request can also be encoded ahead of time (`prepare`, then `send`), so that a benchmark times
the exchange and not the client's own serialization; `send` reports the response's size.

The typed client (`client.sync.Sidecar`, docs/client.md) runs over this connection. It does not
import pygls: it is the package's Content-Length framing (`mimo_sidecar.transport.framing`) and
JSON codec (`transport.jsonrpc_codec`: a lone surrogate in a host string goes and comes back as
its escape) over pipes. The demo host and the benchmarks use it; the tests keep an independent raw client.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import IO, Any

from ..transport.framing import FrameReader, frame
from ..transport.jsonrpc_codec import dumps, loads_whole
from .errors import METHOD_NOT_FOUND, RpcError, RpcTimeout, SidecarClosed, error_of

__all__ = [
    "Answer",
    "Prepared",
    "RequestFuture",
    "Response",
    "RpcError",
    "RpcTimeout",
    "SidecarClient",
    "SidecarClosed",
]

Notification = Callable[[str, Any], None]
# A request from the sidecar (`window/workDoneProgress/create`): its result, or None to decline it.
ServerRequest = Callable[[str, Any], "Answer | None"]

# The default time a request may take: generous for a session/open of tens of megabytes, and the
# typed client replaces it per method (client/timeouts.py: an insert may wait for a writer).
DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Answer:
    """The result a client sends back for a request of the sidecar's."""

    result: Any = None


def encode_frame(message: dict[str, Any]) -> bytes:
    return frame(dumps(message))


class RequestFuture(Future[Any]):
    """The future result of one request; `msg_id` is what `cancel` names."""

    def __init__(self, msg_id: int) -> None:
        super().__init__()
        self.msg_id = msg_id


@dataclass(frozen=True)
class Prepared:
    """A request already encoded as one frame."""

    id: int
    method: str
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True)
class Response:
    result: Any
    size: int  # body bytes of the response frame


class SidecarClient:
    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        on_notification: Notification | None = None,
        on_request: ServerRequest | None = None,
    ) -> None:
        self.proc = proc
        self.on_notification = on_notification
        self.on_request = on_request
        self._ids = itertools.count(1)
        self._pending: dict[int | str, Future[Response]] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_loop, name="sidecar-reader", daemon=True)
        self._reader.start()

    @classmethod
    def spawn(
        cls,
        *,
        on_notification: Notification | None = None,
        on_request: ServerRequest | None = None,
        args: list[str] | None = None,
        stderr: IO[Any] | int | None = None,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        command: list[str] | None = None,
    ) -> SidecarClient:
        """Start a sidecar (`command`, default this Python's `-m mimo_sidecar`, plus `args`)."""
        cmd = [*(command or [sys.executable, "-m", "mimo_sidecar"]), *(args or [])]
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env or dict(os.environ),
            cwd=cwd,
        )
        return cls(proc, on_notification, on_request)

    @property
    def pid(self) -> int:
        return self.proc.pid

    # -- requests --------------------------------------------------------------------------------
    def prepare(self, method: str, params: Any = None, *, params_json: bytes | None = None) -> Prepared:
        """Encode a request; `params_json` splices already-serialized params (no re-encoding)."""
        msg_id = next(self._ids)
        body = b'{"jsonrpc":"2.0","id":%d,"method":%s' % (msg_id, dumps(method))
        if params_json is not None:
            body += b',"params":' + params_json
        elif params is not None:
            body += b',"params":' + dumps(params)
        return Prepared(msg_id, method, frame(body + b"}"))

    def send_async(self, prepared: Prepared) -> Future[Response]:
        fut: Future[Response] = Future()
        with self._lock:
            self._pending[prepared.id] = fut
        self._write(prepared.data)
        return fut

    def send(self, prepared: Prepared, timeout: float | None = DEFAULT_TIMEOUT_S) -> Response:
        """Send a prepared request and wait for its response; raises RpcError on an error reply."""
        return self.wait(prepared, self.send_async(prepared), timeout)

    def wait(self, prepared: Prepared, pending: Future[Response], timeout: float | None) -> Response:
        """The response `pending` (from `send_async(prepared)`) settles with, within `timeout`."""
        try:
            return pending.result(timeout)
        except FutureTimeout:
            raise RpcTimeout(f"no response to {prepared.method} within {timeout} s") from None

    def request_async(self, method: str, params: Any = None) -> RequestFuture:
        prepared = self.prepare(method, params)
        result = RequestFuture(prepared.id)

        def settle(done: Future[Response]) -> None:
            exc = done.exception()
            if exc is not None:
                result.set_exception(exc)
            else:
                result.set_result(done.result().result)

        self.send_async(prepared).add_done_callback(settle)
        return result

    def request(self, method: str, params: Any = None, timeout: float | None = DEFAULT_TIMEOUT_S) -> Any:
        return self.send(self.prepare(method, params), timeout).result

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(encode_frame(message))

    def cancel(self, fut: RequestFuture) -> None:
        self.notify("$/cancelRequest", {"id": fut.msg_id})

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
        """`shutdown` then `exit`; returns the process's exit code (the process is killed if it
        does not end in time). The pipes are closed afterwards."""
        try:
            self.request("shutdown", timeout=timeout)
            self.notify("exit")
        except (RpcError, RpcTimeout, OSError):
            pass
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        return code

    def __enter__(self) -> SidecarClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.shutdown()

    # -- plumbing --------------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        reader = FrameReader(self.proc.stdout)
        try:
            while (body := reader.read()) is not None:
                self._dispatch(loads_whole(body), len(body))
        except (OSError, ValueError) as exc:
            self._fail_all(str(exc))
            return
        self._fail_all("end of stream")

    def _dispatch(self, message: dict[str, Any], size: int) -> None:
        if "method" in message:
            if "id" in message:  # a request from the sidecar (work-done progress)
                self._answer(message)
            elif self.on_notification is not None:
                self.on_notification(message["method"], message.get("params"))
            return
        msg_id = message.get("id")
        if not isinstance(msg_id, (int, str)):
            return
        with self._lock:
            fut = self._pending.pop(msg_id, None)
        if fut is None:
            return
        if message.get("error") is not None:
            fut.set_exception(error_of(message))
        else:
            fut.set_result(Response(message.get("result"), size))

    def _answer(self, request: dict[str, Any]) -> None:
        """Answer a request of the sidecar's: with the `on_request` callback's result, or decline it
        (a client that did not advertise work-done progress never gets one)."""
        answer = self.on_request(request["method"], request.get("params")) if self.on_request else None
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if answer is None:
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": "not supported by this client"}
        else:
            reply["result"] = answer.result
        self._write(encode_frame(reply))

    def _fail_all(self, detail: str) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(SidecarClosed(detail))
