"""The typed client, asyncio flavour: the same methods as `client.sync.Sidecar`, as coroutines.

    async with await AsyncSidecar.spawn(notifications=Notifications(rebuild_status=show)) as sidecar:
        await sidecar.initialize(memory_root="/path/to/memory")
        inserting = asyncio.create_task(sidecar.rebuild_insert({"sessionId": "s1", "reason": "auto"}))
        ...                                   # the writer commits while the insert waits for it
        inserted = await inserting            # -> InsertResult

Requests run concurrently on one event loop; their answers are matched by id in a reader task.
Cancelling the task that awaits a request cancels the request on the sidecar (`$/cancelRequest`),
and so does a timeout (`RpcTimeout`). Notification callbacks may be plain functions or coroutine
functions (run as tasks of their own).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from ..transport.framing import frame
from ..transport.jsonrpc_codec import dumps, loads_whole
from ..wire import checkpoint as ck
from ..wire import lifecycle as lc
from ..wire import rebuild as rb
from ..wire import session as ss
from ..wire import tools as tl
from ..wire.config import SidecarConfig
from .errors import METHOD_NOT_FOUND, RpcTimeout, SidecarClosed, error_of
from .notifications import PROGRESS_CREATE, Notifications
from .sync import initialize_json
from .timeouts import Timeouts
from .wire_json import decoded, params_json

M = TypeVar("M", bound=BaseModel)
P = TypeVar("P", bound=BaseModel)
Params = Mapping[str, Any]
_LIMIT = 1 << 20  # the stream's line limit: header lines are short, bodies are read by length
# A reply longer than this is taken for a broken stream (the sidecar's largest are requests of
# 50 MB histories); --max-frame-bytes bounds what the sidecar reads, not what it writes.
MAX_REPLY_BYTES = 1 << 30


async def read_frame(stream: asyncio.StreamReader) -> bytes | None:
    """The next Content-Length framed body, or None at end of input (the framing of
    `transport.framing.FrameReader`, over an asyncio stream)."""
    length = -1
    saw_header = False
    while True:
        line = await stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            if not saw_header:
                continue
            if length < 0:  # a header block without Content-Length: skipped, as the sidecar does
                saw_header = False
                continue
            if length > MAX_REPLY_BYTES:
                return None
            try:
                return await stream.readexactly(length)
            except asyncio.IncompleteReadError:
                return None
        saw_header = True
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            length = int(value.strip())


class AsyncSidecar:
    """A sidecar process and its typed coroutine methods."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        notifications: Notifications | None = None,
        *,
        timeouts: Timeouts | None = None,
        validate_params: bool = True,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self.notifications = notifications or Notifications()
        self.timeouts = timeouts or Timeouts()
        self.validate_params = validate_params
        self._stdin = proc.stdin
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed: str | None = None
        self._reader = asyncio.create_task(self._read_loop(proc.stdout), name="sidecar-reader")

    @classmethod
    async def spawn(
        cls,
        *,
        notifications: Notifications | None = None,
        command: list[str] | None = None,
        args: list[str] | None = None,
        stderr: int | None = None,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        timeouts: Timeouts | None = None,
        validate_params: bool = True,
    ) -> AsyncSidecar:
        """Start `command` (default: this Python's `-m mimo_sidecar`) plus `args` and connect to it."""
        cmd = [*(command or [sys.executable, "-m", "mimo_sidecar"]), *(args or [])]
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env or dict(os.environ),
            cwd=cwd,
            limit=_LIMIT,
        )
        return cls(proc, notifications, timeouts=timeouts, validate_params=validate_params)

    @property
    def pid(self) -> int:
        return self.proc.pid

    # -- lifecycle ---------------------------------------------------------------------------------
    async def initialize(
        self,
        params: lc.InitializeParams | Params | None = None,
        *,
        memory_root: str | None = None,
        config: SidecarConfig | Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> lc.InitializeResult:
        """`initialize`: with `params`, or built from `memory_root` and `config` (see the sync client)."""
        sent = initialize_json(params, memory_root, config, self.notifications, self.validate_params)
        result = await self._call("initialize", sent, lc.InitializeResult, timeout)
        self.timeouts = self.timeouts.following(sent.get("initializationOptions", {}).get("config"))
        return result

    async def initialized(self) -> None:
        await self._notify("initialized", {})

    async def sidecar_configure(
        self, params: lc.ConfigureParams | Params, *, timeout: float | None = None
    ) -> lc.ConfigureResult:
        sent = params_json(lc.ConfigureParams, params, validate=self.validate_params)
        result = await self._call("sidecar/configure", sent, lc.ConfigureResult, timeout)
        self.timeouts = self.timeouts.following(sent.get("config"))
        return result

    async def shutdown(self, *, timeout: float | None = None) -> None:
        await self._send("shutdown", None, timeout)

    async def exit(self) -> None:
        await self._notify("exit")

    async def cancel_request(self, params: lc.CancelParams | Params) -> None:
        await self._notify("$/cancelRequest", params_json(lc.CancelParams, params))

    # -- sessions ----------------------------------------------------------------------------------
    async def session_open(
        self, params: ss.OpenParams | Params, *, timeout: float | None = None
    ) -> ss.OpenResult:
        return await self._typed("session/open", ss.OpenParams, params, ss.OpenResult, timeout)

    async def session_sync(
        self, params: ss.SyncParams | Params, *, timeout: float | None = None
    ) -> ss.SyncResult:
        return await self._typed("session/sync", ss.SyncParams, params, ss.SyncResult, timeout)

    async def session_get(
        self, params: ss.SessionRef | Params, *, timeout: float | None = None
    ) -> ss.SessionInfo:
        return await self._typed("session/get", ss.SessionRef, params, ss.SessionInfo, timeout)

    async def session_close(
        self, params: ss.SessionRef | Params, *, timeout: float | None = None
    ) -> ss.CloseResult:
        return await self._typed("session/close", ss.SessionRef, params, ss.CloseResult, timeout)

    # -- checkpoint writer ---------------------------------------------------------------------------
    async def checkpoint_writer_started(
        self, params: ss.WriterStartedParams | Params, *, timeout: float | None = None
    ) -> ss.WriterStartedResult:
        return await self._typed(
            "checkpoint/writerStarted", ss.WriterStartedParams, params, ss.WriterStartedResult, timeout
        )

    async def checkpoint_writer_finished(
        self, params: ss.WriterFinishedParams | Params, *, timeout: float | None = None
    ) -> ss.WriterFinishedResult:
        return await self._typed(
            "checkpoint/writerFinished", ss.WriterFinishedParams, params, ss.WriterFinishedResult, timeout
        )

    async def checkpoint_prepare(
        self, params: ck.PrepareParams | Params, *, timeout: float | None = None
    ) -> ck.PrepareResult:
        return await self._typed("checkpoint/prepare", ck.PrepareParams, params, ck.PrepareResult, timeout)

    async def checkpoint_commit(
        self, params: ck.CommitParams | Params, *, timeout: float | None = None
    ) -> ck.CommitResult:
        return await self._typed("checkpoint/commit", ck.CommitParams, params, ck.CommitResult, timeout)

    # -- rebuild -------------------------------------------------------------------------------------
    async def rebuild_compute(
        self, params: rb.ComputeParams | Params, *, timeout: float | None = None
    ) -> rb.ComputeResult:
        return await self._typed("rebuild/compute", rb.ComputeParams, params, rb.ComputeResult, timeout)

    async def rebuild_insert(
        self, params: rb.InsertParams | Params, *, timeout: float | None = None
    ) -> rb.InsertResult:
        """`rebuild/insert`; its default timeout covers the longest writer wait the config allows."""
        return await self._typed("rebuild/insert", rb.InsertParams, params, rb.InsertResult, timeout)

    async def request_build(
        self, params: rb.BuildParams | Params, *, timeout: float | None = None
    ) -> rb.BuildResult:
        return await self._typed("request/build", rb.BuildParams, params, rb.BuildResult, timeout)

    # -- model tools ---------------------------------------------------------------------------------
    async def tools_list(
        self, params: tl.ToolsListParams | Params | None = None, *, timeout: float | None = None
    ) -> tl.ToolsListResult:
        """`tools/list` (see the sync client)."""
        return await self._typed("tools/list", tl.ToolsListParams, params or {}, tl.ToolsListResult, timeout)

    async def tools_call(
        self, params: tl.ToolsCallParams | Params, *, timeout: float | None = None
    ) -> tl.ToolsCallResult:
        """`tools/call`: one call the model made to a sidecar tool."""
        return await self._typed("tools/call", tl.ToolsCallParams, params, tl.ToolsCallResult, timeout)

    # -- the process ---------------------------------------------------------------------------------
    async def close(self, timeout: float | None = None) -> int:
        """`shutdown`, `exit`, and the process's exit code (killed if it does not end in time)."""
        wait = timeout if timeout is not None else self.timeouts.shutdown
        with contextlib.suppress(Exception):
            await self.shutdown(timeout=wait)
            await self.exit()
        try:
            code = await asyncio.wait_for(self.proc.wait(), wait)
        except TimeoutError:
            self.proc.kill()
            code = await self.proc.wait()
        self._stdin.close()
        with contextlib.suppress(Exception):
            await self._reader
        return code

    async def __aenter__(self) -> AsyncSidecar:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.proc.returncode is None:
            await self.close()

    # -- plumbing ------------------------------------------------------------------------------------
    async def _typed(
        self, method: str, model: type[P], params: P | Params, result: type[M], timeout: float | None
    ) -> M:
        sent = params_json(model, params, validate=self.validate_params)
        return await self._call(method, sent, result, timeout)

    async def _call(self, method: str, params: Any, result: type[M], timeout: float | None) -> M:
        return decoded(result, await self._send(method, params, timeout))

    async def _send(self, method: str, params: Any, timeout: float | None) -> Any:
        if self._closed is not None:
            raise SidecarClosed(self._closed)
        msg_id = next(self._ids)
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = answer
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        limit = timeout if timeout is not None else self.timeouts.of(method)
        try:
            await self._write(message)
            return await asyncio.wait_for(answer, limit)
        except TimeoutError:
            self._cancel(msg_id)
            raise RpcTimeout(f"no response to {method} within {limit} s") from None
        except asyncio.CancelledError:
            self._cancel(msg_id)
            raise
        finally:
            self._pending.pop(msg_id, None)

    def _cancel(self, msg_id: int) -> None:
        """`$/cancelRequest` for a request nobody waits for any more (written without waiting)."""
        if self._closed is None and not self._stdin.is_closing():
            self._stdin.write(
                frame(dumps({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}}))
            )

    async def _notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

    async def _write(self, message: dict[str, Any]) -> None:
        self._stdin.write(frame(dumps(message)))
        await self._stdin.drain()

    async def _read_loop(self, stream: asyncio.StreamReader) -> None:
        detail = "end of stream"
        try:
            while (body := await read_frame(stream)) is not None:
                self._dispatch(loads_whole(body))
        except (OSError, ValueError) as exc:
            detail = str(exc)
        self._closed = detail
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(SidecarClosed(detail))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message:
            if "id" in message:
                self._answer(message)
            else:
                self._run(self.notifications.deliver(message["method"], message.get("params")))
            return
        msg_id = message.get("id")
        answer = self._pending.get(msg_id) if isinstance(msg_id, int) else None
        if answer is None or answer.done():
            return
        if message.get("error") is not None:
            answer.set_exception(error_of(message))
        else:
            answer.set_result(message.get("result"))

    def _answer(self, request: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if request["method"] == PROGRESS_CREATE:
            self._run(self.notifications.deliver(PROGRESS_CREATE, request.get("params")))
            reply["result"] = None
        else:
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": "not supported by this client"}
        self._stdin.write(frame(dumps(reply)))

    def _run(self, outcome: Any) -> None:
        """A coroutine callback runs as a task of its own (kept until done)."""
        if asyncio.iscoroutine(outcome):
            task = asyncio.ensure_future(outcome)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
