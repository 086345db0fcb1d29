"""The core, run in process on one session: what a rebuild would do to it now.

Nothing here decides a rule. It opens the session in a `core.session.Session` and calls the
engine the way the sidecar's handlers do, in order:

1. the model limits: `--window`, else the file's `model`, else the limits the host recorded on
   its newest assistant message (`engine.model_from_history`), else `DEFAULT_WINDOW`;
2. the watermark a checkpoint writer starting now would cover (`engine.writer_watermark`,
   behavior.md#watermark), stored as if that writer had succeeded (or the one given);
3. `engine.compute`: the trigger (behavior.md#trigger) and the dry-run preview;
4. `engine.build` before, `engine.insert` (behavior.md#rebuild) on this in-memory session, and
   `engine.build` after (behavior.md#request).

The memory root is the one given, or a temporary one holding only `checkpoint.md` from the
template; it is deleted afterwards. The only file the run can change under a given root is the one
the sidecar itself renames on every render (a legacy project `memory.md` to `MEMORY.md`,
behavior.md#memory-layout).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from ..core import engine
from ..core.config import RebuildConfig
from ..core.engine import BuildResult, ComputeResult, InsertResult, ModelLimits
from ..core.ids import IdMinter
from ..core.memory_files import MemoryRoot, UnsafeName
from ..core.message import Message
from ..core.session import MAIN_AGENT, Session, SessionError, batch_from_messages
from ..core.watermark import WatermarkResult
from ..importers import newest_user_ask
from .source import InspectSource

# The window assumed when neither the command line nor the file says: the 200k tokens of the
# Claude models most coding agents run on (a Codex rollout records its own).
DEFAULT_WINDOW = 200_000
# Stand-in until the checkpoint template lands in the core: a title and the `Topic:` line the
# checkpoint index reads (behavior.md#checkpoint-topic).
CHECKPOINT_TEMPLATE = "# Session checkpoint\nTopic: (not written yet)\n"
INSERT_REASON = "auto"  # the rebuild the trigger starts (the view, not the whole slice)

ModelSource = Literal["option", "file", "history", "default"]
WatermarkSource = Literal["option", "file", "writer", "none"]
CheckpointState = Literal["template", "present", "missing"]


class InspectError(Exception):
    """A problem with the command's options or the session that is not the file's format."""


@dataclass(frozen=True)
class ModelChoice:
    limits: ModelLimits
    source: ModelSource


@dataclass(frozen=True)
class WatermarkChoice:
    """The stored watermark inspect uses, and what a writer starting now would cover."""

    message_id: str | None
    source: WatermarkSource
    writer: WatermarkResult | None
    position: int | None  # 0-based index of W in the main view; None when W is not in it


@dataclass(frozen=True)
class MemoryChoice:
    root: str
    temporary: bool
    checkpoint: CheckpointState


@dataclass(frozen=True)
class RequestSide:
    """One request/build of the main agent, summarised."""

    messages: int  # model messages sent
    stored_messages: int  # stored messages they come from
    estimated_tokens: int  # `estimatedTokens` of request/build
    collapsed: int  # stored messages the collapse left out


@dataclass(frozen=True)
class Inspection:
    source: InspectSource
    main_view: int  # messages in the main view before the rebuild
    model: ModelChoice
    watermark: WatermarkChoice
    memory: MemoryChoice
    computed: ComputeResult
    before: RequestSide
    covered_tokens: int  # of `before`: the stored messages up to and including W
    inserted: InsertResult | None  # None when there is no watermark to rebuild from
    after: RequestSide | None  # None unless the rebuild happened
    boundary_tokens: int  # the boundary message's estimate (0 without one)
    newest_user_ask: str | None  # message ID of the newest genuine user ask (main slice)
    newest_user_ask_text: str
    warnings: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        return self.inserted.outcome if self.inserted is not None else "no-watermark"


def inspect_source(
    source: InspectSource,
    *,
    memory_root: str | None = None,
    window: int | None = None,
    watermark: str | None = None,
    config: RebuildConfig | None = None,
    now_ms: int | None = None,
) -> Inspection:
    """Run the core on `source`. Raises `InspectError` for an unusable option or session."""
    config = config or RebuildConfig()
    now = int(time.time() * 1000) if now_ms is None else now_ms
    session = open_session(source)
    view = list(session.context_view(MAIN_AGENT))
    model = choose_model(source, view, window)
    stored = choose_watermark(session, view, source, watermark)
    session.watermark = stored.message_id
    with memory_for(session.session_id, memory_root) as (memory, memory_choice):
        computed = engine.compute(session, memory, config, model=model.limits, now_ms=now)
        before = engine.build(session, memory, config, now_ms=now)
        covered = _tokens_up_to(session, view, before, stored.position)
        inserted = None
        if stored.message_id is not None:
            inserted = engine.insert(
                session,
                memory,
                config,
                watermark=stored.message_id,
                reason=INSERT_REASON,
                now_ms=now,
                minter=IdMinter(),
            )
        rebuilt = inserted is not None and inserted.outcome == "rebuilt"
        after = engine.build(session, memory, config, now_ms=now) if rebuilt else None
    boundary = _boundary_tokens(session, inserted)
    ask = newest_user_ask(source.params)
    return Inspection(
        source=source,
        main_view=len(view),
        model=model,
        watermark=stored,
        memory=memory_choice,
        computed=computed,
        before=request_side(before),
        covered_tokens=covered,
        inserted=inserted,
        after=request_side(after) if after is not None else None,
        boundary_tokens=boundary,
        newest_user_ask=ask[0] if ask else None,
        newest_user_ask_text=ask[1] if ask else "",
        warnings=_warnings(source, computed, before, inserted, after),
    )


# -- the session ---------------------------------------------------------------------------------
def open_session(source: InspectSource) -> Session:
    """The session of the params, as `session/open` registers it (no parent: one file only)."""
    p = source.params
    session = Session(
        source.session_id,
        p.get("projectId"),
        ids_ascending=bool(p.get("idsAscending", False)),
        request_prefix=p.get("requestPrefix"),
    )
    batch = batch_from_messages(p.get("messages") or [])
    batch.tasks = list(p.get("tasks") or [])
    batch.actors = list(p.get("actors") or [])
    try:
        session.apply(batch)
    except SessionError as exc:
        raise InspectError(f"{source.path}: the session cannot be opened: {exc}") from None
    return session


def choose_model(source: InspectSource, view: Sequence[Message], window: int | None) -> ModelChoice:
    recorded = _file_limits(source) or engine.model_from_history(view)
    if window is not None:
        ids = recorded or ModelLimits(0)
        limits = ModelLimits(window, 0, ids.max_output_tokens, ids.provider_id, ids.model_id)
        return ModelChoice(limits, "option")
    if recorded is not None:
        return ModelChoice(recorded, "file" if source.model is not None else "history")
    return ModelChoice(ModelLimits(DEFAULT_WINDOW), "default")


def _file_limits(source: InspectSource) -> ModelLimits | None:
    m = source.model
    if m is None:
        return None
    return ModelLimits(
        m.context_window,
        m.input_limit or 0,
        m.max_output_tokens or engine.DEFAULT_MAX_OUTPUT_TOKENS,
        m.provider_id or "",
        m.model_id or "",
    )


def choose_watermark(
    session: Session, view: Sequence[Message], source: InspectSource, given: str | None
) -> WatermarkChoice:
    """`--watermark`, else the file's stored watermark, else the one a writer starting now covers."""
    writer = engine.writer_watermark(session, view)
    chosen: str | None
    origin: WatermarkSource
    if given is not None:
        chosen, origin = given, "option"
    elif source.params.get("watermark"):
        chosen, origin = str(source.params["watermark"]), "file"
    elif writer is not None:
        chosen, origin = writer.id, "writer"
    else:
        chosen, origin = None, "none"
    if chosen is not None and session.find_in_context(chosen) is None:
        what = "--watermark" if origin == "option" else "the file's watermark"
        raise InspectError(f"{what}: no message {chosen!r} in session {session.session_id!r}")
    position = next((i for i, m in enumerate(view) if m.id == chosen), None)
    return WatermarkChoice(chosen, origin, writer, position)


# -- the memory root -----------------------------------------------------------------------------
@contextmanager
def memory_for(session_id: str, root: str | None) -> Iterator[tuple[MemoryRoot, MemoryChoice]]:
    """The given memory root, or a temporary one with `checkpoint.md` from the template."""
    if root is not None:
        if not os.path.isdir(root):
            raise InspectError(f"--memory-root: {root}: not a directory")
        memory = MemoryRoot(root)
        present = memory.exists(_checkpoint_path(memory, session_id))
        yield memory, MemoryChoice(memory.root, False, "present" if present else "missing")
        return
    with tempfile.TemporaryDirectory(prefix="mimo-inspect-") as tmp:
        memory = MemoryRoot(tmp)
        path = _checkpoint_path(memory, session_id)
        os.makedirs(os.path.dirname(path))
        with open(path, "w", encoding="utf-8") as f:
            f.write(CHECKPOINT_TEMPLATE)
        yield memory, MemoryChoice(memory.root, True, "template")


def _checkpoint_path(memory: MemoryRoot, session_id: str) -> str:
    try:
        return memory.checkpoint_path(session_id)
    except UnsafeName as exc:
        raise InspectError(f"session ID {session_id!r} cannot name a memory directory: {exc}") from None


# -- summaries -----------------------------------------------------------------------------------
def request_side(built: BuildResult) -> RequestSide:
    request = built.request
    return RequestSide(
        len(request.messages), len(set(request.sources)), request.estimated_tokens, len(request.collapsed_ids)
    )


def _tokens_up_to(session: Session, view: Sequence[Message], built: BuildResult, w: int | None) -> int:
    """Of the stored messages a request sends, the estimated tokens of those up to W (inclusive)."""
    if w is None:
        return 0
    covered = {m.id for m in view[: w + 1]}
    sent = set(built.request.sources)
    return sum(m.tokens for m in view if m.id in covered and m.id in sent)


def _boundary_tokens(session: Session, inserted: InsertResult | None) -> int:
    if inserted is None or inserted.message is None:
        return 0
    boundary = session.get(inserted.message["info"]["id"])
    return boundary.tokens if boundary is not None else 0


def _warnings(
    source: InspectSource,
    computed: ComputeResult,
    before: BuildResult,
    inserted: InsertResult | None,
    after: BuildResult | None,
) -> list[str]:
    """Every warning of the run, once each, in the order the steps ran."""
    found = [*source.notes, *computed.trigger.warnings, *before.request.warnings]
    if inserted is not None:
        found += inserted.warnings
    if after is not None:
        found += after.request.warnings
    return list(dict.fromkeys(found))
