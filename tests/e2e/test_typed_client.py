"""The typed Python clients (`mimo_sidecar.client.Sidecar`, `AsyncSidecar`) against the real sidecar:
a whole writer-kit cycle in each flavour, typed from end to end, with the typed callbacks, the
errors, a cancellation and a timeout that cancels on the sidecar too."""

from __future__ import annotations

import asyncio
import copy
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from mimo_sidecar.client import (
    AsyncSidecar,
    CancelToken,
    Notifications,
    RequestCancelled,
    RpcError,
    RpcTimeout,
    Sidecar,
)
from mimo_sidecar.wire import rebuild as rb
from mimo_sidecar.wire import session as ss
from mimo_sidecar.wire.registry import REGISTRY

pytestmark = pytest.mark.e2e

SID = REGISTRY["session/open"].params_example["sessionId"]
CHECKPOINT = "# Session checkpoint\n\nTopic: the failing build\n\n## §1 Active intent\n- Fix the build.\n"


def example(method: str) -> Any:
    return copy.deepcopy(REGISTRY[method].params_example)


def wait_for(condition: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_sync_client_runs_the_writer_kit_cycle(tmp_path: Path) -> None:
    statuses: list[rb.StatusNotification] = []
    progress: list[rb.ProgressParams] = []
    logs: list[str] = []
    handlers = Notifications(
        rebuild_status=statuses.append,
        progress=progress.append,
        window_log_message=lambda m: logs.append(m.message),
    )
    with Sidecar.spawn(notifications=handlers, stderr=subprocess.DEVNULL) as sidecar:
        init = sidecar.initialize(
            memory_root=str(tmp_path), config={"checkpoint": {"push_caps": {"focus_task": 1}}}
        )
        assert init.server_info["name"] == "mimo-sidecar"
        assert logs and "focus_task" in logs[0]  # the typed callback, before the answer
        sidecar.initialized()
        opened = sidecar.session_open({**example("session/open"), "createCheckpoint": True})
        assert opened == ss.OpenResult(sessionId=SID, revision=1, checkpointCreated=True)
        assert sidecar.session_sync(example("session/sync")).revision == 2
        computed = sidecar.rebuild_compute(rb.ComputeParams.model_validate(example("rebuild/compute")))
        assert computed.trigger.should_rebuild and computed.watermark is not None
        before = sidecar.request_build({"sessionId": SID, "format": "anthropic"})

        prepared = sidecar.checkpoint_prepare({"sessionId": SID, "format": "anthropic"})
        assert prepared.started and prepared.watermark == computed.watermark.message_id
        assert prepared.messages[-1]["content"][-1]["text"] == prepared.instructions  # the last user turn
        answer: list[rb.InsertResult] = []
        insert = threading.Thread(
            target=lambda: answer.append(sidecar.rebuild_insert({"sessionId": SID, "reason": "auto"}))
        )
        insert.start()  # a cold start: it waits for this writer
        wait_for(lambda: statuses)
        committed = sidecar.checkpoint_commit(
            {"sessionId": SID, "watermark": prepared.watermark, "content": CHECKPOINT}
        )
        assert committed.created is False and committed.watermark == prepared.watermark
        insert.join(30)
        inserted = answer[0]
        assert inserted.outcome == "rebuilt", (inserted.wait, statuses)
        assert (
            inserted.outcome == "rebuilt" and inserted.wait is not None and inserted.wait.result == "success"
        )
        assert [s.state for s in statuses] == ["busy", "idle"]
        assert [p.value.kind for p in progress] == ["begin", "end"]  # advertised: a progress callback
        after = sidecar.request_build({"sessionId": SID, "format": "anthropic"})
        assert after.estimated_tokens < before.estimated_tokens
        info = sidecar.session_get({"sessionId": SID})
        assert info.watermark == prepared.watermark and info.writer.last_outcome == "success"

        # The model tools: their definitions in the format's shape, and a call the model made.
        listed = sidecar.tools_list({"sessionId": SID, "format": "anthropic", "prefix": "mimo_"})
        assert [t["name"] for t in listed.tools] == ["mimo_history", "mimo_memory", "mimo_task"]
        assert all("input_schema" in t for t in listed.tools)
        assert [t["name"] for t in sidecar.tools_list().tools] == ["history", "memory", "task"]
        called = sidecar.tools_call(
            {"sessionId": SID, "name": "mimo_history", "prefix": "mimo_",
             "arguments": {"operation": "result", "callID": "call_1"}}
        )
        assert not called.is_error and called.content[0].text.startswith("Tool call call_1: read")
        assert called.structured_content["callID"] == "call_1"
        mistaken = sidecar.tools_call({"sessionId": SID, "name": "history", "arguments": {"operation": "x"}})
        assert mistaken.is_error and "operation" in mistaken.content[0].text
        with pytest.raises(RpcError) as no_tool:
            sidecar.tools_call({"sessionId": SID, "name": "mimo_history", "arguments": {}})
        assert (no_tool.value.code, no_tool.value.name) == (1011, "UnknownTool")

        with pytest.raises(RpcError) as unknown:
            sidecar.session_get({"sessionId": "ses_nobody"})
        assert (unknown.value.code, unknown.value.name, unknown.value.field) == (
            1001,
            "SessionNotFound",
            "sessionId",
        )

        # A timeout cancels the request on the sidecar: the insert waiting for a writer ends, unchanged.
        assert sidecar.checkpoint_writer_started({"sessionId": SID}).state == "in-flight"
        with pytest.raises(RpcTimeout):
            sidecar.rebuild_insert({"sessionId": SID, "reason": "overflow"}, timeout=0.3)
        wait_for(lambda: len(statuses) == 4)  # the cancelled insert went idle
        assert sidecar.session_get({"sessionId": SID}).revision == info.revision
        finished = sidecar.checkpoint_writer_finished(
            ss.WriterFinishedParams(sessionId=SID, outcome="cancelled")
        )
        assert finished.writer.last_outcome == "cancelled"

        configured = sidecar.sidecar_configure(
            {"config": {"checkpoint": {"writer_wait_ms": {"without_watermark": 0}}}}
        )
        assert configured.warnings == [] and sidecar.timeouts.insert == 30 + 30
        sidecar.cancel_request({"id": 999})  # nothing to cancel: no answer, no harm
        sidecar.session_open({"sessionId": "ses_empty"})
        with pytest.raises(RpcError) as empty:
            sidecar.request_build({"sessionId": "ses_empty"})
        assert (empty.value.code, empty.value.name) == (1012, "EmptyRequest")
        assert sidecar.session_close({"sessionId": SID}).closed
        sidecar.shutdown()
        sidecar.exit()
        assert sidecar.connection.proc.wait(10) == 0


def test_asyncio_client_runs_requests_concurrently_and_cancels(tmp_path: Path) -> None:
    async def scenario() -> None:
        statuses: list[rb.StatusNotification] = []
        changed = asyncio.Event()

        async def on_status(status: rb.StatusNotification) -> None:  # a coroutine callback
            statuses.append(status)
            changed.set()

        async def until(condition: Any) -> None:
            while not condition():
                changed.clear()
                await asyncio.wait_for(changed.wait(), 10)

        sidecar = await AsyncSidecar.spawn(
            notifications=Notifications(rebuild_status=on_status), stderr=subprocess.DEVNULL
        )
        async with sidecar:
            await sidecar.initialize(memory_root=str(tmp_path))
            await sidecar.initialized()
            await sidecar.session_open({**example("session/open"), "createCheckpoint": True})
            await sidecar.session_sync(example("session/sync"))  # a step that a rebuild gains from
            computed = await sidecar.rebuild_compute(example("rebuild/compute"))
            prepared = await sidecar.checkpoint_prepare({"sessionId": SID})
            assert prepared.watermark == computed.watermark.message_id if computed.watermark else False
            inserting = asyncio.create_task(sidecar.rebuild_insert({"sessionId": SID, "reason": "auto"}))
            await until(lambda: statuses)
            await sidecar.checkpoint_commit({"sessionId": SID, "content": CHECKPOINT})
            inserted = await inserting
            assert inserted.outcome == "rebuilt" and inserted.message is not None
            built, info = await asyncio.gather(
                sidecar.request_build({"sessionId": SID, "format": "gemini"}),
                sidecar.session_get({"sessionId": SID}),
            )
            assert built.format == "gemini" and info.revision == inserted.revision
            listed, called = await asyncio.gather(
                sidecar.tools_list({"format": "gemini"}),
                sidecar.tools_call(
                    {"sessionId": SID, "name": "task", "arguments": {"operation": "list"}}
                ),
            )
            declarations = listed.tools[0]["functionDeclarations"]
            assert [d["name"] for d in declarations] == ["history", "memory", "task"]
            assert not called.is_error and called.content[0].type == "text"

            # Cancelling the awaiting task cancels the request on the sidecar: nothing is inserted.
            await sidecar.checkpoint_writer_started({"sessionId": SID})
            manual = asyncio.create_task(sidecar.rebuild_insert({"sessionId": SID, "reason": "manual"}))
            await until(lambda: len(statuses) >= 3)
            manual.cancel()
            with pytest.raises(asyncio.CancelledError):
                await manual
            await until(lambda: statuses[-1].state == "idle")
            assert (await sidecar.session_get({"sessionId": SID})).revision == inserted.revision
            with pytest.raises(RpcTimeout):
                await sidecar.rebuild_insert({"sessionId": SID, "reason": "overflow"}, timeout=0.3)
            await sidecar.checkpoint_writer_finished(
                {"sessionId": SID, "outcome": "failure", "retryable": True}
            )
            with pytest.raises(ValidationError, match="upsertParts.0.part.id"):  # checked before it is sent
                await sidecar.session_sync({"sessionId": SID, "upsertParts": [{"part": {"type": "text"}}]})
            with pytest.raises(RpcError) as unknown:  # and what only the sidecar can know
                await sidecar.session_sync({"sessionId": SID, "removeMessages": ["msg_nope"]})
            assert (unknown.value.code, unknown.value.field) == (1003, "removeMessages.0")
            assert (await sidecar.session_close({"sessionId": SID})).closed
        assert sidecar.proc.returncode == 0

    asyncio.run(scenario())


def test_sync_client_cancels_a_blocking_call_from_another_thread(tmp_path: Path) -> None:
    """A `CancelToken` fired by another thread cancels the request on the sidecar; the blocked call
    raises `RequestCancelled` once the sidecar says so, and the session is unchanged. A call the
    sidecar finished first keeps its result; a token fired before the call sends nothing; Ctrl-C in
    the waiting thread cancels the request too."""
    statuses: list[rb.StatusNotification] = []
    handlers = Notifications(rebuild_status=statuses.append)
    with Sidecar.spawn(notifications=handlers, stderr=subprocess.DEVNULL) as sidecar:
        sidecar.initialize(memory_root=str(tmp_path))
        sidecar.session_open({**example("session/open"), "createCheckpoint": True})
        sidecar.session_sync(example("session/sync"))
        revision = sidecar.session_get({"sessionId": SID}).revision
        sidecar.checkpoint_writer_started({"sessionId": SID})  # the insert waits for it (30 s)

        token = CancelToken()
        canceller = threading.Thread(target=lambda: (wait_for(lambda: statuses), token.cancel()))
        canceller.start()
        started = time.monotonic()
        with pytest.raises(RequestCancelled) as cancelled:
            sidecar.rebuild_insert({"sessionId": SID, "reason": "manual"}, cancel=token)
        canceller.join()
        assert cancelled.value.code == -32800 and isinstance(cancelled.value, RpcError)
        assert time.monotonic() - started < 20  # well before the 30 s writer wait ended
        wait_for(lambda: statuses[-1].state == "idle")
        assert sidecar.session_get({"sessionId": SID}).revision == revision  # nothing inserted

        # the token stays cancelled: the next call with it is refused before anything is sent
        with pytest.raises(RequestCancelled, match="before it was sent"):
            sidecar.session_get({"sessionId": SID}, cancel=token)
        token.reset()
        assert sidecar.session_get({"sessionId": SID}, cancel=token).revision == revision
        token.cancel()  # after the answer: nothing to cancel, no harm
        assert sidecar.session_get({"sessionId": SID}).revision == revision

        # Ctrl-C while the main thread waits: the request is cancelled on the sidecar as well
        busy = len(statuses)
        interrupter = threading.Thread(
            target=lambda: (wait_for(lambda: len(statuses) > busy), os.kill(os.getpid(), signal.SIGINT))
        )
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            interrupter.start()
            with pytest.raises(KeyboardInterrupt):
                sidecar.rebuild_insert({"sessionId": SID, "reason": "manual"})
            interrupter.join()
        finally:
            signal.signal(signal.SIGINT, previous)
        wait_for(lambda: statuses[-1].state == "idle")
        assert sidecar.session_get({"sessionId": SID}).revision == revision
        sidecar.checkpoint_writer_finished({"sessionId": SID, "outcome": "cancelled"})
