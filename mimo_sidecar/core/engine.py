"""Orchestration of the rebuild over one `Session` (behavior.md#trigger, behavior.md#watermark,
behavior.md#rebuild, behavior.md#request).

Pure and synchronous. Waiting for a checkpoint writer is the service's job (`service.insert_flow`):
it calls `insert_gate`, waits, picks the watermark (the one the writer it waited for stored, D21, or
the one read before the wait, D4), and then calls `plan_insert` and `apply_insert`, which either
apply the whole rebuild or nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import texts
from .config import RebuildConfig
from .errors import DomainError, ErrorCode
from .estimate.provider_count import Counting, counting_for
from .formats import DEFAULT_FORMAT, Target
from .formats.prefix import declared_tool_names, prefix_hash, render_prefix, warn_tools_missing
from .formats.report import NAMED_TOOL_MISSING, Report
from .memory.files import MemoryRoot
from .model_tools.definitions import prefix_tools
from .rebuild.boundary import (
    CompactMark,
    LastMessageInfo,
    MicrocompactionPlan,
    PlannedMark,
    apply_marks,
    boundary_base_time,
    build_boundary,
    plan_microcompaction,
    render_actors,
    render_index,
    tools_named_by,
)
from .rebuild.collapse import collapse
from .rebuild.fidelity import FidelityReport, fidelity_report
from .rebuild.live_step import DigestPoint, digest_point
from .rebuild.recent_user import logical_window, newest_user_ask
from .rebuild.render import RenderInputs, RenderResult, render
from .rebuild.tail_digest import interrupted_call_ids
from .rebuild.trigger import (
    BudgetWarnings,
    choose_usage,
    is_overflow,
    last_finished,
    overflow_count,
    usable_tokens,
    usage_recovered,
)
from .rebuild.watermark import WatermarkResult, watermark_for
from .request.assembly import BuiltRequest, build_messages, normalise_ahead
from .request.build_memo import BuildMemo
from .request.estimate_accuracy import ModelAccuracy, estimate_accuracy
from .request.running_size import view_request_tokens
from .request.size import RequestSizes, prefix_tokens, request_tokens
from .session.ids import IdMinter, IdScheme, ascending_scheme
from .session.message import Json, Message
from .session.session import Session
from .tool_pointers import PointerTexts, missing_tools, sidecar_tool_names
from .words import MAIN_AGENT, GateOutcome, InsertOutcome, PreviewMode, RenderOutcome, UsageSource

DEFAULT_MAX_OUTPUT_TOKENS = 32_000


@dataclass(frozen=True)
class ModelLimits:
    context_window: int
    input_limit: int = 0
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    provider_id: str = ""
    model_id: str = ""

    @property
    def key(self) -> str:
        return f"{self.provider_id}/{self.model_id}"


@dataclass(frozen=True)
class TriggerDecision:
    usable: int
    count: int
    overflow: bool
    usage_recovered: bool
    should_rebuild: bool
    hard: int
    budget: int | None
    usage_source: UsageSource
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ComputeResult:
    trigger: TriggerDecision
    watermark: WatermarkResult | None
    stored_watermark: str | None
    preview: RenderResult | None
    preview_outcome: InsertOutcome | None
    fidelity: FidelityReport | None = None  # with the preview
    sizes: RequestSizes | None = None  # with a preview that would rebuild or gain nothing
    accuracy: list[ModelAccuracy] = field(default_factory=list)  # with the preview (behavior.md#d15)

    @property
    def preview_computed(self) -> bool:
        return self.preview is not None


@dataclass
class InsertResult:
    outcome: RenderOutcome
    message: Json | None = None
    compacted: list[CompactMark] = field(default_factory=list)
    render: RenderResult | None = None
    watermark: str | None = None
    digest_up_to: str | None = None
    warnings: list[str] = field(default_factory=list)
    detail: str | None = None
    fidelity: FidelityReport | None = None  # whenever a render happened
    sizes: RequestSizes | None = None  # whenever a boundary was built (rebuilt, no-gain)
    changes: SessionChanges | None = None  # a planned `rebuilt`: what `apply_insert` will change


@dataclass(frozen=True)
class SessionChanges:
    """What a rebuilt insert changes in its session: the parts to mark (at `now_ms`) and the
    boundary to register."""

    boundary: Message
    marks: list[PlannedMark]
    now_ms: int


@dataclass(frozen=True)
class RequestPrefix:
    system: list[Any]
    tools: list[Any]
    hash: str
    request: Json | None = None  # the prefix fields in the output format (None for ai-sdk)


@dataclass(frozen=True)
class BuildResult:
    prefix: RequestPrefix
    request: BuiltRequest
    reminder_added: bool
    usage_pending: bool
    # D18: the tools the request's texts name (its boundary's, its memory reminder's), and the tool
    # names the request holds (None: unknown, no `requestPrefix.tools`).
    tools_named: tuple[str, ...] = ()
    tools_held: frozenset[str] | None = None
    reminder: str | None = None  # the per-turn memory reminder the request carries (the host view's)


# -- trigger and watermark (behavior.md#trigger, behavior.md#watermark) ------------------------
def decide_trigger(
    session: Session,
    config: RebuildConfig,
    model: ModelLimits | None,
    usage: Json | None,
    agent_id: str,
    warn_cache: BudgetWarnings | None = None,
    view: Sequence[Message] | None = None,
) -> TriggerDecision:
    msgs = view if view is not None else session.context_view(agent_id)
    finished = last_finished(msgs)
    ordering = session.ordering()
    notes: tuple[str, ...] = ()
    source: UsageSource = "request"
    if usage is None:

        def estimate() -> int:
            return estimated_request_tokens(session, agent_id)

        holders = None if session.inherits_context(agent_id) else session.newest_with_usage(agent_id)
        choice = choose_usage(msgs, ordering, session.view_start(agent_id), estimate, holders)
        usage, source = (dict(choice.tokens) if choice.tokens is not None else None), choice.source
        notes = (choice.warning,) if choice.warning else ()
    model = model or model_from_history(msgs)
    line = usable_tokens(
        model.context_window if model else 0,
        model.input_limit if model else 0,
        model.max_output_tokens if model else DEFAULT_MAX_OUTPUT_TOKENS,
        config,
        model.key if model else "",
        warn_cache,
    )
    count = int(overflow_count(usage)) if usage else 0
    overflow = bool(usage) and is_overflow(usage, line.usable, config, model.context_window if model else 0)
    recovered = usage_recovered(msgs, ordering, session.view_carriers(agent_id))
    summary = finished is not None and finished.info.get("summary") is True
    should = overflow and not recovered and not summary and agent_id == MAIN_AGENT
    warnings = tuple(line.warnings) + notes + (() if model else (texts.NO_MODEL_LIMITS,))
    return TriggerDecision(
        line.usable, count, overflow, recovered, should, line.hard, line.budget, source, warnings
    )


def estimated_request_tokens(session: Session, agent_id: str = MAIN_AGENT) -> int:
    """The request the agent's context view makes, estimated: the frozen prefix plus the messages
    the collapse keeps, as the provider of the model in use counts them (behavior.md#d15), from
    the view's running sum (`running_size`)."""
    counting = session_counting(session, agent_id)
    return prefix_tokens(session.request_prefix) + view_request_tokens(session, agent_id, counting)


def session_counting(session: Session, agent_id: str = MAIN_AGENT) -> Counting:
    """How the provider of the slice's model in use counts a request (`provider_count`)."""
    return counting_for(*(model_in_use(session, agent_id) or (None, None)))


def model_from_history(msgs: Sequence[Message]) -> ModelLimits | None:
    """Limits a host recorded on its newest assistant message (`info.limit.{context,input,output}`)."""
    newest = next((m for m in reversed(msgs) if m.role == "assistant"), None)
    limit = newest.info.get("limit") if newest is not None else None
    if not isinstance(limit, dict) or not isinstance(limit.get("context"), int):
        return None
    assert newest is not None
    return ModelLimits(
        limit["context"],
        int(limit.get("input") or 0),
        int(limit.get("output") or DEFAULT_MAX_OUTPUT_TOKENS),
        str(newest.info.get("providerID", "")),
        str(newest.info.get("modelID", "")),
    )


def writer_watermark(session: Session, main_view: Sequence[Message] | None = None) -> WatermarkResult | None:
    """The watermark a writer starting now should cover: over the main slice's view
    (behavior.md#watermark-lifecycle)."""
    return watermark_for(main_view if main_view is not None else session.context_view(MAIN_AGENT))


# -- rendering inputs --------------------------------------------------------------------------
def activity_tail(
    session: Session, watermark: str | None, digest_up_to: str | None
) -> tuple[list[Message] | None, list[Message] | None, list[str]]:
    """Main-slice messages with ord(W) < ord(m) <= ord(D) (behavior.md#section-activity), or None without both
    ends; and, from the same pass, every main-slice message after W (None when W is unknown), which the
    fidelity report searches for the newest tool error."""
    if not watermark:
        return None, None, []
    ordering = session.ordering()
    lo, hi = ordering.key(watermark), ordering.key(digest_up_to)
    if lo is None:
        return ([] if digest_up_to else None), None, [texts.activity_slice_skipped("watermark")]
    after = [m for m in session.slice(MAIN_AGENT) if lo < ordering.key_of(m)]
    if not digest_up_to:
        return None, after, []
    if hi is None:
        return [], after, [texts.activity_slice_skipped("digestUpTo")]
    return [m for m in after if ordering.key_of(m) <= hi], after, []


def render_inputs(
    session: Session,
    memory: MemoryRoot,
    config: RebuildConfig,
    *,
    tail: list[Message] | None,
    last_info: LastMessageInfo | None,
    agent_id: str | None,
    now_ms: int,
    memory_keys: list[str] | None = None,
) -> RenderInputs:
    return RenderInputs(
        session_id=session.session_id,
        project_id=session.project_id,
        memory=memory,
        caps=config.push_caps,
        tasks=session.listed_tasks(now_ms, config.task_archive_days),
        actors=session.active_actors(),
        recent_candidates=logical_window(session.newest_first(MAIN_AGENT)),  # D11
        newest_user_ask=newest_user_ask(session.newest_first(MAIN_AGENT)),  # D13
        tail=tail,
        last_message_info=last_info,
        agent_id=agent_id,
        memory_keys=memory_keys,
        pointers=PointerTexts(session.tool_pointers),
    )


# -- compute (behavior.md#trigger + behavior.md#watermark + a dry-run render) -------------------
def compute(
    session: Session,
    memory: MemoryRoot,
    config: RebuildConfig,
    *,
    agent_id: str = MAIN_AGENT,
    usage: Json | None = None,
    model: ModelLimits | None = None,
    preview: PreviewMode = "always",
    now_ms: int,
    warn_cache: BudgetWarnings | None = None,
) -> ComputeResult:
    """The trigger decision, the writer's watermark and, as `preview` says, a dry-run render: a
    render of the whole boundary, so "when-due" keeps the call a host makes before every model call
    flat (most of them cross no line)."""
    main_view = session.context_view(MAIN_AGENT)
    view = main_view if agent_id == MAIN_AGENT else session.context_view(agent_id)
    trigger = decide_trigger(session, config, model, usage, agent_id, warn_cache, view)
    wm = writer_watermark(session, main_view)
    outcome: InsertOutcome | None = insert_gate(session, memory, config, agent_id)
    wanted = preview == "always" or (preview == "when-due" and trigger.should_rebuild)
    if not wanted or agent_id != MAIN_AGENT:
        return ComputeResult(trigger, wm, session.watermark, None, outcome)
    stored = session.watermark
    point = insert_digest_point(session, config, main_view, "auto", None)
    d = point.message_id
    tail, after, _ = activity_tail(session, stored, d)
    inputs = render_inputs(
        session, memory, config, tail=tail, last_info=point.last_info, agent_id=agent_id, now_ms=now_ms
    )
    rendered = render(inputs)
    fidelity = fidelity_report(inputs, rendered, after)
    accuracy = view_accuracy(session, main_view)
    sizes = None
    if outcome is None and stored is not None:
        outcome = "insert-failed"
        if rendered.text:
            # A stand-in boundary: the real one differs only in its freshly minted IDs.
            base = base_time(session, stored)
            draft = _boundary(
                session, memory, rendered, stored, d, base, now_ms, _DRAFT_MINTER, [],
                msgs=main_view, tail=tail,
            )
            spared = live_ids(main_view, point)
            sizes, _ = request_sizes(session, draft, base, now_ms, session.tool_name_map, spared)
            outcome = "no-gain" if _refused(config, sizes) else "rebuilt"
    return ComputeResult(trigger, wm, stored, rendered, outcome, fidelity, sizes, accuracy)


def view_accuracy(session: Session, view: Sequence[Message]) -> list[ModelAccuracy]:
    """How far the request-size estimate was from the usage the view's steps recorded."""
    kept = collapse(list(view), session.ordering()).messages
    return estimate_accuracy(kept, prefix_tokens(session.request_prefix))


# -- insert (behavior.md#rebuild) ---------------------------------------------------------------
def insert_gate(
    session: Session, memory: MemoryRoot, config: RebuildConfig, agent_id: str
) -> GateOutcome | None:
    """The outcome that ends a rebuild before any rendering, or None to proceed (behavior.md#rebuild-outcomes,
    behavior.md#rebuild-from-checkpoint, behavior.md#agent-gate)."""
    if config.checkpoint_disabled:
        return "checkpoint-off"
    if config.memory_disable_write:
        return "memory-write-off"
    if agent_id != MAIN_AGENT:
        return "not-main-agent"
    if not memory.exists(memory.checkpoint_path(session.session_id)):
        return "no-checkpoint"
    if not session.watermark:
        return "no-watermark"
    return None


def boundary_id_scheme(session: Session) -> IdScheme | None:
    """The scheme the boundary's IDs are minted in, or None when the host must supply one.

    In sequence mode, or while every ID is a v2 ID, MiMo's v2 IDs (behavior.md#id-use). When the host declared
    non-v2 IDs ascending, the boundary must sort among them by its ID: it is minted in the scheme of the
    newest host ID when that is recognisable (legacy v1, OpenCode's), else None. A v2 ID there would sort
    after every later host ID, and no rebuild would ever trigger again (behavior.md#recover-once).
    """
    if not session.id_mode or session.all_ids_v2:
        return "v2"
    newest = session.newest_id()
    return ascending_scheme(newest) if newest is not None else "v2"


def require_boundary_id(session: Session, boundary_id: str | None) -> None:
    """Raises DomainError `boundary-id-required` when the host must name the boundary's ID."""
    if boundary_id is None and boundary_id_scheme(session) is None:
        raise DomainError(
            ErrorCode.BOUNDARY_ID_REQUIRED,
            texts.boundary_id_required(session.newest_id() or ""),
            ("boundaryMessageId",),
            {"sessionId": session.session_id},
        )


def insert_messages(session: Session, reason: str) -> list[Message]:
    """`msgs` of behavior.md#rebuild: the full main slice for a manual rebuild (behavior.md#manual-rebuild),
    else the main view."""
    return session.slice(MAIN_AGENT) if reason == "manual" else list(session.context_view(MAIN_AGENT))


def insert_digest_point(
    session: Session, config: RebuildConfig, msgs: Sequence[Message], reason: str, requested: str | None
) -> DigestPoint:
    """`D` for an insert over `msgs` (behavior.md#digest-point): the newest step stays live on an
    automatic rebuild (D19), and a step waiting for results always does (D20); each can be turned off."""
    return digest_point(
        msgs,
        automatic=reason != "manual",
        keep_newest_step=config.keep_newest_step,
        keep_pending_step=config.keep_pending_step,
        requested=requested,
        ordering=session.ordering(),
    )


def live_ids(msgs: Sequence[Message], point: DigestPoint) -> frozenset[str]:
    """The messages of the list the boundary leaves live after `D`: microcompaction spares them (D19)."""
    if point.live_from is None:
        return frozenset()
    return frozenset(m.id for m in msgs[point.live_from :])


def insert(session: Session, memory: MemoryRoot, config: RebuildConfig, **kw: Any) -> InsertResult:
    """`plan_insert` then `apply_insert`: the insertion in one step."""
    result = plan_insert(session, memory, config, **kw)
    apply_insert(session, result)
    return result


def plan_insert(
    session: Session,
    memory: MemoryRoot,
    config: RebuildConfig,
    *,
    watermark: str,
    reason: str,
    now_ms: int,
    minter: IdMinter,
    digest_up_to: str | None = None,
    agent: str | None = None,
    model: Json | None = None,
    boundary_id: str | None = None,
    tool_name_map: dict[str, str] | None = None,
    watermark_before_wait: str | None = None,
) -> InsertResult:
    """Render and build the boundary and plan the compaction marks (behavior.md#insert-steps), changing
    nothing: a `rebuilt` result carries its `changes` for `apply_insert`, so the caller can write its answer
    before the session changes, and the change is all or nothing.

    `watermark` is the one the insert uses; `watermark_before_wait`, when a writer wait came first,
    the one stored before it (D21 and D4 say which was chosen, in `warnings`). Raises DomainError
    when the host must name the boundary's ID.
    """
    require_boundary_id(session, boundary_id)
    msgs = insert_messages(session, reason)
    point = insert_digest_point(session, config, msgs, reason, digest_up_to)
    d = point.message_id
    tail, after, warnings = activity_tail(session, watermark, d)
    if point.warning is not None:
        warnings.append(point.warning)
    inputs = render_inputs(
        session, memory, config, tail=tail, last_info=point.last_info, agent_id=MAIN_AGENT, now_ms=now_ms
    )
    result = InsertResult("insert-failed", watermark=watermark, digest_up_to=d, warnings=warnings)
    try:
        rendered = render(inputs)
    except Exception as exc:  # behavior.md#insert-steps: a render error counts as an empty render
        result.detail = texts.rendering_failed(exc)
        return result
    result.render = rendered
    result.fidelity = fidelity_report(inputs, rendered, after)
    warnings += list(rendered.warnings)
    if not rendered.text:
        result.detail = rendered.empty_reason or texts.RENDERED_EMPTY
        return result
    base = base_time(session, watermark)
    boundary = _boundary(
        session,
        memory,
        rendered,
        watermark,
        d,
        base,
        now_ms,
        minter,
        warnings,
        msgs=msgs,
        tail=tail,
        agent=agent,
        model=model,
        boundary_id=boundary_id,
    )
    missing = unheld_named_tools(session, tools_named_by_boundary(boundary), ())
    if missing:
        warnings.append(f"{NAMED_TOOL_MISSING}: {texts.named_tools_missing('the boundary', missing)}")
    names = tool_names(session, tool_name_map)
    result.sizes, plan = request_sizes(session, boundary, base, now_ms, names, live_ids(msgs, point))
    if plan.unmapped:
        warnings.append(texts.unmapped_tool_results(plan.unmapped))
    if _refused(config, result.sizes):
        result.outcome, result.detail = "no-gain", texts.no_gain(result.sizes.before, result.sizes.after)
        return result
    planned = plan.marks
    result.compacted = [m.compact_mark(now_ms) for m in planned]
    if base is None:
        warnings.append(texts.MICROCOMPACTION_SKIPPED)
    if watermark_before_wait is not None and watermark_before_wait != watermark:
        warnings.append(texts.watermark_followed_writer(watermark_before_wait, watermark))  # D21
    elif session.watermark is not None and session.watermark != watermark:
        warnings.append(texts.watermark_kept_before_wait(watermark, session.watermark))  # D4
    result.outcome, result.message = "rebuilt", boundary.to_json()
    result.changes = SessionChanges(boundary, planned, now_ms)
    return result


def apply_insert(session: Session, result: InsertResult) -> None:
    """Make a planned insertion's changes (none unless it is `rebuilt`): mark the parts, register
    the boundary; the revision moves by one."""
    if result.changes is None:
        return
    changes = result.changes
    apply_marks(changes.marks, changes.now_ms, session.refresh_part)
    session.insert_boundary(changes.boundary)


# A minter for stand-in boundaries (compute's dry run): deterministic, and separate from the
# server's minter, whose counter must only move for IDs that are handed out.
_DRAFT_MINTER = IdMinter(lambda n: bytes(n))


def base_time(session: Session, watermark: str) -> int | None:
    """The boundary's base time for W (`boundary_base_time`): the boundary is stamped one
    millisecond after it, and microcompaction marks what was created after it.

    D12: W is looked up wherever the session can see it, not only in the view. When W lies behind
    an earlier boundary it is not in the view, and MiMo then stamps the boundary "now", which
    hides every live message after W. When W is an earlier boundary, MiMo's W + 1 lists the new
    boundary before the messages that boundary had digested, which then come back in full. Only
    W's own slice is read (a W in the inherited context precedes every message of this session).
    """
    own = session.get(watermark)
    if own is None:
        return boundary_base_time(session.find_in_context(watermark), (), session.ordering())
    return boundary_base_time(own, session.listed_after(own), session.ordering())


def _boundary(
    session: Session,
    memory: MemoryRoot,
    rendered: RenderResult,
    watermark: str,
    digest_up_to: str | None,
    base: int | None,
    now_ms: int,
    minter: IdMinter,
    warnings: list[str],
    *,
    msgs: Sequence[Message],
    tail: Sequence[Message] | None = None,
    agent: str | None = None,
    model: Json | None = None,
    boundary_id: str | None = None,
) -> Message:
    """The boundary message of behavior.md#boundary-message for a rendered text (not yet registered), stamped
    `base` + 1 (`base_time`), or now + 1 without one; its checkpoint part lists the calls the digest of
    `tail` shows as interrupted (D20), and the tools its texts name (D18). Companion texts that fail are
    reported in `warnings`."""
    pointers = PointerTexts(session.tool_pointers)
    actors_text = _or_empty(
        lambda: render_actors(session.active_actors(), now_ms, pointers), warnings, "actors block"
    )
    named = rendered.tools_named + (pointers.names("actors") if actors_text else ())
    built = build_boundary(
        session_id=session.session_id,
        watermark=watermark,
        digest_up_to=digest_up_to,
        has_activity=rendered.has_activity,
        rendered_text=rendered.text,
        index_text=_or_empty(
            lambda: render_index(memory, session.session_id, pointers), warnings, "checkpoint index"
        ),
        actors_text=actors_text,
        agent=agent or _last_user_field(msgs, "agent"),
        model=model or _last_user_field(msgs, "model"),
        boundary_created_at=base,
        now_ms=now_ms,
        minter=minter,
        message_id=boundary_id,
        id_scheme=boundary_id_scheme(session) or "v2",
        interrupted_calls=interrupted_call_ids(tail) if tail else (),
        tools_named=tuple(dict.fromkeys(named)),
    )
    return Message(built["info"], built["parts"])


def tools_named_by_boundary(boundary: Message | None) -> tuple[str, ...]:
    """The tools a boundary's texts name, as its checkpoint part records them (nothing recorded:
    none known)."""
    return (tools_named_by(boundary) or ()) if boundary is not None else ()


def held_tools(session: Session, added: Sequence[str]) -> set[str] | None:
    """The tool names a request of the session holds: `requestPrefix.tools` (in any shape) and the
    sidecar's tools `added` to it; when the session declares the sidecar's tools in `toolPointers`,
    those too. None when nothing is known: no `requestPrefix.tools` and nothing added."""
    declared = (session.request_prefix or {}).get("tools")
    pointers = session.tool_pointers
    declared_sidecar = pointers.sidecar_prefix if pointers is not None else None
    sidecar = sidecar_tool_names(declared_sidecar) if declared_sidecar is not None else ()
    if not isinstance(declared, list) and not added:
        return None
    return declared_tool_names(declared if isinstance(declared, list) else []) | set(added) | set(sidecar)


def unheld_named_tools(session: Session, named: Sequence[str], added: Sequence[str]) -> list[str]:
    """The tools of `named` that the session's requests do not hold (D18); [] when unknown."""
    held = held_tools(session, added)
    return [] if held is None else missing_tools(named, held)


def request_sizes(
    session: Session,
    boundary: Message,
    base: int | None,
    now_ms: int,
    tool_name_map: Mapping[str, str] | None = None,
    spared: frozenset[str] = frozenset(),
) -> tuple[RequestSizes, MicrocompactionPlan]:
    """The request now (over the main context view) and once `boundary` is inserted and microcompaction has
    marked the results created after the boundary's base time (`base`, at `now_ms`), those of the
    live step (`spared`) excepted, estimated (behavior.md#request); and that microcompaction's plan."""
    plan = plan_microcompaction(
        session.messages(), base, boundary.id, tool_name_map=tool_name_map, spared=spared
    )
    ordering = session.ordering()
    counting = session_counting(session)
    after = request_tokens(session.view_with(boundary), ordering, counting, plan.marks, now_ms)
    return RequestSizes(view_request_tokens(session, MAIN_AGENT, counting), after), plan


def tool_names(session: Session, insert_map: Mapping[str, str] | None) -> dict[str, str]:
    """The tool-name map of one insert: the session's (`session/open`, `session/sync`), with the
    insert's own entries on top (they win for a name both map)."""
    return {**session.tool_name_map, **(insert_map or {})}


def _refused(config: RebuildConfig, sizes: RequestSizes) -> bool:
    """The inflation guard: a rebuild must make the request smaller."""
    return config.inflation_guard and sizes.after >= sizes.before


def _or_empty(make: Callable[[], str], warnings: list[str], what: str) -> str:
    """behavior.md#insert-steps: an error while rendering a companion text counts as "" (and is reported)."""
    try:
        return make()
    except Exception as exc:
        warnings.append(texts.companion_text_omitted(what, exc))
        return ""


def _last_user_field(msgs: Sequence[Message], name: str) -> Any:
    for m in reversed(msgs):
        if m.role == "user" and name in m.info:
            return m.info[name]
    return None


# -- request assembly (behavior.md#request) ----------------------------------------------------
def prefix_of(
    session: Session, built: BuiltRequest | None = None, sidecar_prefix: str | None = None
) -> RequestPrefix:
    """The frozen request prefix (behavior.md#request-prefix) in the format of `built` (default
    `ai-sdk`), with a hash over the format's own prefix bytes for prompt-cache comparisons. With
    `sidecar_prefix`, the sidecar's model tools follow the host's (D18), names so prefixed: the hash
    covers them."""
    prefix = session.request_prefix or {}
    system = list(prefix.get("system") or [])
    tools = list(prefix.get("tools") or [])
    if sidecar_prefix is not None:
        tools += prefix_tools(sidecar_prefix)
    if built is None or built.format == DEFAULT_FORMAT:
        return RequestPrefix(system, tools, prefix_hash(system, tools, None))
    report = Report(built.warnings)
    model_id = built.target.model_id if built.target is not None else None
    request = render_prefix(
        built.format, system, tools, model_id=model_id, cache_ttl=built.cache_ttl, report=report
    )
    if request is not None:
        warn_tools_missing(built.format, request, built.messages, report)
    return RequestPrefix(system, tools, prefix_hash(system, tools, request), request)


def model_in_use(session: Session, agent_id: str) -> tuple[str | None, str | None] | None:
    """The provider and model of the slice's newest stored assistant message: the default target
    of the provider formats. Read from storage, not from the request, so that it does not change
    when a rebuild collapses the assistant messages out of the view (the Chat system role and the
    prefix hash depend on it) and so that the writer's fork goes to the model the loop uses."""
    for message in session.newest_first(agent_id):
        if message.role != "assistant":
            continue
        provider, model = message.info.get("providerID"), message.info.get("modelID")
        if isinstance(provider, str) or isinstance(model, str):
            return (
                provider if isinstance(provider, str) else None,
                model if isinstance(model, str) else None,
            )
    return None


def has_memory_artifacts(session: Session, memory: MemoryRoot, config: RebuildConfig, now_ms: int) -> bool:
    """behavior.md#memory-reminder: the session memory directory is non-empty, or the session has a listed
    task."""
    return bool(session.listed_tasks(now_ms, config.task_archive_days)) or memory.session_dir_nonempty(
        session.session_id
    )


def normalise_at_open(session: Session) -> None:
    """Normalise the main agent's view for its first request, as `build` will convert it (its
    memo; `BuildMemo.normalise_ahead`): `session/open` calls it while the parse is fresh. Not for
    a session opened with a parent: its view holds the parent's (and their parents') messages,
    which the open did not read; an open costs what it is given."""
    if session.parent_id is not None:
        return
    normalise_ahead(
        session.context_view(MAIN_AGENT),
        collapse_tail=True,  # `build`'s default
        ordering=session.ordering(),
        memo=session.kept(("build", MAIN_AGENT), BuildMemo),
        boundary=session.view_checkpoint_boundary(MAIN_AGENT),
    )


def build(
    session: Session,
    memory: MemoryRoot,
    config: RebuildConfig,
    *,
    agent_id: str = MAIN_AGENT,
    collapse_tail: bool = True,
    shell_style: bool = False,
    has_actor_tool: bool = False,
    memory_reminder: bool = True,
    now_ms: int,
    fmt: str = DEFAULT_FORMAT,
    target: Target | None = None,
    cache_ttl: str | None = None,
    sidecar_tools: str | None = None,
) -> BuildResult:
    """The agent's next request in format `fmt` (see `core.formats`); with `sidecar_tools` (a
    prefix), the sidecar's model tools in its tools (D18)."""
    view = list(session.context_view(agent_id))
    is_main = agent_id == MAIN_AGENT
    reminder: str | None = None
    reminder_names: tuple[str, ...] = ()
    if memory_reminder and is_main and has_memory_artifacts(session, memory, config, now_ms):
        pointers = PointerTexts(session.tool_pointers)
        made = pointers.memory_reminder(
            pointers.memory_path(memory.session_dir(session.session_id), memory.relative),
            memory.root,
            shell_style=shell_style,
            has_actor_tool=has_actor_tool,
        )
        reminder, reminder_names = made if made is not None else (None, ())
    built = build_messages(
        view,
        collapse_tail=collapse_tail and is_main,
        ordering=session.ordering(),
        reminder=reminder,
        fmt=fmt,
        target=target,
        cache_ttl=cache_ttl,
        model_in_use=model_in_use(session, agent_id),
        memo=session.kept(("build", agent_id), BuildMemo),
        boundary=session.view_checkpoint_boundary(agent_id),
    )
    pending = usage_recovered(view, session.ordering(), session.view_carriers(agent_id))
    added = sidecar_tool_names(sidecar_tools) if sidecar_tools is not None else ()
    named_checks = [
        ("the boundary", tools_named_by_boundary(session.view_start(agent_id)) if is_main else ()),
        ("the memory reminder", reminder_names if reminder is not None else ()),
    ]
    for where, named in named_checks:
        missing = unheld_named_tools(session, named, added)
        if missing:
            built.warnings.append(f"{NAMED_TOOL_MISSING}: {texts.named_tools_missing(where, missing)}")
    held = held_tools(session, added)
    return BuildResult(
        prefix_of(session, built, sidecar_tools),
        built,
        reminder is not None,
        pending,
        tuple(dict.fromkeys(n for _, names in named_checks for n in names)),
        frozenset(held) if held is not None else None,
        reminder,
    )


def writer_view(session: Session, up_to: str | None = None) -> list[Message]:
    """The checkpoint writer's forked history (behavior.md#watermark-lifecycle, behavior.md#writer-request):
    the main view up to and including its watermark (the in-flight writer's, else the one a writer starting
    now would cover).

    Raises KeyError naming the watermark when it is not in the view (the writer is not started).
    """
    view = list(session.context_view(MAIN_AGENT))
    if up_to is None:
        up_to = session.writer.end_message_id if session.writer.in_flight else None
    if up_to is None:
        wm = watermark_for(view)
        if wm is None:
            return []
        up_to = wm.id
    for i, m in enumerate(view):
        if m.id == up_to:
            return view[: i + 1]
    raise KeyError(up_to)


def build_for_writer(
    session: Session,
    up_to: str | None = None,
    *,
    fmt: str = DEFAULT_FORMAT,
    target: Target | None = None,
    cache_ttl: str | None = None,
    instructions: str | None = None,
    sidecar_tools: str | None = None,
) -> BuildResult:
    """The writer's request: its view up to W, never collapsed, no per-turn reminder
    (behavior.md#writer-request); with `instructions`, those as the last user content
    (behavior.md#writer-request)."""
    view = writer_view(session, up_to)
    built = build_messages(
        view,
        collapse_tail=False,
        ordering=session.ordering(),
        reminder=None,
        fmt=fmt,
        target=target,
        cache_ttl=cache_ttl,
        closing=(instructions, view[-1].id) if instructions is not None and view else None,
        model_in_use=model_in_use(session, MAIN_AGENT),
        memo=session.kept(("writer-build",), BuildMemo),
    )
    return BuildResult(prefix_of(session, built, sidecar_tools), built, False, False)
