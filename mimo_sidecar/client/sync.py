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
from typing import IO, Any, Protocol, TypeVar, cast

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
from .methods import python_name
from .notifications import PROGRESS_CREATE, Notifications
from .timeouts import Timeouts
from .wire_json import decoded, params_json

M = TypeVar("M", bound=BaseModel)
P = TypeVar("P", bound=BaseModel)
Params = Mapping[str, Any]


P_in = TypeVar("P_in", bound=BaseModel, contravariant=True)
M_out = TypeVar("M_out", bound=BaseModel, covariant=True)


class Request(Protocol[P_in, M_out]):
    """A typed method of `Sidecar` for one protocol request: its params model (or the JSON object
    protocol.md shows) in, its result model out."""

    def __call__(
        self, params: P_in | Params, *, timeout: float | None = None, cancel: CancelToken | None = None
    ) -> M_out: ...


# What a method's help says beyond its name (the others: see protocol.md).
_DOCS = {
    "rebuild/insert": "`rebuild/insert`; its default timeout covers the longest writer wait the "
    "config allows.",
    "tools/call": "`tools/call`: one call the model made to a sidecar tool; hand `content[0].text` "
    "back to it.",
}


def _request(method: str, model: type[P], result: type[M]) -> Request[P, M]:
    """The method of `Sidecar` that sends `method` with params checked against `model` and returns
    its `result`: each such method is this one line of its table, not a hand-copied body."""

    def call(
        self: Sidecar, params: P | Params, *, timeout: float | None = None, cancel: CancelToken | None = None
    ) -> M:
        return self._typed(method, model, params, result, timeout, cancel)

    call.__name__ = call.__qualname__ = python_name(method)
    call.__doc__ = _DOCS.get(method, f"`{method}` (protocol.md).")
    # Real types, not the strings of this module's annotations: `typing.get_type_hints` reads them.
    call.__annotations__ = {
        "params": model | Params,
        "timeout": float | None,
        "cancel": CancelToken | None,
        "return": result,
    }
    return cast(Request[P, M], call)


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

    # -- the requests that only send their params and read their result (`_request`) -------------
    session_open = _request("session/open", ss.OpenParams, ss.OpenResult)
    session_sync = _request("session/sync", ss.SyncParams, ss.SyncResult)
    session_get = _request("session/get", ss.SessionRef, ss.SessionInfo)
    session_close = _request("session/close", ss.SessionRef, ss.CloseResult)
    checkpoint_writer_started = _request(
        "checkpoint/writerStarted", ss.WriterStartedParams, ss.WriterStartedResult
    )
    checkpoint_writer_finished = _request(
        "checkpoint/writerFinished", ss.WriterFinishedParams, ss.WriterFinishedResult
    )
    checkpoint_prepare = _request("checkpoint/prepare", ck.PrepareParams, ck.PrepareResult)
    checkpoint_commit = _request("checkpoint/commit", ck.CommitParams, ck.CommitResult)
    rebuild_compute = _request("rebuild/compute", rb.ComputeParams, rb.ComputeResult)
    rebuild_insert = _request("rebuild/insert", rb.InsertParams, rb.InsertResult)
    request_build = _request("request/build", rb.BuildParams, rb.BuildResult)
    tools_call = _request("tools/call", tl.ToolsCallParams, tl.ToolsCallResult)

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
