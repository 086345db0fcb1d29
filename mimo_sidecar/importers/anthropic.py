"""Anthropic Messages content, shared by the Claude Code and Cline readers.

Blocks are kept as they are (thinking and its signature byte-identical, images also inside tool
results, unknown block types too); only their shape is checked, so that every part the sidecar
receives is an object with a type, and every call has an ID.
"""

from __future__ import annotations

from typing import Any

from .errors import TranscriptError
from .fields import Json, as_dict, as_list, nonempty_str
from .report import ImportReport
from .session_builder import Draft

PROVIDER_ID = "anthropic"
TEXT_SUFFIX = "#text"  # ID suffix of the user message split from a carrier
RESULT_TYPE = "tool_result"
USE_TYPE = "tool_use"

# Stop reasons onto `finish` (behavior.md#finish-values): a tool stop is "tool-calls", a natural
# end "stop"; the others keep AI SDK names where one exists, else the provider's own word.
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content-filter",
}


def finish_of(stop_reason: Any) -> str | None:
    reason = nonempty_str(stop_reason)
    if reason is None:
        return None
    return STOP_REASONS.get(reason, reason)


def blocks_of(content: Any, path: str, line: int | None, where: str | None = None) -> list[Json]:
    """A message's content as blocks: a string is one text block; a list must hold typed objects."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    items = as_list(content)
    if items is None:
        raise TranscriptError(path, "message content must be a string or a list", line=line, where=where)
    blocks = []
    for index, item in enumerate(items):
        block = as_dict(item)
        if block is None or not nonempty_str(block.get("type")):
            raise TranscriptError(
                path, f"content[{index}] must be an object with a type", line=line, where=where
            )
        if block["type"] == USE_TYPE and not nonempty_str(block.get("id")):
            raise TranscriptError(path, f"content[{index}]: tool_use without an id", line=line, where=where)
        blocks.append(block)
    return blocks


def user_turn(
    blocks: list[Json],
    mid: str,
    created: int | None,
    report: ImportReport,
    *,
    line: int | None = None,
    where: str | None = None,
) -> list[Draft]:
    """A user turn as stored messages (none when it has no content).

    Tool results first (the Messages API wants them first). When the rest of the turn holds more
    than harness text (something the user typed or attached), it becomes a user message of its own,
    `<mid>#text`, right after a pure carrier: the sidecar never reads user input from a carrier
    (behavior.md#section-recent-user), so the user's words would otherwise be invisible to "Recent
    user input".
    """
    results = [b for b in blocks if b.get("type") == RESULT_TYPE]
    rest = [b for b in blocks if b.get("type") != RESULT_TYPE]
    if not results or not rest:
        return (
            [Draft({"id": mid, "role": "user"}, results or rest, line=line, where=where, created=created)]
            if blocks
            else []
        )
    if all(b.get("type") == "text" and b.get("synthetic") is True for b in rest):
        return [Draft({"id": mid, "role": "user"}, results + rest, line=line, where=where, created=created)]
    report.adjust("user text stored apart from the tool results of its turn")
    return [
        Draft({"id": mid, "role": "user"}, results, line=line, where=where, created=created),
        Draft(
            {"id": mid + TEXT_SUFFIX, "role": "user"},
            rest,
            line=line,
            where=where,
            created=created,
            records=0,
        ),
    ]


def issues_calls(blocks: list[Json]) -> bool:
    return any(b.get("type") == USE_TYPE for b in blocks)
