"""The checkpoint writer registry of one session (behavior.md#writer-registry) and the bounded wait
for it (behavior.md#writer-wait).

At most one writer is in flight per session, with one queued request (a newer one replaces it);
the watermark is stored only when a writer settles with success (behavior.md#watermark-lifecycle).
Each settlement is kept in the slot's short history and wakes the waiters, which read the
settlement they waited for.
"""

from __future__ import annotations

import asyncio

from ..core import texts
from ..core.config import RebuildConfig
from ..core.engine import writer_watermark
from ..core.errors import DomainError, ErrorCode
from ..core.outcomes import Settlement, WriterFinish, WriterStart, WriterSummary, WriterWait
from ..core.session.session import Session
from ..core.words import WaitResult, WriterOutcome
from .sessions import SessionSlot


def summary(slot: SessionSlot) -> WriterSummary:
    writer = slot.session.writer
    last = slot.last_settlement()
    return WriterSummary(
        in_flight=writer.in_flight,
        end_message_id=writer.end_message_id,
        queued_end_message_id=writer.queued_end_message_id,
        settlements=writer.settlements,
        last_outcome=writer.last_outcome,
        last_retryable=last.retryable if last is not None else None,
    )


def start(slot: SessionSlot, watermark: str | None, now_ms: int) -> WriterStart:
    """Register a writer covering up to `watermark` (computed over the main view when absent)."""
    session = slot.session
    sid = session.session_id
    if watermark is None:
        computed = writer_watermark(session)
        if computed is None:
            raise DomainError(
                ErrorCode.WATERMARK_UNAVAILABLE,
                texts.watermark_not_computable(sid),
                ("watermark",),
                {"sessionId": sid},
            )
        watermark = computed.id
    elif session.find_in_context(watermark) is None:
        raise DomainError(
            ErrorCode.MESSAGE_NOT_FOUND,
            texts.no_message_in_session(watermark, sid),
            ("watermark",),
            {"messageId": watermark},
        )
    writer = session.writer
    if writer.in_flight:
        writer.queued_end_message_id = watermark  # a newer request covers a superset
        return WriterStart("queued", watermark)
    writer.in_flight = True
    writer.end_message_id = watermark
    writer.started_at_ms = now_ms
    return WriterStart("in-flight", watermark)


def finish(slot: SessionSlot, outcome: WriterOutcome, retryable: bool | None, now_ms: int) -> WriterFinish:
    """Settle the writer in flight; promote the queued request, if any; wake the waiters."""
    session = slot.session
    writer = session.writer
    if not writer.in_flight:
        raise DomainError(
            ErrorCode.WRITER_STATE,
            texts.no_writer_in_flight(session.session_id),
            ("sessionId",),
            {"sessionId": session.session_id},
        )
    if outcome == "success":
        session.watermark = writer.end_message_id  # stored only on success (behavior.md#watermark-lifecycle)
    writer.settlements += 1
    writer.last_outcome = outcome
    promoted = writer.queued_end_message_id
    writer.queued_end_message_id = None
    if promoted is not None:
        writer.end_message_id = promoted
        writer.started_at_ms = now_ms
    else:
        writer.in_flight = False
        writer.end_message_id = None
    slot.settlements.append(
        Settlement(writer.settlements, outcome, retryable if outcome == "failure" else None)
    )
    slot.wake()
    return WriterFinish(session.watermark, promoted, summary(slot))


def wait_bound_ms(config: RebuildConfig, session: Session) -> int:
    """The render-time bound (behavior.md#render-time-wait): short when a watermark is stored,
    long otherwise."""
    if session.watermark:
        return config.writer_wait_with_watermark_ms
    return config.writer_wait_without_watermark_ms


def awaited_settlement(slot: SessionSlot) -> int | None:
    """The settlement that ends the writer in flight now (its number), or None with none in flight."""
    writer = slot.session.writer
    return writer.settlements + 1 if writer.in_flight else None


async def wait(slot: SessionSlot, bound_ms: int, awaited: int | None = None) -> WriterWait:
    """Wait for the writer in flight now to settle, at most `bound_ms` (behavior.md#writer-wait).

    `no-writer` if none is in flight; `success`; `failure` (outcome failure or cancelled, with
    the host's retryable flag for a classified failure); `timeout`, which leaves the writer in
    flight. A session closed during the wait raises DomainError(SESSION_NOT_FOUND).
    Cancellation of the caller propagates as usual.

    `awaited` (from `awaited_settlement`, taken earlier) is the writer the caller decided to wait
    for: when the caller awaited something in between (the busy status, sent before the wait), that
    writer may have settled meanwhile, and its settlement is the answer, not `no-writer`.
    """
    if awaited is None:
        awaited = awaited_settlement(slot)
    if awaited is None:
        return WriterWait("no-writer", bound_ms=bound_ms)
    loop = asyncio.get_running_loop()
    started = loop.time()
    deadline = started + max(0, bound_ms) / 1000
    while True:
        settled = _settlement(slot, awaited)
        if settled is not None:
            result: WaitResult = "success" if settled.outcome == "success" else "failure"
            return WriterWait(result, settled.outcome, settled.retryable, _elapsed(loop, started), bound_ms)
        if slot.closed:
            raise closed_during_wait(slot)
        remaining = deadline - loop.time()
        if remaining <= 0:
            return WriterWait("timeout", waited_ms=_elapsed(loop, started), bound_ms=bound_ms)
        try:
            await asyncio.wait_for(slot.waiter().wait(), remaining)
        except TimeoutError:
            pass


def not_in_main_view(message_id: str | None, given_as: str | None) -> DomainError:
    """A writer's end that is not in the main view, so its forked history cannot be built: named
    by the param `given_as` when the host sent it, else it is the in-flight writer's (reported
    earlier), and no input of this request is at fault."""
    data = {"messageId": message_id}
    if given_as is not None:
        return DomainError(ErrorCode.MESSAGE_NOT_FOUND, texts.not_in_main_view(message_id), (given_as,), data)
    return DomainError(ErrorCode.MESSAGE_NOT_FOUND, texts.writer_end_not_in_main_view(message_id), None, data)


def closed_during_wait(slot: SessionSlot) -> DomainError:
    sid = slot.session_id
    return DomainError(
        ErrorCode.SESSION_NOT_FOUND, texts.closed_during_writer_wait(sid), ("sessionId",), {"sessionId": sid}
    )


def _settlement(slot: SessionSlot, number: int) -> Settlement | None:
    history = slot.settlements
    for s in history:
        if s.number == number:
            return s
    if history and history[0].number > number:
        return history[0]  # history wrapped: report the oldest one kept
    return None


def _elapsed(loop: asyncio.AbstractEventLoop, started: float) -> int:
    return int((loop.time() - started) * 1000)
