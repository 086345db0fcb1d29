"""Requests in each provider's own format (docs/formats.md, "Formats").

Module layout:

- `model`: the normalised request (`Turn`s of `Text`, `Media`, `Reasoning`, `ToolCall`,
  `ToolResult` blocks);
- `normalize`: the shared pass, stored view → turns ("Normalisation"), and the per-turn reminder
  (run by `core.request.build_memo`, which keeps a view's converted prefix from one request to the next);
- `target`: what the host says about the model the request goes to, and the reasoning replay rule;
- `call_ids`: deterministic call-ID remapping per provider limits;
- `context`: the renderers' shared inputs, output and helpers; `report`: the warnings vocabulary;
- one renderer per format: `ai_sdk`, `anthropic`, `openai_chat`, `openai_responses`, `gemini`;
- `prefix`: the frozen system prompt and tools in each format, with its hash and cache breakpoint;
- `cache`: Anthropic prompt-cache breakpoints on the messages;
- `rules`: the provider-rules checker (the requests each provider answers with a 400), a pure function
  over any output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..words import RequestFormat
from . import ai_sdk, anthropic, call_ids, gemini, openai_chat, openai_responses
from .context import RenderContext, Rendered
from .model import Turn
from .report import CACHE_IGNORED, Report
from .target import Target

DEFAULT_FORMAT: RequestFormat = "ai-sdk"


@dataclass(frozen=True)
class Renderer:
    """One format: `feed` appends turns to a `Rendered` (resumable: `build_memo` feeds a cached
    prefix's copy), `finish` applies the rules that look at the whole request; `call_ids` makes its
    call-ID map; `default_model`: the target's model defaults to the newest assistant's."""

    feed: Callable[[Sequence[Turn], RenderContext, Rendered], None]
    finish: Callable[[Rendered, RenderContext], None]
    call_ids: Callable[[], call_ids.CallIdMap]
    default_model: bool


RENDERERS: dict[str, Renderer] = {
    "ai-sdk": Renderer(ai_sdk.feed, ai_sdk.finish, call_ids.unchanged, False),
    "anthropic": Renderer(anthropic.feed, anthropic.finish, call_ids.anthropic, True),
    "openai-chat": Renderer(openai_chat.feed, openai_chat.finish, call_ids.openai_chat, True),
    "openai-responses": Renderer(
        openai_responses.feed, openai_responses.finish, call_ids.openai_responses, True
    ),
    "gemini": Renderer(gemini.feed, gemini.finish, call_ids.unchanged, True),
}
FORMATS = tuple(RENDERERS)


@dataclass(frozen=True)
class BuildOutput:
    """What a request is built for: the format, the model it goes to, Anthropic cache TTL, and
    the prefix of the sidecar's model tools when they are added to its tools (behavior.md#d18)."""

    fmt: RequestFormat = DEFAULT_FORMAT
    target: Target | None = None
    cache_ttl: str | None = None
    sidecar_tools: str | None = None


AI_SDK_OUTPUT = BuildOutput()  # the default: today's AI SDK ModelMessages
CACHE_FORMATS = ("anthropic",)


def cache_ttl_for(fmt: str, cache_ttl: str | None, report: Report) -> str | None:
    """The breakpoints' TTL when format `fmt` takes breakpoints; otherwise None, reported."""
    if cache_ttl is not None and fmt not in CACHE_FORMATS:
        report.warn(CACHE_IGNORED, f"prompt-cache breakpoints are set only in {', '.join(CACHE_FORMATS)}")
        return None
    return cache_ttl


__all__ = [
    "DEFAULT_FORMAT",
    "FORMATS",
    "RENDERERS",
    "Renderer",
    "Target",
    "cache_ttl_for",
]
