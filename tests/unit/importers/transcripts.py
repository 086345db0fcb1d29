"""Small synthetic transcripts in each tool's on-disk shape, for the importer tests.

Written from the field descriptions of docs/importers.md, in our own words: no content of a
real session is copied here. Each builder appends records and writes them where a test wants.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mimo_sidecar.core.session.session import Session, batch_from_messages
from mimo_sidecar.wire.session import OpenParams

Json = dict[str, Any]
T0 = 1_760_000_000_000  # 2025-10-09T08:53:20Z
SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZy1ibG9jaw=="  # any opaque bytes; must survive as is


def iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_jsonl(path: Path, records: list[Json]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def open_in_core(params: Json) -> Session:
    """What session/open does with the params: the wire model, then the core session."""
    OpenParams.model_validate(params)
    session = Session(
        params["sessionId"], params.get("projectId"), request_prefix=params.get("requestPrefix")
    )
    batch = batch_from_messages(params["messages"])
    batch.tool_name_map = dict(params.get("toolNameMap") or {})
    session.apply(batch)
    return session


def messages(params: Json, agent: str = "main") -> list[Json]:
    return [m for m in params["messages"] if m["info"].get("agentID", "main") == agent]


def by_id(params: Json) -> dict[str, Json]:
    return {m["info"]["id"]: m for m in params["messages"]}


# -- Claude Code -------------------------------------------------------------------------------
class ClaudeLog:
    """Claude Code session records; each new record's parent is the previous record by default."""

    def __init__(self, session_id: str = "0b5e5510-0000-4000-8000-000000000001", *, agent: str | None = None):
        self.session_id = session_id
        self.agent = agent
        self.records: list[Json] = []
        self.last: str | None = None
        self.clock = T0
        self.count = 0

    def _base(self, kind: str, parent: str | None | bool, uuid: str | None) -> Json:
        self.count += 1
        self.clock += 1000
        uuid = uuid or f"{self.agent or 'u'}-{self.count:04d}"
        record: Json = {
            "parentUuid": self.last if parent is True else parent,
            "isSidechain": self.agent is not None,
            "userType": "external",
            "cwd": "/work/demo",
            "sessionId": self.session_id,
            "version": "2.1.0",
            "type": kind,
            "uuid": uuid,
            "timestamp": iso(self.clock),
        }
        if self.agent is not None:
            record["agentId"] = self.agent
        return record

    def _add(self, record: Json) -> str:
        self.records.append(record)
        self.last = record.get("uuid", self.last)
        return str(record.get("uuid"))

    def user(
        self, content: Any, *, parent: str | None | bool = True, uuid: str | None = None, **extra: Any
    ) -> str:
        record = self._base("user", parent, uuid)
        record["message"] = {"role": "user", "content": content}
        record.update(extra)
        return self._add(record)

    def assistant(
        self,
        blocks: list[Json],
        *,
        mid: str,
        parent: str | None | bool = True,
        uuid: str | None = None,
        stop_reason: str | None = None,
        usage: Json | None = None,
        model: str = "claude-test-1",
        **extra: Any,
    ) -> str:
        record = self._base("assistant", parent, uuid)
        record["requestId"] = "req_" + mid
        record["message"] = {
            "model": model,
            "id": mid,
            "type": "message",
            "role": "assistant",
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage if usage is not None else {"input_tokens": 10, "output_tokens": 2},
        }
        record.update(extra)
        return self._add(record)

    def progress(self, tool_use_id: str, *, parent: str | None | bool = True) -> str:
        record = self._base("progress", parent, None)
        record.update(
            {"data": {"type": "hook_progress"}, "toolUseID": tool_use_id, "parentToolUseID": tool_use_id}
        )
        return self._add(record)

    def bookkeeping(self, kind: str, *, parent: str | None | bool = True, **extra: Any) -> str:
        """A record with a uuid that is not a message (`attachment`, `progress`...)."""
        record = self._base(kind, parent, None)
        record.update(extra)
        return self._add(record)

    def system(self, subtype: str, *, parent: str | None | bool = True, **extra: Any) -> str:
        record = self._base("system", parent, None)
        record.update({"subtype": subtype, "content": "", "level": "info"}, **extra)
        return self._add(record)

    def queue(self, operation: str, content: str | None = None) -> None:
        self.clock += 1000
        record: Json = {"type": "queue-operation", "operation": operation, "timestamp": iso(self.clock)}
        record["sessionId"] = self.session_id
        if content is not None:
            record["content"] = content
        self.records.append(record)

    def raw(self, record: Json) -> None:
        self.records.append(record)

    def write(self, path: Path) -> Path:
        return write_jsonl(path, self.records)


def text(value: str) -> Json:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str = "Read", **inputs: Any) -> Json:
    return {"type": "tool_use", "id": call_id, "name": name, "input": inputs or {"file_path": "src/app.py"}}


def tool_result(call_id: str, content: Any = "ok", **extra: Any) -> Json:
    return {"tool_use_id": call_id, "type": "tool_result", "content": content, **extra}


def thinking(value: str) -> Json:
    return {"type": "thinking", "thinking": value, "signature": SIGNATURE}


def image(data: str = "iVBORw0KGgo=") -> Json:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def usage(inp: int, out: int, read: int = 0, write: int = 0) -> Json:
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "service_tier": "standard",
    }


# -- Codex ---------------------------------------------------------------------------------------
class CodexRollout:
    def __init__(self, session_id: str = "0199a000-0000-7000-8000-00000000c0de"):
        self.session_id = session_id
        self.records: list[Json] = []
        self.clock = T0

    def _line(self, kind: str, payload: Json) -> None:
        self.clock += 1000
        self.records.append({"timestamp": iso(self.clock), "type": kind, "payload": payload})

    def meta(self, instructions: str = "You are a careful coding agent.", **extra: Any) -> None:
        payload = {
            "id": self.session_id,
            "timestamp": iso(self.clock),
            "cwd": "/work/demo",
            "originator": "codex_cli",
            "cli_version": "0.50.0",
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": instructions},
            **extra,
        }
        self._line("session_meta", payload)

    def turn_context(self, model: str = "gpt-test-codex") -> None:
        self._line("turn_context", {"cwd": "/work/demo", "approval_policy": "on-request", "model": model})

    def item(self, payload: Json) -> None:
        self._line("response_item", payload)

    def event(self, payload: Json) -> None:
        self._line("event_msg", payload)

    def user(self, words: str, *, echo: bool = True) -> None:
        self.item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": words}]})
        if echo:
            self.event({"type": "user_message", "message": words, "images": []})

    def developer(self, words: str) -> None:
        self.item(
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": words}]}
        )

    def say(self, words: str, *, item_id: str | None = None, phase: str | None = None) -> None:
        payload: Json = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": words}],
        }
        if item_id:
            payload["id"] = item_id
        if phase:
            payload["phase"] = phase
        self.item(payload)
        self.event({"type": "agent_message", "message": words})

    def reasoning(self, summary: str = "Weighing the options.", rs_id: str | None = None) -> None:
        payload: Json = {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": summary}],
            "encrypted_content": "gAAAA-opaque-reasoning",
        }
        if rs_id:
            payload["id"] = rs_id
        self.item(payload)

    def call(self, call_id: str, name: str = "shell", arguments: str = '{"command":["ls"]}') -> None:
        self.item({"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id})

    def output(self, call_id: str, output: Any = "done") -> None:
        self.item({"type": "function_call_output", "call_id": call_id, "output": output})

    def usage(self, inp: int = 1200, cached: int = 200, out: int = 80, reasoning: int = 30) -> None:
        last = {
            "input_tokens": inp,
            "cached_input_tokens": cached,
            "output_tokens": out,
            "reasoning_output_tokens": reasoning,
            "total_tokens": inp + out,
        }
        self.event(
            {
                "type": "token_count",
                "info": {"total_token_usage": last, "last_token_usage": last, "model_context_window": 272000},
            }
        )

    def write(self, path: Path) -> Path:
        return write_jsonl(path, self.records)


# -- Cline ---------------------------------------------------------------------------------------
def cline_message(role: str, blocks: list[Json], ts: int, **extra: Any) -> Json:
    return {"role": role, "content": blocks, "ts": ts, **extra}


def cline_metrics(prompt: int, completion: int, cached: int = 0) -> Json:
    return {
        "modelInfo": {"modelId": "claude-test-1", "providerId": "anthropic", "mode": "act"},
        "metrics": {"tokens": {"prompt": prompt, "completion": completion, "cached": cached}},
    }


# -- OpenCode ------------------------------------------------------------------------------------
def opencode_export(session_id: str = "ses_demo01") -> Json:
    return {
        "info": {
            "id": session_id,
            "projectID": "prj_demo",
            "title": "Demo",
            "version": "1.15.0",
            "time": {"created": T0},
        },
        "messages": [
            {
                "info": {
                    "id": "msg_a001",
                    "sessionID": session_id,
                    "role": "user",
                    "agent": "build",
                    "model": {"providerID": "anthropic", "modelID": "claude-test-1"},
                    "time": {"created": T0 + 1000},
                },
                "parts": [
                    {
                        "id": "prt_a001",
                        "sessionID": session_id,
                        "messageID": "msg_a001",
                        "type": "text",
                        "text": "Tidy up the config loader",
                    },
                    {
                        "id": "prt_a002",
                        "sessionID": session_id,
                        "messageID": "msg_a001",
                        "type": "text",
                        "text": "Called the Read tool on config.ts",
                        "synthetic": True,
                    },
                ],
            },
            {
                "info": {
                    "id": "msg_a002",
                    "sessionID": session_id,
                    "role": "assistant",
                    "parentID": "msg_a001",
                    "modelID": "claude-test-1",
                    "providerID": "anthropic",
                    "finish": "tool-calls",
                    "tokens": {
                        "input": 900,
                        "output": 40,
                        "reasoning": 0,
                        "cache": {"read": 100, "write": 0},
                    },
                    "time": {"created": T0 + 2000, "completed": T0 + 4000},
                },
                "parts": [
                    {"id": "prt_b001", "messageID": "msg_a002", "type": "step-start"},
                    {
                        "id": "prt_b002",
                        "messageID": "msg_a002",
                        "type": "tool",
                        "callID": "call_1",
                        "tool": "bash",
                        "state": {
                            "status": "running",
                            "input": {"command": "npm test"},
                            "time": {"start": T0 + 3000},
                        },
                    },
                ],
            },
        ],
        "todos": [{"id": "1", "content": "Tidy", "status": "pending", "priority": "high"}],
    }


# -- Gemini CLI -------------------------------------------------------------------------------------
def gemini_call(
    call_id: str | None, name: str, status: str = "success", output: Any = "ok", **args: Any
) -> Json:
    """A `ToolCallRecord` whose result is Gemini CLI's `[{functionResponse: {id, name, response}}]`."""
    record: Json = {"name": name, "args": args, "status": status, "timestamp": iso(T0)}
    if call_id is not None:
        record["id"] = call_id
    if output is not None:
        key = "error" if status in ("error", "cancelled") else "output"
        response = {"functionResponse": {"id": call_id, "name": name, "response": {key: output}}}
        record["result"] = [response]
    record.update({"displayName": name.title(), "description": "the tool's declared description"})
    return record


def gemini_user(mid: str, content: Any, at: int = 0) -> Json:
    return {"id": mid, "timestamp": iso(T0 + at), "type": "user", "content": content}


def gemini_reply(mid: str, content: Any = "", at: int = 0, **extra: Any) -> Json:
    return {"id": mid, "timestamp": iso(T0 + at), "type": "gemini", "content": content, **extra}


GEMINI_TOKENS = {"input": 1200, "output": 40, "cached": 1000, "thoughts": 15, "tool": 0, "total": 1255}


def gemini_chat(messages: list[Json], session_id: str = "gem-1") -> Json:
    return {
        "sessionId": session_id,
        "projectHash": "abc123",
        "startTime": iso(T0),
        "lastUpdated": iso(T0 + 60_000),
        "messages": messages,
    }


def gemini_metadata(session_id: str = "gem-1") -> Json:
    return {"sessionId": session_id, "projectHash": "abc123", "startTime": iso(T0), "lastUpdated": iso(T0)}


def stream_event(kind: str, at: int = 0, **fields: Any) -> Json:
    return {"type": kind, "timestamp": iso(T0 + at), **fields}


# -- Aider ---------------------------------------------------------------------------------------
class AiderHistory:
    """`.aider.chat.history.md` as Aider appends to it (io.py's user_input, ai_output, tool_output)."""

    def __init__(self) -> None:
        self.text = ""

    def start(self, when: str = "2026-05-02 13:55:39", model: str = "openai/gpt-4o") -> AiderHistory:
        self.text += f"\n# aider chat started at {when}\n\n"
        return self.tool("Aider v0.86.2", f"Model: {model} with diff edit format")

    def user(self, text: str) -> AiderHistory:
        lines = text.splitlines() or ["<blank>"]
        self.text += "\n" + "  \n".join(f"#### {line}" for line in lines) + "  \n"
        return self

    def reply(self, text: str) -> AiderHistory:
        self.text += "\n" + text.strip() + "\n\n"
        return self

    def tool(self, *lines: str) -> AiderHistory:
        self.text += "".join(f"> {line}".rstrip() + "  \n" for line in lines)
        return self

    def write(self, path: Path) -> Path:
        path.write_text(self.text, encoding="utf-8")
        return path
