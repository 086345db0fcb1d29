"""Hidden methods for the end-to-end tests, registered only when MIMO_SIDECAR_TEST_HOOKS=1.

- `test/print`: prints to stdout, writes to fd 1 and runs a child that writes to its stdout; the
  stdout guard must route all of it to stderr.
- `test/sleep` `{ms, thread?}`: in-flight work that `shutdown` must wait for; with `thread`, the
  sleep blocks a worker thread (asyncio.to_thread), which must not delay the process's exit.
- `test/fail`: raises an unexpected exception (-32603 without a traceback).
- `test/pending`: what the protocol keeps for answers to come (futures of handlers and of requests
  sent to the client, this one's aside); nothing may stay once they are settled.
- `test/progressBound` `{seconds}`: how long an unanswered `window/workDoneProgress/create` is kept.
- `test/retained`: what the process still holds per session or per request (open sessions,
  progress tokens, pending requests to the client, in-flight tasks) and how many session objects
  are alive, after a garbage collection: after every session is closed, all of it must be zero.
"""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from ...core.session.message import Message
from ...core.session.session import Session
from ...service.insert_flow import InsertFlow
from ...service.sessions import SessionSlot
from ...wire.common import Params
from ..dispatch import rpc_method
from ..status import StatusReporter

if TYPE_CHECKING:
    from ..server import SidecarServer

ENV_FLAG = "MIMO_SIDECAR_TEST_HOOKS"


class _Empty(Params):
    pass


class _Bound(Params):
    seconds: Annotated[float, Field(gt=0, le=60)]


class _Sleep(Params):
    ms: Annotated[int, Field(ge=0, le=60_000)]
    thread: bool = False


def register(server: SidecarServer) -> None:
    if os.environ.get(ENV_FLAG) != "1":
        return

    @rpc_method(server, "test/print", _Empty)
    async def test_print(ls: SidecarServer, p: _Empty) -> dict[str, bool]:
        print("stray print from a handler")  # noqa: T201
        sys.stdout.flush()
        os.write(1, b"stray write to fd 1\n")
        child = [sys.executable, "-c", "import sys; sys.stdout.write('stray output of a child process\\n')"]
        await asyncio.to_thread(subprocess.run, child, stdin=subprocess.DEVNULL, check=True)
        return {"printed": True}

    @rpc_method(server, "test/sleep", _Sleep)
    async def test_sleep(ls: SidecarServer, p: _Sleep) -> dict[str, int]:
        if p.thread:
            await asyncio.to_thread(time.sleep, p.ms / 1000)
        else:
            await asyncio.sleep(p.ms / 1000)
        return {"slept": p.ms}

    @rpc_method(server, "test/fail", _Empty)
    async def test_fail(ls: SidecarServer, p: _Empty) -> None:
        raise RuntimeError("deliberate failure from test/fail")

    @rpc_method(server, "test/pending", _Empty)
    async def test_pending(ls: SidecarServer, p: _Empty) -> dict[str, int]:
        protocol = ls.protocol
        this: object = asyncio.current_task()  # a Task is a Future, which the typing does not see
        futures = [f for f in protocol._request_futures.values() if f is not this]
        return {"futures": len(futures), "resultTypes": len(protocol._result_types)}

    @rpc_method(server, "test/progressBound", _Bound)
    async def test_progress_bound(ls: SidecarServer, p: _Bound) -> None:
        ls.progress_answer_seconds = p.seconds

    @rpc_method(server, "test/retained", _Empty)
    async def test_retained(ls: SidecarServer, p: _Empty) -> dict[str, int]:
        gc.collect()
        alive = {kind.__name__: 0 for kind in (Session, SessionSlot, Message, InsertFlow, StatusReporter)}
        for obj in gc.get_objects():
            name = type(obj).__name__
            if name in alive and isinstance(obj, (Session, SessionSlot, Message, InsertFlow, StatusReporter)):
                alive[name] += 1
        protocol = ls.protocol
        return {
            "sessions": len(ls.service.sessions),
            "progressTokens": len(ls.work_done_progress.tokens),
            # pygls's futures of requests and notifications (this request's own excluded)
            "pendingFutures": len(protocol._request_futures) - 1,
            "resultTypes": len(protocol._result_types),
            "inflight": len(ls.inflight) - 1,  # this request
            **{f"alive{name}": count for name, count in alive.items()},
        }
