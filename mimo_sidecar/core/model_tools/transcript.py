"""Stored messages written out in full for the model (the history tool, behavior.md#d18).

Everything the session stores is shown as it is stored, whatever the model's request showed: a
result the rebuild cleared (microcompaction) is written out with its whole output and a note that
it was cleared, a step the boundary's digest collapsed is there with every part, a long user
message is whole. Thinking is shown as text (its signature is not). Attachments are named, not
inlined. Parts that only mark steps (`step-start`, `step-finish`) are left out: they hold nothing
to read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from .. import texts
from ..estimate.jsjson import js_stringify
from ..rebuild.boundary import is_marked
from ..session.message import Json, Message
from ..session.shapes import (
    MESSAGE_LEVEL_RESULT,
    RESULT_PART_TYPES,
    USE_PART_TYPES,
    LogicalCall,
    content_text,
    tool_results,
    tool_uses,
)

MARKER_PARTS = frozenset({"step-start", "step-finish"})


def iso_time(ms: Any) -> str:
    """`time.created` as an ISO 8601 UTC time to the millisecond; `?` when there is none."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)):
        return "?"
    try:
        moment = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return "?"
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def created(message: Message) -> str:
    t = message.info.get("time")
    return iso_time(t.get("created") if isinstance(t, dict) else None)


def header(message: Message) -> str:
    """One line naming a message: ID, role, time, agent, stop reason."""
    return texts.message_header(message.id, message.role, created(message), message.agent_id, message.finish)


def json_text(value: Any) -> str:
    return js_stringify(value) or texts.UNSERIALIZABLE_ARG


def message_text(message: Message) -> str:
    """Every part of `message`, in part order, in full."""
    uses = {u.part_index: u for u in tool_uses(message)}
    results = {r.part_index: r for r in tool_results(message)}
    lines = [header(message)]
    whole = results.get(MESSAGE_LEVEL_RESULT)
    if whole is not None:  # an OpenAI Chat tool message: the message is the result
        lines.append(texts.result_label(whole.call_id, _status(whole.is_error), _cleared(message.parts)))
        lines.append(whole.content)
    for i, part in enumerate(message.parts):
        if whole is not None and part.get("type") == "text":
            continue  # already shown as the result's content
        lines.extend(_part_lines(part, uses.get(i), results.get(i)))
    return "\n".join(lines)


def _status(is_error: bool) -> str:
    return "error" if is_error else "completed"


def _cleared(parts: list[Json]) -> bool:
    return any(is_marked(p) for p in parts if p.get("type") == "text")


def _part_lines(part: Json, use: Any, result: Any) -> Iterator[str]:
    ptype = part.get("type")
    if ptype in MARKER_PARTS:
        return
    if ptype in USE_PART_TYPES and use is not None:
        yield texts.call_label(use.name, use.call_id)
        yield texts.INPUT_LABEL + json_text(use.input)
        if ptype == "tool" and result is not None:  # inline: the result is on the same part
            yield from _inline_result_lines(part, result.call_id)
        return
    if ptype in RESULT_PART_TYPES and result is not None:
        yield texts.result_label(result.call_id, _status(result.is_error), is_marked(part))
        yield result.content
        return
    yield from _plain_part_lines(part)


def _inline_result_lines(part: Json, call_id: str) -> Iterator[str]:
    state = part.get("state")
    state = state if isinstance(state, dict) else {}
    status = str(state.get("status") or "pending")
    yield texts.result_label(call_id, status, is_marked(part))
    yield from _state_output(state)


def _state_output(state: Json) -> Iterator[str]:
    status = state.get("status")
    if status == "completed":
        yield content_text(state.get("output"))
    elif status == "error":
        yield content_text(state.get("error"))
        metadata = state.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("output"), str):
            yield texts.PARTIAL_OUTPUT_LABEL
            yield metadata["output"]
    else:
        yield texts.NO_RESULT_YET


def _plain_part_lines(part: Json) -> Iterator[str]:
    ptype = part.get("type")
    if ptype == "text":
        flags = [f for f in ("synthetic", "ignored") if part.get(f)]
        if flags:
            yield texts.flagged_text_label(flags)
        yield str(part.get("text") or "")
    elif ptype == "reasoning":
        yield texts.REASONING_LABEL
        yield str(part.get("text") or "")
    elif ptype == "file":
        yield texts.file_label(part.get("filename"), part.get("mime"))
    elif ptype == "checkpoint":
        yield texts.checkpoint_label(part.get("coveredUpTo"), part.get("digestUpTo"))
    elif ptype == "compaction":
        yield texts.COMPACTION_PART_LABEL
    elif ptype == "subtask":
        yield texts.subtask_label(part.get("agent"), part.get("description"))
        yield str(part.get("prompt") or "")
    else:
        yield texts.other_part_label(str(ptype))


def call_text(call: LogicalCall) -> str:
    """One tool call in full: its name, issuing and carrying messages, input, status, output."""
    lines = [
        texts.call_heading(call.use.name, call.call_id, call.issuer.id, created(call.issuer)),
        texts.INPUT_LABEL + json_text(call.use.input),
    ]
    if call.carrier is None or call.result is None:
        lines.append(texts.NO_RESULT_YET)
        return "\n".join(lines)
    holder = call.carrier.parts[call.result.part_index] if call.result.part_index >= 0 else None
    marked = is_marked(holder) if holder is not None else _cleared(call.carrier.parts)
    state = call.state()
    status = str(state.get("status"))
    lines.append(texts.result_heading(call.carrier.id, status, marked))
    lines.extend(_state_output(state) if call.inline else [call.result.content])
    return "\n".join(lines)
