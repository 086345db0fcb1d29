"""The "# Recent activity" digest of the tail (behavior.md#digest).

One line per assistant text, subtask and tool call of the tail, oldest first, capped at 200 lines.
Tool lines show the call and its arguments (folded to 80 units each) and, for failures, the error
text; tool outputs never appear. User-role messages are never digested: earlier boundaries must not
be re-digested and ordinary user messages stay live after the collapse. In split shapes the carriers
are skipped as well: their results are reported on the issuing assistant's tool line (D8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import texts
from ..estimate.jsjson import js_stringify
from ..estimate.jstext import drop_dangling_high, fold_ws, head16, is_blank, js_trim, len16
from ..session.message import Json, Message
from ..session.shapes import INLINE_TOOL, LogicalCall, logical_calls, tool_uses

MAX_LINE_CHARS = 240
MAX_ARG_CHARS = 80
MAX_LINES = 200
ELLIPSIS = "\u2026"
# the substring test of behavior.md#digest (keep: any line may trigger it)
INTERRUPTED_MARKER = "\u2192 interrupted"
HEADING = "# " + texts.HEADING_ACTIVITY


def fold(text: str, max_units: int) -> str:
    """Collapse JS-whitespace runs, JS-trim, and cut to `max_units` UTF-16 units with one "…".

    D9: a high surrogate left dangling by the cut is dropped before the ellipsis, so the result is
    then one unit shorter than `max_units` (never longer, never a lone surrogate).
    """
    folded = fold_ws(text)
    if len16(folded) <= max_units:
        return folded
    return drop_dangling_high(head16(folded, max(0, max_units - 1))) + ELLIPSIS


# -- arguments -------------------------------------------------------------------------------------
def _serialized(value: Any) -> str:
    try:
        text = js_stringify(value)
    except (RecursionError, TypeError, ValueError):
        text = None
    return text if text is not None else texts.UNSERIALIZABLE_ARG


def format_arg_value(value: Any) -> str:
    """A string is folded THEN quoted (escapes may make it longer than 82 units); anything else is
    serialized, then folded."""
    if isinstance(value, str):
        return js_stringify(fold(value, MAX_ARG_CHARS)) or ""
    return fold(_serialized(value), MAX_ARG_CHARS)


def format_args(tool_input: Any) -> str:
    """`key=value` items joined with ", ", in the input's key order; "" for a missing/empty input.

    A split-shape input that is not an object (an OpenAI `arguments` string that did not parse)
    is shown as one value without a key.
    """
    if tool_input is None:
        return ""
    if isinstance(tool_input, Mapping):
        return ", ".join(f"{key}={format_arg_value(value)}" for key, value in tool_input.items())
    return format_arg_value(tool_input)


# -- lines -----------------------------------------------------------------------------------------
def _error_text(error: Any) -> str:
    if isinstance(error, str):
        return error
    return "" if error is None else _serialized(error)


def tool_line(name: str, state: Json) -> str:
    """`- name(args)` plus ` → error: …` or ` → interrupted` by the (logical) state."""
    call = f"- {name}({format_args(state.get('input'))})"
    status = state.get("status")
    if status == "error":
        return call + texts.DIGEST_ERROR_SUFFIX + fold(_error_text(state.get("error")), MAX_ARG_CHARS)
    if status in ("pending", "running"):
        return call + texts.DIGEST_INTERRUPTED_SUFFIX
    return call


def _text_line(part: Json) -> str | None:
    text = part.get("text")
    if part.get("ignored") or part.get("synthetic") or not isinstance(text, str) or is_blank(text):
        return None
    return texts.DIGEST_ASSISTANT_PREFIX + fold(js_trim(text), MAX_LINE_CHARS)


def _subtask_line(part: Json) -> str:
    # JavaScript `command ?? agent`: an empty command is kept, only absent/null falls back.
    command = part.get("command")
    value = command if command is not None else part.get("agent")
    return texts.DIGEST_SUBTASK_PREFIX + fold(value if isinstance(value, str) else "", MAX_LINE_CHARS)


def _inline_state(part: Json) -> Json:
    state = part.get("state")
    return state if isinstance(state, dict) else {"status": "pending"}


def _pending(tool_input: Any) -> Json:
    return {"status": "pending", "input": tool_input}


def message_lines(msg: Message, calls: Mapping[str, LogicalCall]) -> list[str]:
    """The digest lines of one assistant message, in part order."""
    split_uses = {
        u.part_index: u for u in tool_uses(msg) if msg.parts[u.part_index].get("type") != INLINE_TOOL
    }
    lines: list[str] = []
    for i, part in enumerate(msg.parts):
        ptype = part.get("type")
        if ptype == "text":
            line = _text_line(part)
            if line is not None:
                lines.append(line)
        elif ptype == "subtask":
            lines.append(_subtask_line(part))
        elif ptype == INLINE_TOOL:
            name = part.get("tool")
            lines.append(tool_line(name if isinstance(name, str) else "", _inline_state(part)))
        elif i in split_uses:
            use = split_uses[i]
            call = calls.get(use.call_id)
            state = call.state() if call is not None and call.issuer is msg else _pending(use.input)
            lines.append(tool_line(use.name, state))
    return lines


def interrupted_call_ids(
    tail: Sequence[Message], calls: Mapping[str, LogicalCall] | None = None
) -> list[str]:
    """The calls whose digest line says `→ interrupted` (no result yet), in line order; an inline part
    without a call ID has a line but no ID to name. The boundary records them (D20), so that a result
    that still arrives is not collapsed with its call."""
    if calls is None:
        calls = logical_calls(tail)
    out: list[str] = []
    for msg in tail:
        for use in tool_uses(msg):
            part = msg.parts[use.part_index]
            if part.get("type") == INLINE_TOOL:
                state = _inline_state(part)
            else:
                call = calls.get(use.call_id)
                state = call.state() if call is not None and call.issuer is msg else _pending(use.input)
            if state.get("status") in ("pending", "running"):
                out.append(use.call_id)
    return out


def digest_lines(tail: Sequence[Message], calls: Mapping[str, LogicalCall] | None = None) -> list[str]:
    """Every digest line of the tail, oldest first (uncapped). Only assistant messages produce lines."""
    if calls is None:
        calls = logical_calls(tail)
    lines: list[str] = []
    for msg in tail:
        if msg.role == "assistant":
            lines.extend(message_lines(msg, calls))
    return lines


@dataclass(frozen=True, slots=True)
class Digest:
    text: str  # "" when there is no line
    kept_lines: int
    dropped_lines: int  # lines beyond MAX_LINES (the newest ones)
    interrupted: bool  # the banner was added

    @property
    def has_activity(self) -> bool:
        return bool(self.text)


def build_digest(tail: Sequence[Message], calls: Mapping[str, LogicalCall] | None = None) -> Digest:
    """behavior.md#digest: the first 200 lines under "# Recent activity", with the banner when a kept line
    contains "→ interrupted"."""
    lines = digest_lines(tail, calls)
    kept = lines[:MAX_LINES]
    if not kept:
        return Digest("", 0, 0, False)
    interrupted = any(INTERRUPTED_MARKER in line for line in kept)
    banner = [texts.DIGEST_INTERRUPTED_BANNER, ""] if interrupted else []
    text = "\n".join([HEADING, "", *banner, *kept])
    return Digest(text, len(kept), len(lines) - len(kept), interrupted)


def digest(tail: Sequence[Message]) -> str:
    """The "# Recent activity" text of the tail, or "" when nothing is worth a line."""
    return build_digest(tail).text
