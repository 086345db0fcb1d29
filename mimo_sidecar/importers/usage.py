"""Provider usage records as the `tokens` of an assistant message (behavior.md#messages):
`{input, output, reasoning, cache: {read, write}, total?}`.

`tokens` is set only from a recorded usage: a record without counts gives None, never zeros (the
trigger would read them as "nothing used").
"""

from __future__ import annotations

from typing import Any

from .fields import Json, as_count, as_dict


def from_anthropic(usage: Any) -> Json | None:
    """Anthropic `usage`: `input_tokens` already excludes cache reads and writes, which are reported
    apart; reasoning is part of `output_tokens` (0 here)."""
    usage = as_dict(usage)
    if usage is None:
        return None
    inp, out = as_count(usage.get("input_tokens")), as_count(usage.get("output_tokens"))
    if inp is None and out is None:
        return None
    return {
        "input": inp or 0,
        "output": out or 0,
        "reasoning": 0,
        "cache": {
            "read": as_count(usage.get("cache_read_input_tokens")) or 0,
            "write": as_count(usage.get("cache_creation_input_tokens")) or 0,
        },
    }


def from_openai_counts(
    prompt: Any, completion: Any, cached: Any = None, reasoning: Any = None, total: Any = None
) -> Json | None:
    """OpenAI-style counts: the prompt count *includes* the cached tokens, so `input` is the
    uncached part and the cached ones are cache reads; `total` is kept when recorded (the trigger
    uses it first, behavior.md#overflow-test)."""
    inp, out = as_count(prompt), as_count(completion)
    if inp is None and out is None:
        return None
    hits = min(as_count(cached) or 0, inp or 0)
    tokens: Json = {
        "input": (inp or 0) - hits,
        "output": out or 0,
        "reasoning": as_count(reasoning) or 0,
        "cache": {"read": hits, "write": 0},
    }
    if count := as_count(total):
        tokens["total"] = count
    return tokens
