"""Every stored reasoning part a request draws from is sent, merged into an item, or reported dropped.

`unaccounted(fmt, messages, built)` compares the reasoning parts of the assistant messages a request
used (the collapse's left-outs excluded) with what the request holds and what its `warnings` count:

    stored parts = reasoning blocks sent + parts merged into an earlier part's item + parts dropped

where a sent block is the format's reasoning shape (`ai-sdk` `reasoning`, Anthropic `thinking` and
`redacted_thinking`, a Responses `reasoning` item, a Gemini `thought` part), merged parts are
counted by `reasoning-merged` (Responses: several parts of one item) and dropped ones by
`reasoning-dropped` and by the "thinking blocks left out" of `thinking-disabled`. It returns the
difference (0 when nothing is lost silently).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mimo_sidecar.core.session.message import Message

REASONING_PARTS = frozenset({"reasoning", "thinking", "redacted_thinking"})
COUNTED = re.compile(r"^(reasoning-dropped|reasoning-merged): (\d+) × ")
LEFT_OUT = re.compile(r"^thinking-disabled: .*; (\d+) thinking blocks left out of it")


def stored_parts(messages: Sequence[Message], left_out: Sequence[str]) -> int:
    skipped = set(left_out)
    return sum(
        1
        for m in messages
        if m.role == "assistant" and m.id not in skipped
        for p in m.parts
        if p.get("type") in REASONING_PARTS
    )


def sent_blocks(fmt: str, output: list[Any]) -> int:
    if fmt == "openai-responses":
        return sum(1 for item in output if item.get("type") == "reasoning")
    if fmt == "gemini":
        return sum(1 for c in output for p in c.get("parts", []) if p.get("thought") is True)
    shapes = {"ai-sdk": {"reasoning"}, "anthropic": {"thinking", "redacted_thinking"}}.get(fmt, set())
    return sum(
        1
        for m in output
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") in shapes
    )


def reported(warnings: list[str]) -> int:
    total = 0
    for warning in warnings:
        if match := COUNTED.match(warning):
            total += int(match.group(2))
        elif match := LEFT_OUT.match(warning):
            total += int(match.group(1))
    return total


def unaccounted(fmt: str, messages: Sequence[Message], built: Any) -> int:
    """Stored reasoning parts neither sent nor reported (`built`: a core `BuiltRequest`)."""
    return (
        stored_parts(messages, built.collapsed_ids)
        - sent_blocks(fmt, built.messages)
        - reported(built.warnings)
    )
