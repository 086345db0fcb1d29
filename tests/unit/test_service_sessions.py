"""The service's session table and writer registry (behavior.md#session-state, #writer-registry,
#writer-wait), and what closing a session releases."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
import weakref
from pathlib import Path

import pytest

from mimo_sidecar.core.errors import DomainError, ErrorCode
from mimo_sidecar.core.session.session import Session, SyncBatch
from mimo_sidecar.service import InsertRequest, OpenRequest, SidecarService
from mimo_sidecar.service.sessions import SessionSlot
from tests.unit.test_session_state import mid, msg, snapshot


def session_of(svc: SidecarService, sid: str) -> Session:
    return svc.sessions.require(sid).session


# -- sessions ------------------------------------------------------------------------------------


def test_open_rejects_duplicates_and_invalid_histories_and_names_fields() -> None:
    svc = SidecarService()
    svc.open(OpenRequest("s1", messages=[msg(mid(1))]))
    with pytest.raises(DomainError) as exc:
        svc.open(OpenRequest("s1"))
    assert exc.value.code is ErrorCode.SESSION_EXISTS
    with pytest.raises(DomainError) as exc:
        svc.open(OpenRequest("s2", messages=[msg(mid(1)), msg(mid(1))]))
    assert exc.value.field == ("messages", 1, "info", "id")
    assert exc.value.message.startswith("messages.1.info.id: ")
    assert "s2" not in svc.sessions


def test_unknown_parent_names_the_parent_field() -> None:
    svc = SidecarService()
    with pytest.raises(DomainError) as exc:
        svc.open(OpenRequest("child", parent_id="nobody"))
    assert (exc.value.code, exc.value.path, exc.value.data) == (
        ErrorCode.SESSION_NOT_FOUND,
        "parent.sessionId",
        {"sessionId": "nobody"},
    )


def test_sync_with_stale_base_revision_changes_nothing() -> None:
    svc = SidecarService()
    svc.open(OpenRequest("s1", messages=[msg(mid(1))]))
    s = session_of(svc, "s1")
    before = snapshot(s)
    with pytest.raises(DomainError) as exc:
        svc.sync("s1", SyncBatch(remove_messages=[mid(1)]), base_revision=0)
    assert exc.value.code is ErrorCode.REVISION_CONFLICT
    assert exc.value.data == {"expected": 0, "actual": 1}
    assert snapshot(s) == before
    assert svc.sync("s1", SyncBatch(remove_messages=[mid(1)]), base_revision=1) == 2


def test_close_forgets_the_session() -> None:
    svc = SidecarService()
    svc.open(OpenRequest("s1"))
    svc.close("s1")
    with pytest.raises(DomainError) as exc:
        svc.describe("s1")
    assert exc.value.code is ErrorCode.SESSION_NOT_FOUND


# -- writer registry -----------------------------------------------------------------------------


def writer_state() -> tuple[SidecarService, Session]:
    svc = SidecarService()
    svc.open(OpenRequest("s1", messages=[msg(mid(n), created=n) for n in range(1, 6)], watermark=mid(1)))
    return svc, session_of(svc, "s1")


def test_watermark_is_stored_only_on_success() -> None:
    svc, s = writer_state()
    assert svc.writer_started("s1", mid(3)).state == "in-flight"
    assert svc.writer_finished("s1", "failure", retryable=True).watermark == mid(1)
    assert (s.writer.in_flight, s.writer.settlements, s.writer.last_outcome) == (False, 1, "failure")
    svc.writer_started("s1", mid(3))
    assert svc.writer_finished("s1", "cancelled").watermark == mid(1)
    svc.writer_started("s1", mid(3))
    assert svc.writer_finished("s1", "success").watermark == mid(3)
    assert s.watermark == mid(3) and s.writer.settlements == 3


def test_one_writer_in_flight_newer_queued_request_replaces_older_and_is_promoted() -> None:
    svc, s = writer_state()
    svc.writer_started("s1", mid(2))
    assert svc.writer_started("s1", mid(3)).state == "queued"
    assert svc.writer_started("s1", mid(4)).state == "queued"
    done = svc.writer_finished("s1", "success")
    assert (done.watermark, done.promoted) == (mid(2), mid(4))
    assert (s.writer.in_flight, s.writer.end_message_id, s.writer.queued_end_message_id) == (
        True,
        mid(4),
        None,
    )
    done = svc.writer_finished("s1", "success")
    assert (done.watermark, done.promoted, s.writer.in_flight) == (mid(4), None, False)


def test_writer_errors() -> None:
    svc, _ = writer_state()
    with pytest.raises(DomainError) as exc:
        svc.writer_finished("s1", "success")
    assert exc.value.code is ErrorCode.WRITER_STATE
    with pytest.raises(DomainError) as exc:
        svc.writer_started("s1", "msg_unknown")
    assert (exc.value.code, exc.value.path) == (ErrorCode.MESSAGE_NOT_FOUND, "watermark")
    svc.open(OpenRequest("empty"))
    with pytest.raises(DomainError) as exc:
        # an empty view has no watermark to compute (behavior.md#watermark-compute)
        svc.writer_started("empty")
    assert exc.value.code is ErrorCode.WATERMARK_UNAVAILABLE


async def test_writer_wait_bound_follows_the_stored_watermark() -> None:
    svc, s = writer_state()

    async def bound_of_one_wait() -> int:
        svc.writer_started("s1", mid(3))
        waiter = asyncio.ensure_future(svc.wait_for_writer("s1"))
        await asyncio.sleep(0)
        svc.writer_finished("s1", "failure")
        return (await asyncio.wait_for(waiter, 1)).bound_ms

    assert await bound_of_one_wait() == 30_000 == svc.config.writer_wait_with_watermark_ms
    s.watermark = None
    assert await bound_of_one_wait() == 300_000 == svc.config.writer_wait_without_watermark_ms


async def test_wait_for_writer_results() -> None:
    svc, s = writer_state()
    assert (await svc.wait_for_writer("s1", 1000)).result == "no-writer"

    svc.writer_started("s1", mid(3))
    waiter = asyncio.ensure_future(svc.wait_for_writer("s1", 5000))
    await asyncio.sleep(0.01)
    assert not waiter.done()
    svc.writer_finished("s1", "failure", retryable=True)
    got = await asyncio.wait_for(waiter, 1)
    assert (got.result, got.outcome, got.retryable) == ("failure", "failure", True)

    svc.writer_started("s1", mid(3))
    svc.writer_started("s1", mid(4))  # queued
    waiter = asyncio.ensure_future(svc.wait_for_writer("s1", 5000))
    await asyncio.sleep(0)
    svc.writer_finished("s1", "success")  # the awaited writer
    svc.writer_finished("s1", "failure")  # the promoted one, settled before the waiter runs
    got = await asyncio.wait_for(waiter, 1)
    assert (got.result, got.outcome, got.retryable) == ("success", "success", None)

    svc.writer_started("s1", mid(5))
    got = await svc.wait_for_writer("s1", 30)
    assert got.result == "timeout" and got.waited_ms >= 25
    assert s.writer.in_flight  # a timeout is not a failure


async def test_closing_a_session_fails_its_writer_waiters() -> None:
    svc, _ = writer_state()
    svc.writer_started("s1", mid(2))
    waiter = asyncio.ensure_future(svc.wait_for_writer("s1", 5000))
    await asyncio.sleep(0)
    svc.close("s1")
    with pytest.raises(DomainError) as exc:
        await asyncio.wait_for(waiter, 1)
    assert exc.value.code is ErrorCode.SESSION_NOT_FOUND


# -- closing releases everything kept for a session ----------------------------------------------


async def _cycle(svc: SidecarService, sid: str, slots: weakref.WeakSet[SessionSlot]) -> None:
    """Open, take the insert lock (an insert that stops at a gate), show a notice, settle a writer,
    close: every kind of per-session state the service keeps."""
    svc.open(OpenRequest(sid, messages=[msg(mid(1)), msg(mid(2), role="assistant", created=2000)]))
    slots.add(svc.sessions.require(sid))
    svc.writer_started(sid, mid(1))
    svc.writer_finished(sid, "success")
    inserted = await svc.insert(InsertRequest(session_id=sid, reason="auto", agent_id="main"))
    assert inserted.outcome == "checkpoint-off" and inserted.notice is not None
    svc.close(sid)


# Cycles traced by tracemalloc (which makes each cycle ~3x slower) and the growth they may leave:
# 16 KiB over 2,500 cycles is the bound 64 KiB over 10,000 was, 6.5 bytes a cycle, less than one
# pointer kept per session (a list growing by one entry a cycle fails it). What is really left is
# allocator noise of ~60 bytes, whatever the count. The benchmarks' RSS row (session_cycles.py)
# runs 10,000 cycles of a real sidecar.
CYCLES = 2_500
RETAINED_LIMIT = 16 * 1024


async def test_closing_releases_lock_and_state_memory_flat_over_2500_cycles(tmp_path) -> None:
    from mimo_sidecar.core.config import RebuildConfig

    svc = SidecarService(memory_root=tmp_path, config=RebuildConfig(checkpoint_disabled=True))
    slots: weakref.WeakSet[SessionSlot] = weakref.WeakSet()  # every slot opened, while it lives
    for i in range(500):  # warm-up: caches, interned strings, the loop's own structures
        await _cycle(svc, f"warm-{i}", slots)
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for i in range(CYCLES):
            await _cycle(svc, f"s-{i}", slots)
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(svc.sessions) == 0
    assert len(slots) == 0  # no slot (lock, notices, settlements) survives its session
    # Flat: what is left after the cycles is allocator noise, while each session held ~10 KB (two
    # messages, a lock, a notice, a settlement) when open.
    assert after - before < RETAINED_LIMIT, f"{after - before} bytes kept after {CYCLES} open/close cycles"


# -- what the open prepares for the first request -------------------------------------------------


@pytest.mark.parametrize("fmt", ["ai-sdk", "anthropic", "openai-chat", "openai-responses", "gemini"])
def test_the_first_build_after_open_takes_the_turns_the_open_normalised(fmt: str, tmp_path: Path) -> None:
    """`session/open` normalises the main view (engine.normalise_at_open): the first build, in any
    format, normalises only what follows the open's latest cut, and is the build a session whose
    open prepared nothing makes."""
    from benchmarks.generator import generate_session
    from mimo_sidecar.core.formats import BuildOutput
    from mimo_sidecar.core.request.build_memo import BuildMemo
    from mimo_sidecar.core.words import MAIN_AGENT

    data = generate_session(60, 20261207)
    svc = SidecarService(memory_root=str(tmp_path))
    for sid in ("opened", "plain"):
        svc.open(OpenRequest(sid, messages=data["messages"]))
    memo = session_of(svc, "opened").kept(("build", MAIN_AGENT), BuildMemo)
    assert memo.ahead is not None
    session_of(svc, "plain").kept(("build", MAIN_AGENT), BuildMemo).ahead = None  # nothing prepared
    opened = svc.build("opened", output=BuildOutput(fmt)).result.request
    plain = svc.build("plain", output=BuildOutput(fmt)).result.request
    assert memo.headed > len(data["messages"]) // 2 and memo.ahead is None  # taken, then released
    assert (opened.messages, opened.warnings, opened.estimated_tokens, dict(opened.message_tokens)) == (
        plain.messages,
        plain.warnings,
        plain.estimated_tokens,
        dict(plain.message_tokens),
    )


def test_a_forked_session_is_not_normalised_at_open() -> None:
    """Its view holds the parent's messages, which its open did not read."""
    from mimo_sidecar.core.request.build_memo import BuildMemo
    from mimo_sidecar.core.words import MAIN_AGENT

    svc = SidecarService()
    svc.open(OpenRequest("parent", messages=[msg(mid(1)), msg(mid(2))]))
    svc.open(OpenRequest("child", messages=[msg(mid(3))], parent_id="parent"))
    assert session_of(svc, "parent").kept(("build", MAIN_AGENT), BuildMemo).ahead is not None
    assert session_of(svc, "child").kept(("build", MAIN_AGENT), BuildMemo).ahead is None
