"""Target `openai-responses`: Responses API `input` items, for stateless use (docs/formats.md, "Formats",
"Per format").

- user turn → `{"type": "message", "role": "user", "content": [input_text | input_image |
  input_file]}`; a stored developer/system message (`info.providerRole`, Codex) keeps its role as
  `"developer"`;
- an encrypted compaction (Codex `compaction` part) → `{"type": "compaction", "encrypted_content"}`
  after the boundary's label: the Responses API reads its summary of what came before (no item ID:
  an ID-only reference needs `store: true`);
- assistant turn, items in the model's order (text that followed a call moves before the calls):
  `{"type": "reasoning", "summary", "content"?, "encrypted_content"}` as Codex sends it, without an
  item ID (a request with `store: false` carries the reasoning in its encrypted content; an `rs_` ID
  would make the API look for a stored item that does not exist, behavior.md#d16). Replayed only
  with its encrypted content, to the provider and model that produced it, and only when an item of
  the same step follows it. Reasoning parts of one item (the same `itemId`, as OpenCode stores an
  item with several summaries) are one item with every summary in order. Then
  `{"type": "message", "role": "assistant", "content": str, "phase"?}`;
  `{"type": "function_call", "call_id", "name", "arguments"}` or
  `{"type": "custom_tool_call", "call_id", "name", "input"}`. No `fc_`/`msg_` item IDs are sent
  either (pairing uses `call_id`; an item ID whose reasoning item is not sent by its ID is a 400);
- tool turn → `{"type": "function_call_output" | "custom_tool_call_output", "call_id", "output":
  str | [input_text, input_image, input_file]}` right after the calls, in call order;
- call IDs longer than 64 characters are remapped (`call_ids`).

The system prompt is `prefix.request.instructions`. Send with `store: false` and
`include: ["reasoning.encrypted_content"]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..words import OPENAI
from . import report as r
from .context import (
    BlockShapes,
    RenderContext,
    Rendered,
    inlined_text,
    result_blocks,
    text_before_calls,
    user_blocks,
)
from .model import Compaction, Json, Media, Reasoning, Text, ToolCall, ToolResult, Turn
from .openai_chat import arguments_of

FORMAT = "openai-responses"
MERGED = "reasoning parts sent in the item of an earlier part with the same item ID"
NATIVE_KEYS = {
    "input_image": ("type", "image_url", "file_id", "detail"),
    "input_file": ("type", "file_data", "file_id", "file_url", "filename"),
}


def media_item(media: Media, ctx: RenderContext, source: str) -> Json | None:
    """An `input_image` / `input_file` content item, a placeholder `input_text`, or None."""
    if inlined_text(media, ctx, source):
        return None
    reason = "no image input" if not ctx.target.images else None
    if reason is None:
        native = media.native
        if native is not None and native.get("type") in NATIVE_KEYS:
            item = {k: native[k] for k in NATIVE_KEYS[native["type"]] if k in native}
            if item["type"] == "input_image":
                item.setdefault("detail", "auto")
            return item
        url = media.remote_url()
        if media.is_image:
            image: Json = {"type": "input_image", "detail": media.detail or "auto"}
            if url or media.data_url():
                image["image_url"] = url or media.data_url()
                return image
            if media.file_id is not None:
                image["file_id"] = media.file_id
                return image
        else:
            file: Json = {"type": "input_file"}
            if media.data_url() is not None:
                file["file_data"] = media.data_url()
            elif url is not None:
                file["file_url"] = url
            elif media.file_id is not None:
                file["file_id"] = media.file_id
            if len(file) > 1:
                if media.filename or media.title:
                    file["filename"] = media.filename or media.title
                return file
        reason = "no data or fetchable URL"
    return {"type": "input_text", "text": ctx.media_placeholder(media, reason, source).text}


@dataclass
class _ReasoningDraft:
    """One Responses reasoning item being assembled from the reasoning parts that make it up."""

    key: str | None  # the item ID the parts share (None: a part of its own)
    summary: list[Any] = field(default_factory=list)
    content: list[Any] = field(default_factory=list)
    encrypted: str | None = None

    def add(self, reasoning: Reasoning) -> None:
        """A part's summaries and content after the earlier parts'; its encrypted content wins when it
        has one (the AI SDK writes it on the item's last part)."""
        native = reasoning.native
        if native is not None:
            summary, content = native.get("summary"), native.get("content")
            self.summary += summary if isinstance(summary, list) else []
            self.content += content if isinstance(content, list) else []
            encrypted = native.get("encrypted_content")
        else:
            if reasoning.text:
                self.summary.append({"type": "summary_text", "text": reasoning.text})
            encrypted = reasoning.token("reasoningEncryptedContent")
        if isinstance(encrypted, str) and encrypted:
            self.encrypted = encrypted

    def item(self) -> Json | str:
        """The item, or why it cannot be replayed statelessly."""
        if self.encrypted is None:
            return "no encrypted content (a stateless request carries the reasoning in it)"
        item: Json = {"type": "reasoning", "summary": self.summary}
        if self.content:
            item["content"] = self.content
        item["encrypted_content"] = self.encrypted
        return item


def _item_key(reasoning: Reasoning) -> str | None:
    """The Responses item ID a reasoning part belongs to: a native item's `id`, a MiMo part's
    `metadata.openai.itemId`."""
    key = reasoning.native.get("id") if reasoning.native is not None else reasoning.token("itemId")
    return key if isinstance(key, str) and key else None


SHAPES = BlockShapes(lambda text: {"type": "input_text", "text": text}, media_item)


def _user(turn: Turn, ctx: RenderContext) -> list[Json]:
    """A user message; a provider's developer/system message (Codex) goes back as `developer`,
    which Responses accepts anywhere in `input` (Codex sends it mid-conversation). An encrypted
    compaction item is an item of its own, after the message holding what came before it."""
    role = "developer" if turn.instructions else "user"
    items: list[Json] = []
    held: list[Any] = []
    for block in [*turn.blocks, None]:
        if block is not None and not isinstance(block, Compaction):
            held.append(block)
            continue
        content = user_blocks(Turn("user", held, turn.sources), ctx, SHAPES) if held else []
        if content:
            items.append({"type": "message", "role": role, "content": content})
        held = []
        if block is not None:
            items.append({"type": "compaction", "encrypted_content": block.encrypted})
    return items


def _assistant(turn: Turn, ctx: RenderContext) -> list[Json]:
    items: list[Json | _ReasoningDraft] = []
    drafts: dict[str, _ReasoningDraft] = {}  # item ID → its item, within this response
    for block in text_before_calls(turn.blocks, turn.sources[0], ctx.report):
        if isinstance(block, Text):
            message: Json = {"type": "message", "role": "assistant", "content": block.text}
            if block.phase is not None:
                message["phase"] = block.phase
            items.append(message)
        elif isinstance(block, Reasoning):
            if ctx.keep_reasoning(block, turn, OPENAI, FORMAT):
                key = _item_key(block)
                draft = drafts.get(key) if key is not None else None
                if draft is not None:
                    ctx.report.tally(r.REASONING_MERGED, MERGED, turn.sources[0])
                else:
                    draft = _ReasoningDraft(key)
                    if key is not None:
                        drafts[key] = draft
                    items.append(draft)
                draft.add(block)
        elif isinstance(block, ToolCall) and not ctx.not_replayed(block, turn.sources[0]):
            if block.custom:
                items.append(
                    {
                        "type": "custom_tool_call",
                        "call_id": ctx.ids(block.call_id),
                        "name": block.name,
                        "input": str(block.input or ""),
                    }
                )
            else:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": ctx.ids(block.call_id),
                        "name": block.name,
                        "arguments": arguments_of(block),
                    }
                )
    return _followed_reasoning(_finished(items, turn, ctx), turn, ctx)


def _finished(items: list[Json | _ReasoningDraft], turn: Turn, ctx: RenderContext) -> list[Json]:
    """The reasoning drafts as items; one that cannot be replayed is left out, reported."""
    out: list[Json] = []
    for entry in items:
        if not isinstance(entry, _ReasoningDraft):
            out.append(entry)
            continue
        item = entry.item()
        if isinstance(item, str):
            what = f"reasoning not replayed to {FORMAT}: {item}"
            ctx.report.tally(r.REASONING_DROPPED, what, turn.sources[0])
        else:
            out.append(item)
    return out


def _followed_reasoning(items: list[Json], turn: Turn, ctx: RenderContext) -> list[Json]:
    """A reasoning item must be followed by an item it produced (not another reasoning item): the
    API answers 400 "provided without its required following item" otherwise."""
    kept = []
    for i, item in enumerate(items):
        if item["type"] == "reasoning" and (i + 1 == len(items) or items[i + 1]["type"] == "reasoning"):
            ctx.report.tally(
                r.REASONING_DROPPED,
                f"reasoning not replayed to {FORMAT}: no item of its own follows it (the API requires one)",
                turn.sources[0],
            )
            continue
        kept.append(item)
    return kept


def _output(result: ToolResult, ctx: RenderContext, source: str, moved: list[Json]) -> str | list[Json]:
    if result.as_string and not result.media:
        return result.text
    items = result_blocks(result, ctx, source, SHAPES, moved)
    return items if len(items) != 1 or items[0]["type"] != "input_text" else items[0]["text"]


def _results(turn: Turn, ctx: RenderContext, out: Rendered) -> None:
    moved_all: list[Json] = []
    for result in ctx.replayed_results(turn):
        call_id = ctx.ids(result.call_id)
        moved: list[Json] = []
        kind = "custom_tool_call_output" if result.custom else "function_call_output"
        output = _output(result, ctx, turn.sources[0], moved)
        out.add({"type": kind, "call_id": call_id, "output": output}, [result.source or turn.sources[0]])
        if moved:
            moved_all += ctx.moved_media(SHAPES, call_id, moved, turn.sources[0])
    if moved_all:
        out.add({"type": "message", "role": "user", "content": moved_all}, turn.sources)


def finish(out: Rendered, ctx: RenderContext) -> None:
    """Nothing spans turns in this format."""


def feed(turns: Sequence[Turn], ctx: RenderContext, out: Rendered) -> None:
    for turn in turns:
        if turn.role == "tool":
            _results(turn, ctx, out)
        elif turn.role == "user":
            for item in _user(turn, ctx):
                out.add(item, turn.sources)
        else:
            for item in _assistant(turn, ctx):
                out.add(item, turn.sources)
