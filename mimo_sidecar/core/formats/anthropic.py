"""Target `anthropic`: the Messages API `messages` (docs/formats.md, "Formats", "Per format").

- user turn → `{"role": "user", "content": [text | image | document blocks]}`;
- assistant turn → `{"role": "assistant", "content": [thinking | redacted_thinking (kept byte for
  byte, in order, with their signatures), text, tool_use]}`; text that followed a tool call moves
  before the calls (rule `anthropic/text-after-tool-use`); a non-object tool input becomes `{"input": value}`;
- tool turn → `{"role": "user", "content": [tool_result…]}`, one per call, in call order, first in
  the message: the user content of the same turn follows in the same message (consecutive
  same-role messages are merged, as the API would);
- IDs: characters other than letters, digits, `_` and `-` are remapped (`call_ids`);
- media: base64/URL images (JPEG, PNG, GIF, WebP, at most 5 MB) and PDFs; anything else becomes a
  fixed placeholder text; images inside tool results stay there unless the target says otherwise;
- thinking: replayed only to the provider and model that signed it; `thinking: false` drops it all;
  with `thinking: true`, a final assistant message with tool calls that does not start with signed
  thinking is sent without its thinking and with `overrides.thinking = {"type": "disabled"}`
  (the rules `anthropic/thinking-not-first` and `anthropic/thinking-when-off`);
- a final assistant message (a prefill) loses its trailing whitespace (rule
  `anthropic/trailing-whitespace`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..words import ANTHROPIC
from . import report as r
from .cache import place_message_breakpoints
from .context import (
    BlockShapes,
    RenderContext,
    Rendered,
    inlined_text,
    object_input,
    result_blocks,
    text_before_calls,
    user_blocks,
)
from .model import Json, Media, Reasoning, Text, ToolCall, ToolResult, Turn

FORMAT = "anthropic"
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
NATIVE_KEYS = {
    "image": ("type", "source"),
    "document": ("type", "source", "title", "context", "citations"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
}


def _native(block: Json) -> Json:
    """A provider-native block with only its API fields (hosts may add `id` and the like)."""
    keys = NATIVE_KEYS[block["type"]]
    return {k: block[k] for k in keys if k in block}


def media_block(media: Media, ctx: RenderContext, source: str) -> Json | None:
    """An image or document block, a placeholder text block, or None (text the host inlined)."""
    if inlined_text(media, ctx, source):
        return None
    kind = "image" if media.is_image else "document" if media.mime == "application/pdf" else None
    reason = None
    if not ctx.target.images:
        reason = "no image input"
    elif kind is None:
        reason = "file type not accepted"
    elif kind == "image" and media.mime not in IMAGE_TYPES and media.remote_url() is None:
        reason = "image type not accepted"
    elif kind == "image" and (media.decoded_size() or 0) > MAX_IMAGE_BYTES:
        reason = "image over 5 MB"
    if reason is None:
        if media.native is not None and media.native.get("type") == kind:
            return _native(media.native)
        source_field = _source(media)
        if source_field is not None:
            return {"type": kind, "source": source_field}
        reason = "no data or fetchable URL"
    return {"type": "text", "text": ctx.media_placeholder(media, reason, source).text}


def _source(media: Media) -> Json | None:
    payload = media.b64()
    if payload is not None:
        return {"type": "base64", "media_type": media.mime, "data": payload}
    url = media.remote_url()
    if url is not None:
        return {"type": "url", "url": url}
    if media.file_id is not None:
        return {"type": "file", "file_id": media.file_id}
    return None


SHAPES = BlockShapes(lambda text: {"type": "text", "text": text}, media_block)


def _thinking(reasoning: Reasoning) -> Json | None:
    if reasoning.native is not None and reasoning.native.get("type") in THINKING_TYPES:
        return _native(reasoning.native)
    signature = reasoning.token("signature")
    if isinstance(signature, str):
        return {"type": "thinking", "thinking": reasoning.text, "signature": signature}
    redacted = reasoning.token("redactedData")
    if isinstance(redacted, str):
        return {"type": "redacted_thinking", "data": redacted}
    return None


def _assistant(turn: Turn, ctx: RenderContext) -> list[Json]:
    content: list[Json] = []
    for block in text_before_calls(turn.blocks, turn.sources[0], ctx.report):
        if isinstance(block, Text):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, Reasoning):
            if ctx.target.thinking is False:
                ctx.report.tally(
                    r.REASONING_DROPPED,
                    "thinking not sent (target thinking off: the API refuses thinking in the final "
                    "assistant message and drops it from earlier ones)",
                    turn.sources[0],
                )
            elif ctx.keep_reasoning(block, turn, ANTHROPIC, FORMAT):
                thinking = _thinking(block)
                if thinking is not None:
                    content.append(thinking)
                else:
                    ctx.report.tally(
                        r.REASONING_DROPPED,
                        f"reasoning not replayed to {FORMAT}: no signature "
                        "(the API refuses unsigned thinking)",
                        turn.sources[0],
                    )
        elif isinstance(block, ToolCall):
            if ctx.not_replayed(block, turn.sources[0]):
                continue
            content.append(
                {
                    "type": "tool_use",
                    "id": ctx.ids(block.call_id),
                    "name": block.name,
                    "input": object_input(block, turn.sources[0], ctx.report),
                }
            )
    return content


def _tool_result(result: ToolResult, ctx: RenderContext, source: str, moved: list[Json]) -> Json:
    block: Json = {"type": "tool_result", "tool_use_id": ctx.ids(result.call_id)}
    if result.as_string and not result.media:
        text = result.text
        if text:
            block["content"] = text
    else:
        items = result_blocks(result, ctx, source, SHAPES, moved)
        if items:
            block["content"] = items
    if result.is_error:
        block["is_error"] = True
    return block


def _results(turn: Turn, ctx: RenderContext) -> list[Json]:
    """The tool_result blocks, then (when media may not stay in results) the moved media."""
    blocks: list[Json] = []
    moved_all: list[Json] = []
    for result in ctx.replayed_results(turn):
        moved: list[Json] = []
        blocks.append(_tool_result(result, ctx, turn.sources[0], moved))
        if moved:
            moved_all += ctx.moved_media(SHAPES, ctx.ids(result.call_id), moved, turn.sources[0])
    return blocks + moved_all


def feed(turns: Sequence[Turn], ctx: RenderContext, out: Rendered) -> None:
    for turn in turns:
        if turn.role == "tool":
            content, role = _results(turn, ctx), "user"
        elif turn.role == "user":
            content, role = user_blocks(turn, ctx, SHAPES), "user"
        else:
            content, role = _assistant(turn, ctx), "assistant"
        if not content:
            continue
        if out.messages and out.messages[-1]["role"] == role:  # the API merges them anyway
            out.extend_last("content", content, turn.sources)
        else:
            out.add({"role": role, "content": content}, turn.sources)
        if turn.boundary:
            out.boundary_index = len(out.messages) - 1


def finish(out: Rendered, ctx: RenderContext) -> None:
    _final_assistant_rules(out, ctx)
    if ctx.cache_ttl is not None:
        volatile = frozenset(id(block) for block in ctx.volatile)
        place_message_breakpoints(
            out.messages, out.boundary_index, ctx.cache_ttl, volatile, lambda i: out.own(i, "content")
        )


def _final_assistant_rules(out: Rendered, ctx: RenderContext) -> None:
    newest = next(
        (i for i in range(len(out.messages) - 1, -1, -1) if out.messages[i]["role"] == "assistant"), None
    )
    if newest is None:
        return
    last = out.own(newest, "content")
    content: list[Json] = last["content"]
    has_calls = any(b["type"] == "tool_use" for b in content)
    if ctx.target.thinking is True and has_calls and content[0]["type"] not in THINKING_TYPES:
        kept = [b for b in content if b["type"] not in THINKING_TYPES]
        dropped = len(content) - len(kept)
        last["content"] = content = kept
        out.overrides["thinking"] = {"type": "disabled"}
        ctx.report.warn(
            r.THINKING_DISABLED,
            f"{out.sources[newest][0]}: the final assistant message has tool calls but does not "
            f"start with signed thinking; send this request with thinking disabled (overrides.thinking)"
            + (f"; {dropped} thinking blocks left out of it" if dropped else ""),
        )
    if newest == len(out.messages) - 1:
        tail: Any = content[-1] if content else None
        if tail is not None and tail["type"] == "text" and tail["text"] != tail["text"].rstrip():
            trimmed = tail["text"].rstrip()
            ctx.report.warn(r.TRAILING_WHITESPACE_TRIMMED, f"{out.sources[-1][0]}: final assistant text")
            if trimmed:
                content[-1] = {**tail, "text": trimmed}
            else:
                content.pop()
                if not content:
                    out.pop()
