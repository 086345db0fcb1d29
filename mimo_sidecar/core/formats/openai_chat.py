"""Target `openai-chat`: Chat Completions `messages` (docs/formats.md, "Formats", "Per format").

- user turn → `{"role": "user", "content": [{"type": "text"}, {"type": "image_url", "image_url":
  {"url"}}, {"type": "file", "file": {"file_data", "filename"}}]}`;
- assistant turn → `{"role": "assistant", "content": str | [text parts] | null, "tool_calls":
  [{"id", "type": "function", "function": {"name", "arguments"}} | {"id", "type": "custom",
  "custom": {"name", "input"}}]}`; `arguments` is the stored JSON string when the call came from
  OpenAI, else the input serialised like `JSON.stringify`. Reasoning has no input field here: it is
  dropped and counted;
- tool turn → one `{"role": "tool", "tool_call_id", "content": str}` per call, contiguous, in call
  order; an error result is its error text. Tool messages take text only: media of a result moves to
  a user message after all of them;
- call IDs longer than 40 characters are remapped (`call_ids`).

The system prompt is not part of `messages`: it is the prefix (`prefix.request.messages`, the head
to put in front).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import report as r
from .context import BlockShapes, RenderContext, Rendered, inlined_text, user_blocks
from .model import Json, Media, Reasoning, Text, ToolCall, Turn

FORMAT = "openai-chat"


def media_part(media: Media, ctx: RenderContext, source: str) -> Json | None:
    """An `image_url` or `file` content part, a placeholder text part, or None (inlined text)."""
    if inlined_text(media, ctx, source):
        return None
    if not ctx.target.images:
        return {"type": "text", "text": ctx.media_placeholder(media, "no image input", source).text}
    if media.is_image:
        url = media.remote_url() or media.data_url()
        if url is not None:
            image: Json = {"url": url}
            if media.detail is not None:
                image["detail"] = media.detail
            return {"type": "image_url", "image_url": image}
    elif media.mime == "application/pdf":
        file: Json = {}
        if media.data_url() is not None:
            file["file_data"] = media.data_url()
            file["filename"] = media.filename or media.title or "document.pdf"
        elif media.file_id is not None:
            file["file_id"] = media.file_id
        if file:
            return {"type": "file", "file": file}
        return {"type": "text", "text": ctx.media_placeholder(media, "no data or file ID", source).text}
    else:
        return {"type": "text", "text": ctx.media_placeholder(media, "file type not accepted", source).text}
    return {"type": "text", "text": ctx.media_placeholder(media, "no data or fetchable URL", source).text}


def arguments_of(call: ToolCall) -> str:
    """The stored OpenAI `arguments` string, else the input as `JSON.stringify` writes it."""
    if call.arguments is not None:
        return call.arguments
    if isinstance(call.input, str):
        return call.input if call.input else "{}"
    return call.input_json()


SHAPES = BlockShapes(lambda text: {"type": "text", "text": text}, media_part)


def _tool_call(call: ToolCall, ctx: RenderContext) -> Json:
    call_id = ctx.ids(call.call_id)
    if call.custom:
        return {
            "id": call_id,
            "type": "custom",
            "custom": {"name": call.name, "input": str(call.input or "")},
        }
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments_of(call)},
    }


def _assistant(turn: Turn, ctx: RenderContext) -> Json | None:
    texts: list[str] = []
    calls: list[Json] = []
    for block in turn.blocks:
        if isinstance(block, Text):
            texts.append(block.text)
        elif isinstance(block, Reasoning):
            ctx.report.tally(
                r.REASONING_DROPPED,
                "reasoning not sent (Chat Completions takes no reasoning input)",
                turn.sources[0],
            )
        elif isinstance(block, ToolCall) and not ctx.not_replayed(block, turn.sources[0]):
            calls.append(_tool_call(block, ctx))
    if not texts and not calls:
        return None
    message: Json = {"role": "assistant"}
    if len(texts) == 1:
        message["content"] = texts[0]
    elif texts:
        message["content"] = [{"type": "text", "text": t} for t in texts]
    else:
        message["content"] = None
    if calls:
        message["tool_calls"] = calls
    return message


def _results(turn: Turn, ctx: RenderContext, out: Rendered) -> None:
    moved: list[Json] = []
    for result in ctx.replayed_results(turn):
        call_id = ctx.ids(result.call_id)
        out.add(
            {"role": "tool", "tool_call_id": call_id, "content": result.text},
            [result.source or turn.sources[0]],
        )
        attached = result.media
        if attached:
            media = [m for m in (media_part(x, ctx, turn.sources[0]) for x in attached) if m is not None]
            moved += ctx.moved_media(SHAPES, call_id, media, turn.sources[0])
    if moved:
        out.add({"role": "user", "content": moved}, turn.sources)


def finish(out: Rendered, ctx: RenderContext) -> None:
    """Nothing spans turns in this format."""


def feed(turns: Sequence[Turn], ctx: RenderContext, out: Rendered) -> None:
    for turn in turns:
        if turn.role == "tool":
            _results(turn, ctx, out)
        elif turn.role == "user":
            content = user_blocks(turn, ctx, SHAPES)
            if content:
                out.add({"role": "user", "content": content}, turn.sources)
        else:
            message = _assistant(turn, ctx)
            if message is not None:
                out.add(message, turn.sources)
