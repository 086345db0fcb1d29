"""Gemini content as MiMo parts: what every Gemini CLI form shares (docs/importers.md, "Gemini CLI").

Gemini CLI stores `@google/genai` content: a `PartListUnion` (a string, one `Part`, or a list of
them) where a `Part` is `{text, thought?, thoughtSignature?}`, `{inlineData: {mimeType, data}}`,
`{fileData: {mimeType, fileUri}}`, `{functionCall: {id?, name, args}}` or
`{functionResponse: {id?, name, response}}`. The sidecar's data model has no Gemini split shape, so
calls become inline MiMo `tool` parts (docs/data-model.md, "Parts and tool-call shapes"), which hold the
call and its result together, as Gemini CLI's own `toolCalls` records do:

- text -> `text` (a `thoughtSignature` kept as `metadata.google.thoughtSignature`);
- a thought -> `reasoning` (its signature likewise); a recorded thought summary
  `{subject, description}` -> `reasoning` with the text `**subject** description`;
- inline data or a file URI -> `file` `{mime, url}` (inline data as a `data:` URL);
- a call -> `tool` `{callID, tool, state}`: `completed` with the response's text as `output`,
  `error` with it as `error`, `running` while no result was recorded (the request builder then
  says it was interrupted).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..core.estimate.jsjson import js_stringify
from . import usage
from .fields import Json, as_dict, as_list, as_str, epoch_ms, nonempty_str

PROVIDER_ID = "google"  # the AI SDK's provider key for Gemini models: where thought signatures replay
INLINE_TOOL = "tool"
# ToolCallRecord.status (Gemini CLI's scheduler states): a result exists only for these three.
ENDED_OK = "success"
ENDED_ERROR = frozenset({"error", "cancelled"})


@dataclass
class Converted:
    """Parts made from Gemini content, with what could not be made into a part."""

    parts: list[Json] = field(default_factory=list)
    unsent: list[str] = field(default_factory=list)  # kinds of Gemini parts left out

    @property
    def calls(self) -> list[Json]:
        return [p for p in self.parts if p.get("type") == INLINE_TOOL]


def gemini_parts(content: Any) -> Iterator[Any]:
    """The `Part`s of a `PartListUnion` (a string is one text part)."""
    if isinstance(content, str):
        yield {"text": content}
    elif isinstance(content, list):
        for item in content:
            yield {"text": item} if isinstance(item, str) else item
    elif content is not None:
        yield content


def convert(content: Any, message_id: str) -> Converted:
    """MiMo parts of `content`, in order. Calls get `<message_id>.call<k>` when they carry no ID."""
    out = Converted()
    for part in gemini_parts(content):
        converted = _part(part, message_id, len(out.calls))
        if converted is None:
            out.unsent.append(_kind(part))
        elif converted.get("text") != "" or converted.get("type") != "text":  # "" is no content
            out.parts.append(converted)
    return out


def _kind(part: Any) -> str:
    found = as_dict(part)
    return next(iter(found), "empty part") if found else type(part).__name__


def _with_signature(part: Json, source: Json) -> Json:
    signature = nonempty_str(source.get("thoughtSignature"))
    if signature is not None:
        part["metadata"] = {"google": {"thoughtSignature": signature}}
    return part


def _part(part: Any, message_id: str, calls_so_far: int) -> Json | None:
    source = as_dict(part)
    if source is None:
        return None
    text = as_str(source.get("text"))
    if text is not None:
        kind = "reasoning" if source.get("thought") is True else "text"
        return _with_signature({"type": kind, "text": text}, source)
    if (media := _file(source)) is not None:
        return media
    call = as_dict(source.get("functionCall"))
    if call is not None and nonempty_str(call.get("name")):
        call_id = nonempty_str(call.get("id")) or synthetic_call_id(message_id, calls_so_far)
        return _with_signature(running_call(call_id, str(call["name"]), call.get("args")), source)
    return None


def _file(source: Json) -> Json | None:
    inline = as_dict(source.get("inlineData"))
    if inline is not None and isinstance(inline.get("data"), str):
        mime = nonempty_str(inline.get("mimeType")) or "application/octet-stream"
        return {"type": "file", "mime": mime, "url": f"data:{mime};base64,{inline['data']}"}
    linked = as_dict(source.get("fileData"))
    if linked is not None and nonempty_str(linked.get("fileUri")):
        mime = nonempty_str(linked.get("mimeType")) or "application/octet-stream"
        return {"type": "file", "mime": mime, "url": linked["fileUri"]}
    return None


def synthetic_call_id(message_id: str, index: int) -> str:
    """A call ID for a call recorded without one: stable, derived from where the call is."""
    return f"{message_id}.call{index}"


def running_call(call_id: str, name: str, args: Any, start: int | None = None) -> Json:
    """A call without a recorded result (yet)."""
    state: Json = {"status": "running", "input": args if isinstance(args, dict) else {}}
    if start is not None:
        state["time"] = {"start": start}
    return {"type": INLINE_TOOL, "callID": call_id, "tool": name, "state": state}


def end_call(part: Json, output: str, *, error: bool, attachments: list[Json] | None = None) -> None:
    """Record the result of the call `part` (an inline tool part), keeping its input and time."""
    state = part["state"]
    ended: Json = {"status": "error" if error else "completed", "input": state.get("input", {})}
    ended["error" if error else "output"] = output
    ended["metadata"] = state.get("metadata", {})
    if "title" in state:
        ended["title"] = state["title"]
    if "time" in state:
        ended["time"] = state["time"]
    if attachments and not error:
        ended["attachments"] = attachments
    part["state"] = ended


@dataclass(frozen=True)
class ResultContent:
    text: str
    error: bool  # the response said so (`{error: ...}`)
    attachments: list[Json]


def result_content(result: Any) -> ResultContent:
    """A recorded result (`PartListUnion`): its function responses' text, joined, and its media."""
    texts: list[str] = []
    attachments: list[Json] = []
    error = False
    for part in gemini_parts(result):
        source = as_dict(part) or {}
        response = as_dict(source.get("functionResponse"))
        if response is not None:
            text, failed = response_text(response.get("response"))
            texts.append(text)
            error = error or failed
        elif isinstance(source.get("text"), str):
            texts.append(source["text"])
        elif (media := _file(source)) is not None:
            attachments.append(media)
    return ResultContent("\n".join(t for t in texts if t), error, attachments)


def response_text(response: Any) -> tuple[str, bool]:
    """`{output}` or `{error}` (Gemini CLI's own tools), else the response as JSON text."""
    found = as_dict(response)
    if found is not None:
        if isinstance(found.get("output"), str) and set(found) == {"output"}:
            return found["output"], False
        if isinstance(found.get("error"), str):
            return found["error"], True
    if isinstance(response, str):
        return response, False
    return js_stringify(response) or "", False


def tool_call_part(record: Json, call_id: str) -> Json:
    """A `ToolCallRecord` (`{id, name, args, result?, status, timestamp, displayName?, agentId?}`)
    as an inline tool part. `description`, `resultDisplay` and `renderOutputAsMarkdown` are the
    UI's (the tool's declared description, the result as displayed): not kept."""
    part = running_call(
        call_id, str(record.get("name") or ""), record.get("args"), epoch_ms(record.get("timestamp"))
    )
    state = part["state"]
    if (title := nonempty_str(record.get("displayName"))) is not None:
        state["title"] = title
    if (agent := nonempty_str(record.get("agentId"))) is not None:
        state["metadata"] = {"agentId": agent}
    status = as_str(record.get("status"))
    if status == ENDED_OK or status in ENDED_ERROR or record.get("result") not in (None, [], ""):
        content = result_content(record.get("result"))
        end_call(
            part, content.text, error=status in ENDED_ERROR or content.error, attachments=content.attachments
        )
    return part


def thought_parts(thoughts: Any) -> list[Json]:
    """Recorded thought summaries `[{subject, description, timestamp}]` as reasoning parts."""
    parts = []
    for thought in as_list(thoughts) or []:
        found = as_dict(thought) or {}
        subject, description = as_str(found.get("subject")) or "", as_str(found.get("description")) or ""
        text = f"**{subject}** {description}".strip() if subject else description
        if text:
            parts.append({"type": "reasoning", "text": text})
    return parts


def tokens_of(tokens: Any) -> Json | None:
    """`TokensSummary {input, output, cached, thoughts?, tool?, total}` (Gemini's usage metadata:
    the prompt count includes the cached tokens; the tool-use prompt and the thoughts are counted
    apart, and `total` is their sum)."""
    found = as_dict(tokens)
    if found is None:
        return None
    prompt = found.get("input")
    if isinstance(prompt, int) and isinstance(found.get("tool"), int):
        prompt = prompt + found["tool"]
    return usage.from_openai_counts(
        prompt, found.get("output"), found.get("cached"), found.get("thoughts"), found.get("total")
    )
