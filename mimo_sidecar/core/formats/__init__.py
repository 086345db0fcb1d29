"""Requests in each provider's own format (protocol.md, "Formats").

Module layout:

- `model`: the normalised request (`Turn`s of `Text`, `Media`, `Reasoning`, `ToolCall`,
  `ToolResult` blocks);
- `normalize`: the shared pass, stored view → turns ("Normalisation"), and the per-turn reminder;
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
from .target import Target, resolve

DEFAULT_FORMAT: RequestFormat = "ai-sdk"

Renderer = Callable[[Sequence[Turn], RenderContext], Rendered]
RENDERERS: dict[str, tuple[Renderer, Callable[[], call_ids.CallIdMap], bool]] = {
    # format: (renderer, call-ID map, default the target's model to the newest assistant's)
    "ai-sdk": (ai_sdk.render, call_ids.unchanged, False),
    "anthropic": (anthropic.render, call_ids.anthropic, True),
    "openai-chat": (openai_chat.render, call_ids.openai_chat, True),
    "openai-responses": (openai_responses.render, call_ids.openai_responses, True),
    "gemini": (gemini.render, call_ids.unchanged, True),
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


@dataclass
class History:
    rendered: Rendered
    call_ids: dict[str, str]  # mapped call ID → stored call ID
    target: Target  # the target with its defaults resolved
    cache_ttl: str | None  # None when the format takes no breakpoints


def render_history(
    fmt: str,
    turns: Sequence[Turn],
    target: Target | None,
    report: Report,
    cache_ttl: str | None = None,
    model_in_use: tuple[str | None, str | None] | None = None,
) -> History:
    """The normalised turns in format `fmt` (`model_in_use`: see `target.resolve`)."""
    renderer, make_ids, default_model = RENDERERS[fmt]
    if cache_ttl is not None and fmt not in CACHE_FORMATS:
        report.warn(CACHE_IGNORED, f"prompt-cache breakpoints are set only in {', '.join(CACHE_FORMATS)}")
        cache_ttl = None
    ids = make_ids()
    resolved = resolve(target, turns, filter_by_default=default_model, model_in_use=model_in_use)
    rendered = renderer(turns, RenderContext(resolved, report, ids, cache_ttl))
    return History(rendered, ids.mapped, resolved, cache_ttl)


__all__ = ["DEFAULT_FORMAT", "FORMATS", "History", "Target", "render_history"]
