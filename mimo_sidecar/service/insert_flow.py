"""Where an insert's decision lives: one `rebuild/insert` from its gate to the inserted boundary.

The flow (behavior.md#insert-steps, #render-time-wait, #d21), for one session at a time (the slot's
insert lock):

0. a session whose IDs the sidecar cannot mint needs the request's `boundaryMessageId`: refused
   before anything else, before any wait (behavior.md#id-host-scheme);
1. gate: checkpoint off, memory writing off, not the main agent, no checkpoint, no watermark;
2. cold start: no checkpoint file or no watermark yet, but a writer is running: wait for it (the
   long bound, `writer_wait_without_watermark_ms`); anything but success ends as `writer-failed`,
   success re-runs the gate;
3. wait (bounded) for a writer in flight; W is then the watermark that writer stored when it
   succeeded (D21: its checkpoint covers it), else the one read before the wait
   (`checkpoint.follow_writer_watermark: false` keeps that one in every case, D4);
4. the session must still be the one the request started on (closed during the wait: error);
5. `engine.plan_insert`: render and build the boundary, plan the compaction marks (or `no-gain`,
   nothing to change, when the boundary would not make the request smaller);
6. the caller's `answer` turns the outcome into its response; only then is the change made
   (`engine.apply_insert`, and a one-time notice counted as shown), with no await in between. An
   answer that cannot be written (it raises) or a cancellation before it leaves the session as it
   was: a change is never made that the host is not told of.

The config and memory root are the `Settings` snapshot taken when the request arrived: a
`sidecar/configure` during a writer wait does not change this insert.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from ..core import engine, texts
from ..core.config import RebuildConfig
from ..core.memory.files import MemoryRoot
from ..core.outcomes import Inserted, Notice, WriterWait
from ..core.session.ids import IdMinter
from ..core.session.message import Json
from ..core.words import NOTICE_KINDS, GateOutcome, InsertOutcome, InsertReason
from . import writers
from .sessions import SessionSlot


@dataclass(frozen=True)
class Settings:
    """The config and the memory root one request works with (read once, when it arrives)."""

    config: RebuildConfig
    memory: MemoryRoot


@dataclass(frozen=True)
class InsertRequest:
    session_id: str
    reason: InsertReason
    agent_id: str
    digest_up_to: str | None = None
    boundary_id: str | None = None
    agent: str | None = None
    model: Json | None = None  # {"providerID", "modelID"} of the turn
    tool_name_map: dict[str, str] | None = None


# The gates a writer in flight can still open: it writes the first checkpoint.md and stores the
# first watermark (behavior.md#cold-start). With nothing in flight they are the answer.
COLD_START_GATES: tuple[GateOutcome, ...] = ("no-checkpoint", "no-watermark")


class StatusListener(Protocol):
    """Busy/idle status of one session for the duration of one request (the RPC layer shows it)."""

    async def busy(self, message: str) -> None: ...

    def idle(self) -> None: ...


T = TypeVar("T")
Commit = Callable[[], None]


def _nothing() -> None:
    return None


class InsertFlow(Generic[T]):
    """One insert: the steps of the module docstring over a slot and a settings snapshot."""

    def __init__(
        self,
        slot: SessionSlot,
        settings: Settings,
        request: InsertRequest,
        status: StatusListener,
        minter: IdMinter,
        clock: Callable[[], int],
        answer: Callable[[Inserted], T],
    ) -> None:
        self.slot = slot
        self.settings = settings
        self.request = request
        self.status = status
        self.minter = minter
        self.clock = clock
        self.answer = answer

    async def run(self) -> T:
        manual = self.request.reason == "manual"
        async with self.slot.insert_lock:
            try:
                if manual:
                    await self.status.busy(texts.MANUAL_REBUILD_STATUS)
                inserted, commit = await self._decide()
                if manual and inserted.status_text:
                    # the outcome, shown transiently (behavior.md#manual-rebuild)
                    await self.status.busy(inserted.status_text)
                answer = self.answer(inserted)  # step 6: the answer first, then the change
                commit()
                return answer
            finally:
                self.status.idle()

    async def _decide(self) -> tuple[Inserted, Commit]:
        session = self.slot.session
        config, memory = self.settings.config, self.settings.memory
        engine.require_boundary_id(session, self.request.boundary_id)
        gate = engine.insert_gate(session, memory, config, self.request.agent_id)
        wait = None
        if gate in COLD_START_GATES and session.writer.in_flight:
            # Cold start (behavior.md#cold-start): the writer that will write the first checkpoint or
            # store the first watermark is running; wait for it with the long bound.
            wait = await self._wait_for_writer(config.writer_wait_without_watermark_ms)
            if wait is None or wait.result != "success":
                return self._stopped("writer-failed", wait)
            gate = engine.insert_gate(session, memory, config, self.request.agent_id)
        if gate is not None:
            return self._stopped(gate, wait)
        before = session.watermark
        assert before is not None  # the gate passed
        waited = await self._wait_for_writer()
        if self.slot.closed:
            raise writers.closed_during_wait(self.slot)
        watermark = before
        if waited is not None and waited.result == "success" and config.follow_writer_watermark:
            watermark = session.watermark or before  # D21: the boundary follows the writer it waited for
        return self._insert(watermark, waited or wait, before if waited is not None else None)

    async def _wait_for_writer(self, bound: int | None = None) -> WriterWait | None:
        """Wait (bounded: `bound`, else the render-time bound) for the session's writer in flight,
        showing the verbatim busy status."""
        awaited = writers.awaited_settlement(self.slot)
        if awaited is None:
            return None
        if bound is None:
            bound = writers.wait_bound_ms(self.settings.config, self.slot.session)
        # The status goes out first, and sending it yields: a host that commits as soon as it sees
        # "Preparing…" may settle the writer before the wait begins. That settlement is the answer.
        await self.status.busy(texts.PREPARING_STATUS)
        return await writers.wait(self.slot, bound, awaited)

    def _stopped(self, outcome: InsertOutcome, wait: WriterWait | None) -> tuple[Inserted, Commit]:
        """An insert that ends before rendering; the "off" outcomes carry their one-time notice
        (counted as shown when it is committed)."""
        kind = next((k for k in NOTICE_KINDS if outcome == k and k not in self.slot.notices_shown), None)
        inserted = Inserted(
            outcome,
            self.slot.session.revision,
            wait=wait,
            notice=None if kind is None else Notice(kind, texts.NOTICES[kind]),
            status_text=texts.OUTCOME_TEXTS.get(outcome),
            detail=texts.OUTCOME_DETAILS.get(outcome),
        )
        return inserted, (_nothing if kind is None else lambda: self.slot.notices_shown.add(kind))

    def _insert(
        self, watermark: str, wait: WriterWait | None, before_wait: str | None
    ) -> tuple[Inserted, Commit]:
        session, req = self.slot.session, self.request
        res = engine.plan_insert(
            session,
            self.settings.memory,
            self.settings.config,
            watermark=watermark,
            reason=req.reason,
            now_ms=self.clock(),
            minter=self.minter,
            digest_up_to=req.digest_up_to,
            agent=req.agent,
            model=req.model,
            boundary_id=req.boundary_id,
            tool_name_map=req.tool_name_map,
            watermark_before_wait=before_wait,
        )
        inserted = Inserted(
            res.outcome,
            session.revision + (1 if res.changes is not None else 0),  # once the change is made
            result=res,
            wait=wait,
            status_text=texts.OUTCOME_TEXTS.get(res.outcome),
            detail=res.detail,
        )
        return inserted, lambda: engine.apply_insert(session, res)
