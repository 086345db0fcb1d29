"""The sidecar, run in process on one session: what a rebuild would do to it now.

Nothing here decides a rule. It drives the sidecar's own service (`SidecarService`, what the RPC
handlers call, minus the transport) through the cycle a host runs, at one clock:

1. `open` the session from the params (in a temporary memory root, asking for `checkpoint.md`
   from the template, behavior.md#writer-kit);
2. the model limits: `--window`, else the file's `model`, else the limits the host recorded on
   its newest assistant message (`engine.model_from_history`), else `DEFAULT_WINDOW`;
3. the stored watermark: the file's, or a checkpoint writer is started (the service computes the
   message it covers, behavior.md#watermark, or takes `--watermark`) and settled as a success, so
   that its watermark is stored (behavior.md#watermark-lifecycle);
4. `compute`: the trigger (behavior.md#trigger), the writer watermark and the dry-run preview;
5. `build` before, `insert` (behavior.md#rebuild: its gates, then the engine's insertion), and
   `build` after (behavior.md#request), with the sidecar's model tools when `--sidecar-tools`
   declares them; what the texts of that request name, against its tools (behavior.md#d18);
6. with `--tools`, a sample call of each model tool (`tool_samples`).

The memory root is the one given (never written), or a temporary one that holds only that
`checkpoint.md` and is deleted afterwards. The only file the run can change under a given root is the one
the sidecar itself renames on every render (a legacy project `memory.md` to `MEMORY.md`,
behavior.md#memory-layout).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from ..core import engine
from ..core.config import RebuildConfig
from ..core.engine import BuildResult, ComputeResult, InsertResult, ModelLimits
from ..core.errors import DomainError
from ..core.formats import BuildOutput
from ..core.memory.files import MemoryRoot, UnsafeName
from ..core.outcomes import Inserted
from ..core.rebuild.fidelity import FidelityReport
from ..core.rebuild.recent_user import raw_user_text
from ..core.rebuild.render import RenderResult
from ..core.rebuild.watermark import WatermarkResult
from ..core.request.size import RequestSizes
from ..core.session.message import Message
from ..core.session.session import Session
from ..core.tool_pointers import ToolPointers
from ..core.words import MAIN_AGENT, InsertReason
from ..service import InsertRequest, OpenRequest, SidecarService
from ..service.service import now_ms as wall_clock_ms
from ..wire.session import ToolPointers as WireToolPointers
from .source import InspectSource
from .tool_samples import ToolSample, sample_calls

# The window assumed when neither the command line nor the file says: the 200k tokens of the
# Claude models most coding agents run on (a Codex rollout records its own).
DEFAULT_WINDOW = 200_000
INSERT_REASON: InsertReason = "auto"  # the rebuild the trigger starts (over the view, not the whole slice)
EMPTY_MAIN_SLICE = "the file holds no message of the main agent: there is nothing to rebuild"

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
    """The stored watermark inspect rebuilds from, and where it came from."""

    message_id: str | None
    source: WatermarkSource
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
class ModelView:
    """The tools the request's texts name and the tools it holds (behavior.md#d18): of the request
    after the rebuild, else the one before."""

    named: tuple[str, ...]
    held: frozenset[str] | None  # None: unknown (no requestPrefix.tools, no sidecar tools added)
    pointers: ToolPointers | None  # the session's declaration (None: the reference's wording)
    sidecar_prefix: str | None  # the sidecar's tools were added to the request, so named

    def holds(self, name: str) -> bool | None:
        if self.held is None:
            return None
        return name.lower() in {h.lower() for h in self.held}


@dataclass(frozen=True)
class Inspection:
    source: InspectSource
    main_view: int  # stored messages in the main view before the rebuild
    model: ModelChoice
    watermark: WatermarkChoice
    memory: MemoryChoice
    computed: ComputeResult
    before: RequestSide
    covered_tokens: int  # of `before`: the stored messages up to and including W
    inserted: Inserted  # the answer of rebuild/insert
    after: RequestSide | None  # None unless the rebuild happened
    boundary_tokens: int  # the boundary message's estimate (0 without one)
    # What the rendered boundary keeps (behavior.md#d13): the insertion's, else the dry run's.
    fidelity: FidelityReport | None
    sizes: RequestSizes | None  # what the inflation guard compared (behavior.md#inflation-guard)
    newest_user_ask_text: str  # the text of the fidelity report's newest user ask
    model_view: ModelView
    tool_samples: list[ToolSample] = field(default_factory=list)  # --tools
    warnings: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        return self.inserted.outcome

    @property
    def writer_watermark(self) -> WatermarkResult | None:
        """What a checkpoint writer starting now would cover."""
        return self.computed.watermark

    @property
    def insertion(self) -> InsertResult | None:
        """The engine's insertion (render, boundary, marks), when the gates let it run."""
        return self.inserted.result

    @property
    def rendered(self) -> RenderResult | None:
        """The insertion's render, else the dry run's (the gates stopped the insert before it)."""
        res = self.inserted.result
        return res.render if res is not None and res.render is not None else self.computed.preview


def inspect_source(
    source: InspectSource,
    *,
    memory_root: str | None = None,
    window: int | None = None,
    watermark: str | None = None,
    config: RebuildConfig | None = None,
    sidecar_tools: str | None = None,
    sample_tools: bool = False,
) -> Inspection:
    """Run the sidecar on `source`. Raises `InspectError` for an unusable option or session.
    `sidecar_tools`: the model has the sidecar's tools with this prefix (declared in the session's
    `toolPointers` unless the file declares its own, and added to the request after the rebuild);
    `sample_tools`: call each model tool once after the rebuild."""
    now = wall_clock_ms()
    sid = source.session_id
    with memory_for(sid, memory_root) as memory:
        service = SidecarService(config=config, memory_root=memory.root, clock=lambda: now)
        try:
            session = open_session(
                service, source, create_checkpoint=memory.temporary, sidecar_tools=sidecar_tools
            )
            view = list(session.context_view(MAIN_AGENT))
            model = choose_model(source, view, window)
            stored = store_watermark(service, session, view, source, watermark)
            computed = service.compute(sid, model=model.limits, preview="always").result
            before = service.build(sid).result
            covered = _tokens_up_to(view, before, stored.position)
            inserted = asyncio.run(service.insert(InsertRequest(sid, INSERT_REASON, MAIN_AGENT)))
            declared = session.tool_pointers.sidecar_prefix if session.tool_pointers is not None else None
            added = sidecar_tools if sidecar_tools is not None else declared
            output = BuildOutput(sidecar_tools=added)
            after = service.build(sid, output=output).result if inserted.outcome == "rebuilt" else None
            res = inserted.result
            boundary = _boundary_tokens(res, after)
            fidelity = res.fidelity if res is not None and res.fidelity is not None else computed.fidelity
            ask_text = _ask_text(session, fidelity)
            ask_id = fidelity.newest_user_ask.message_id if fidelity is not None else None
            samples = sample_calls(service, session, ask_id, ask_text, res) if sample_tools else []
        except DomainError as exc:
            raise InspectError(f"{source.path}: {exc}") from None
    shown = after if after is not None else before
    return Inspection(
        source=source,
        main_view=len(view),
        model=model,
        watermark=stored,
        memory=memory,
        computed=computed,
        before=request_side(before),
        covered_tokens=covered,
        inserted=inserted,
        after=request_side(after) if after is not None else None,
        boundary_tokens=boundary,
        fidelity=fidelity,
        sizes=res.sizes if res is not None and res.sizes is not None else computed.sizes,
        newest_user_ask_text=ask_text,
        model_view=ModelView(shown.tools_named, shown.tools_held, session.tool_pointers, added),
        tool_samples=samples,
        warnings=_warnings(source, computed, before, res, after),
    )


# -- the session ---------------------------------------------------------------------------------
def open_session(
    service: SidecarService,
    source: InspectSource,
    *,
    create_checkpoint: bool,
    sidecar_tools: str | None = None,
) -> Session:
    """`session/open` with the params (no parent: inspect reads one file); `create_checkpoint`: a
    missing checkpoint.md is created from the template, as a host may ask (behavior.md#writer-kit).
    `sidecar_tools` declares the sidecar's model tools with that prefix when the file declares no
    `toolPointers` of its own."""
    p = source.params
    declared = p.get("toolPointers")
    pointers = WireToolPointers.model_validate(declared).pointers() if declared is not None else None
    if pointers is None and sidecar_tools is not None:
        pointers = ToolPointers(sidecar_prefix=sidecar_tools)
    service.open(
        OpenRequest(
            session_id=source.session_id,
            project_id=p.get("projectId"),
            messages=p.get("messages") or [],
            tasks=p.get("tasks"),
            actors=p.get("actors"),
            watermark=p.get("watermark"),
            request_prefix=p.get("requestPrefix"),
            ids_ascending=bool(p.get("idsAscending", False)),
            tool_name_map=p.get("toolNameMap"),
            tool_pointers=pointers,
        ),
        create_checkpoint=create_checkpoint,
    )
    return service.sessions.require(source.session_id).session


def choose_model(source: InspectSource, view: Sequence[Message], window: int | None) -> ModelChoice:
    recorded = source.model.limits() if source.model is not None else engine.model_from_history(view)
    if window is not None:
        ids = recorded or ModelLimits(0)
        limits = ModelLimits(window, 0, ids.max_output_tokens, ids.provider_id, ids.model_id)
        return ModelChoice(limits, "option")
    if recorded is not None:
        return ModelChoice(recorded, "file" if source.model is not None else "history")
    return ModelChoice(ModelLimits(DEFAULT_WINDOW), "default")


def store_watermark(
    service: SidecarService,
    session: Session,
    view: Sequence[Message],
    source: InspectSource,
    given: str | None,
) -> WatermarkChoice:
    """`--watermark`, else the file's stored watermark, else the one a writer starting now covers:
    the first and the last are stored the way a host stores them, by a writer that succeeds."""
    origin: WatermarkSource
    if given is None and session.watermark is not None:
        origin = "file"
    elif given is None and engine.writer_watermark(session, view) is None:
        origin = "none"  # an empty view, or one no checkpoint can cover yet
    else:
        origin = "option" if given is not None else "writer"
        try:
            service.writer_started(session.session_id, given)
        except DomainError as exc:
            raise InspectError(f"--watermark: {exc}") from None
        service.writer_finished(session.session_id, "success")
    w = session.watermark
    position = next((i for i, m in enumerate(view) if m.id == w), None) if w is not None else None
    return WatermarkChoice(w, origin, position)


# -- the memory root -----------------------------------------------------------------------------
@contextmanager
def memory_for(session_id: str, root: str | None) -> Iterator[MemoryChoice]:
    """The given memory root, or a temporary one (where `session/open` creates `checkpoint.md`
    from the template)."""
    if root is not None:
        if not os.path.isdir(root):
            raise InspectError(f"--memory-root: {root}: not a directory")
        memory = MemoryRoot(root)
        present = memory.exists(_checkpoint_path(memory, session_id))
        yield MemoryChoice(memory.root, False, "present" if present else "missing")
        return
    with tempfile.TemporaryDirectory(prefix="mimo-inspect-") as tmp:
        yield MemoryChoice(MemoryRoot(tmp).root, True, "template")


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


def _tokens_up_to(view: Sequence[Message], built: BuildResult, w: int | None) -> int:
    """Of the stored messages a request sends, the estimated tokens of those up to W (inclusive),
    as `estimatedTokens` counts them."""
    if w is None:
        return 0
    shares = built.request.message_tokens
    return sum(shares.get(m.id, 0) for m in view[: w + 1])


def _ask_text(session: Session, fidelity: FidelityReport | None) -> str:
    ask_id = fidelity.newest_user_ask.message_id if fidelity is not None else None
    ask = session.get(ask_id) if ask_id is not None else None
    return raw_user_text(ask) if ask is not None else ""


def _boundary_tokens(inserted: InsertResult | None, after: BuildResult | None) -> int:
    """The boundary's share of the request after the rebuild."""
    if inserted is None or inserted.message is None or after is None:
        return 0
    return after.request.message_tokens.get(inserted.message["info"]["id"], 0)


def _warnings(
    source: InspectSource,
    computed: ComputeResult,
    before: BuildResult,
    inserted: InsertResult | None,
    after: BuildResult | None,
) -> list[str]:
    """Every warning of the run, once each, in the order the steps ran."""
    found = [*source.notes, *computed.trigger.warnings, *before.request.warnings]
    if not source.slices.get(MAIN_AGENT):
        found.insert(0, EMPTY_MAIN_SLICE)
    if inserted is not None:
        found += inserted.warnings
    if after is not None:
        found += after.request.warnings
    return list(dict.fromkeys(found))
