"""Target `gemini`: `generateContent` `contents` (docs/formats.md, "Formats", "Per format").

- user turn → `{"role": "user", "parts": [{"text"}, {"inlineData": {"mimeType", "data"}},
  {"fileData": {"mimeType", "fileUri"}}]}`;
- assistant turn → `{"role": "model", "parts": [...]}` in the model's order (text that followed a
  call moves before the calls): thoughts `{"text", "thought": true, "thoughtSignature"}` (only with
  a Google thought signature, to the model that produced them), `{"text", "thoughtSignature"?}`,
  `{"functionCall": {"id", "name", "args"}, "thoughtSignature"?}`. The first function call of each
  model content carries a signature: its own when the model matches, else the documented sentinel
  `skip_thought_signature_validator` (not for Gemini 1.x/2.x targets). Consecutive model contents
  are merged (a model turn with calls must follow a user turn);
- tool turn → one `{"role": "user", "parts": [{"functionResponse": {"id", "name", "response":
  {"output": text} | {"error": text}}}…]}`, exactly one part per call, in call order. Media of a
  result goes in `functionResponse.parts` when the target takes it (Gemini 3), else to a user
  content after the results;
- `contents` never starts with a model turn: a fixed user text is put first when the history does.

The system prompt is `prefix.request.systemInstruction`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..words import GOOGLE
from . import report as r
from .context import (
    LEADING_USER_TEXT,
    BlockShapes,
    RenderContext,
    Rendered,
    inlined_text,
    object_input,
    text_before_calls,
    user_blocks,
)
from .model import Json, Media, Reasoning, Text, ToolCall, ToolResult, Turn

FORMAT = "gemini"
SKIP_SIGNATURE = "skip_thought_signature_validator"
UNSIGNED_MODELS = re.compile(r"gemini-[12]\.")


def media_part(media: Media, ctx: RenderContext, source: str) -> Json | None:
    if inlined_text(media, ctx, source):
        return None
    reason = "no image input"
    if ctx.target.images:
        payload = media.b64()
        if payload is not None:
            return {"inlineData": {"mimeType": media.mime, "data": payload}}
        url = media.remote_url()
        if url is not None:
            return {"fileData": {"mimeType": media.mime, "fileUri": url}}
        reason = "no data or fetchable URL"
    return {"text": ctx.media_placeholder(media, reason, source).text}


def _signature(holder: Json | None, turn: Turn, ctx: RenderContext) -> str | None:
    """A stored Google thought signature, usable only with the model that produced it."""
    scoped = holder.get(GOOGLE) if holder is not None else None
    signature = scoped.get("thoughtSignature") if isinstance(scoped, dict) else None
    if not isinstance(signature, str):
        return None
    model = ctx.target.model_id
    return signature if model is None or turn.model is None or turn.model == model else None


SHAPES = BlockShapes(lambda text: {"text": text}, media_part)


def _assistant(turn: Turn, ctx: RenderContext) -> list[Json]:
    parts: list[Json] = []
    for block in text_before_calls(turn.blocks, turn.sources[0], ctx.report):
        if isinstance(block, Text):
            part: Json = {"text": block.text}
            signature = _signature(block.metadata, turn, ctx)
            if signature is not None:
                part["thoughtSignature"] = signature
            parts.append(part)
        elif isinstance(block, Reasoning):
            if ctx.keep_reasoning(block, turn, GOOGLE, FORMAT):
                signature = block.token("thoughtSignature")
                if block.text and isinstance(signature, str):
                    parts.append({"text": block.text, "thought": True, "thoughtSignature": signature})
                else:
                    ctx.report.tally(
                        r.REASONING_DROPPED,
                        f"reasoning not replayed to {FORMAT}: empty thought "
                        "(a Gemini part needs non-empty text)",
                        turn.sources[0],
                    )
        elif isinstance(block, ToolCall):
            if ctx.not_replayed(block, turn.sources[0]):
                continue
            call: Json = {
                "functionCall": {
                    "id": ctx.ids(block.call_id),
                    "name": block.name,
                    "args": object_input(block, turn.sources[0], ctx.report),
                }
            }
            signature = _signature(block.metadata, turn, ctx)
            if signature is not None:
                call["thoughtSignature"] = signature
            parts.append(call)
    return parts


def _sign_first_call(parts: list[Json], ctx: RenderContext) -> bool:
    """The first call of a model turn signed with the skip signature when it has none (True: done)."""
    model = ctx.target.model_id
    if model is not None and UNSIGNED_MODELS.search(model):
        return False
    first = next((p for p in parts if "functionCall" in p), None)
    if first is not None and "thoughtSignature" not in first:
        first["thoughtSignature"] = SKIP_SIGNATURE
        return True
    return False


def _response(result: ToolResult, ctx: RenderContext, source: str, moved: list[Json]) -> Json:
    key = "error" if result.is_error else "output"
    response: Json = {"id": ctx.ids(result.call_id), "name": result.name, "response": {key: result.text}}
    inline: list[Json] = []
    for media in result.media:
        part = media_part(media, ctx, source)
        if part is None or "text" in part:
            continue
        if ctx.target.tool_result_media is True:
            inline.append(part)
        else:
            moved.append(part)
    if inline:
        response["parts"] = inline
    return {"functionResponse": response}


def _results(turn: Turn, ctx: RenderContext, out: Rendered) -> None:
    parts: list[Json] = []
    moved_all: list[Json] = []
    for result in ctx.replayed_results(turn):
        moved: list[Json] = []
        parts.append(_response(result, ctx, turn.sources[0], moved))
        if moved:
            moved_all += ctx.moved_media(SHAPES, ctx.ids(result.call_id), moved, turn.sources[0])
    if parts:
        out.add({"role": "user", "parts": parts}, turn.sources)
    if moved_all:
        out.add({"role": "user", "parts": moved_all}, turn.sources)


def feed(turns: Sequence[Turn], ctx: RenderContext, out: Rendered) -> None:
    """A model content is signed once nothing can be merged into it any more: when a user content
    follows it, or at `finish` (signing is idempotent: a signed call is left as it is)."""
    for turn in turns:
        if turn.role == "tool":
            _close_model(out, ctx)
            _results(turn, ctx, out)
            continue
        if turn.role == "user":
            parts = user_blocks(turn, ctx, SHAPES)
            if parts:
                _close_model(out, ctx)
                out.add({"role": "user", "parts": parts}, turn.sources)
            continue
        parts = _assistant(turn, ctx)
        if not parts:
            continue
        if not out.messages:
            ctx.report.warn(r.LEADING_TURN_ADDED, f"{turn.sources[0]}: the history starts with a model turn")
            out.add({"role": "user", "parts": [{"text": LEADING_USER_TEXT}]}, turn.sources)
        if out.messages[-1]["role"] == "model":
            out.extend_last("parts", parts, turn.sources)
        else:
            out.add({"role": "model", "parts": parts}, turn.sources)


def finish(out: Rendered, ctx: RenderContext) -> None:
    _close_model(out, ctx)


def _close_model(out: Rendered, ctx: RenderContext) -> None:
    # The one change made in place to a message a cached prefix may share: the same for every
    # request of that prefix and target, so what the prefix holds stays what a full build makes.
    last = len(out.messages) - 1
    if last < 0 or out.messages[last]["role"] != "model":
        return
    if _sign_first_call(out.messages[last]["parts"], ctx):
        out.changed(last)
