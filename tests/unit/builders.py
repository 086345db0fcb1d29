"""Small builders for messages and parts in the host shapes of behavior.md#data-model and behavior.md#shapes.

Parts carry only the fields given (no `id`/`sessionID`/`messageID`), so token estimates in tests
match behavior.md's examples exactly. `msg` assigns an increasing `seq` in construction order, which is
what sequence mode expects from messages registered in creation order; pass `seq=` to override.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.session.message import Json, Message
from mimo_sidecar.core.session.ordering import Ordering
from mimo_sidecar.core.session.session import MessageUpsert, Session, SyncBatch

_seq = itertools.count(1)
_UNSET: Any = object()


# -- messages --------------------------------------------------------------------------------------
def msg(
    id: str,
    role: str,
    parts: list[Json] | None = None,
    *,
    created: int | None = None,
    finish: Any = _UNSET,
    agent_id: str | None = None,
    tokens: Json | None = None,
    seq: int | None = None,
    **info: Any,
) -> Message:
    """A `Message`; extra keyword arguments go into `info` as is (e.g. `providerMessageID=`)."""
    data: Json = {"id": id, "role": role}
    if created is not None:
        data["time"] = {"created": created}
    if finish is not _UNSET:
        data["finish"] = finish
    if agent_id is not None:
        data["agentID"] = agent_id
    if tokens is not None:
        data["tokens"] = tokens
    data.update(info)
    return Message(data, parts or [], seq=next(_seq) if seq is None else seq)


def user(id: str, *parts: Json, **kw: Any) -> Message:
    return msg(id, "user", list(parts), **kw)


def assistant(id: str, *parts: Json, finish: Any = "stop", **kw: Any) -> Message:
    return msg(id, "assistant", list(parts), finish=finish, **kw)


def usage(
    input: int = 0,
    output: int = 0,
    *,
    total: int | None = None,
    read: int = 0,
    write: int = 0,
    reasoning: int = 0,
) -> Json:
    """An assistant `tokens` record (behavior.md#messages)."""
    data: Json = {
        "input": input,
        "output": output,
        "reasoning": reasoning,
        "cache": {"read": read, "write": write},
    }
    if total is not None:
        data["total"] = total
    return data


# -- MiMo parts ------------------------------------------------------------------------------------
def text(t: str, **flags: Any) -> Json:
    """`{"type": "text", "text": t}` plus flags such as `synthetic=True`, `ignored=True`."""
    return {"type": "text", "text": t, **flags}


def sized_text(tokens: int) -> Json:
    """behavior.md#watermark-examples's `text(t)`: `"x" × max(100, 4t)`; estimate `t + 6` for t ≥ 25 (2006 for
    2000)."""
    return text("x" * max(100, 4 * tokens))


def reasoning(t: str) -> Json:
    return {"type": "reasoning", "text": t}


def tool(
    call_id: str,
    name: str,
    input: Json | None = None,
    status: str = "completed",
    *,
    output: str = "",
    error: str | None = None,
    interrupted: bool = False,
    compacted: int | None = None,
) -> Json:
    """An inline MiMo `tool` part (behavior.md#tool-states) with a state of the given status."""
    state: Json = {"status": status, "input": {} if input is None else input}
    if status == "completed":
        state["output"] = output
        state["time"] = {"start": 0, "end": 0}
        if compacted is not None:
            state["time"]["compacted"] = compacted
    elif status == "error":
        state["error"] = error if error is not None else "failed"
        if interrupted:
            state["metadata"] = {"interrupted": True}
    return {"type": "tool", "callID": call_id, "tool": name, "state": state}


def subtask(command: Any = _UNSET, agent: str = "general", **kw: Any) -> Json:
    part: Json = {"type": "subtask", "prompt": "p", "description": "d", "agent": agent, **kw}
    if command is not _UNSET:
        part["command"] = command
    return part


def checkpoint(covered_up_to: str, digest_up_to: str | None = None) -> Json:
    part: Json = {
        "type": "checkpoint",
        "checkpointDir": "",
        "checkpointNumber": 0,
        "coveredUpTo": covered_up_to,
    }
    if digest_up_to is not None:
        part["digestUpTo"] = digest_up_to
    return part


def compaction(auto: bool = True) -> Json:
    return {"type": "compaction", "auto": auto}


# -- split shapes (behavior.md#shapes) -------------------------------------------------------------
def tool_use(call_id: str, name: str, input: Json | None = None) -> Json:
    """Anthropic assistant block."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": {} if input is None else input}


def tool_result(
    call_id: str, content: Any = "ok", *, is_error: bool = False, interrupted: bool = False
) -> Json:
    """Anthropic user-message block."""
    part: Json = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if is_error:
        part["is_error"] = True
    if interrupted:
        part["interrupted"] = True
    return part


def function(call_id: str, name: str, arguments: str = "{}") -> Json:
    """OpenAI Chat `tool_calls` entry used as an assistant part."""
    return {"type": "function", "id": call_id, "function": {"name": name, "arguments": arguments}}


def tool_message(id: str, call_id: str, content: str = "ok", **kw: Any) -> Message:
    """OpenAI Chat tool-role message; `is_error=`/`interrupted=` go into `info`."""
    return msg(id, "tool", [text(content)], tool_call_id=call_id, **kw)


def function_call(call_id: str, name: str, arguments: str = "{}") -> Json:
    """OpenAI Responses assistant item."""
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def function_call_output(call_id: str, output: Any = "ok", *, is_error: bool = False) -> Json:
    """OpenAI Responses result item."""
    part: Json = {"type": "function_call_output", "call_id": call_id, "output": output}
    if is_error:
        part["is_error"] = True
    return part


# -- sessions and memory roots -------------------------------------------------------------------
def sync(session: Session, messages: list[Message]) -> Session:
    """Register `messages` in one batch, in list order (creation order for sequence mode)."""
    session.apply(SyncBatch(upsert_messages=[MessageUpsert(m.info, m.parts) for m in messages]))
    return session


def session_of(
    messages: list[Message], session_id: str, project_id: str | None = "proj", **kw: Any
) -> Session:
    """A session holding `messages`; keyword arguments go to `Session` (e.g. `ids_ascending=`)."""
    return sync(Session(session_id, project_id, **kw), messages)


CHECKPOINT = "Topic: work\n\n## Intent\n\nDo it.\n"


def write_checkpoint(root: Any, session_id: str, content: str = CHECKPOINT) -> Path:
    """The session's `checkpoint.md` under the memory root `root`, holding `content` (directories
    created); returns its path."""
    sdir = Path(root) / "sessions" / session_id
    sdir.mkdir(parents=True, exist_ok=True)
    path = sdir / "checkpoint.md"
    path.write_text(content, encoding="utf-8")
    return path


def checkpoint_memory(root: Any, session_id: str, content: str = CHECKPOINT) -> MemoryRoot:
    """A memory root under `root` whose session has a `checkpoint.md` with `content`."""
    write_checkpoint(root, session_id, content)
    return MemoryRoot(str(root))


# -- orderings -------------------------------------------------------------------------------------
def seq_ordering(*messages: Message) -> Ordering:
    """Sequence mode over the given messages (their `seq`); other IDs are unknown."""
    seqs = {m.id: m.seq for m in messages}
    return Ordering(False, seqs.get)


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


# -- provider-native blocks of split shapes (behavior.md#shapes) ------------------------------------
def custom_tool_call(call_id: str, name: str, input: str = "") -> Json:
    """OpenAI Responses freeform tool call (Codex `apply_patch`): `input` is a plain string."""
    return {"type": "custom_tool_call", "call_id": call_id, "name": name, "input": input}


def custom_tool_call_output(call_id: str, output: Any = "ok") -> Json:
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": output}


def thinking(t: str, signature: str = "sig") -> Json:
    """Anthropic `thinking` block."""
    return {"type": "thinking", "thinking": t, "signature": signature}


def redacted_thinking(data: str = "REDACTED") -> Json:
    return {"type": "redacted_thinking", "data": data}


def image(data: str = "iVBORw0KGgo=", media_type: str = "image/png") -> Json:
    """Anthropic base64 `image` block."""
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def image_url_block(url: str) -> Json:
    return {"type": "image", "source": {"type": "url", "url": url}}


def document(data: str = "JVBERi0=", title: str | None = None) -> Json:
    block: Json = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": data},
    }
    if title is not None:
        block["title"] = title
    return block


def reasoning_item(summary: str = "", encrypted: str | None = "ENC", item_id: str | None = "rs_1") -> Json:
    """OpenAI Responses `reasoning` item (distinguished from a MiMo reasoning part by `summary`)."""
    item: Json = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": summary}] if summary else [],
    }
    if item_id is not None:
        item["id"] = item_id
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def input_image(image_url: str = "data:image/png;base64,iVBORw0KGgo=", detail: str | None = None) -> Json:
    block: Json = {"type": "input_image", "image_url": image_url}
    if detail is not None:
        block["detail"] = detail
    return block


def file_part(url: str, mime: str = "image/png", filename: str | None = None) -> Json:
    """A MiMo `file` part."""
    part: Json = {"type": "file", "mime": mime, "url": url}
    if filename is not None:
        part["filename"] = filename
    return part
