"""Tool calls and tool results of a message, whatever the host's shape (behavior.md#shapes, DEVIATION D8).

MiMo keeps a call and its result in one `tool` part (the *inline* shape). Anthropic and OpenAI put the result
in a later message (the *split* shapes). This module projects every message onto `ToolUse`s and `ToolResult`s
and joins them across messages into `LogicalCall`s, so the rest of the core (watermark
behavior.md#watermark-adjust, microcompaction behavior.md#microcompaction, classify behavior.md#classify,
digest behavior.md#digest, collapse behavior.md#collapse, request behavior.md#request) works on one model.

Accepted part shapes
--------------------

Tool uses are read from **assistant** messages only:

============================  ===============================================================
inline (MiMo/OpenCode)        ``{"type": "tool", "callID", "tool", "state": {...}}`` — also a
                              result on the same message (its state is the part's ``state``)
Anthropic Messages            ``{"type": "tool_use", "id", "name", "input"}``
OpenAI Chat Completions       ``{"type": "function", "id", "function": {"name", "arguments"}}``
                              (a ``tool_calls`` entry used as a part)
OpenAI Responses              ``{"type": "function_call", "call_id", "name", "arguments"}``;
                              ``{"type": "custom_tool_call", "call_id", "name", "input"}``
                              (a freeform tool: ``input`` is a plain string, kept as the input);
                              ``{"type": "local_shell_call", "call_id", "action"}`` (tool
                              ``local_shell``, input = ``action``; Codex answers it with a
                              ``function_call_output``)
============================  ===============================================================

OpenAI ``arguments`` is a JSON string: it is parsed into the input; an empty or blank string means
no arguments (``{}``); a string that does not parse is kept as the input unchanged.

Split tool results are read from **user**- and **tool**-role messages only:

============================  ===============================================================
Anthropic Messages            part ``{"type": "tool_result", "tool_use_id", "content",
                              "is_error"?, "interrupted"?}``; ``content`` is a string or a list
                              of blocks, whose ``{"type": "text", "text"}`` blocks are joined
                              with ``"\\n"``
OpenAI Chat Completions       a message with ``info.role == "tool"`` and ``info.tool_call_id``:
                              the whole message is the result; its content is the ``text`` of
                              its text parts joined with ``"\\n"``; host flags
                              ``info.is_error`` and ``info.interrupted``. Its ``part_index``
                              is ``-1`` (it is not one part, it is the message).
OpenAI Responses              part ``{"type": "function_call_output" | "custom_tool_call_output",
                              "call_id", "output", "is_error"?, "interrupted"?}``; ``output``
                              is a string or a list of ``input_text`` / ``input_image`` /
                              ``input_file`` items, whose ``text`` fields are joined as above
============================  ===============================================================

Result content that is not text (images and files inside a result) does not count in ``content``;
request building reads it from the part itself (`core.formats`).

A part whose call ID is missing or not a non-empty string is not a use or a result.

A **carrier** is a tool-role message, or a user-role message with at least one split result. It is
**pure** when every one of its parts is result material (result parts; for a tool-role message with
``tool_call_id``, also its text parts, which are the result content).

A **logical call** joins the first use of a call ID (on its *issuing* message) with the first
result of that ID in list order (on its *carrier*). Inline calls are their own carrier.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..estimate.jsjson import js_stringify
from ..estimate.jstext import is_blank
from .message import Json, Message

INLINE_TOOL = "tool"
CUSTOM_TOOL_CALL = "custom_tool_call"  # Responses freeform tool call: `input` is a string
# Responses `local_shell_call` {call_id, action}: Codex answers it with a `function_call_output`.
LOCAL_SHELL_CALL = "local_shell_call"
LOCAL_SHELL_TOOL = "local_shell"  # its tool's name (the Responses tool type)
USE_PART_TYPES = frozenset(
    {INLINE_TOOL, "tool_use", "function", "function_call", CUSTOM_TOOL_CALL, LOCAL_SHELL_CALL}
)
RESULT_PART_TYPES = frozenset({"tool_result", "function_call_output", "custom_tool_call_output"})
MESSAGE_LEVEL_RESULT = -1  # ToolResult.part_index of an OpenAI Chat tool-role message


@dataclass(frozen=True, slots=True)
class ToolUse:
    call_id: str
    name: str
    input: Any
    part_index: int


@dataclass(frozen=True, slots=True)
class ToolResult:
    call_id: str
    part_index: int
    content: str
    is_error: bool
    interrupted: bool
    # The inline part's own state dict (inline shape only); None for split results.
    state: Json | None = None


def _call_id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# -- uses ------------------------------------------------------------------------------------------
def parse_arguments(arguments: Any) -> Any:
    """OpenAI `arguments`: a JSON string parsed into the input; raw string kept if it does not parse."""
    if not isinstance(arguments, str):
        return arguments if arguments is not None else {}
    if is_blank(arguments):
        return {}  # some providers send "" for a call without parameters
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _use_of(part: Json, index: int) -> ToolUse | None:
    ptype = part.get("type")
    if ptype == INLINE_TOOL:
        state = part.get("state")
        tool_input = state.get("input") if isinstance(state, dict) else None
        call_id, name = _call_id(part.get("callID")), part.get("tool")
    elif ptype == "tool_use":
        call_id, name, tool_input = _call_id(part.get("id")), part.get("name"), part.get("input")
    elif ptype == "function":
        fn = part.get("function")
        fn = fn if isinstance(fn, dict) else {}
        call_id, name = _call_id(part.get("id")), fn.get("name")
        tool_input = parse_arguments(fn.get("arguments"))
    elif ptype == "function_call":
        call_id, name = _call_id(part.get("call_id")), part.get("name")
        tool_input = parse_arguments(part.get("arguments"))
    elif ptype == CUSTOM_TOOL_CALL:
        call_id, name, tool_input = _call_id(part.get("call_id")), part.get("name"), part.get("input")
    elif ptype == LOCAL_SHELL_CALL:
        call_id, name, tool_input = _call_id(part.get("call_id")), LOCAL_SHELL_TOOL, part.get("action")
    else:
        return None
    if call_id is None:
        return None
    return ToolUse(call_id, name if isinstance(name, str) else "", tool_input, index)


def tool_uses(msg: Message) -> list[ToolUse]:
    """The tool calls issued by `msg`, in part order (assistant messages only)."""
    if msg.role != "assistant":
        return []
    uses = []
    for i, part in enumerate(msg.parts):
        if part.get("type") in USE_PART_TYPES:
            use = _use_of(part, i)
            if use is not None:
                uses.append(use)
    return uses


# -- results ---------------------------------------------------------------------------------------
def content_text(value: Any) -> str:
    """A result's content as text: a string, or the `text` of a list of blocks joined with "\\n"."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for t in map(block_text, value) if t is not None)
    return js_stringify(value) or ""


def block_text(block: Any) -> str | None:
    """The text of one content block: a string, or a `{"text": str}` object; None for any other."""
    if isinstance(block, str):
        return block
    if isinstance(block, dict) and isinstance(block.get("text"), str):
        return str(block["text"])
    return None


def _inline_result(part: Json, index: int) -> ToolResult | None:
    call_id = _call_id(part.get("callID"))
    if call_id is None:
        return None
    raw_state = part.get("state")
    # A part without a state dict has not started: treat it as pending.
    state: Json = raw_state if isinstance(raw_state, dict) else {"status": "pending", "input": {}}
    status = state.get("status")
    if status == "completed":
        content = state.get("output")
    elif status == "error":
        content = state.get("error")
    else:
        content = None
    metadata = state.get("metadata")
    interrupted = isinstance(metadata, dict) and bool(metadata.get("interrupted"))
    return ToolResult(call_id, index, content_text(content), status == "error", interrupted, state)


def _split_result(part: Json, index: int) -> ToolResult | None:
    if part.get("type") == "tool_result":
        call_id, content = _call_id(part.get("tool_use_id")), part.get("content")
    else:
        call_id, content = _call_id(part.get("call_id")), part.get("output")
    if call_id is None:
        return None
    return ToolResult(
        call_id, index, content_text(content), bool(part.get("is_error")), bool(part.get("interrupted"))
    )


def _message_level_result(msg: Message) -> ToolResult | None:
    call_id = _call_id(msg.info.get("tool_call_id"))
    if call_id is None:
        return None
    text = "\n".join(
        p["text"] for p in msg.parts if p.get("type") == "text" and isinstance(p.get("text"), str)
    )
    return ToolResult(
        call_id,
        MESSAGE_LEVEL_RESULT,
        text,
        bool(msg.info.get("is_error")),
        bool(msg.info.get("interrupted")),
    )


def tool_results(msg: Message) -> list[ToolResult]:
    """The tool results held by `msg`: inline ones on assistants, split ones on user/tool roles."""
    role = msg.role
    results: list[ToolResult] = []
    if role == "assistant":
        for i, part in enumerate(msg.parts):
            if part.get("type") == INLINE_TOOL:
                result = _inline_result(part, i)
                if result is not None:
                    results.append(result)
        return results
    if role not in ("user", "tool"):
        return results
    if role == "tool":
        whole = _message_level_result(msg)
        if whole is not None:
            results.append(whole)
    for i, part in enumerate(msg.parts):
        if part.get("type") in RESULT_PART_TYPES:
            result = _split_result(part, i)
            if result is not None:
                results.append(result)
    return results


def is_carrier(msg: Message) -> bool:
    """A tool-role message, or a user-role message holding at least one split result (behavior.md#shapes)."""
    if msg.role == "tool":
        return True
    return msg.role == "user" and any(
        p.get("type") in RESULT_PART_TYPES and _split_result(p, 0) is not None for p in msg.parts
    )


def is_pure_carrier(msg: Message) -> bool:
    """A carrier that contains nothing but tool-result material."""
    if not is_carrier(msg):
        return False
    text_is_result = msg.role == "tool" and _call_id(msg.info.get("tool_call_id")) is not None
    for part in msg.parts:
        ptype = part.get("type")
        if ptype in RESULT_PART_TYPES or (text_is_result and ptype == "text"):
            continue
        return False
    return True


def provider_id(msg: Message) -> str:
    """The provider's message ID when the host supplies one (entries of one response share it)."""
    pid = msg.info.get("providerMessageID")
    return pid if isinstance(pid, str) and pid else msg.id


# -- logical calls ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LogicalCall:
    issuer: Message
    use: ToolUse
    carrier: Message | None
    result: ToolResult | None

    @property
    def call_id(self) -> str:
        return self.use.call_id

    @property
    def inline(self) -> bool:
        return self.result is not None and self.result.state is not None

    def state(self) -> Json:
        """A MiMo-like tool state (behavior.md#tool-states) derived per the behavior.md#logical-calls table.

        Inline: the part's own state. Split: `pending` without a result; `error` when the host
        flags an error (or an interruption, which MiMo always records as an error); else
        `completed`. The returned dict is fresh for split calls and must not be mutated for inline
        ones (it is the host's stored state).
        """
        result = self.result
        if result is not None and result.state is not None:
            return result.state
        if result is None:
            return {"status": "pending", "input": self.use.input}
        if result.is_error or result.interrupted:
            state: Json = {"status": "error", "input": self.use.input, "error": result.content}
            if result.interrupted:
                state["metadata"] = {"interrupted": True}
            return state
        return {"status": "completed", "input": self.use.input, "output": result.content}


def logical_calls(messages: Iterable[Message]) -> dict[str, LogicalCall]:
    """Every call ID issued in `messages`, joined with its first result in list order.

    Results without a use in `messages` (orphans) are not included.
    """
    msgs = list(messages)
    uses: dict[str, tuple[Message, ToolUse]] = {}
    for msg in msgs:
        for use in tool_uses(msg):
            uses.setdefault(use.call_id, (msg, use))
    results: dict[str, tuple[Message, ToolResult]] = {}
    for msg in msgs:
        for result in tool_results(msg):
            issued = uses.get(result.call_id)
            if issued is None or result.call_id in results:
                continue
            if result.state is not None and issued[0] is not msg:
                continue  # an inline result only completes the use on its own message
            results[result.call_id] = (msg, result)
    calls: dict[str, LogicalCall] = {}
    for call_id, (issuer, use) in uses.items():  # in issuing order
        found = results.get(call_id)
        calls[call_id] = LogicalCall(issuer, use, *found) if found else LogicalCall(issuer, use, None, None)
    return calls
