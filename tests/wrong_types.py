"""Wrongly typed host data: small valid sessions in every shape, and every way to break one value of them.

`sessions()` gives `session/open` params in each host shape (MiMo inline with every part kind the
rebuild reads, Claude Code's Anthropic blocks, Codex's Responses items, OpenAI Chat tool messages),
with tasks, actors and a request prefix. `mutations(params)` yields, for every position of the
host data in them, a copy of the params with that one value replaced by one of another JSON type
(and every number by an infinity, what a `1e400` on the wire is read as). Tests feed them to the
sidecar: a declared field (core/session/data_model.py) is refused with -32602 at its path, anything else is
the host's and must never make a later request fail with -32603.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from mimo_sidecar.core.session.message import Message
from tests.json_paths import Path, positions, replaced
from tests.unit import split_sessions

T0 = 1_760_000_000_000
HOST_KEYS = ("messages", "tasks", "actors", "requestPrefix")
TASKS = [
    {"id": "T1", "status": "in_progress", "summary": "Fix the import", "created_at": T0},
    {
        "id": "T1.1",
        "parent_task_id": "T1",
        "status": "done",
        "summary": "Read the parser",
        "created_at": T0 + 1,
        "ended_at": T0 + 2,
        "cleanup_after": T0 + 10**12,
    },
]
ACTORS = [
    {
        "actorID": "a1",
        "sessionID": "S",
        "status": "running",
        "background": True,
        "description": "explore the tests",
        "agent": "explore",
        "lastTurnTime": T0,
    }
]
PREFIX = {
    "system": ["You are a coding agent.", {"type": "text", "text": "Be brief."}],
    "tools": [
        {"name": "read", "description": "Read a file", "input_schema": {"type": "object"}},
        {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}, "strict": True}},
    ],
}
IMAGE = "data:image/png;base64,iVBORw0KGgo="


def _inline() -> list[dict[str, Any]]:
    completed = {
        "status": "completed",
        "input": {"filePath": "a.ts"},
        "output": "export const a = 1\n" * 40,
        "title": "a.ts",
        "metadata": {},
        "time": {"start": T0, "end": T0 + 1},
        "attachments": [{"type": "file", "mime": "image/png", "url": IMAGE}],
    }
    failed = {
        "status": "error",
        "input": {"command": "make"},
        "error": "aborted",
        "metadata": {"interrupted": True, "output": "partial"},
        "time": {"start": T0, "end": T0 + 1},
    }
    usage = {"total": 5000, "input": 4000, "output": 100, "reasoning": 0, "cache": {"read": 10, "write": 5}}
    return [
        {
            "info": {
                "id": "m1",
                "role": "user",
                "time": {"created": T0},
                "agent": "build",
                "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4"},
            },
            "parts": [
                {"id": "p1", "type": "text", "text": "fix the import", "synthetic": False, "ignored": False},
                {"id": "p2", "type": "file", "mime": "image/png", "url": IMAGE, "filename": "a.png"},
            ],
        },
        {
            "info": {
                "id": "m2",
                "role": "assistant",
                "time": {"created": T0 + 1},
                "finish": "tool-calls",
                "providerID": "anthropic",
                "modelID": "claude-sonnet-4",
                "providerMessageID": "resp_1",
                "tokens": usage,
                "limit": {"context": 200000, "output": 32000},
                "summary": False,
            },
            "parts": [
                {
                    "id": "p3",
                    "type": "reasoning",
                    "text": "read first",
                    "metadata": {"anthropic": {"signature": "s"}},
                },
                {"id": "p4", "type": "tool", "callID": "c1", "tool": "read", "state": completed},
                {"id": "p5", "type": "tool", "callID": "c2", "tool": "bash", "state": failed},
                {"id": "p6", "type": "subtask", "prompt": "p", "description": "d", "agent": "general"},
                {
                    "id": "p7",
                    "type": "text",
                    "text": "done",
                    "metadata": {"openai": {"phase": "final_answer"}},
                },
            ],
        },
        {
            "info": {"id": "m3", "role": "user", "time": {"created": T0 + 3}},
            "parts": [{"type": "text", "text": "go on"}],
        },
        {
            "info": {
                "id": "m4",
                "role": "assistant",
                "time": {"created": T0 + 4},
                "finish": "stop",
                "error": {"name": "MessageAbortedError"},
                "tokens": {"input": 190000, "output": 10, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            },
            "parts": [{"type": "step-start"}, {"id": "p8", "type": "text", "text": "ok"}],
        },
    ]


def _chat() -> list[dict[str, Any]]:
    return [
        {
            "info": {"id": "h1", "role": "user", "time": {"created": T0}},
            "parts": [{"type": "text", "text": "ls"}],
        },
        {
            "info": {"id": "h2", "role": "assistant", "time": {"created": T0 + 1}, "finish": "tool-calls"},
            "parts": [
                {"type": "function", "id": "call_1", "function": {"name": "bash", "arguments": '{"c":"ls"}'}}
            ],
        },
        {
            "info": {
                "id": "h3",
                "role": "tool",
                "time": {"created": T0 + 2},
                "tool_call_id": "call_1",
                "is_error": False,
            },
            "parts": [{"type": "text", "text": "a.ts", "time": {"compacted": T0 + 3}}],
        },
        {
            "info": {"id": "h4", "role": "user", "time": {"created": T0 + 4}, "providerRole": "developer"},
            "parts": [{"type": "text", "text": "be brief"}],
        },
    ]


def _as_json(messages: list[Message]) -> list[dict[str, Any]]:
    return [{"info": copy.deepcopy(m.info), "parts": copy.deepcopy(m.parts)} for m in messages]


def sessions() -> dict[str, dict[str, Any]]:
    """`session/open` params (without `sessionId`) in each host shape."""
    shapes = {
        "inline": _inline(),
        "claude": _as_json(split_sessions.claude_code()),
        "codex": _as_json(split_sessions.codex()),
        "chat": _chat(),
    }
    return {
        name: {"messages": messages, "tasks": TASKS, "actors": ACTORS, "requestPrefix": PREFIX}
        for name, messages in shapes.items()
    }


# The fields an attack on the sidecar found accepted, then failing later requests; each refused where it is.
FOUND_CASES = [(("messages", 0, "parts", 0, "text"), value) for value in (True, 0, 1.5, [], {})] + [
    (("messages", 1, "info", "tokens"), [1, 2]),
    (("messages", 1, "info", "tokens", "cache"), "none"),
    (("messages", 1, "info", "tokens", "input"), float("inf")),
    (("messages", 1, "info", "finish"), 5),
    (("messages", 1, "info", "providerID"), 7),
    (("messages", 1, "info", "providerMessageID"), {}),
    (("messages", 1, "parts", 1, "callID"), None),
    (("messages", 1, "parts", 1, "state"), "completed"),
    (("messages", 1, "parts", 1, "state", "output"), {"x": 1}),
    (("messages", 1, "parts", 2, "state", "error"), ["boom"]),
    (("messages", 0, "parts", 1, "mime"), 5),
    (("messages", 0, "parts", 1, "url"), True),
    (("messages", 1, "parts", 1, "state", "attachments", 0, "url"), True),
    (("tasks", 0, "status"), []),
    (("tasks", 0, "summary"), 3),
    (("tasks", 0, "created_at"), "soon"),
    (("actors", 0, "status"), []),
    (("actors", 0, "background"), "yes"),
    (("actors", 0, "lastTurnTime"), float("inf")),
    (("requestPrefix", "system"), "You are a coding agent."),
    (("requestPrefix", "tools"), {"name": "read"}),
    (("requestPrefix", "tools", 0, "name"), 5),
]


def wrong_value(value: Any) -> Any:
    """A value of another JSON type than `value`."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return 5
    if isinstance(value, dict):
        return [value] if value else "{}"
    if isinstance(value, list):
        return {"0": value[0]} if value else 0
    return {}  # null


def value_at(params: Any, path: Path) -> Any:
    for key in path:
        params = params[key]
    return params


def mutations(params: dict[str, Any]) -> Iterator[tuple[Path, Any, dict[str, Any]]]:
    """(path, new value, mutated params) for every position of the host data: a value of another
    type, and for every number an infinity too."""
    for path in positions({k: params[k] for k in HOST_KEYS if k in params}):
        old = value_at(params, path)
        news = [wrong_value(old)]
        if isinstance(old, (int, float)) and not isinstance(old, bool):
            news.append(float("inf"))
        for new in news:
            yield path, new, replaced(params, path, new)


def dotted(path: Path) -> str:
    return ".".join(str(step) for step in path)


FORMATS = ("ai-sdk", "anthropic", "openai-chat", "openai-responses", "gemini")
MODEL = {"contextWindow": 200000, "providerId": "anthropic", "modelId": "claude-sonnet-4"}


def later_calls(sid: str) -> list[tuple[str, dict[str, Any]]]:
    """What a host asks of a session it opened: compute, build in every format, the writer kit,
    a manual rebuild, and the builds again after it."""
    builds = [("request/build", {"sessionId": sid, "format": f}) for f in FORMATS]
    return [
        ("rebuild/compute", {"sessionId": sid, "model": MODEL, "preview": True}),
        *builds,
        ("checkpoint/prepare", {"sessionId": sid, "format": "openai-responses"}),
        ("checkpoint/commit", {"sessionId": sid, "content": "# Session checkpoint\n\nTopic: the import\n"}),
        ("rebuild/insert", {"sessionId": sid, "reason": "manual"}),
        *builds,
    ]
