"""Wire models of the rebuild methods: rebuild/compute, rebuild/insert, request/build, rebuild/status."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..core import engine
from ..core.rebuild import fidelity as core_fidelity
from ..core.request.estimate_accuracy import ModelAccuracy
from ..core.request.size import RequestSizes as CoreRequestSizes
from ..core.words import (
    MAIN_AGENT,
    InsertOutcome,
    InsertReason,
    NoticeKind,
    PreviewMode,
    RequestFormat,
    StatusState,
    UsageSource,
    WaitResult,
)
from .common import Json, MessageId, NonEmptyStr, Params, Result, Revision, SessionId, ToolNameMap, ToolPrefix

NonNegative = Annotated[int, Field(ge=0)]
AgentId = Annotated[
    str,
    Field(
        min_length=1, description="The acting agent's slice; `main` (the default) is the user-facing agent."
    ),
]

# ---------------------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------------------


class CacheUsage(Params):
    read: NonNegative = 0
    write: NonNegative = 0


class TokenUsage(Params):
    """The provider usage of one finished assistant step (behavior.md#finish-values `tokens`)."""

    total: NonNegative | None = Field(None, description="Used as the count when non-zero "
                                                        "(behavior.md#overflow-test).")
    input: NonNegative = 0
    output: NonNegative = 0
    reasoning: NonNegative | None = Field(None, description="Never added to the count "
                                                            "(behavior.md#overflow-test).")
    cache: CacheUsage = Field(default_factory=CacheUsage)


class ModelLimits(Params):
    """The model's limits (behavior.md#usable-line)."""

    context_window: NonNegative = Field(description="`limit.context`; 0 turns overflow handling off.")
    input_limit: NonNegative | None = Field(
        None, description="`limit.input`; when non-zero it is the hard window (behavior.md#usable-line)."
    )
    max_output_tokens: NonNegative | None = Field(
        None, description="Used only to validate a budget; default 32000."
    )
    provider_id: str | None = Field(
        None, description="With modelId, the key `<providerId>/<modelId>` of budget maps."
    )
    model_id: str | None = None

    def limits(self) -> engine.ModelLimits:
        """The core's limits: an absent input limit is 0 (none), an absent output size the default."""
        return engine.ModelLimits(
            self.context_window,
            self.input_limit or 0,
            self.max_output_tokens or engine.DEFAULT_MAX_OUTPUT_TOKENS,
            self.provider_id or "",
            self.model_id or "",
        )


class SectionInfo(Result):
    """One section of the rebuild text, as rendered (or why it is absent)."""

    key: str = Field(
        description="Stable name: tasks, checkpoint, actors, recent_user, project_memory, "
        "global_memory, notes, memory_keys, activity."
    )
    heading: str
    tokens: int = Field(description="Estimated tokens of the section as emitted (behavior.md#est).")
    cap: int | None = Field(None, description="The section's cap, in `unit`.")
    unit: str = Field(description="`tokens`, `chars` (UTF-16 units) or `lines`.")
    present: bool
    truncated: bool = False
    shed: bool = Field(False, description="Removed (wholly or partly) by the optional total cap (D7).")
    reason: str | None = Field(None, description="Why the section is absent, truncated or shed.")
    path: str | None = Field(None, description="The file a file-backed section was read from.")


class RenderReport(Result):
    """The section report returned with every render."""

    sections: list[SectionInfo]
    total_tokens: int = Field(description="Estimated tokens of the whole rebuild text.")
    total_cap: int | None = Field(None, description="`push_caps.total` when set (D7).")
    over_cap: bool = Field(False, description="Still over the total cap after shedding everything sheddable.")
    has_activity: bool = Field(description="A `# Recent activity` section was rendered.")
    shed_units: list[str] = Field(default_factory=list, description="What the total cap removed, in order.")
    empty_reason: str | None = Field(
        None, description="Why the text is empty: the agent gate (behavior.md#agent-gate) or the early bail "
        "(behavior.md#early-bail)."
    )
    text: str | None = Field(
        None,
        description="The rebuild text: only in `rebuild/compute`'s `preview.report`, with `includeText`.",
    )


class UserAskFidelity(Result):
    """Is the newest genuine user ask (a user message with non-synthetic text: not a boundary, a
    tool-result carrier or harness-injected text) in the boundary's Recent user input?"""

    status: Literal["verbatim", "truncated", "missing", "none"] = Field(
        description="`truncated`: head and tail kept around the elision marker. `none`: the main "
        "slice holds no user ask at all."
    )
    message_id: MessageId | None = Field(None, description="The ask's message.")
    appended: bool = Field(
        False, description="D13 appended it: without D13 it would be missing (`reason` says why)."
    )
    reason: str | None = Field(None, description="Why it is missing, or why D13 had to append it.")


class UnlistedTask(Result):
    task_id: str
    reason: str = Field(description="Cut by the ledger cap, nested too deep, or its parent is not listed.")


class TasksFidelity(Result):
    open_held: int = Field(description="The session's open tasks (not done, abandoned or archived).")
    open_listed: int = Field(description="Those the rendered Tasks ledger lists.")
    unlisted: list[UnlistedTask] = Field(default_factory=list)


class ToolErrorFidelity(Result):
    """The newest tool call after the watermark that ended in an error."""

    message_id: MessageId = Field(description="The message issuing the call.")
    call_id: str
    tool: str
    in_digest: bool = Field(description="Its error line is in the `# Recent activity` digest.")
    reason: str | None = Field(
        None,
        description="Why it is not: after `digestUpTo` (it stays in the live messages), the digest's "
        "200-line cap, or no digest.",
    )


class FidelityReport(Result):
    """What of the live conversation the rebuild keeps (with every render, D13)."""

    newest_user_ask: UserAskFidelity
    tasks: TasksFidelity
    newest_tool_error: ToolErrorFidelity | None = Field(
        None, description="Absent when no tool call after the watermark ended in an error."
    )
    cut_sections: list[str] = Field(
        default_factory=list, description="Keys of the sections cut by their own caps."
    )
    shed_sections: list[str] = Field(
        default_factory=list,
        description="Keys of the sections shed, wholly or partly, by the total cap (D7).",
    )

    @classmethod
    def of(cls, report: core_fidelity.FidelityReport) -> FidelityReport:
        ask, tasks, error = report.newest_user_ask, report.tasks, report.newest_tool_error
        return cls(
            newest_user_ask=UserAskFidelity.of_fields(ask),
            tasks=TasksFidelity.of_fields(
                tasks, unlisted=[UnlistedTask.of_fields(u) for u in tasks.unlisted]
            ),
            newest_tool_error=None if error is None else ToolErrorFidelity.of_fields(error),
            cut_sections=list(report.cut_sections),
            shed_sections=list(report.shed_sections),
        )


class RequestSizes(Result):
    """The request a rebuild replaces and the one it leaves, in estimated tokens: the stored messages
    the collapse keeps (as `request/build`'s `estimatedTokens`, counted as the provider of the model
    in use counts them, D15), compacted results counted as the cleared placeholder, the frozen prefix
    (the same on both sides) not counted."""

    before_tokens: int = Field(description="The view now.")
    after_tokens: int = Field(
        description="The boundary plus the view after it, collapsed, with this rebuild's compaction marks."
    )

    @classmethod
    def of(cls, sizes: CoreRequestSizes) -> RequestSizes:
        return cls(before_tokens=sizes.before, after_tokens=sizes.after)


# ---------------------------------------------------------------------------------------------
# rebuild/compute
# ---------------------------------------------------------------------------------------------


class ComputeParams(Params):
    session_id: SessionId
    agent_id: AgentId = MAIN_AGENT
    usage: TokenUsage | None = Field(
        None,
        description="The last finished assistant step's usage; default: the `tokens` of the newest "
        "assistant message of the agent's view with a truthy `finish`.",
    )
    model: ModelLimits | None = Field(
        None, description="Default: `info.limit` ({context, input, output}) of the newest assistant message."
    )
    preview: bool | PreviewMode = Field(
        "when-due",
        description="When to dry-run the render and return its section report: `when-due` (only when "
        "`trigger.shouldRebuild` is true), `always` (`true`), `never` (`false`).",
    )
    include_text: bool = Field(
        False, description="Also return the previewed rebuild text, as `preview.report.text`."
    )


class TriggerInfo(Result):
    usable: int = Field(description="The trigger line: floor(effective × ratio) (behavior.md#usable-line).")
    count: int = Field(description="The usage count compared with it (behavior.md#overflow-test).")
    overflow: bool = Field(description="count ≥ usable (and compaction.auto, and a non-zero window).")
    usage_recovered: bool = Field(
        description="This usage record was already recovered by a newer boundary (behavior.md#recover-once)."
    )
    usage_pending: bool = Field(description="Show usage as pending: the same as usageRecovered "
                                            "(behavior.md#usage-pending).")
    should_rebuild: bool = Field(
        description="overflow, not recovered, the step is not a summary message (`info.summary: true`), "
        "and the main agent (behavior.md#trigger-loop)."
    )
    hard: int = Field(
        description="The hard window: limit.input if non-zero, else limit.context (behavior.md#usable-line)."
    )
    budget: int | None = Field(
        None, description="The working-window budget from compaction.max_context, if any."
    )
    usage_source: UsageSource = Field(
        description="Where `count` comes from: `request` (the `usage` param); `last-finished` (the "
        "newest finished assistant step of the view); `earlier-step` (that step has no usage: the newest "
        "assistant step since the view's boundary that has some); `estimate` (no step since the boundary "
        "has usage: the estimated request, prefix included); `none` (no finished step). The two fallbacks "
        "add a warning."
    )
    warnings: list[str] = Field(default_factory=list)


class WatermarkInfo(Result):
    """The watermark a checkpoint writer starting now should cover (behavior.md#watermark)."""

    message_id: MessageId
    index: int = Field(description="Its index in the main slice's view.")
    tail_tokens: int = Field(description="Estimated tokens of the messages after it.")
    tail_text_blocks: int = Field(description="Messages after it that hold a text or reasoning part.")
    adjusted: bool = Field(description="The API-invariant adjustment moved it (split shapes, D8).")


class PreviewInfo(Result):
    outcome: InsertOutcome = Field(
        description="What rebuild/insert would answer now, without waiting for a writer."
    )
    report: RenderReport
    fidelity: FidelityReport
    sizes: RequestSizes | None = Field(
        None,
        description="When the outcome would be `rebuilt` or `no-gain`: what the inflation guard compares.",
    )


class StepEstimate(Result):
    message_id: MessageId = Field(description="The assistant message holding the step's usage record.")
    estimated_tokens: int = Field(description="The estimate of the request that produced the step.")
    usage_tokens: int = Field(description="Its prompt count in the usage record: input + cache read + write.")


class EstimateAccuracy(Result):
    """How far the request-size estimate was from the provider's count, for one model
    (behavior.md#d15)."""

    provider_id: str | None = None
    model_id: str | None = None
    ratio: float = Field(
        description="Σ estimatedTokens / Σ usageTokens over `steps` (3 decimals): 1 is exact, below 1 "
        "the estimate was short."
    )
    estimated_tokens: int
    usage_tokens: int
    steps: list[StepEstimate] = Field(
        description="The model's newest steps with usage in the view, oldest first."
    )

    @classmethod
    def of(cls, accuracy: ModelAccuracy) -> EstimateAccuracy:
        return cls(
            provider_id=accuracy.provider_id,
            model_id=accuracy.model_id,
            ratio=round(accuracy.ratio, 3),
            estimated_tokens=accuracy.estimated,
            usage_tokens=accuracy.counted,
            steps=[
                StepEstimate(message_id=s.message_id, estimated_tokens=s.estimated, usage_tokens=s.counted)
                for s in accuracy.steps
            ],
        )


class ComputeResult(Result):
    revision: Revision
    trigger: TriggerInfo
    watermark: WatermarkInfo | None = Field(
        None, description="Absent when the view is empty or has no valid watermark."
    )
    stored_watermark: str | None = Field(None, description="The session's stored watermark.")
    writer_in_flight: bool
    preview: PreviewInfo | None = None
    preview_computed: bool = Field(
        description="Whether the render was dry-run: `preview` is then present (for the main agent)."
    )
    estimate_accuracy: list[EstimateAccuracy] = Field(
        default_factory=list,
        description="With a preview, per model (the newest step's first): how far the estimate of the "
        "request was from the usage its newest steps recorded (at most 5 per model, behavior.md#d15). "
        "Empty without preview or without usage.",
    )


# ---------------------------------------------------------------------------------------------
# rebuild/insert
# ---------------------------------------------------------------------------------------------


class TurnModel(Params):
    provider_id: NonEmptyStr
    model_id: NonEmptyStr


class InsertParams(Params):
    session_id: SessionId
    agent_id: AgentId = MAIN_AGENT
    reason: InsertReason = Field(
        description="`manual` digests and collapses the whole idle main slice (behavior.md#manual-rebuild)."
    )
    digest_up_to: MessageId | None = Field(
        None,
        description="D: the newest message the boundary digests. Default: the list's last message, or, "
        "when the list ends in a step that called tools, on an automatic rebuild, the message before "
        "that step (D19). Never inside a newest step still waiting for results: moved before it, with a "
        "warning (D20).",
    )
    boundary_message_id: MessageId | None = Field(
        None,
        description="Use this ID for the boundary instead of minting one. Required (else error 1010 naming "
        "this field) when the session's IDs are declared ascending but are neither MiMo v2 nor legacy v1 "
        "IDs: a minted ID would not sort among the host's. Pass one too when the host mints MiMo IDs from "
        "another clock than the real time (a replay): the minted one would sort wrongly against them.",
    )
    agent: NonEmptyStr | None = Field(
        None, description="The turn's agent name; default: from the last user message."
    )
    model: TurnModel | None = Field(
        None, description="The turn's model; default: from the last user message."
    )
    tool_name_map: ToolNameMap | None = Field(
        None,
        description="Host tool names onto MiMo's for this insert (behavior.md#compactable-tools), merged "
        "over the session's map (`session/open`, `session/sync`): an entry here wins for a name both map.",
    )


class CompactedPart(Result):
    """One compaction mark: set `time.compacted = compactedAt` on the part it names (protocol.md, "Host
    obligations")."""

    message_id: MessageId = Field(
        description="The message holding the marked part (the carrier in split shapes)."
    )
    call_id: NonEmptyStr = Field(
        description="The logical call whose result was marked, in every shape: the inline `tool` part's "
        "`callID`, the `tool_result`'s `tool_use_id`, the Responses output's `call_id`, the Chat tool "
        "message's `info.tool_call_id`."
    )
    part_id: str | None = Field(None, description="The marked part's `id`; absent for a part without one.")
    compacted_at: int = Field(description="The `time.compacted` value set (ms).")


class WaitInfo(Result):
    result: WaitResult
    waited_ms: int
    bound_ms: int


class Notice(Result):
    """A one-time notice (behavior.md#one-time-notices): persist it as a text part flagged synthetic and
    ignored on the newest user message, and send that part with `session/sync` (it counts in the
    token estimates like any stored part)."""

    kind: NoticeKind
    text: str


class InsertResult(Result):
    outcome: InsertOutcome
    revision: Revision
    message: Json | None = Field(
        None, description="The boundary message `{info, parts}` to persist (rebuilt only)."
    )
    compacted: list[CompactedPart] = Field(default_factory=list, description="Every part marked compacted.")
    sections: list[SectionInfo] = Field(default_factory=list, description="The section report of the render.")
    report: RenderReport | None = None
    watermark: str | None = Field(
        None,
        description="W used by this insertion: after a writer wait that succeeded, the watermark that "
        "writer stored (D21), else the one stored before the wait (and with "
        "`checkpoint.follow_writer_watermark: false` always, D4).",
    )
    digest_up_to: str | None = Field(
        None,
        description="D used by this insertion; absent when nothing before the live newest step is left "
        "to digest. What the view holds after it stays live (D19, D20).",
    )
    wait: WaitInfo | None = Field(None, description="The writer wait, when a writer was in flight.")
    status_text: str | None = Field(
        None, description="The user-facing outcome text (manual rebuilds show it)."
    )
    notice: Notice | None = None
    detail: str | None = Field(None, description="Why nothing was inserted, when it was not.")
    fidelity: FidelityReport | None = Field(
        None, description="With every render (rebuilt, no-gain, insert-failed)."
    )
    sizes: RequestSizes | None = Field(
        None, description="With a built boundary (rebuilt, no-gain): the sizes the inflation guard compared."
    )
    warnings: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# request/build
# ---------------------------------------------------------------------------------------------


class BuildTarget(Params):
    """The model the request goes to and what it accepts (docs/formats.md "Formats")."""

    provider_id: NonEmptyStr | None = Field(
        None,
        description="Compared with `info.providerID`: reasoning is replayed only to the provider that "
        "produced it. Default for the provider formats: the newest assistant message's.",
    )
    model_id: NonEmptyStr | None = Field(
        None,
        description="Compared with `info.modelID` (signatures are model-bound). Default for the provider "
        "formats: the newest assistant message's; `ai-sdk` filters nothing unless a target is given.",
    )
    thinking: bool | None = Field(
        None,
        description="Anthropic extended thinking on/off for this request. `false` sends no thinking; "
        "`true` enforces the final-assistant rule (may set `overrides.thinking`); absent: not enforced.",
    )
    images: bool = Field(True, description="The model takes image/file input; false: a text placeholder.")
    tool_result_media: bool | None = Field(
        None,
        description="Media may stay inside tool results. Default: true for anthropic, openai-responses "
        "and ai-sdk; false for openai-chat and gemini (moved to a user turn after the results).",
    )


class CacheOptions(Params):
    """Anthropic prompt-cache breakpoints (`format: anthropic` only)."""

    ttl: Literal["5m", "1h"] = Field("5m", description="`cache_control.ttl` of every breakpoint.")


# The output options of a request (request/build, checkpoint/prepare).
FormatParam = Annotated[
    RequestFormat,
    Field(description='The output format of `messages` and `prefix.request` (docs/formats.md "Formats").'),
]
TargetParam = Annotated[
    BuildTarget | None, Field(description="The model the request goes to (reasoning replay, media).")
]
CacheParam = Annotated[
    CacheOptions | None,
    Field(description="Put up to 4 Anthropic `cache_control` breakpoints (`format: anthropic`)."),
]


class SidecarToolsOption(Params):
    """Add the sidecar's model tools (`tools/list`) to the request's tools (behavior.md#d18)."""

    prefix: ToolPrefix | None = Field(
        None,
        description="Their names' prefix; default: the one `toolPointers.sidecarTools` declares, else none.",
    )


SidecarToolsParam = Annotated[
    SidecarToolsOption | None,
    Field(
        description="Add the sidecar's model tools to `prefix.tools` and `prefix.request`, after the host's; "
        "the prefix hash covers them. Send the same to `checkpoint/prepare` so that its prefix, and the "
        "provider's prompt cache, stay the main loop's."
    ),
]
HostViewParam = Annotated[
    bool,
    Field(
        description="Also answer `view`: the request in the host's own stored shape, the `{info, parts}` "
        "messages it is built from (protocol.md \"The view in the host's shape\"), for a host whose own "
        "converter sends them (OpenCode)."
    ),
]


class BuildParams(Params):
    session_id: SessionId
    agent_id: AgentId = MAIN_AGENT
    collapse_tail: bool = Field(
        True, description="Collapse digested assistant messages (main agent only, behavior.md#collapse)."
    )
    memory_reminder: bool = Field(True, description="Append the per-turn memory reminder "
                                                    "(behavior.md#memory-reminder).")
    invocation_style: Literal["function", "shell"] = Field(
        "function", description="How the reminder writes tool usages."
    )
    has_actor_tool: bool = Field(False, description="The agent has the `actor` tool (adds its usage line).")
    purpose: Literal["turn", "writer"] = Field(
        "turn",
        description="`writer`: the checkpoint writer's forked request instead (behavior.md#writer-request): "
                    "the main "
        "view up to and including `upTo`, never collapsed, no reminder.",
    )
    up_to: MessageId | None = Field(
        None,
        description="With `purpose: writer`: the writer's watermark. Default: the in-flight writer's, "
        "else the one `rebuild/compute` reports.",
    )
    format: FormatParam = "ai-sdk"
    target: TargetParam = None
    cache: CacheParam = None
    sidecar_tools: SidecarToolsParam = None
    host_view: HostViewParam = False


class RequestPrefixInfo(Result):
    system: list[Any] = Field(description="The frozen system prompt parts from `requestPrefix.system`.")
    tools: list[Any] = Field(description="The frozen tool definitions from `requestPrefix.tools`.")
    hash: str = Field(
        description="`sha256:<hex>` over the format's own prefix bytes (`request`; for `ai-sdk` over "
        "system and tools); equal hashes mean a stable prompt cache."
    )
    request: Json | None = Field(
        None,
        description="The prefix fields of the format's request body (absent for `ai-sdk`): anthropic "
        "`system`+`tools`; openai-chat `messages` (the head to put first)+`tools`; openai-responses "
        "`instructions`+`tools`; gemini `systemInstruction`+`tools`.",
    )


class BuildResult(Result):
    # What grows with the view, built by the core in its wire shape: validating and dumping the
    # per-message lists cost a build after one step of a 5,000-step turn ~3 ms.
    PASS_THROUGH = ("messages", "view", "sources", "source_groups", "call_id_map", "collapsed_message_ids")
    revision: Revision
    prefix: RequestPrefixInfo
    format: RequestFormat = Field("ai-sdk", description="The format of `messages` and `prefix.request`.")
    messages: list[Json] = Field(
        description="The history in `format`: AI SDK ModelMessages, Anthropic messages, Chat Completions "
        "messages, Responses input items or Gemini contents (see 'Formats')."
    )
    sources: list[str] = Field(
        description="For each output message: the (first) stored message it comes from."
    )
    source_groups: list[list[str]] = Field(
        default_factory=list,
        description="For each output message: every stored message it comes from (merged entries of one "
        "provider response, the carriers of one step's results).",
    )
    call_id_map: dict[str, str] = Field(
        default_factory=dict,
        description="Call IDs remapped to fit the provider's limits: sent ID → stored ID.",
    )
    overrides: Json = Field(
        default_factory=dict,
        description="Request fields this history needs, to set over the host's: `thinking: {type: "
        "disabled}` when an Anthropic tool loop has no signed thinking to replay.",
    )
    estimated_tokens: int = Field(
        description="Estimated tokens of the stored messages the request is built from, as the provider of "
        "its format and target counts them (images by pixels, replay tokens not as text, D15); compacted "
        "results as their placeholder; the prefix is not counted."
    )
    collapsed_message_ids: list[str] = Field(default_factory=list)
    reminder_added: bool
    usage_pending: bool
    warnings: list[str] = Field(default_factory=list)
    view: list[Json] | None = Field(
        None,
        description="With `hostView`: the stored messages `messages` is converted from, `{info, parts}` in "
        "request order, as stored (compaction marks set), the boundary's `checkpoint` part as the synthetic "
        "text part of its label and the memory reminder as a synthetic text part, without `id`, at the end "
        "of the newest user message (protocol.md \"The view in the host's shape\").",
    )


# ---------------------------------------------------------------------------------------------
# rebuild/status (notification, sidecar → client)
# ---------------------------------------------------------------------------------------------


class StatusNotification(Result):
    session_id: SessionId
    state: StatusState
    message: str = Field(description="`Preparing conversation context…` while waiting for the writer.")


# ---------------------------------------------------------------------------------------------
# LSP work-done progress (sidecar → client), only when the client advertised the capability
# ---------------------------------------------------------------------------------------------


class WorkDoneProgressCreateParams(Params):
    token: str = Field(
        description="`mimo-rebuild-<n>`: `mimo-rebuild-1`, `mimo-rebuild-2`, ... in the order the process "
        "asks for them; one token per rebuild that shows a busy status, never reused."
    )


class ProgressValue(Params):
    kind: Literal["begin", "report", "end"]
    title: str | None = Field(None, description="`begin` only: `Rebuilding conversation context`.")
    message: str | None = Field(None, description="The status text (`begin`, `report`); absent on `end`.")
    cancellable: bool | None = Field(None, description="`begin` only: always false (use `$/cancelRequest`).")


class ProgressParams(Params):
    token: str
    value: ProgressValue
