"""The rebuild methods: rebuild/compute, rebuild/insert, request/build (and rebuild/status).

Thin handlers over `core.engine`. The only work done here is what needs the event loop: the bounded
wait for a checkpoint writer (spec §6), with its status notifications, and serializing inserts per
session so two rebuilds of one session never interleave. Everything that changes a session happens
in one synchronous `engine.insert` call after the wait, so a cancelled or failed insert changes
nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import TYPE_CHECKING

from ..core import engine, texts
from ..core.formats import Target
from ..core.ids import IdMinter
from ..core.memory_files import MemoryRoot
from ..core.render import RenderResult
from ..core.session import Session, SessionError
from ..core.trigger import BudgetWarnings
from ..state import now_ms
from ..wire import rebuild as w
from .dispatch import rpc_method
from .status import StatusReporter

if TYPE_CHECKING:
    from .server import SidecarServer

NOTICES = {"memory-write-off": texts.NOTICE_MEMORY_WRITE_OFF, "checkpoint-off": texts.NOTICE_CHECKPOINT_OFF}


class RebuildDesk:
    """Per-server rebuild state: the ID minter (one counter per process, spec §14.2), the budget
    warnings already issued (§4.1) and one insert lock per session."""

    def __init__(self) -> None:
        self.minter = IdMinter()
        self.budget_warnings = BudgetWarnings()
        self._locks: dict[str, asyncio.Lock] = {}
        self._memory: MemoryRoot | None = None

    def memory(self, root: object) -> MemoryRoot:
        """The MemoryRoot of the configured root (rebuilt only when the root changes)."""
        if self._memory is None or self._memory.root != str(root):
            self._memory = MemoryRoot(str(root))
        return self._memory

    def lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())


# -- conversions core → wire --------------------------------------------------------------------
def report_of(rendered: RenderResult, include_text: bool = False) -> w.RenderReport:
    return w.RenderReport(
        sections=[w.SectionInfo(**asdict(s)) for s in rendered.sections],
        total_tokens=rendered.total_tokens,
        total_cap=rendered.total_cap,
        over_cap=rendered.over_cap,
        has_activity=rendered.has_activity,
        shed_units=list(rendered.shed_units),
        empty_reason=rendered.empty_reason,
        text=rendered.text if include_text else None,
    )


def limits_of(model: w.ModelLimits | None) -> engine.ModelLimits | None:
    if model is None:
        return None
    return engine.ModelLimits(
        model.context_window,
        model.input_limit or 0,
        model.max_output_tokens or engine.DEFAULT_MAX_OUTPUT_TOKENS,
        model.provider_id or "",
        model.model_id or "",
    )


def compute_result(session: Session, res: engine.ComputeResult, include_text: bool) -> w.ComputeResult:
    t = res.trigger
    wm = res.watermark
    return w.ComputeResult(
        revision=session.revision,
        trigger=w.TriggerInfo(
            usable=t.usable,
            count=t.count,
            overflow=t.overflow,
            usage_recovered=t.usage_recovered,
            usage_pending=t.usage_recovered,
            should_rebuild=t.should_rebuild,
            hard=t.hard,
            budget=t.budget,
            usage_source=t.usage_source,
            warnings=list(t.warnings),  # type: ignore[arg-type]
        ),
        watermark=None
        if wm is None
        else w.WatermarkInfo(
            message_id=wm.id,
            index=wm.index,
            tail_tokens=wm.tail_tokens,
            tail_text_blocks=wm.tail_text_blocks,
            adjusted=wm.adjusted,
        ),
        stored_watermark=res.stored_watermark,
        writer_in_flight=session.writer.in_flight,
        preview=None
        if res.preview is None
        else w.PreviewInfo(
            outcome=res.preview_outcome or "insert-failed", report=report_of(res.preview, include_text)
        ),
    )


def insert_result(session: Session, res: engine.InsertResult, wait: w.WaitInfo | None) -> w.InsertResult:
    report = report_of(res.render) if res.render is not None else None
    return w.InsertResult(
        outcome=res.outcome,  # type: ignore[arg-type]
        revision=session.revision,
        message=res.message,
        compacted=[
            w.CompactedPart(message_id=m.message_id, part_id=m.part_id, compacted_at=m.compacted_at)
            for m in res.compacted
        ],
        sections=report.sections if report else [],
        report=report,
        watermark=res.watermark,
        digest_up_to=res.digest_up_to,
        wait=wait,
        status_text=texts.OUTCOME_TEXTS.get(res.outcome),
        detail=res.detail,
        warnings=res.warnings,
    )


# -- the insert flow (§7.1, §6.3, D4) -----------------------------------------------------------
async def wait_for_writer(ls: SidecarServer, session: Session, status: StatusReporter) -> w.WaitInfo | None:
    """Wait (bounded) for the session's writer in flight, showing the verbatim busy status."""
    if not session.writer.in_flight:
        return None
    bound = ls.state.writer_wait_bound_ms(session)
    await status.busy(texts.PREPARING_STATUS)
    waited = await ls.state.wait_for_writer(session.session_id, bound)
    return w.WaitInfo(result=waited.result, waited_ms=waited.waited_ms, bound_ms=bound)


def gate_result(ls: SidecarServer, session: Session, outcome: str, wait: w.WaitInfo | None) -> w.InsertResult:
    """An insert that ends before rendering; the "off" outcomes carry their one-time notice."""
    notice = None
    if outcome in NOTICES and outcome not in session.notices_shown:
        session.notices_shown.add(outcome)
        notice = w.Notice(kind=outcome, text=NOTICES[outcome])  # type: ignore[arg-type]
    details = {
        "no-checkpoint": "the session has no checkpoint.md under the memory root",
        "no-watermark": "no watermark is stored: a checkpoint writer must succeed first",
        "not-main-agent": "only the main agent rebuilds; sub-agents use compaction",
        "writer-failed": "the checkpoint writer did not succeed within the wait",
    }
    return w.InsertResult(
        outcome=outcome,
        revision=session.revision,
        wait=wait,
        notice=notice,  # type: ignore[arg-type]
        status_text=texts.OUTCOME_TEXTS.get(outcome),
        detail=details.get(outcome),
    )


async def run_insert(
    ls: SidecarServer, p: w.InsertParams, memory: MemoryRoot, status: StatusReporter
) -> w.InsertResult:
    session = ls.state.require(p.session_id)
    config = ls.state.config
    gate = engine.insert_gate(session, memory, config, p.agent_id)
    wait = None
    if gate == "no-watermark" and session.writer.in_flight:
        # Cold start (§7.1 step 5): the first writer is running; wait for it (the long bound).
        wait = await wait_for_writer(ls, session, status)
        if wait is None or wait.result != "success":
            return gate_result(ls, session, "writer-failed", wait)
        gate = engine.insert_gate(session, memory, config, p.agent_id)
    if gate is not None:
        return gate_result(ls, session, gate, wait)
    watermark = session.watermark
    assert watermark is not None
    wait = await wait_for_writer(ls, session, status) or wait  # D4: W was read before this wait
    session = ls.state.require(p.session_id)  # closed during the wait → SessionNotFound
    res = engine.insert(
        session,
        memory,
        ls.state.config,
        watermark=watermark,
        reason=p.reason,
        now_ms=now_ms(),
        minter=ls.rebuild_desk.minter,
        digest_up_to=p.digest_up_to,
        agent=p.agent,
        model={"providerID": p.model.provider_id, "modelID": p.model.model_id} if p.model else None,
        boundary_id=p.boundary_message_id,
        tool_name_map=p.tool_name_map,
    )
    return insert_result(session, res, wait)


def target_of(target: w.BuildTarget | None) -> Target | None:
    if target is None:
        return None
    return Target(
        target.provider_id, target.model_id, target.thinking, target.images, target.tool_result_media, True
    )


def _writer_build(session: Session, p: w.BuildParams) -> engine.BuildResult:
    up_to = p.up_to
    try:
        return engine.build_for_writer(
            session,
            up_to,
            fmt=p.format,
            target=target_of(p.target),
            cache_ttl=p.cache.ttl if p.cache else None,
        )
    except KeyError:
        raise SessionError(
            "message-not-found",
            f"upTo: message {up_to or session.writer.end_message_id!r} is not in the main view",
            "upTo",
            {"messageId": up_to or session.writer.end_message_id},
        ) from None


def memory_of(ls: SidecarServer) -> MemoryRoot:
    return ls.rebuild_desk.memory(ls.state.memory_root)


def register(server: SidecarServer) -> None:
    server.rebuild_desk = RebuildDesk()

    @rpc_method(server, "rebuild/compute", w.ComputeParams)
    async def rebuild_compute(ls: SidecarServer, p: w.ComputeParams) -> w.ComputeResult:
        session = ls.state.require(p.session_id)
        res = engine.compute(
            session,
            memory_of(ls),
            ls.state.config,
            agent_id=p.agent_id,
            usage=p.usage.model_dump() if p.usage else None,
            model=limits_of(p.model),
            preview=p.preview,
            now_ms=now_ms(),
            warn_cache=ls.rebuild_desk.budget_warnings,
        )
        return compute_result(session, res, p.include_text)

    @rpc_method(server, "rebuild/insert", w.InsertParams)
    async def rebuild_insert(ls: SidecarServer, p: w.InsertParams) -> w.InsertResult:
        status = StatusReporter(ls, p.session_id, "Rebuilding conversation context")
        async with ls.rebuild_desk.lock(p.session_id):
            try:
                if p.reason == "manual":
                    await status.busy(texts.MANUAL_REBUILD_STATUS)
                result = await run_insert(ls, p, memory_of(ls), status)
                if p.reason == "manual" and result.status_text:
                    await status.busy(result.status_text)  # the outcome, shown transiently (§7.7)
                return result
            finally:
                status.idle()

    @rpc_method(server, "request/build", w.BuildParams)
    async def request_build(ls: SidecarServer, p: w.BuildParams) -> w.BuildResult:
        session = ls.state.require(p.session_id)
        if p.purpose == "writer":
            res = _writer_build(session, p)
        else:
            res = engine.build(
                session,
                memory_of(ls),
                ls.state.config,
                agent_id=p.agent_id,
                collapse_tail=p.collapse_tail,
                shell_style=p.invocation_style == "shell",
                has_actor_tool=p.has_actor_tool,
                memory_reminder=p.memory_reminder,
                now_ms=now_ms(),
                fmt=p.format,
                target=target_of(p.target),
                cache_ttl=p.cache.ttl if p.cache else None,
            )
        return w.BuildResult(
            revision=session.revision,
            prefix=w.RequestPrefixInfo(
                system=res.prefix.system,
                tools=res.prefix.tools,
                hash=res.prefix.hash,
                request=res.prefix.request,
            ),
            format=p.format,
            messages=res.request.messages,
            sources=res.request.sources,
            source_groups=res.request.source_groups,
            call_id_map=res.request.call_id_map,
            overrides=res.request.overrides,
            estimated_tokens=res.request.estimated_tokens,
            collapsed_message_ids=res.request.collapsed_ids,
            reminder_added=res.reminder_added,
            usage_pending=res.usage_pending,
            warnings=res.request.warnings,
        )
