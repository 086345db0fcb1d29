"""The shared normalisation pass: stored view → `Turn`s.

docs/formats.md, "Formats", "Normalisation (every format)"; behavior.md#part-conversion,
behavior.md#request-validity.

Run before the renderer, over the messages a request converts (the whole view, or what follows the
prefix `core.request.build_memo` kept):

1. **Select**: an assistant message with an error is skipped unless it was aborted and has
   real parts; `ignored` text and bookkeeping parts (`step-start`, `step-finish`, `snapshot`,
   `patch`, `retry`, `agent`) are not content; empty text is never content.
2. **Steps**: an inline assistant message splits at `step-start`; consecutive split entries
   that share `info.providerMessageID` (one provider response stored as several records, with the
   carriers of its parallel calls written in between) merge into one assistant turn.
3. **Results**: every call gets exactly one result, in a tool turn right after its
   assistant turn, in call order: the inline state, or the first split result stored after the
   call, wherever its carrier is. A call without a result gets an interrupted error result (fixed
   text). Results without a call before them, second results and second calls with an already used
   ID are dropped. A carrier's other content (text after the results, an interrupt marker) becomes
   a user turn after the tool turn.
4. **Content**: user parts become `Text`/`Media` blocks (the boundary's labels included,
   behavior.md#part-conversion); assistant parts become `Text`, `Reasoning` and `ToolCall`
   blocks in stored order.

Every fix is reported (`report.Report`). Renderers then apply the per-target rules.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import texts
from ..estimate.jsjson import js_stringify
from ..estimate.jstext import is_blank
from ..session.data_model import REPLAY_KEYS
from ..session.message import Message
from ..session.shapes import (
    CUSTOM_TOOL_CALL,
    INLINE_TOOL,
    MESSAGE_LEVEL_RESULT,
    RESULT_PART_TYPES,
    USE_PART_TYPES,
    ToolUse,
    is_carrier,
    tool_results,
    tool_uses,
)
from ..words import ANTHROPIC, OPENAI
from . import report as r
from .layered import LayeredRank, LayeredSet
from .model import Compaction, Json, Media, Reasoning, Text, ToolCall, ToolResult, Turn

ABORTED_ERROR_NAME = "MessageAbortedError"
STEP_START = "step-start"
# Parts that are not "real" content of an aborted assistant message (bookkeeping and thinking).
NOT_REAL_PARTS = frozenset(
    {"step-start", "step-finish", "snapshot", "patch", "retry", "reasoning", "thinking", "redacted_thinking"}
)
# Parts that carry nothing for the model (bookkeeping, or handled elsewhere).
BOOKKEEPING_PARTS = frozenset({"step-start", "step-finish", "snapshot", "patch", "retry", "agent"})
DEFAULT_MIME = "application/octet-stream"
REASONING_PARTS = frozenset({"reasoning", "thinking", "redacted_thinking"})
BLANK_TEXT = "whitespace-only text blocks not sent"
ERRORED_REASONING = "reasoning of an assistant message that ended in an error not sent (with its message)"
EMPTY_REASONING = "empty reasoning parts not sent (no text and no replay token: nothing to replay)"
ERRORED_STEP = (
    "assistant messages that ended in an error not sent, with their content (only an aborted one "
    "with content is, as in OpenCode)"
)
# Responses items of tools the provider ran itself (hosted web search, image generation): the model
# saw their results inside the same response, and they have no shape outside that API's own
# stateful replay; they are not replayed (counted as provider-executed).
SERVER_TOOL_ITEMS = frozenset({"web_search_call", "image_generation_call"})
# `info.providerRole` of a user-role message that was the provider's developer/system message
# (Codex): OpenAI Responses gets it back as a developer message, other formats as user text.
INSTRUCTION_ROLES = frozenset({"developer", "system"})


# =============================================================================================
# Blocks from stored parts
# =============================================================================================
def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: Any) -> Json | None:
    return value if isinstance(value, dict) else None


def reasoning_family(metadata: Json | None) -> str | None:
    """The family whose replay token a MiMo reasoning part's metadata carries, if any."""
    if metadata is None:
        return None
    for family, keys in REPLAY_KEYS.items():
        scoped = metadata.get(family)
        if isinstance(scoped, dict) and any(isinstance(scoped.get(k), str) for k in keys):
            return family
    return None


def reasoning_block(part: Json) -> Reasoning | None:
    """A MiMo `reasoning` part, an Anthropic `thinking`/`redacted_thinking` block or a Responses
    `reasoning` item (told apart from a MiMo part by having no `text` string)."""
    ptype = part.get("type")
    if ptype == "thinking":
        return Reasoning(_str(part.get("thinking")) or "", ANTHROPIC, native=part)
    if ptype == "redacted_thinking":
        return Reasoning("", ANTHROPIC, native=part)
    if ptype != "reasoning":
        return None
    text = _str(part.get("text"))
    if text is not None:
        metadata = _dict(part.get("metadata"))
        return Reasoning(text, reasoning_family(metadata), metadata=metadata)
    summary = part.get("summary")
    pieces = [s.get("text") for s in summary if isinstance(s, dict)] if isinstance(summary, list) else []
    return Reasoning("\n".join(p for p in pieces if isinstance(p, str)), OPENAI, native=part)


def _guess_mime(url: str | None, filename: str | None, fallback: str) -> str:
    if url is not None and url.startswith("data:"):
        head = url[5:].split(",", 1)[0].split(";", 1)[0]
        if head:
            return head
    for name in (filename, url):
        if name:
            guessed, _ = mimetypes.guess_type(name.split("?", 1)[0])
            if guessed:
                return guessed
    return fallback


def _source_media(block: Json, fallback_mime: str) -> Media:
    """An Anthropic `image`/`document` block's `source` (base64, url or file)."""
    source = _dict(block.get("source")) or {}
    mime = _str(source.get("media_type")) or fallback_mime
    kind = source.get("type")
    return Media(
        mime,
        url=_str(source.get("url")) if kind == "url" else None,
        data=_str(source.get("data")) if kind == "base64" else None,
        file_id=_str(source.get("file_id")) if kind == "file" else None,
        title=_str(block.get("title")),
        native=block,
    )


def media_block(part: Json) -> Media | Text | None:
    """A media part of any shape; a text-source document is its text."""
    ptype = part.get("type")
    if ptype == "file":
        return Media(
            _str(part.get("mime")) or DEFAULT_MIME, url=part.get("url"), filename=_str(part.get("filename"))
        )
    if ptype == "image":
        media = _source_media(part, "image/png")
        if media.url is not None:  # a URL source has no media_type: guess it from the URL
            media.mime = _guess_mime(media.url, None, "image/png")
        return media
    if ptype == "document":
        source = _dict(part.get("source")) or {}
        if source.get("type") == "text" and isinstance(source.get("data"), str):
            return Text(source["data"])
        return _source_media(part, "application/pdf")
    if ptype == "input_image":
        url = _str(part.get("image_url"))
        return Media(
            _guess_mime(url, None, "image/png"),
            url=url,
            file_id=_str(part.get("file_id")),
            detail=_str(part.get("detail")),
            native=part,
        )
    if ptype == "input_file":
        url = _str(part.get("file_data")) or _str(part.get("file_url"))
        filename = _str(part.get("filename"))
        return Media(
            _guess_mime(url, filename, "application/pdf"),
            url=url,
            filename=filename,
            file_id=_str(part.get("file_id")),
            native=part,
        )
    return None


def _content_blocks(content: Any, unsent: list[str]) -> tuple[list[Text | Media], bool]:
    """A split result's content (string, or a list of text/media blocks) → blocks, as_string.
    The types of list items that are neither text nor media go to `unsent`."""
    if content is None:
        return [], True
    if isinstance(content, str):
        return [Text(content)], True
    if not isinstance(content, list):
        return [Text(js_stringify(content) or "")], True
    blocks: list[Text | Media] = []
    for item in content:
        if isinstance(item, str):
            blocks.append(Text(item))
        elif isinstance(item, dict):
            if isinstance(item.get("text"), str):
                blocks.append(Text(item["text"]))
            else:
                media = media_block(item)
                if media is not None:
                    blocks.append(media)
                else:
                    unsent.append(str(item.get("type")))
        else:
            unsent.append(type(item).__name__)
    return blocks, False


def _is_compacted(holder: Any) -> bool:
    t = holder.get("time") if isinstance(holder, dict) else None
    return isinstance(t, dict) and bool(t.get("compacted"))


def inline_result(call: ToolCall, state: Json) -> ToolResult:
    """An inline tool part's result (behavior.md#part-conversion): completed / interrupted with
    output / error / not ended."""
    status = state.get("status")
    if status == "completed":
        if _is_compacted(state):  # the attachments go with the output
            return ToolResult(call.call_id, call.name, [Text(texts.CLEARED_TOOL_RESULT)])
        output = state.get("output")
        attachments = [
            Media(_str(a.get("mime")) or DEFAULT_MIME, url=a.get("url"), filename=_str(a.get("filename")))
            for a in state.get("attachments") or []
            if isinstance(a, dict)
        ]
        content: list[Text | Media] = [Text(output if isinstance(output, str) else ""), *attachments]
        return ToolResult(call.call_id, call.name, content, as_string=not attachments)
    if status == "error":
        metadata = state.get("metadata")
        if (
            isinstance(metadata, dict)
            and metadata.get("interrupted") is True
            and isinstance(metadata.get("output"), str)
        ):
            return ToolResult(call.call_id, call.name, [Text(metadata["output"])])
        error = state.get("error")
        return ToolResult(
            call.call_id, call.name, [Text(error if isinstance(error, str) else "")], is_error=True
        )
    return interrupted_result(call)


def interrupted_result(call: ToolCall) -> ToolResult:
    return ToolResult(
        call.call_id, call.name, [Text(texts.INTERRUPTED_TOOL_RESULT)], is_error=True, custom=call.custom
    )


def _split_result(carrier: Message, call: ToolCall, result: Any, unsent: list[str]) -> ToolResult:
    """A split result (core.session.shapes.ToolResult) with its content blocks read from the stored part."""
    if result.part_index == MESSAGE_LEVEL_RESULT:
        holder = next((p for p in carrier.parts if p.get("type") == "text"), None)
        content: list[Text | Media] = [Text(result.content)]
        as_string = True
    else:
        holder = carrier.parts[result.part_index]
        raw = holder.get("content") if holder.get("type") == "tool_result" else holder.get("output")
        content, as_string = _content_blocks(raw, unsent)
    error = result.is_error or result.interrupted  # behavior.md#logical-calls: an interruption is an error
    if _is_compacted(holder):
        content, as_string = [Text(texts.CLEARED_TOOL_RESULT)], True
        unsent.clear()  # the whole content is replaced
    elif error:  # an error result is its text
        content, as_string = [Text(result.content)], True
        unsent.clear()
    return ToolResult(
        call.call_id, call.name, content, is_error=error, as_string=as_string, custom=call.custom
    )


# =============================================================================================
# User turns
# =============================================================================================
def _is_skill_catalog(part: Json, flag: str) -> bool:
    metadata = part.get("metadata")
    return part.get(flag) is True or (isinstance(metadata, dict) and metadata.get(flag) is True)


def _subtask_text(part: Json) -> Text:
    return Text(texts.subtask_request_text(str(part.get("agent") or ""), str(part.get("description") or "")))


# =============================================================================================
# The pass
# =============================================================================================
@dataclass
class _Step:
    """An assistant turn still open for continuation entries of the same provider response."""

    turn: Turn
    provider_message_id: str | None
    positions: dict[str, int] = field(default_factory=dict)  # call ID → its message's position
    inline: dict[str, ToolResult] = field(default_factory=dict)  # call ID → inline result


@dataclass
class _Indexed:
    position: int
    carrier: Message
    result: Any  # core.session.shapes.ToolResult
    used: bool = False


@dataclass
class Carried:
    """What the messages before a cut leave to the pass over the messages after it
    (`build_memo`): the call IDs issued, the results no call took (reported at the end, in the
    order of their call IDs' first results) and that order."""

    issued: LayeredSet  # in layers: copying them at every cut grew with the session (`layered`)
    unused: dict[str, list[_Indexed]]
    rank: LayeredRank  # call ID → the rank of its first result among the results before the cut
    interrupted: frozenset[str]  # calls before the cut sent as interrupted: a result after it is theirs


def _merged(
    first: dict[str, list[_Indexed]], second: dict[str, list[_Indexed]], rank: LayeredRank
) -> dict[str, list[_Indexed]]:
    return {
        k: [*first.get(k, ()), *second.get(k, ())] for k in sorted({*first, *second}, key=rank.__getitem__)
    }


class Normalizer:
    """The pass over `msgs`, run at once (`run`) or in stretches (`feed`, then `finish`) so that
    `build_memo` can keep the state at a cut (`carry`) and start the next request from it
    (`carried`): the same turns, warnings and order as one pass over the whole view."""

    def __init__(
        self, msgs: Sequence[Message], skill_flag: str, report: r.Report, carried: Carried | None = None
    ) -> None:
        self.msgs = msgs
        self.skill_flag = skill_flag
        self.report = report
        self.carried = carried
        self.turns: list[Turn] = []
        self.open: _Step | None = None
        # The calls issued before the cut (carried, never changed) and by this pass
        self.issued_before = carried.issued if carried is not None else LayeredSet()
        self.issued: set[str] = set()
        self.reach = -1  # the furthest position a call took its result from
        self.interrupted: list[str] = []  # calls sent as interrupted (no result stored after them)
        self.results: dict[str, list[_Indexed]] = {}
        for position, msg in enumerate(msgs):
            if msg.role != "assistant" and is_carrier(msg):
                for result in tool_results(msg):
                    self.results.setdefault(result.call_id, []).append(_Indexed(position, msg, result))

    def finish(self) -> list[Turn]:
        self.close()
        self.report_unused_results()
        return self.turns

    def opens_turn(self, position: int) -> bool:
        """Whether message `position` starts by closing what is open (a cut may go before it)."""
        msg = self.msgs[position]
        if not msg.parts or (msg.role != "assistant" and is_carrier(msg)):
            return False
        if msg.role == "user":
            return True
        if msg.role != "assistant":
            return False
        plan = _AssistantPlan.cached(msg)
        if not plan.steps:
            return False
        return plan.response is None or self.open is None or self.open.provider_message_id != plan.response

    def carry(self, mark: int) -> Carried:
        """The state after `msgs[:mark]`, everything before closed (the caller closed it)."""
        ranked = self.carried.rank if self.carried is not None else LayeredRank()
        added: dict[str, int] = {}
        left: dict[str, list[_Indexed]] = {}
        for call_id, entries in self.results.items():
            before = [e for e in entries if e.position < mark]
            if before:
                if call_id not in added and call_id not in ranked:
                    added[call_id] = len(ranked) + len(added)
                unused = [e for e in before if not e.used]
                if unused:
                    left[call_id] = unused
        rank = ranked.plus(added)
        earlier = self.carried.unused if self.carried is not None else {}
        interrupted = self.carried.interrupted if self.carried is not None else frozenset()
        return Carried(
            self.issued_before.plus(self.issued),
            _merged(earlier, left, rank),
            rank,
            interrupted | set(self.interrupted),
        )

    def was_issued(self, call_id: str) -> bool:
        return call_id in self.issued or call_id in self.issued_before

    def answers_interrupted(self) -> bool:
        """Whether these messages hold a result for a call the carried state sent as interrupted."""
        return self.carried is not None and not self.carried.interrupted.isdisjoint(self.results)

    def feed(self, start: int, stop: int) -> None:
        for position in range(start, stop):
            msg = self.msgs[position]
            if not msg.parts:
                continue  # behavior.md#part-conversion: zero parts, skipped
            if msg.role == "assistant":
                self.assistant(position, msg)
            elif is_carrier(msg):
                self.carrier(msg)
            elif msg.role == "user":
                self.close()
                turn = self.user_turn(msg, msg.parts)
                if turn is not None:
                    self.turns.append(turn)

    # -- user content ----------------------------------------------------------------------
    def sendable(self, text: str, message_id: str) -> bool:
        """Non-empty text with something besides whitespace. Anthropic rejects a whitespace-only
        text block (Claude Code stores "\\n\\n" blocks the model emitted): it is left out, counted."""
        if not text:
            return False
        if is_blank(text):
            self.report.tally(r.BLANK_TEXT_DROPPED, BLANK_TEXT, message_id)
            return False
        return True

    def user_turn(self, msg: Message, parts: Iterable[Json]) -> Turn | None:
        """A user turn (behavior.md#part-conversion); D2: the boundary's own parts are never
        dropped by the skill flag."""
        boundary = msg.is_checkpoint_boundary()
        blocks: list[Any] = []
        seen_checkpoint = False
        for part in parts:
            ptype = part.get("type")
            if _is_skill_catalog(part, self.skill_flag):
                if not boundary:
                    continue
                self.report.warn(
                    r.BOUNDARY, f"{msg.id}: skill-catalog flag on a rebuild boundary part ignored (D2)"
                )
            if ptype == "text" or ptype == "input_text":
                text = part.get("text")
                if part.get("ignored") or not isinstance(text, str):
                    if boundary:
                        self.report.warn(
                            r.BOUNDARY,
                            f"{msg.id}: boundary text part {part.get('id')!r} is not sendable (D2)",
                        )
                    continue
                if self.sendable(text, msg.id):
                    blocks.append(Text(text, _dict(part.get("metadata"))))
            elif ptype == "checkpoint":
                if not seen_checkpoint:  # the first checkpoint part is authoritative
                    seen_checkpoint = True
                    blocks.append(Text(texts.CHECKPOINT_LABEL))
            elif ptype == "compaction":
                blocks.append(Text(texts.COMPACTION_LABEL))
                encrypted = part.get("encrypted_content")
                if isinstance(encrypted, str) and encrypted:
                    blocks.append(Compaction(encrypted))
            elif ptype == "subtask":
                blocks.append(_subtask_text(part))
            elif ptype in BOOKKEEPING_PARTS:
                continue
            else:
                media = media_block(part)
                if media is not None:
                    blocks.append(media)
                else:
                    self.report.tally(r.PART_NOT_SENT, f"user part of type {ptype!r}", msg.id)
        if not blocks:
            return None
        return Turn(
            "user",
            blocks,
            [msg.id],
            boundary=msg.is_boundary(),
            instructions=msg.info.get("providerRole") in INSTRUCTION_ROLES,
        )

    def carrier(self, msg: Message) -> None:
        """Results are taken by their calls (`close`); the rest is user content after them."""
        tool_text = (
            msg.role == "tool"
            and isinstance(msg.info.get("tool_call_id"), str)
            and bool(msg.info["tool_call_id"])
        )
        rest = [
            p
            for p in msg.parts
            if p.get("type") not in RESULT_PART_TYPES and not (tool_text and p.get("type") == "text")
        ]
        turn = self.user_turn(msg, rest) if rest else None
        if turn is None:
            return
        if self.open is not None:
            self.open.turn.deferred.append(turn)
        else:
            self.turns.append(turn)

    # -- assistant steps -------------------------------------------------------------------
    def assistant(self, position: int, msg: Message) -> None:
        """Replay the message's steps (`_AssistantPlan`, made once per version of the message: a
        build after one new step converts that step's parts, not the whole history's)."""
        plan = _AssistantPlan.cached(msg)
        for kind, text in plan.skipped:
            self.report.tally(kind, text, msg.id)
        if not plan.steps:
            return  # not sent (an errored message)
        for k, ops in enumerate(plan.steps):
            if k == 0 and plan.response is not None and self.open is not None:
                same = self.open.provider_message_id == plan.response
            else:
                same = False
            if same:
                assert self.open is not None
                target = self.open
                target.turn.add_source(msg.id)
            else:
                self.close()
                target = self.open = _Step(
                    Turn("assistant", [], [msg.id], plan.provider, plan.model), plan.response
                )
            for op in ops:
                if isinstance(op, _Tally):
                    self.report.tally(op.kind, op.text, msg.id)
                elif isinstance(op, _Call):
                    if self.add_call(op.call, position, msg, target) and op.inline is not None:
                        target.inline[op.call.call_id] = op.inline
                else:
                    target.turn.blocks.append(op)

    def add_call(self, call: ToolCall, position: int, msg: Message, target: _Step) -> bool:
        if self.was_issued(call.call_id):
            self.report.warn(
                r.DUPLICATE_CALL_DROPPED,
                f"{msg.id}: call {call.call_id!r} repeats an ID already used; dropped with its result",
            )
            return False
        self.issued.add(call.call_id)
        target.turn.blocks.append(call)
        target.positions[call.call_id] = position
        return True

    def close(self) -> None:
        step, self.open = self.open, None
        if step is None:
            return
        turn = step.turn
        if turn.blocks:
            self.turns.append(turn)
        calls = [b for b in turn.blocks if isinstance(b, ToolCall)]
        if calls:
            results, sources = [], []
            for call in calls:
                result = step.inline.get(call.call_id)
                if result is None:
                    found = self.take_result(call.call_id, step.positions[call.call_id])
                    if found is None:
                        self.report.warn(
                            r.RESULT_SYNTHESIZED,
                            f"{turn.sources[-1]}: call {call.call_id!r} has no result; sent as interrupted",
                        )
                        self.interrupted.append(call.call_id)
                        result = interrupted_result(call)
                        result.source = turn.sources[-1]
                    else:
                        unsent: list[str] = []
                        result = _split_result(found.carrier, call, found.result, unsent)
                        for item_type in unsent:
                            self.report.tally(
                                r.PART_NOT_SENT, f"tool-result item of type {item_type!r}", found.carrier.id
                            )
                        result.source = found.carrier.id
                        if found.carrier.id not in sources:
                            sources.append(found.carrier.id)
                results.append(result)
            self.turns.append(Turn("tool", results, sources or [turn.sources[-1]]))
        self.turns.extend(turn.deferred)
        turn.deferred = []

    def take_result(self, call_id: str, call_position: int) -> _Indexed | None:
        for entry in self.results.get(call_id, ()):
            if not entry.used and entry.position > call_position:
                entry.used = True
                self.reach = max(self.reach, entry.position)
                return entry
        return None

    def report_unused_results(self) -> None:
        unused = {k: left for k, v in self.results.items() if (left := [e for e in v if not e.used])}
        if self.carried is not None:
            rank = self.carried.rank
            groups = _merged(self.carried.unused, {k: v for k, v in unused.items() if k in rank}, rank)
            groups.update({k: v for k, v in unused.items() if k not in rank})
            unused = groups
        for call_id, entries in unused.items():
            for entry in entries:
                if self.was_issued(call_id):
                    self.report.warn(
                        r.DUPLICATE_RESULT_DROPPED,
                        f"{entry.carrier.id}: second result for call {call_id!r} dropped",
                    )
                else:
                    self.report.warn(
                        r.ORPHAN_RESULT_DROPPED,
                        f"{entry.carrier.id}: tool result {call_id!r} without a preceding call dropped",
                    )


# The key of an assistant message's conversion in `Message.derived` (dropped on every change).
_PLAN_KEY = "normalize.assistant"


@dataclass(frozen=True, slots=True)
class _Tally:
    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class _Call:
    call: ToolCall
    inline: ToolResult | None  # an inline call's result (the part's own state)


@dataclass(frozen=True, slots=True)
class _AssistantPlan:
    """What an assistant message converts to, before the pass's state (open steps, issued call
    IDs) is applied: per step, its blocks, calls and the fixes to report, in part order. The
    blocks are shared by every request built from this version of the message; nothing downstream
    changes them."""

    skipped: tuple[tuple[str, str], ...]  # the message is not sent: what to report
    response: str | None  # info.providerMessageID
    provider: str | None
    model: str | None
    steps: tuple[tuple[Any, ...], ...]

    @staticmethod
    def cached(msg: Message) -> _AssistantPlan:
        plan: _AssistantPlan | None = msg.derived.get(_PLAN_KEY)
        if plan is None:
            plan = msg.derived[_PLAN_KEY] = _AssistantPlan.of(msg)
        return plan

    @staticmethod
    def of(msg: Message) -> _AssistantPlan:
        info = msg.info
        response = _str(info.get("providerMessageID")) or None
        provider, model = _str(info.get("providerID")), _str(info.get("modelID"))
        if _skip_errored_assistant(msg):
            skipped: list[tuple[str, str]] = []
            if any(p.get("type") not in BOOKKEEPING_PARTS for p in msg.parts):
                skipped.append((r.ERRORED_DROPPED, ERRORED_STEP))
            reasoning = [p for p in msg.parts if p.get("type") in REASONING_PARTS]
            skipped += [(r.REASONING_DROPPED, ERRORED_REASONING)] * len(reasoning)
            return _AssistantPlan(tuple(skipped), response, provider, model, ())
        uses = {u.part_index: u for u in tool_uses(msg) if msg.parts[u.part_index].get("type") != INLINE_TOOL}
        steps = tuple(tuple(_step_ops(msg, step, uses)) for step in _steps(msg.parts))
        return _AssistantPlan((), response, provider, model, steps)


def _step_ops(msg: Message, step: list[tuple[int, Json]], uses: dict[int, ToolUse]) -> list[Any]:
    """One step's blocks (`Text`, `Reasoning`), calls (`_Call`) and fixes (`_Tally`), in part order."""
    ops: list[Any] = []
    for index, part in step:
        ptype = part.get("type")
        if ptype == "text" or ptype == "output_text":
            text = part.get("text")
            if isinstance(text, str) and not part.get("ignored") and text:
                if is_blank(text):
                    ops.append(_Tally(r.BLANK_TEXT_DROPPED, BLANK_TEXT))
                else:
                    metadata = _dict(part.get("metadata"))
                    ops.append(Text(text, metadata, _phase(part, metadata)))
        elif ptype in REASONING_PARTS:
            reasoning = reasoning_block(part)
            if reasoning is not None and (reasoning.text or reasoning.family is not None):
                ops.append(reasoning)
            else:
                ops.append(_Tally(r.REASONING_DROPPED, EMPTY_REASONING))
        elif ptype == INLINE_TOOL:
            call_id = part.get("callID")
            if isinstance(call_id, str) and call_id:
                state = _dict(part.get("state")) or {"status": "pending", "input": {}}
                metadata = _dict(part.get("metadata"))
                call = ToolCall(
                    call_id,
                    _str(part.get("tool")) or "",
                    state.get("input"),
                    metadata=metadata,
                    provider_executed=bool(metadata and metadata.get("providerExecuted")),
                )
                result = inline_result(call, state)
                result.provider_executed = call.provider_executed
                result.source = msg.id
                ops.append(_Call(call, result))
        elif index in uses:
            use = uses[index]
            arguments = part.get("arguments") if ptype == "function_call" else None
            if ptype == "function":
                arguments = (_dict(part.get("function")) or {}).get("arguments")
            call = ToolCall(
                use.call_id,
                use.name,
                use.input,
                arguments=arguments if isinstance(arguments, str) else None,
                custom=ptype == CUSTOM_TOOL_CALL,
            )
            ops.append(_Call(call, None))
        elif ptype in BOOKKEEPING_PARTS or ptype in ("checkpoint", "compaction"):
            continue
        elif ptype in SERVER_TOOL_ITEMS:
            ops.append(_Tally(r.PROVIDER_EXECUTED_DROPPED, f"server tool items not replayed ({ptype})"))
        elif ptype not in USE_PART_TYPES:
            ops.append(_Tally(r.PART_NOT_SENT, f"assistant part of type {ptype!r}"))
    return ops


def _phase(part: Json, metadata: Json | None) -> str | None:
    """A Responses message phase: the part's own `phase`, or the AI SDK key `openai.phase`."""
    scoped = _dict(metadata.get(OPENAI)) if metadata is not None else None
    return _str(part.get("phase")) or (_str(scoped.get("phase")) if scoped is not None else None)


def _is_aborted(error: Any) -> bool:
    name = error.get("name") if isinstance(error, dict) else None
    return isinstance(name, str) and (name == ABORTED_ERROR_NAME or "Abort" in name)


def _skip_errored_assistant(msg: Message) -> bool:
    """An assistant message with an error is sent only if it was aborted and has real parts."""
    error = msg.info.get("error")
    if not error:
        return False
    return not (_is_aborted(error) and any(p.get("type") not in NOT_REAL_PARTS for p in msg.parts))


def _steps(parts: list[Json]) -> list[list[tuple[int, Json]]]:
    """The parts split at `step-start` parts (each step is one assistant turn plus its results)."""
    steps: list[list[tuple[int, Json]]] = [[]]
    for i, part in enumerate(parts):
        if part.get("type") == STEP_START and steps[-1]:
            steps.append([])
        steps[-1].append((i, part))
    return steps


# =============================================================================================
# Per-turn reminder (behavior.md#memory-reminder)
# =============================================================================================
def prepare_message(msg: Message) -> None:
    """What `msg` converts to before any pass's state, computed now and kept on it (an assistant
    message's plan, until the message changes), with each call's input as the OpenAI formats send
    it: while the parts are fresh from their measure, which told whether orjson's text of them is
    `JSON.stringify`'s, a JSON write (the first OpenAI request would check and write each one)."""
    if msg.role == "assistant" and msg.parts:
        for ops in _AssistantPlan.cached(msg).steps:
            for op in ops:
                if isinstance(op, _Call) and op.call.arguments is None and not op.call.custom:
                    if not isinstance(op.call.input, str):  # a string input is sent as it is
                        op.call.input_json(msg.plain_json)


def add_reminder(turns: list[Turn], msgs: Sequence[Message], reminder: str, report: r.Report) -> None:
    """At the end of the newest user-role stored message (never an OpenAI tool-role message).

    As in MiMo, the reminder belongs to that message even when nothing else of it is sent (only
    `ignored` text, no parts): it then becomes a user turn of its own at the message's position.
    A pure user-role carrier (Anthropic tool results only) carries text after its results: the
    reminder becomes a user turn right after its tool turn.
    """
    target = next((m for m in reversed(msgs) if m.role == "user"), None)
    if target is None:
        report.warn(r.REMINDER_NOT_ADDED, "no user message can carry the per-turn memory reminder")
        return
    own = [i for i, t in enumerate(turns) if target.id in t.sources]
    users = [i for i in own if turns[i].role == "user"]
    if users:
        turns[users[-1]].blocks.append(Text(reminder, volatile=True))
        return
    if own:
        at = own[-1] + 1
    else:
        position = {m.id: i for i, m in enumerate(msgs)}
        mine = position[target.id]
        at = next(
            (i for i, t in enumerate(turns) if min(position.get(s, -1) for s in t.sources) > mine), len(turns)
        )
        while at < len(turns) and turns[at].role == "tool":  # never between a call and its results
            at += 1
    turns.insert(at, Turn("user", [Text(reminder, volatile=True)], [target.id]))


def add_closing_text(turns: list[Turn], text: str, source: str) -> None:
    """`text` as the request's last user content (the checkpoint writer's instructions,
    behavior.md#writer-request): appended to a final user turn, else a user turn of its own after
    everything, its source `source`. Each renderer then applies its own rules (a user turn after
    tool results merges with them where the provider wants one message)."""
    if turns and turns[-1].role == "user" and not turns[-1].boundary:
        turns[-1].blocks.append(Text(text))
        return
    turns.append(Turn("user", [Text(text)], [source]))
