"""The typed client, blocking flavour: one method per protocol method, wire models in and out.

    with Sidecar.spawn(notifications=Notifications(rebuild_status=show)) as sidecar:
        sidecar.initialize(memory_root="/path/to/memory")
        opened = sidecar.session_open({"sessionId": "s1", "messages": [...]})   # -> OpenResult
        computed = sidecar.rebuild_compute(ComputeParams(sessionId="s1"))        # -> ComputeResult

Each method blocks until its answer and is safe to call from several threads at once (a writer
thread commits while the main thread waits in `rebuild_insert`). An error answer raises
`RpcError`; no answer in time raises `RpcTimeout`, after the request was cancelled on the sidecar
(`$/cancelRequest`), so nothing keeps running for an answer nobody reads; so is one whose waiting
thread is interrupted (Ctrl-C). Another thread stops a call through the `CancelToken` passed as its
`cancel=` (`client.cancellation`). docs/client.md has one example per method.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any, TypeVar

from pydantic import BaseModel

from ..wire import checkpoint as ck
from ..wire import lifecycle as lc
from ..wire import rebuild as rb
from ..wire import session as ss
from ..wire import tools as tl
from ..wire.config import SidecarConfig
from .cancellation import REQUEST_CANCELLED, CancelToken, RequestCancelled, raised_for
from .connection import Answer, SidecarClient
from .errors import RpcError
from .notifications import PROGRESS_CREATE, Notifications
from .timeouts import Timeouts
from .wire_json import decoded, params_json

M = TypeVar("M", bound=BaseModel)
P = TypeVar("P", bound=BaseModel)
Params = Mapping[str, Any]


def initialize_params(
    memory_root: str, config: SidecarConfig | Mapping[str, Any] | None, *, progress: bool
) -> dict[str, Any]:
    """`initialize` params for this process: the memory root, the config, and the one capability the
    sidecar reads."""
    options: dict[str, Any] = {"memoryRoot": os.path.abspath(memory_root)}
    if config is not None:
        options["config"] = config if isinstance(config, Mapping) else config.model_dump(mode="json")
    capabilities = {"window": {"workDoneProgress": True}} if progress else {}
    return {"processId": os.getpid(), "capabilities": capabilities, "initializationOptions": options}


def initialize_json(
    params: lc.InitializeParams | Params | None,
    memory_root: str | None,
    config: SidecarConfig | Mapping[str, Any] | None,
    notifications: Notifications,
    validate: bool,
) -> Any:
    """What `initialize` sends, in both flavours: `params`, or params built from `memory_root`."""
    if params is None:
        if memory_root is None:
            raise TypeError("initialize needs params or memory_root")
        params = initialize_params(memory_root, config, progress=notifications.wants_progress)
    return params_json(lc.InitializeParams, params, validate=validate)


class Sidecar:
    """A sidecar process and its typed methods."""

    def __init__(
        self,
        connection: SidecarClient,
        notifications: Notifications | None = None,
        *,
        timeouts: Timeouts | None = None,
        validate_params: bool = True,
    ) -> None:
        self.connection = connection
        self.notifications = notifications or Notifications()
        self.timeouts = timeouts or Timeouts()
        self.validate_params = validate_params
        connection.on_notification = self._notified
        connection.on_request = self._asked

    @classmethod
    def spawn(
        cls,
        *,
        notifications: Notifications | None = None,
        command: list[str] | None = None,
        args: list[str] | None = None,
        stderr: IO[Any] | int | None = None,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        timeouts: Timeouts | None = None,
        validate_params: bool = True,
    ) -> Sidecar:
        """Start `command` (default: this Python's `-m mimo_sidecar`) plus `args` and connect to it."""
        connection = SidecarClient.spawn(command=command, args=args, stderr=stderr, env=env, cwd=cwd)
        return cls(connection, notifications, timeouts=timeouts, validate_params=validate_params)

    @property
    def pid(self) -> int:
        return self.connection.pid

    # -- lifecycle ---------------------------------------------------------------------------------
    def initialize(
        self,
        params: lc.InitializeParams | Params | None = None,
        *,
        memory_root: str | None = None,
        config: SidecarConfig | Mapping[str, Any] | None = None,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> lc.InitializeResult:
        """`initialize`: with `params`, or built from `memory_root` and `config` (the process ID is
        this one's; work-done progress is advertised when a `progress` callback is set)."""
        sent = initialize_json(params, memory_root, config, self.notifications, self.validate_params)
        result = self._call("initialize", sent, lc.InitializeResult, timeout, cancel)
        self.timeouts = self.timeouts.following(sent.get("initializationOptions", {}).get("config"))
        return result

    def initialized(self) -> None:
        """`initialized`: optional after `initialize`; the sidecar ignores it."""
        self.connection.notify("initialized", {})

    def sidecar_configure(
        self,
        params: lc.ConfigureParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> lc.ConfigureResult:
        sent = params_json(lc.ConfigureParams, params, validate=self.validate_params)
        result = self._call("sidecar/configure", sent, lc.ConfigureResult, timeout, cancel)
        self.timeouts = self.timeouts.following(sent.get("config"))
        return result

    def shutdown(self, *, timeout: float | None = None, cancel: CancelToken | None = None) -> None:
        """`shutdown`: waits for the requests in flight (at most 10 s); then only `exit` is accepted."""
        self._send("shutdown", None, timeout, cancel)

    def exit(self) -> None:
        """`exit`: the process ends (code 0 after `shutdown`)."""
        self.connection.notify("exit")

    def cancel_request(self, params: lc.CancelParams | Params) -> None:
        """`$/cancelRequest`. A request that times out is cancelled this way by the client itself."""
        self.connection.notify("$/cancelRequest", params_json(lc.CancelParams, params))

    # -- sessions ----------------------------------------------------------------------------------
    def session_open(
        self,
        params: ss.OpenParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ss.OpenResult:
        return self._typed("session/open", ss.OpenParams, params, ss.OpenResult, timeout, cancel)

    def session_sync(
        self,
        params: ss.SyncParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ss.SyncResult:
        return self._typed("session/sync", ss.SyncParams, params, ss.SyncResult, timeout, cancel)

    def session_get(
        self,
        params: ss.SessionRef | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ss.SessionInfo:
        return self._typed("session/get", ss.SessionRef, params, ss.SessionInfo, timeout, cancel)

    def session_close(
        self,
        params: ss.SessionRef | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ss.CloseResult:
        return self._typed("session/close", ss.SessionRef, params, ss.CloseResult, timeout, cancel)

    # -- checkpoint writer ---------------------------------------------------------------------------
    def checkpoint_writer_started(
        self,
        params: ss.WriterStartedParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ss.WriterStartedResult:
        return self._typed(
            "checkpoint/writerStarted",
            ss.WriterStartedParams,
            params,
            ss.WriterStartedResult,
            timeout,
            cancel,
        )

    def checkpoint_writer_finished(
        self,
        params: ss.WriterFinishedParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ss.WriterFinishedResult:
        return self._typed(
            "checkpoint/writerFinished",
            ss.WriterFinishedParams,
            params,
            ss.WriterFinishedResult,
            timeout,
            cancel,
        )

    def checkpoint_prepare(
        self,
        params: ck.PrepareParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ck.PrepareResult:
        return self._typed("checkpoint/prepare", ck.PrepareParams, params, ck.PrepareResult, timeout, cancel)

    def checkpoint_commit(
        self,
        params: ck.CommitParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ck.CommitResult:
        return self._typed("checkpoint/commit", ck.CommitParams, params, ck.CommitResult, timeout, cancel)

    # -- rebuild -------------------------------------------------------------------------------------
    def rebuild_compute(
        self,
        params: rb.ComputeParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> rb.ComputeResult:
        return self._typed("rebuild/compute", rb.ComputeParams, params, rb.ComputeResult, timeout, cancel)

    def rebuild_insert(
        self,
        params: rb.InsertParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> rb.InsertResult:
        """`rebuild/insert`; its default timeout covers the longest writer wait the config allows."""
        return self._typed("rebuild/insert", rb.InsertParams, params, rb.InsertResult, timeout, cancel)

    def request_build(
        self,
        params: rb.BuildParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> rb.BuildResult:
        return self._typed("request/build", rb.BuildParams, params, rb.BuildResult, timeout, cancel)

    # -- model tools ---------------------------------------------------------------------------------
    def tools_list(
        self,
        params: tl.ToolsListParams | Params | None = None,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> tl.ToolsListResult:
        """`tools/list`: the sidecar's model tools in a format's tool shape (no params: `ai-sdk`, and
        no prefix)."""
        return self._typed(
            "tools/list", tl.ToolsListParams, params or {}, tl.ToolsListResult, timeout, cancel
        )

    def tools_call(
        self,
        params: tl.ToolsCallParams | Params,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> tl.ToolsCallResult:
        """`tools/call`: one call the model made to a sidecar tool; hand `content[0].text` back to it."""
        return self._typed("tools/call", tl.ToolsCallParams, params, tl.ToolsCallResult, timeout, cancel)

    # -- the process ---------------------------------------------------------------------------------
    def close(self, timeout: float | None = None) -> int:
        """`shutdown`, `exit`, and the process's exit code (killed if it does not end in time)."""
        return self.connection.shutdown(timeout if timeout is not None else self.timeouts.shutdown)

    def __enter__(self) -> Sidecar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.connection.proc.poll() is None:
            self.close()

    # -- plumbing ------------------------------------------------------------------------------------
    def _typed(
        self,
        method: str,
        model: type[P],
        params: P | Params,
        result: type[M],
        timeout: float | None,
        cancel: CancelToken | None,
    ) -> M:
        sent = params_json(model, params, validate=self.validate_params)
        return self._call(method, sent, result, timeout, cancel)

    def _call(
        self, method: str, params: Any, result: type[M], timeout: float | None, cancel: CancelToken | None
    ) -> M:
        return decoded(result, self._send(method, params, timeout, cancel))

    def _send(self, method: str, params: Any, timeout: float | None, cancel: CancelToken | None) -> Any:
        """Send one request and wait for its answer. A request nobody will wait for any more (its
        timeout passed, the waiting thread was interrupted) is cancelled on the sidecar; one whose
        `cancel` token fires is cancelled too, and the call waits for the sidecar to say how it ended."""
        if cancel is not None and cancel.cancelled:
            raise RequestCancelled(REQUEST_CANCELLED, f"{method} was cancelled before it was sent")
        prepared = self.connection.prepare(method, params)
        pending = self.connection.send_async(prepared)

        def send_cancel() -> None:
            self.connection.notify("$/cancelRequest", {"id": prepared.id})

        if cancel is not None:
            cancel.bind(send_cancel)
        try:
            wait = timeout if timeout is not None else self.timeouts.of(method)
            return self.connection.wait(prepared, pending, wait).result
        except RpcError as error:
            raise raised_for(error) from None
        except BaseException:  # RpcTimeout, or KeyboardInterrupt in the waiting thread
            send_cancel()  # its answer, -32800 or late, still settles and drops the pending entry
            raise
        finally:
            if cancel is not None:
                cancel.unbind()

    def _notified(self, method: str, params: Any) -> None:
        self.notifications.deliver(method, params)

    def _asked(self, method: str, params: Any) -> Answer | None:
        if method != PROGRESS_CREATE:
            return None
        self.notifications.deliver(method, params)
        return Answer(None)
