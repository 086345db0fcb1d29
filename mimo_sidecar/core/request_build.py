"""Request assembly (spec §12): a slice's view → the messages the host sends to the model.

Pipeline: the view (the caller passes `session.view()`, §12.1) → collapse (§11, main agent only)
→ conversion (§12.4) → validity (§12.5) → per-turn reminder (§12.3). Nothing here is stored: the
reminder and every placeholder exist only in the returned request.

Output shape: the AI SDK `ModelMessage`
---------------------------------------
- `{"role": "user", "content": [UserBlock, ...]}` with
  `{"type": "text", "text": str}` and
  `{"type": "file", "mediaType": str, "data": str, "filename"?: str}` — `data` carries the stored
  part's `url` (a data: URL or a remote URL; the AI SDK accepts either as a string).
- `{"role": "assistant", "content": [AssistantBlock, ...]}` with
  `{"type": "text", "text"}`, `{"type": "reasoning", "text", "providerOptions"?}` (the part's
  `metadata`, which carries provider signatures) and
  `{"type": "tool-call", "toolCallId", "toolName", "input"}`.
- `{"role": "tool", "content": [{"type": "tool-result", "toolCallId", "toolName", "output"}]}`
  where `output` is `{"type": "text", "value": str}`, `{"type": "error-text", "value": str}`, or —
  for an uncompacted inline result with attachments —
  `{"type": "content", "value": [{"type": "text", "text"}, {"type": "media", "data", "mediaType"}]}`.

`BuiltRequest.sources[i]` is the stored message ID that model message `i` came from. One stored
message can yield several model messages: an inline assistant message yields, per step (steps are
separated by `step-start` parts), an assistant message and a tool message with its results; a
split carrier yields a tool message with its results and, if it has other content (user text after
Anthropic `tool_result` blocks), a user message after it.

Compaction marks are read where `boundary.microcompact` puts them (see that module): the inline
state's `time.compacted`, a result part's `time.compacted`, or the first text part of an OpenAI
tool-role message.

`estimated_tokens` is the sum of the cached stored-message estimates (§3.2) of the messages that
contributed to the request — an estimate of the stored data, not of the converted JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import texts
from .collapse import collapse
from .message import Json, Message
from .ordering import Ordering
from .shapes import (
    INLINE_TOOL,
    MESSAGE_LEVEL_RESULT,
    RESULT_PART_TYPES,
    LogicalCall,
    ToolResult,
    is_carrier,
    logical_calls,
    tool_results,
    tool_uses,
)

ABORTED_ERROR_NAME = "MessageAbortedError"
# Parts that are not "real" content of an aborted assistant message (bookkeeping and thinking).
NOT_REAL_PARTS = frozenset({"step-start", "step-finish", "snapshot", "patch", "retry", "reasoning"})
STEP_START = "step-start"


@dataclass(frozen=True)
class BuiltRequest:
    messages: list[Json]
    sources: list[str]
    collapsed_ids: list[str] = field(default_factory=list)  # stored messages left out by the collapse
    warnings: list[str] = field(default_factory=list)
    estimated_tokens: int = 0


@dataclass
class _Out:
    """One model message under construction, with the stored message it came from."""

    role: str
    content: list[Json]
    source: str
    stored_role: str  # the source message's role (a user-role carrier can carry the reminder)

    def as_json(self) -> Json:
        return {"role": self.role, "content": self.content}


# =============================================================================================
# Parts shared by user turns
# =============================================================================================
def _is_skill_catalog(part: Json, flag: str) -> bool:
    metadata = part.get("metadata")
    return part.get(flag) is True or (isinstance(metadata, dict) and metadata.get(flag) is True)


def _file_block(part: Json) -> Json:
    block: Json = {
        "type": "file",
        "mediaType": part.get("mime") or "application/octet-stream",
        "data": part.get("url"),
    }
    if isinstance(part.get("filename"), str):
        block["filename"] = part["filename"]
    return block


def _text(text: str) -> Json:
    return {"type": "text", "text": text}


def _subtask_text(part: Json) -> Json:
    return _text(texts.subtask_request_text(str(part.get("agent") or ""), str(part.get("description") or "")))


@dataclass
class _Context:
    calls: Mapping[str, LogicalCall]
    skill_flag: str
    warnings: list[str]


def _user_blocks(msg: Message, parts: Sequence[Json], ctx: _Context) -> list[Json]:
    """§12.4 user turn: non-ignored text (synthetic included), files, labels, subtask text.

    D2: parts of a checkpoint boundary (created by the sidecar) are never dropped by the
    skill-catalog flag; any other omission of boundary content is reported.
    """
    boundary = msg.is_checkpoint_boundary()
    blocks: list[Json] = []
    seen_checkpoint = False
    for part in parts:
        ptype = part.get("type")
        if _is_skill_catalog(part, ctx.skill_flag):
            if not boundary:
                continue
            ctx.warnings.append(f"{msg.id}: skill-catalog flag on a rebuild boundary part ignored (D2)")
        if ptype == "text":
            if part.get("ignored") or not isinstance(part.get("text"), str):
                if boundary:
                    ctx.warnings.append(
                        f"{msg.id}: boundary text part {part.get('id')!r} is not sendable (D2)"
                    )
                continue
            blocks.append(_text(part["text"]))
        elif ptype == "file":
            blocks.append(_file_block(part))
        elif ptype == "checkpoint" and not seen_checkpoint:  # the first checkpoint part is authoritative
            seen_checkpoint = True
            blocks.append(_text(texts.CHECKPOINT_LABEL))
        elif ptype == "compaction":
            blocks.append(_text(texts.COMPACTION_LABEL))
        elif ptype == "subtask":
            blocks.append(_subtask_text(part))
    return blocks


# =============================================================================================
# Tool results
# =============================================================================================
def _text_output(value: str) -> Json:
    return {"type": "text", "value": value}


def _error_output(value: str) -> Json:
    return {"type": "error-text", "value": value}


def _is_compacted(holder: Any) -> bool:
    t = holder.get("time") if isinstance(holder, dict) else None
    return isinstance(t, dict) and bool(t.get("compacted"))


def _media(attachment: Json) -> Json:
    url = attachment.get("url")
    data = url.split(",", 1)[1] if isinstance(url, str) and url.startswith("data:") and "," in url else url
    return {"type": "media", "data": data, "mediaType": attachment.get("mime") or "application/octet-stream"}


def _completed_output(state: Json) -> Json:
    if _is_compacted(state):
        return _text_output(texts.CLEARED_TOOL_RESULT)  # the attachments go with the output
    output = state.get("output")
    text = output if isinstance(output, str) else ""
    attachments = [a for a in state.get("attachments") or [] if isinstance(a, dict)]
    if not attachments:
        return _text_output(text)
    return {"type": "content", "value": [{"type": "text", "text": text}, *(_media(a) for a in attachments)]}


def inline_output(state: Json) -> Json:
    """§12.4 assistant tool parts: completed / interrupted-with-output / error / pending|running."""
    status = state.get("status")
    if status == "completed":
        return _completed_output(state)
    if status == "error":
        metadata = state.get("metadata")
        if (
            isinstance(metadata, dict)
            and metadata.get("interrupted") is True
            and isinstance(metadata.get("output"), str)
        ):
            return _text_output(metadata["output"])
        error = state.get("error")
        return _error_output(error if isinstance(error, str) else "")
    return _error_output(texts.INTERRUPTED_TOOL_RESULT)


def _tool_result(call_id: str, name: str, output: Json) -> Json:
    return {"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": output}


def _split_output(carrier: Message, result: ToolResult) -> Json:
    holder = (
        next((p for p in carrier.parts if p.get("type") == "text"), None)
        if result.part_index == MESSAGE_LEVEL_RESULT
        else carrier.parts[result.part_index]
    )
    if _is_compacted(holder):
        return _text_output(texts.CLEARED_TOOL_RESULT)
    if result.is_error or result.interrupted:  # §2.8: an interruption is an error result
        return _error_output(result.content)
    return _text_output(result.content)


# =============================================================================================
# Messages
# =============================================================================================
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


def _dict_field(part: Json, key: str) -> Json:
    value = part.get(key)
    return value if isinstance(value, dict) else {}


def _str_field(part: Json, key: str) -> str:
    value = part.get(key)
    return value if isinstance(value, str) else ""


def _reasoning_block(part: Json) -> Json:
    block: Json = {"type": "reasoning", "text": _str_field(part, "text")}
    if isinstance(part.get("metadata"), dict):
        block["providerOptions"] = part["metadata"]
    return block


def _assistant_step(msg: Message, step: list[tuple[int, Json]], split_uses: Mapping[int, Any]) -> list[_Out]:
    content: list[Json] = []
    results: list[Json] = []
    for index, part in step:
        ptype = part.get("type")
        if ptype == "text" and isinstance(part.get("text"), str):
            content.append(_text(part["text"]))
        elif ptype == "reasoning":
            content.append(_reasoning_block(part))
        elif ptype == INLINE_TOOL and isinstance(part.get("callID"), str) and part["callID"]:
            state = _dict_field(part, "state")
            name = _str_field(part, "tool")
            content.append(_tool_call(part["callID"], name, state.get("input")))
            results.append(_tool_result(part["callID"], name, inline_output(state)))
        elif index in split_uses:
            use = split_uses[index]
            content.append(_tool_call(use.call_id, use.name, use.input))
    out = [_Out("assistant", content, msg.id, msg.role)] if content else []
    if results:
        out.append(_Out("tool", results, msg.id, msg.role))
    return out


def _tool_call(call_id: str, name: str, tool_input: Any) -> Json:
    return {
        "type": "tool-call",
        "toolCallId": call_id,
        "toolName": name,
        "input": tool_input if tool_input is not None else {},
    }


def _convert_assistant(msg: Message) -> list[_Out]:
    if _skip_errored_assistant(msg):
        return []
    split_uses = {
        u.part_index: u for u in tool_uses(msg) if msg.parts[u.part_index].get("type") != INLINE_TOOL
    }
    return [out for step in _steps(msg.parts) for out in _assistant_step(msg, step, split_uses)]


def _is_result_material(msg: Message, part: Json) -> bool:
    if part.get("type") in RESULT_PART_TYPES:
        return True
    # An OpenAI tool-role message's text parts are its result content.
    call_id = msg.info.get("tool_call_id")
    return msg.role == "tool" and part.get("type") == "text" and isinstance(call_id, str) and bool(call_id)


def _convert_carrier(msg: Message, ctx: _Context) -> list[_Out]:
    """Results → one tool message; any other content (user text after results) → a user message."""
    results = []
    for result in tool_results(msg):
        call = ctx.calls.get(result.call_id)
        results.append(
            _tool_result(result.call_id, call.use.name if call else "", _split_output(msg, result))
        )
    out = [_Out("tool", results, msg.id, msg.role)] if results else []
    rest = [p for p in msg.parts if not _is_result_material(msg, p)]
    blocks = _user_blocks(msg, rest, ctx) if rest else []
    if blocks:
        out.append(_Out("user", blocks, msg.id, msg.role))
    return out


def _convert(msg: Message, ctx: _Context) -> list[_Out]:
    if not msg.parts:
        return []  # §12.4: a message with zero parts is skipped
    if msg.role == "assistant":
        return _convert_assistant(msg)
    if is_carrier(msg):
        return _convert_carrier(msg, ctx)
    if msg.role == "user":
        blocks = _user_blocks(msg, msg.parts, ctx)
        return [_Out("user", blocks, msg.id, msg.role)] if blocks else []
    return []


# =============================================================================================
# §12.5 validity: every call has exactly one result, every result has its call
# =============================================================================================
def _drop_unmatched_results(outs: list[_Out], warnings: list[str]) -> set[str]:
    """Drop results whose call did not come earlier, and second results; return the answered IDs."""
    issued: set[str] = set()
    answered: set[str] = set()
    for out in outs:
        if out.role == "assistant":
            issued.update(b["toolCallId"] for b in out.content if b["type"] == "tool-call")
        elif out.role == "tool":
            kept = []
            for block in out.content:
                cid = block["toolCallId"]
                if cid in issued and cid not in answered:
                    answered.add(cid)
                    kept.append(block)
                else:
                    warnings.append(
                        f"{out.source}: dropped tool result {cid!r} without a preceding call (§12.5)"
                    )
            out.content = kept
    return answered


def _synthesize_missing_results(outs: list[_Out], answered: set[str], warnings: list[str]) -> list[_Out]:
    fixed: list[_Out] = []
    for i, out in enumerate(outs):
        fixed.append(out)
        if out.role != "assistant":
            continue
        missing = [b for b in out.content if b["type"] == "tool-call" and b["toolCallId"] not in answered]
        if not missing:
            continue
        synthesized = [
            _tool_result(b["toolCallId"], b["toolName"], _error_output(texts.INTERRUPTED_TOOL_RESULT))
            for b in missing
        ]
        warnings.extend(
            f"{out.source}: synthesized an interrupted result for call {b['toolCallId']!r} (§12.5)"
            for b in missing
        )
        following = outs[i + 1] if i + 1 < len(outs) else None
        if following is not None and following.role == "tool":
            # Join the tool message right after the assistant, keeping the assistant's call order.
            order = {b["toolCallId"]: n for n, b in enumerate(out.content) if b["type"] == "tool-call"}
            merged = following.content + synthesized
            following.content = sorted(merged, key=lambda b: order.get(b["toolCallId"], len(order)))
        else:
            fixed.append(_Out("tool", synthesized, out.source, out.stored_role))
        answered.update(b["toolCallId"] for b in missing)
    return [o for o in fixed if o.content]


def ensure_pairing(outs: list[_Out], warnings: list[str]) -> list[_Out]:
    answered = _drop_unmatched_results(outs, warnings)
    return _synthesize_missing_results(outs, answered, warnings)


# =============================================================================================
# §12.3 per-turn reminder
# =============================================================================================
def _add_reminder(outs: list[_Out], msgs: Sequence[Message], reminder: str, warnings: list[str]) -> None:
    """At the end of the newest user-role stored message (never an OpenAI tool-role message).

    As in MiMo, the reminder belongs to that message even when nothing else of it is sent (only
    `ignored` text, no parts): it then becomes a user turn of its own at the message's position.
    A pure user-role carrier (Anthropic tool results only) carries text after its results: the
    reminder becomes a user message right after its tool message.
    """
    position = {m.id: i for i, m in enumerate(msgs)}
    target = next((m for m in reversed(msgs) if m.role == "user"), None)
    if target is None:
        warnings.append("no user message can carry the per-turn memory reminder; it was not added")
        return
    own = [i for i, o in enumerate(outs) if o.source == target.id]
    users = [i for i in own if outs[i].role == "user"]
    if users:
        outs[users[-1]].content.append(_text(reminder))
        return
    at = own[-1] + 1 if own else sum(1 for o in outs if position.get(o.source, -1) < position[target.id])
    outs.insert(at, _Out("user", [_text(reminder)], target.id, target.role))


# =============================================================================================
# build_messages
# =============================================================================================
def build_messages(
    messages: Sequence[Message],
    *,
    collapse_tail: bool,
    ordering: Ordering,
    reminder: str | None,
    skill_catalog_flag: str = "skillCatalog",
) -> BuiltRequest:
    """View → (collapse) → AI SDK model messages, paired (§12.5), with the per-turn reminder."""
    msgs = list(messages)
    warnings: list[str] = []
    collapsed_ids: list[str] = []
    if collapse_tail:
        collapsed = collapse(msgs, ordering)
        msgs, collapsed_ids = list(collapsed.messages), list(collapsed.removed_ids)
        warnings += collapsed.warnings
    ctx = _Context(logical_calls(msgs), skill_catalog_flag, warnings)
    outs = [out for msg in msgs for out in _convert(msg, ctx)]
    outs = ensure_pairing(outs, warnings)
    if reminder is not None:
        _add_reminder(outs, msgs, reminder, warnings)
    used = {o.source for o in outs}
    return BuiltRequest(
        messages=[o.as_json() for o in outs],
        sources=[o.source for o in outs],
        collapsed_ids=collapsed_ids,
        warnings=warnings,
        estimated_tokens=sum(m.tokens for m in msgs if m.id in used),
    )
