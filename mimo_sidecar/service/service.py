"""`SidecarService`: the one owner of the sidecar's state, and the API the RPC handlers call.

It owns the open sessions (with their insert locks, one-time notices and writer settlements), the
ID minter (one counter per process, behavior.md#id-monotonic), the budget warnings already issued
(behavior.md#window-budget), the
config and the memory root. Requests read the config and memory root once, as a `Settings`
snapshot. Methods take and return plain values and core types (`core.outcomes`); domain problems
raise `core.errors.DomainError`. Busy/idle status goes through the injected `status` factory.

No pygls here: asyncio only, for the bounded writer waits and the per-session insert lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, overload

from ..core import engine, texts
from ..core.config import RebuildConfig
from ..core.errors import DomainError, ErrorCode
from ..core.formats import AI_SDK_OUTPUT, BuildOutput
from ..core.memory.files import CHECKPOINT_FILE, MemoryRoot
from ..core.memory.writes import remove_stale_temp_files
from ..core.model_tools import ToolAnswer, ToolContext, call_tool, tools_in_format
from ..core.outcomes import (
    Built,
    Committed,
    Computed,
    Inserted,
    Opened,
    Prepared,
    SessionSummary,
    WriterFinish,
    WriterStart,
    WriterWait,
)
from ..core.rebuild.trigger import BudgetWarnings
from ..core.session.ids import IdMinter
from ..core.session.message import Json
from ..core.session.session import SyncBatch
from ..core.words import MAIN_AGENT, PreviewMode, RequestFormat, WriterOutcome
from . import checkpoint_kit, writers
from .insert_flow import InsertFlow, InsertRequest, Settings, StatusListener
from .sessions import OpenRequest, SessionSlot, SessionTable

StatusFactory = Callable[[str], StatusListener]  # session ID -> the status of one request
T = TypeVar("T")


def _as_is(outcome: Any) -> Any:
    return outcome


def now_ms() -> int:
    return int(time.time() * 1000)


class SilentStatus:
    """The status listener of a service nobody watches (tests, embedding without a UI)."""

    async def busy(self, message: str) -> None:
        return None

    def idle(self) -> None:
        return None


class SidecarService:
    def __init__(
        self,
        *,
        config: RebuildConfig | None = None,
        memory_root: str | Path | None = None,
        status: StatusFactory | None = None,
        clock: Callable[[], int] = now_ms,
        minter: IdMinter | None = None,
    ) -> None:
        self.sessions = SessionTable()
        self.minter = minter or IdMinter()
        self.budget_warnings = BudgetWarnings()
        self._config = config or RebuildConfig()
        self._memory: MemoryRoot | None = None
        self._status: StatusFactory = status or (lambda _sid: SilentStatus())
        self._clock = clock
        if memory_root is not None:
            self.set_memory_root(memory_root)

    # -- settings --------------------------------------------------------------------------------
    @property
    def config(self) -> RebuildConfig:
        return self._config

    def configure(self, config: RebuildConfig) -> None:
        """Replace the config; requests already running keep the snapshot they took."""
        self._config = config

    @property
    def memory_root(self) -> str | None:
        return self._memory.root if self._memory is not None else None

    def set_memory_root(self, root: str | Path) -> None:
        if self._memory is None or self._memory.root != str(root):
            self._memory = MemoryRoot(str(root))

    def clock_ms(self) -> int:
        """The service's "now" (milliseconds)."""
        return self._clock()

    def settings(self) -> Settings:
        """The snapshot one request works with. The memory root is set by `initialize`, which the
        RPC layer requires before any other request."""
        if self._memory is None:
            raise RuntimeError("the memory root is not configured (initialize first)")
        return Settings(self._config, self._memory)

    # -- sessions --------------------------------------------------------------------------------
    def open(self, request: OpenRequest, *, create_checkpoint: bool = False) -> Opened:
        """Register a session with its history; with `create_checkpoint`, also create a missing
        checkpoint.md from the template (behavior.md#writer-kit). Nothing is kept on error: a
        template that cannot be written closes the session again. The temporary files that writes
        killed mid-way left in the session's memory directory are removed."""
        slot = self.sessions.open(request)
        if self._memory is not None:  # what writes killed mid-way left in the session's directory
            remove_stale_temp_files(self._memory, self._memory.session_dir(request.session_id))
        if not create_checkpoint:
            return Opened(slot.session.revision)
        try:
            created = checkpoint_kit.create_template(request.session_id, self._write_settings())
        except DomainError:
            self.sessions.close(request.session_id)
            raise
        return Opened(slot.session.revision, created)

    def sync(self, session_id: str, batch: SyncBatch, base_revision: int | None = None) -> int:
        """Apply one batch atomically; returns the new revision."""
        return self.sessions.sync(session_id, batch, base_revision)

    def describe(self, session_id: str) -> SessionSummary:
        slot = self.sessions.require(session_id)
        s = slot.session
        return SessionSummary(
            session_id=s.session_id,
            project_id=s.project_id,
            revision=s.revision,
            message_count=len(s),
            watermark=s.watermark,
            writer=writers.summary(slot),
            estimated_tokens=s.total_tokens,
            id_mode=s.id_mode,
            parent_id=s.parent_id,
        )

    def close(self, session_id: str) -> None:
        """Forget a session and everything kept for it; its writer waiters fail."""
        self.sessions.close(session_id)

    # -- checkpoint writer registry (behavior.md#writer) ------------------------------------------
    def writer_started(self, session_id: str, watermark: str | None = None) -> WriterStart:
        return writers.start(self.sessions.require(session_id), watermark, self._clock())

    def writer_finished(
        self, session_id: str, outcome: WriterOutcome, retryable: bool | None = None
    ) -> WriterFinish:
        return writers.finish(self.sessions.require(session_id), outcome, retryable, self._clock())

    # -- the checkpoint writer kit (behavior.md#writer-kit) ---------------------------------------
    @overload
    def prepare_writer(
        self, session_id: str, watermark: str | None = None, output: BuildOutput = AI_SDK_OUTPUT
    ) -> Prepared: ...

    @overload
    def prepare_writer(
        self, session_id: str, watermark: str | None, output: BuildOutput, answer: Callable[[Prepared], T]
    ) -> T: ...

    def prepare_writer(
        self,
        session_id: str,
        watermark: str | None = None,
        output: BuildOutput = AI_SDK_OUTPUT,
        answer: Callable[[Prepared], Any] = _as_is,
    ) -> Any:
        """The writer's request with its instructions; registers the writer if none is in flight,
        once `answer` has made the response from it (if it raises, no writer is registered)."""
        slot = self.sessions.require(session_id)
        return checkpoint_kit.prepare(slot, self.settings(), watermark, output, self._clock(), answer)

    def commit_checkpoint(self, session_id: str, content: str, watermark: str | None = None) -> Committed:
        """Write the writer's reply as checkpoint.md and settle the writer as a success."""
        slot = self.sessions.require(session_id)
        return checkpoint_kit.commit(slot, self._write_settings(), content, watermark, self._clock())

    def _write_settings(self) -> Settings:
        """The settings of a request that writes a memory file: a domain error without a root."""
        if self._memory is None:
            raise checkpoint_kit.write_failed(CHECKPOINT_FILE, "no-memory-root")
        return self.settings()

    async def wait_for_writer(self, session_id: str, bound_ms: int | None = None) -> WriterWait:
        """Wait for the writer in flight (bound: the config's, for the session's watermark state)."""
        slot = self.sessions.require(session_id)
        if bound_ms is None:
            bound_ms = writers.wait_bound_ms(self._config, slot.session)
        return await writers.wait(slot, bound_ms)

    # -- rebuild (behavior.md#trigger, #watermark, #rebuild, #request) ---------------------------
    def compute(
        self,
        session_id: str,
        *,
        agent_id: str = MAIN_AGENT,
        usage: Json | None = None,
        model: engine.ModelLimits | None = None,
        preview: PreviewMode = "when-due",
    ) -> Computed:
        """The trigger decision, the watermark for a writer starting now, and a dry-run render (by
        default only when a rebuild is due)."""
        session = self.sessions.require(session_id).session
        settings = self.settings()
        result = engine.compute(
            session,
            settings.memory,
            settings.config,
            agent_id=agent_id,
            usage=usage,
            model=model,
            preview=preview,
            now_ms=self._clock(),
            warn_cache=self.budget_warnings,
        )
        return Computed(session.revision, session.writer.in_flight, result)

    @overload
    async def insert(self, request: InsertRequest) -> Inserted: ...

    @overload
    async def insert(self, request: InsertRequest, answer: Callable[[Inserted], T]) -> T: ...

    async def insert(self, request: InsertRequest, answer: Callable[[Inserted], Any] = _as_is) -> Any:
        """Insert the rebuild boundary (the flow of `service.insert_flow`). `answer` makes the
        response from the outcome before the session changes; if it raises, nothing changes."""
        slot = self.sessions.require(request.session_id)
        flow = InsertFlow(
            slot, self.settings(), request, self._status(request.session_id), self.minter, self._clock, answer
        )
        return await flow.run()

    def build(
        self,
        session_id: str,
        *,
        agent_id: str = MAIN_AGENT,
        collapse_tail: bool = True,
        shell_style: bool = False,
        has_actor_tool: bool = False,
        memory_reminder: bool = True,
        output: BuildOutput = AI_SDK_OUTPUT,
    ) -> Built:
        """The next model request of an agent, in `output`'s format: the frozen prefix and the
        view's messages."""
        session = self.sessions.require(session_id).session
        settings = self.settings()
        result = engine.build(
            session,
            settings.memory,
            settings.config,
            agent_id=agent_id,
            collapse_tail=collapse_tail,
            shell_style=shell_style,
            has_actor_tool=has_actor_tool,
            memory_reminder=memory_reminder,
            now_ms=self._clock(),
            fmt=output.fmt,
            target=output.target,
            cache_ttl=output.cache_ttl,
            sidecar_tools=output.sidecar_tools,
        )
        if not result.request.messages:
            raise _empty_request(result, agent_id, output.fmt, len(session.context_view(agent_id)))
        return Built(session.revision, result)

    def build_for_writer(
        self, session_id: str, up_to: str | None = None, output: BuildOutput = AI_SDK_OUTPUT
    ) -> Built:
        """The checkpoint writer's forked request: the main view up to its watermark
        (behavior.md#writer-request)."""
        slot: SessionSlot = self.sessions.require(session_id)
        session = slot.session
        try:
            result = engine.build_for_writer(
                session,
                up_to,
                fmt=output.fmt,
                target=output.target,
                cache_ttl=output.cache_ttl,
                sidecar_tools=output.sidecar_tools,
            )
        except KeyError:
            if up_to is not None:
                raise writers.not_in_main_view(up_to, "upTo") from None
            raise writers.not_in_main_view(session.writer.end_message_id, None) from None
        if not result.request.messages:
            raise _empty_request(result, MAIN_AGENT, output.fmt, len(engine.writer_view(session, up_to)))
        return Built(session.revision, result)

    # -- the model tools (behavior.md#d18) -----------------------------------------------------------
    def model_tool_prefix(self, session_id: str | None, prefix: str | None) -> str:
        """The prefix of the sidecar's tool names: the one given, else the one the session declares
        in `toolPointers`, else none."""
        if prefix is not None:
            return prefix
        if session_id is None:
            return ""
        pointers = self.sessions.require(session_id).session.tool_pointers
        return pointers.sidecar_prefix if pointers is not None and pointers.sidecar_prefix else ""

    def list_tools(
        self, session_id: str | None, fmt: RequestFormat, prefix: str | None
    ) -> tuple[str, list[Json]]:
        """The sidecar's model tools in the tool shape of `fmt`, and the prefix their names carry."""
        used = self.model_tool_prefix(session_id, prefix)
        return used, tools_in_format(fmt, used)

    def call_tool(
        self, session_id: str, name: str, arguments: Json, prefix: str | None = None
    ) -> ToolAnswer:
        """Run one model tool call against the session (read only: nothing changes)."""
        session = self.sessions.require(session_id).session
        settings = self.settings()
        context = ToolContext(
            session,
            settings.memory,
            self._clock(),
            settings.config.task_archive_days,
            self.model_tool_prefix(session_id, prefix),
        )
        return call_tool(context, name, arguments)

def _empty_request(result: engine.BuildResult, agent_id: str, fmt: str, view_messages: int) -> DomainError:
    """A request with no message at all is refused, naming why: no provider accepts one, and an
    empty list with only warnings would be sent as it is (error 1012)."""
    return DomainError(
        ErrorCode.EMPTY_REQUEST,
        texts.empty_request(agent_id, fmt, view_messages),
        data={
            "agentId": agent_id,
            "format": fmt,
            "viewMessages": view_messages,
            "warnings": list(result.request.warnings),
        },
    )
