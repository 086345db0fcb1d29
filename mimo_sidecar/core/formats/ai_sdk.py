"""Target `ai-sdk`: Vercel AI SDK v5 `ModelMessage[]` (docs/formats.md, "Model messages"), the default.

- `{"role": "user", "content": [{"type": "text", "text"}, {"type": "file", "mediaType", "data",
  "filename"?}]}`: `data` is a MiMo file part's `url` as stored; a provider-native base64 block gives
  its base64 payload, a URL block its URL.
- `{"role": "assistant", "content": [...]}`: `{"type": "text", "text"}`, `{"type": "reasoning",
  "text", "providerOptions"?}` (a MiMo part's `metadata`; for native blocks the AI SDK keys
  `anthropic.signature`/`anthropic.redactedData`, `openai.itemId`/`openai.reasoningEncryptedContent`)
  and `{"type": "tool-call", "toolCallId", "toolName", "input"}`, in stored order.
- `{"role": "tool", "content": [{"type": "tool-result", "toolCallId", "toolName", "output"}]}`,
  `output` = `{"type": "text", "value"}`, `{"type": "error-text", "value"}` or, with media,
  `{"type": "content", "value": [{"type": "text", "text"}, {"type": "media", "data", "mediaType"}]}`.

For inline (MiMo/OpenCode) sessions this is byte for byte the output the sidecar always produced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..words import ANTHROPIC, OPENAI
from . import report as r
from .context import RenderContext, Rendered
from .model import Compaction, Json, Media, Reasoning, Text, ToolCall, ToolResult, Turn

FORMAT = "ai-sdk"


def _file(media: Media) -> Json | None:
    if media.native is None:  # a MiMo file part: its url as stored
        block: Json = {"type": "file", "mediaType": media.mime, "data": media.url}
    else:
        data = media.b64() or media.url
        if data is None:
            return None
        block = {"type": "file", "mediaType": media.mime, "data": data}
    if media.filename is not None:
        block["filename"] = media.filename
    return block


def _media_item(media: Media) -> Json:
    url = media.url
    if isinstance(url, str) and url.startswith("data:") and "," in url:
        data: Any = url.split(",", 1)[1]
    else:
        data = media.data if media.data is not None else url
    return {"type": "media", "data": data, "mediaType": media.mime}


def _reasoning(reasoning: Reasoning, ctx: RenderContext, source: str) -> Json:
    block: Json = {"type": "reasoning", "text": reasoning.text}
    native = reasoning.native
    if native is None:
        if reasoning.metadata is not None:
            options = _provider_options(reasoning.metadata, ctx, source)
            if options is not None:
                block["providerOptions"] = options
    elif native.get("type") == "thinking":
        block["providerOptions"] = {ANTHROPIC: {"signature": native.get("signature")}}
    elif native.get("type") == "redacted_thinking":
        block["providerOptions"] = {ANTHROPIC: {"redactedData": native.get("data")}}
    else:  # a Responses reasoning item
        options = {"itemId": native.get("id"), "reasoningEncryptedContent": native.get("encrypted_content")}
        block["providerOptions"] = {OPENAI: {k: v for k, v in options.items() if v is not None}}
    return block


def _provider_options(metadata: Json, ctx: RenderContext, source: str) -> Json | None:
    """A MiMo part's metadata as AI SDK `providerOptions` (as stored), which map each provider to
    an object: other entries (an export's redaction markers, say) would fail the `ai` schema; they
    are left out and counted (None: nothing left)."""
    options = {key: value for key, value in metadata.items() if isinstance(value, dict)}
    if len(options) == len(metadata):
        return metadata
    ctx.report.tally(
        r.PROVIDER_OPTIONS_DROPPED, "reasoning metadata entries that are not provider objects", source
    )
    return options or None


def tool_output(result: ToolResult) -> Json:
    if result.is_error:
        return {"type": "error-text", "value": result.text}
    if not result.media:
        return {"type": "text", "value": result.text}
    value = [
        {"type": "text", "text": b.text} if isinstance(b, Text) else _media_item(b) for b in result.content
    ]
    return {"type": "content", "value": value}


def _tool_call(call: ToolCall) -> Json:
    return {
        "type": "tool-call",
        "toolCallId": call.call_id,
        "toolName": call.name,
        "input": call.input if call.input is not None else {},
    }


def _user(turn: Turn, ctx: RenderContext) -> list[Json]:
    content: list[Json] = []
    for block in turn.blocks:
        if isinstance(block, Text):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, Compaction):
            ctx.compaction_dropped(turn.sources[0])
        elif isinstance(block, Media):
            if not ctx.target.images:
                content.append(
                    {
                        "type": "text",
                        "text": ctx.media_placeholder(block, "no image input", turn.sources[0]).text,
                    }
                )
                continue
            file = _file(block)
            content.append(
                file
                if file is not None
                else {
                    "type": "text",
                    "text": ctx.media_placeholder(block, "no data or URL", turn.sources[0]).text,
                }
            )
    return content


def _assistant(turn: Turn, ctx: RenderContext) -> list[Json]:
    content: list[Json] = []
    for block in turn.blocks:
        if isinstance(block, Text):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, Reasoning):
            if not ctx.target.given or ctx.keep_reasoning(block, turn, None, FORMAT):
                content.append(_reasoning(block, ctx, turn.sources[0]))
        elif isinstance(block, ToolCall):
            content.append(_tool_call(block))
    return content


def finish(out: Rendered, ctx: RenderContext) -> None:
    """Nothing spans turns in this format."""


def feed(turns: Sequence[Turn], ctx: RenderContext, out: Rendered) -> None:
    for turn in turns:
        if turn.role == "tool":
            results = [
                {"type": "tool-result", "toolCallId": b.call_id, "toolName": b.name, "output": tool_output(b)}
                for b in turn.blocks
            ]
            out.add({"role": "tool", "content": results}, turn.sources)
            continue
        content = _user(turn, ctx) if turn.role == "user" else _assistant(turn, ctx)
        if content:
            out.add({"role": turn.role, "content": content}, turn.sources)
