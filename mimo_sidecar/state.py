"""The sidecar's in-memory state: open sessions, the memory root, the config, the writer registry.

This module does not import pygls, so engine code and unit tests use it directly. It raises
`core.session.SessionError` with a string code; `rpc.errors` maps those codes to JSON-RPC errors:

    session-not-found, session-exists, revision-conflict, message-not-found, invalid,
    writer-state, watermark-unavailable

The writer registry follows spec §6.1: at most one writer in flight per session, one queued request
(a newer one replaces it), the watermark stored only when a writer settles with success (§5.1).
Settlements wake `wait_for_writer` (spec §6.2); that part uses asyncio events, which bind to the
running loop on first use, so the synchronous methods work without a loop.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .core.config import RebuildConfig
from .core.engine import writer_watermark
from .core.memory_files import is_safe_name
from .core.message import Json
from .core.session import Session, SessionError, SyncBatch, WriterState, batch_from_messages

WriterOutcome = Literal["success", "failure", "cancelled"]
WaitResult = Literal["no-writer", "success", "failure", "timeout"]


def now_ms() -> int:
    return int(time.time() * 1000)


def compute_watermark(session: Session) -> str | None:
    """The watermark candidate of a writer that starts without one (spec §5.2-§5.3): computed over
    the main slice's view; None when the view is empty or no valid watermark exists."""
    result = writer_watermark(session)
    return result.id if result is not None else None


@dataclass(frozen=True)
class Settlement:
    number: int  # WriterState.settlements after this settlement
    outcome: WriterOutcome
    retryable: bool | None


@dataclass(frozen=True)
class WriterWait:
    """Result of `SidecarState.wait_for_writer` (spec §6.2)."""

    result: WaitResult
    outcome: WriterOutcome | None = None  # success / failure / cancelled when the writer settled
    retryable: bool | None = None  # classification of a failure, when the host gave one
    waited_ms: int = 0


@dataclass(frozen=True)
class WriterStart:
    state: Literal["in-flight", "queued"]
    watermark: str


@dataclass(frozen=True)
class WriterFinish:
    watermark: str | None
    promoted: str | None


@dataclass
class _WriterSignals:
    """Per session: the settlement history waiters read and the event that wakes them."""

    history: deque[Settlement] = field(default_factory=lambda: deque(maxlen=16))
    event: asyncio.Event | None = None

    def wake(self) -> None:
        if self.event is not None:
            self.event.set()
            self.event = None

    def waiter(self) -> asyncio.Event:
        if self.event is None:
            self.event = asyncio.Event()
        return self.event


class SidecarState:
    def __init__(self, memory_root: Path | None = None, config: RebuildConfig | None = None) -> None:
        self.memory_root = memory_root
        self.config = config or RebuildConfig()
        self.sessions: dict[str, Session] = {}
        self._signals: dict[str, _WriterSignals] = {}

    # -- sessions ------------------------------------------------------------------------------
    def require(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise SessionError(
                "session-not-found",
                f"sessionId: no open session {session_id!r}",
                "sessionId",
                {"sessionId": session_id},
            )
        return session

    def open_session(
        self,
        session_id: str,
        *,
        project_id: str | None = None,
        messages: Iterable[Json] = (),
        tasks: list[Json] | None = None,
        actors: list[Json] | None = None,
        watermark: str | None = None,
        request_prefix: Json | None = None,
        ids_ascending: bool = False,
        parent_id: str | None = None,
        parent_watermark: str | None = None,
    ) -> Session:
        """Register a session with its history; nothing is kept if any of it is invalid."""
        parent = None
        if parent_id is not None:
            try:
                parent = self.require(parent_id)
            except SessionError as err:
                raise _rebase(err, "sessionId", "parent.sessionId") from None
        if session_id in self.sessions:
            raise SessionError(
                "session-exists",
                f"sessionId: session {session_id!r} is already open; call session/close first",
                "sessionId",
                {"sessionId": session_id},
            )
        for name, value in (("sessionId", session_id), ("projectId", project_id)):
            if value is not None and not is_safe_name(value):
                # IDs name directories under the memory root: never let one climb out of it.
                raise SessionError(
                    "invalid",
                    f"{name}: {value!r} is not usable as a directory name "
                    "(empty, '.', '..', a path separator or NUL)",
                    name,
                )
        session = Session(session_id, project_id, ids_ascending=ids_ascending, request_prefix=request_prefix)
        batch = batch_from_messages(messages)
        batch.tasks = list(tasks or [])
        batch.actors = list(actors or [])
        try:
            session.apply(batch)
        except SessionError as err:
            raise _rebase(err, "upsertMessages", "messages") from None
        session.watermark = watermark
        if parent is not None:
            session.set_parent(parent, parent_watermark)
        self.sessions[session_id] = session
        self._signals[session_id] = _WriterSignals()
        return session

    def sync(self, session_id: str, batch: SyncBatch, base_revision: int | None = None) -> int:
        """Apply a batch atomically; a stale `base_revision` changes nothing."""
        session = self.require(session_id)
        if base_revision is not None and base_revision != session.revision:
            raise SessionError(
                "revision-conflict",
                f"baseRevision: {base_revision} is stale, session {session_id!r} "
                f"is at revision {session.revision}",
                "baseRevision",
                {"expected": base_revision, "actual": session.revision},
            )
        return session.apply(batch)

    def close(self, session_id: str) -> None:
        self.require(session_id)
        del self.sessions[session_id]
        signals = self._signals.pop(session_id, None)
        if signals is not None:
            signals.wake()

    # -- writer registry (spec §6.1) -----------------------------------------------------------
    def writer_started(
        self, session_id: str, watermark: str | None = None, at_ms: int | None = None
    ) -> WriterStart:
        session = self.require(session_id)
        if watermark is None:
            watermark = compute_watermark(session)
            if watermark is None:
                raise SessionError(
                    "watermark-unavailable",
                    f"watermark: absent, and no watermark can be computed for session {session_id!r} yet; "
                    "send the watermark message ID",
                    "watermark",
                    {"sessionId": session_id},
                )
        elif session.find_in_context(watermark) is None:
            raise SessionError(
                "message-not-found",
                f"watermark: no message {watermark!r} in session {session_id!r}",
                "watermark",
                {"messageId": watermark},
            )
        writer = session.writer
        if writer.in_flight:
            writer.queued_end_message_id = watermark  # a newer request covers a superset
            return WriterStart("queued", watermark)
        writer.in_flight = True
        writer.end_message_id = watermark
        writer.started_at_ms = now_ms() if at_ms is None else at_ms
        return WriterStart("in-flight", watermark)

    def writer_finished(
        self,
        session_id: str,
        outcome: WriterOutcome,
        retryable: bool | None = None,
        at_ms: int | None = None,
    ) -> WriterFinish:
        session = self.require(session_id)
        writer = session.writer
        if not writer.in_flight:
            raise SessionError(
                "writer-state",
                f"sessionId: no checkpoint writer is in flight for session {session_id!r} "
                "(checkpoint/writerStarted must come first)",
                "sessionId",
                {"sessionId": session_id},
            )
        if outcome == "success":
            session.watermark = writer.end_message_id  # spec §5.1: stored only on success
        writer.settlements += 1
        writer.last_outcome = outcome
        promoted = writer.queued_end_message_id
        writer.queued_end_message_id = None
        if promoted is not None:
            writer.end_message_id = promoted
            writer.started_at_ms = now_ms() if at_ms is None else at_ms
        else:
            writer.in_flight = False
            writer.end_message_id = None
        signals = self._signals.setdefault(session_id, _WriterSignals())
        signals.history.append(
            Settlement(writer.settlements, outcome, retryable if outcome == "failure" else None)
        )
        signals.wake()
        return WriterFinish(session.watermark, promoted)

    def last_settlement(self, session_id: str) -> Settlement | None:
        signals = self._signals.get(session_id)
        return signals.history[-1] if signals and signals.history else None

    def writer_wait_bound_ms(self, session: Session) -> int:
        """The render-time bound of spec §6.3: short when a watermark is stored, long otherwise."""
        if session.watermark:
            return self.config.writer_wait_with_watermark_ms
        return self.config.writer_wait_without_watermark_ms

    async def wait_for_writer(self, session_id: str, bound_ms: int) -> WriterWait:
        """Wait for the writer in flight now to settle, at most `bound_ms` (spec §6.2).

        `no-writer` if none is in flight; `success`; `failure` (outcome failure or cancelled, with
        the host's retryable flag for a classified failure); `timeout`, which leaves the writer in
        flight. A session closed during the wait raises SessionError("session-not-found").
        Cancellation of the caller propagates as usual.
        """
        session = self.require(session_id)
        writer: WriterState = session.writer
        if not writer.in_flight:
            return WriterWait("no-writer")
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + max(0, bound_ms) / 1000
        awaited = writer.settlements + 1
        while True:
            settled = self._settlement(session_id, awaited)
            if settled is not None:
                result: WaitResult = "success" if settled.outcome == "success" else "failure"
                return WriterWait(result, settled.outcome, settled.retryable, _elapsed(loop, started))
            if self.sessions.get(session_id) is not session:
                raise SessionError(
                    "session-not-found",
                    f"sessionId: session {session_id!r} was closed while waiting for its writer",
                    "sessionId",
                    {"sessionId": session_id},
                )
            remaining = deadline - loop.time()
            if remaining <= 0:
                return WriterWait("timeout", waited_ms=_elapsed(loop, started))
            event = self._signals.setdefault(session_id, _WriterSignals()).waiter()
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                pass

    def _settlement(self, session_id: str, number: int) -> Settlement | None:
        signals = self._signals.get(session_id)
        if signals is None:
            return None
        for s in signals.history:
            if s.number == number:
                return s
        if signals.history and signals.history[0].number > number:
            return signals.history[0]  # history wrapped: report the oldest one kept
        return None


def _elapsed(loop: asyncio.AbstractEventLoop, started: float) -> int:
    return int((loop.time() - started) * 1000)


def _rebase(err: SessionError, old: str, new: str) -> SessionError:
    """Rename the leading field of a core error (the batch's name for it -> the method's)."""
    text = str(err)
    if text.startswith(old):
        text = new + text[len(old) :]
    fld = err.field
    if fld is not None and fld.startswith(old):
        fld = new + fld[len(old) :]
    return SessionError(err.code, text, fld, err.data)
