"""Every method and notification of the protocol, with its wire models and one example each.

This registry is the single list protocol.md is generated and checked from (`wire.protocol_doc`),
and the RPC layer refuses to serve a method that is not in it. To add a method: append a
`MethodSpec` with `register(...)` below (or from the module that defines its models), add a
`### \\`name\\`` section to protocol.md with an empty example block
(`<!-- BEGIN GENERATED: example name -->` / `<!-- END GENERATED -->`), then run
`python -m mimo_sidecar.wire.protocol_doc`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from . import lifecycle as lc
from . import session as ss

Kind = Literal["request", "notification"]
Direction = Literal["client → sidecar", "sidecar → client"]

NO_PARAMS = object()  # the example has no params member at all


@dataclass(frozen=True)
class MethodSpec:
    name: str
    kind: Kind
    direction: Direction
    area: str  # protocol.md groups the method index by area
    summary: str
    params: type[BaseModel] | None
    result: type[BaseModel] | None
    params_example: Any
    result_example: Any = None
    params_member: str | None = None  # the model validates this member of params (initialize)


REGISTRY: dict[str, MethodSpec] = {}


def register(spec: MethodSpec) -> MethodSpec:
    if spec.name in REGISTRY:
        raise ValueError(f"{spec.name} is registered twice")
    REGISTRY[spec.name] = spec
    return spec


def wire_models() -> list[type[BaseModel]]:
    """Every top-level model of the registry, in registry order, without repeats."""
    seen: list[type[BaseModel]] = []
    for spec in REGISTRY.values():
        for model in (spec.params, spec.result):
            if model is not None and model not in seen:
                seen.append(model)
    return seen


# ---------------------------------------------------------------------------------------------
# Examples share one small session
# ---------------------------------------------------------------------------------------------

_SID = "ses_demo"
_U1 = "msg_g0193f2a1c0de0001AbCdEfGhJ"
_A1 = "msg_g0193f2a1c0de0002AbCdEfGhJ"


def _user(mid: str, text: str, created: int) -> dict[str, Any]:
    return {
        "info": {
            "id": mid,
            "sessionID": _SID,
            "role": "user",
            "time": {"created": created},
            "agent": "build",
        },
        "parts": [
            {"id": f"prt_{mid[-4:]}1", "sessionID": _SID, "messageID": mid, "type": "text", "text": text}
        ],
    }


_ASSISTANT = {
    "info": {
        "id": _A1,
        "sessionID": _SID,
        "role": "assistant",
        "time": {"created": 1760000001000, "completed": 1760000004000},
        "finish": "tool-calls",
        "tokens": {"input": 1200, "output": 80, "reasoning": 0, "cache": {"read": 0, "write": 0}},
    },
    "parts": [
        {
            "id": "prt_a0011",
            "sessionID": _SID,
            "messageID": _A1,
            "type": "tool",
            "callID": "call_1",
            "tool": "read",
            "state": {
                "status": "completed",
                "input": {"filePath": "src/app.ts"},
                "output": "export const app = 1\n",
                "title": "src/app.ts",
                "metadata": {},
                "time": {"start": 1760000002000, "end": 1760000003000},
            },
        }
    ],
}

_WRITER = {"inFlight": False, "settlements": 1, "lastOutcome": "success"}

# ---------------------------------------------------------------------------------------------
# Lifecycle
# ---------------------------------------------------------------------------------------------

register(
    MethodSpec(
        "initialize",
        "request",
        "client → sidecar",
        "Lifecycle",
        "First request: memory root and config. Standard LSP params: processId, capabilities and "
        "initializationOptions are read.",
        lc.InitializeParams,
        lc.InitializeResult,
        {
            "processId": 4242,
            "capabilities": {},
            "initializationOptions": {
                "memoryRoot": "/home/dev/.local/share/mimocode/memory",
                "config": {
                    "checkpoint": {"push_caps": {"memory": 8000, "total": 40000}, "task_archive_days": 7},
                    "compaction": {"max_context": {"anthropic/*": "150K"}, "trigger_ratio": "85%"},
                },
            },
        },
        {"capabilities": {}, "serverInfo": {"name": "mimo-sidecar", "version": "0.1.0"}},
    )
)
register(
    MethodSpec(
        "initialized",
        "notification",
        "client → sidecar",
        "Lifecycle",
        "Sent by LSP clients after initialize; accepted and ignored.",
        None,
        None,
        {},
    )
)
register(
    MethodSpec(
        "shutdown",
        "request",
        "client → sidecar",
        "Lifecycle",
        "Waits for in-flight requests (at most 10 s, then cancels them), answers null.",
        None,
        None,
        NO_PARAMS,
        None,
    )
)
register(
    MethodSpec(
        "exit",
        "notification",
        "client → sidecar",
        "Lifecycle",
        "Ends the process: exit code 0 after shutdown, 1 otherwise.",
        None,
        None,
        NO_PARAMS,
    )
)
register(
    MethodSpec(
        "$/cancelRequest",
        "notification",
        "client → sidecar",
        "Lifecycle",
        "Cancels a pending request, which then fails with -32800.",
        lc.CancelParams,
        None,
        {"id": 7},
    )
)
register(
    MethodSpec(
        "window/logMessage",
        "notification",
        "sidecar → client",
        "Lifecycle",
        "Configuration warnings (unknown or unused keys), once per configuration load.",
        lc.LogMessageParams,
        None,
        {
            "type": 2,
            "message": "config.checkpoint.push_caps.focus_task: accepted but has no effect (MiMo never "
            "reads it, D6)",
        },
    )
)
register(
    MethodSpec(
        "sidecar/configure",
        "request",
        "client → sidecar",
        "Lifecycle",
        "Replaces the whole config at runtime; applies from the next render.",
        lc.ConfigureParams,
        lc.ConfigureResult,
        {"config": {"checkpoint": {"push_caps": {"recent_user": 0}}, "memory": {"disable_write": False}}},
        {"warnings": []},
    )
)

# ---------------------------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------------------------

register(
    MethodSpec(
        "session/open",
        "request",
        "client → sidecar",
        "Sessions",
        "Registers a session with its history, tasks, actors and stored watermark.",
        ss.OpenParams,
        ss.OpenResult,
        {
            "sessionId": _SID,
            "projectId": "prj_web",
            "messages": [_user(_U1, "Fix the failing build", 1760000000000), _ASSISTANT],
            "tasks": [
                {"id": "T1", "status": "in_progress", "summary": "Fix the build", "created_at": 1760000000500}
            ],
            "actors": [],
            "requestPrefix": {"system": ["You are a coding agent."], "tools": [{"name": "read"}]},
        },
        {"sessionId": _SID, "revision": 1},
    )
)
register(
    MethodSpec(
        "session/sync",
        "request",
        "client → sidecar",
        "Sessions",
        "Applies one atomic batch of upserts and removals; returns the new revision.",
        ss.SyncParams,
        ss.SyncResult,
        {
            "sessionId": _SID,
            "baseRevision": 1,
            "upsertMessages": [
                {
                    "info": {
                        "id": "msg_g0193f2a1c0de0003AbCdEfGhJ",
                        "sessionID": _SID,
                        "role": "assistant",
                        "time": {"created": 1760000005000},
                    },
                    "parts": [],
                }
            ],
            "upsertParts": [
                {
                    "messageId": "msg_g0193f2a1c0de0003AbCdEfGhJ",
                    "part": {
                        "id": "prt_a0031",
                        "sessionID": _SID,
                        "messageID": "msg_g0193f2a1c0de0003AbCdEfGhJ",
                        "type": "text",
                        "text": "The build fails because",
                    },
                }
            ],
        },
        {"revision": 2},
    )
)
register(
    MethodSpec(
        "session/get",
        "request",
        "client → sidecar",
        "Sessions",
        "Revision, counts, stored watermark, writer state and token estimate of a session.",
        ss.SessionRef,
        ss.SessionInfo,
        {"sessionId": _SID},
        {
            "sessionId": _SID,
            "projectId": "prj_web",
            "revision": 2,
            "messageCount": 3,
            "watermark": _U1,
            "writer": _WRITER,
            "estimatedTokens": 145,
            "idMode": True,
        },
    )
)
register(
    MethodSpec(
        "session/close",
        "request",
        "client → sidecar",
        "Sessions",
        "Forgets a session (its memory files are untouched).",
        ss.SessionRef,
        ss.CloseResult,
        {"sessionId": _SID},
        {"closed": True},
    )
)

# ---------------------------------------------------------------------------------------------
# Checkpoint writer registry (spec §6.1)
# ---------------------------------------------------------------------------------------------

register(
    MethodSpec(
        "checkpoint/writerStarted",
        "request",
        "client → sidecar",
        "Checkpoint writer",
        "The host is starting a checkpoint writer covering up to `watermark`.",
        ss.WriterStartedParams,
        ss.WriterStartedResult,
        {"sessionId": _SID, "watermark": _U1},
        {"state": "in-flight", "watermark": _U1},
    )
)
register(
    MethodSpec(
        "checkpoint/writerFinished",
        "request",
        "client → sidecar",
        "Checkpoint writer",
        "The in-flight writer settled; on success its watermark becomes the stored one.",
        ss.WriterFinishedParams,
        ss.WriterFinishedResult,
        {"sessionId": _SID, "outcome": "success"},
        {"watermark": _U1, "writer": _WRITER},
    )
)

# ---------------------------------------------------------------------------------------------
# Rebuild methods: registered by the rebuild issue (rebuild/compute, rebuild/insert,
# request/build, rebuild/status).
# ---------------------------------------------------------------------------------------------

from . import rebuild as rb  # noqa: E402  (kept beside its entries)

_SECTIONS_EXAMPLE = [
    {
        "key": "tasks",
        "heading": "# Tasks ledger",
        "tokens": 41,
        "cap": 2000,
        "unit": "chars",
        "present": True,
        "truncated": False,
        "shed": False,
    },
    {
        "key": "checkpoint",
        "heading": "# Session checkpoint",
        "tokens": 2380,
        "cap": 11000,
        "unit": "tokens",
        "present": True,
        "truncated": False,
        "shed": False,
        "path": "/home/dev/.local/share/mimocode/memory/sessions/ses_demo/checkpoint.md",
    },
    {
        "key": "actors",
        "heading": "# Active actors",
        "tokens": 0,
        "cap": 500,
        "unit": "tokens",
        "present": False,
        "truncated": False,
        "shed": False,
        "reason": "no active actors",
    },
    {
        "key": "activity",
        "heading": "# Recent activity",
        "tokens": 18,
        "cap": 200,
        "unit": "lines",
        "present": True,
        "truncated": False,
        "shed": False,
    },
]

register(
    MethodSpec(
        "rebuild/compute",
        "request",
        "client → sidecar",
        "Rebuild",
        "The trigger decision, the watermark a writer starting now should cover, and a dry-run render.",
        rb.ComputeParams,
        rb.ComputeResult,
        {
            "sessionId": _SID,
            "usage": {"input": 181000, "output": 2400, "cache": {"read": 0, "write": 0}},
            "model": {"contextWindow": 200000, "providerId": "anthropic", "modelId": "claude-sonnet"},
        },
        {
            "revision": 7,
            "trigger": {
                "usable": 180000,
                "count": 183400,
                "overflow": True,
                "usageRecovered": False,
                "usagePending": False,
                "shouldRebuild": True,
                "hard": 200000,
                "usageSource": "request",
                "warnings": [],
            },
            "watermark": {
                "messageId": _U1,
                "index": 0,
                "tailTokens": 352,
                "tailTextBlocks": 1,
                "adjusted": False,
            },
            "storedWatermark": _U1,
            "writerInFlight": False,
            "preview": {
                "outcome": "rebuilt",
                "report": {
                    "sections": _SECTIONS_EXAMPLE,
                    "totalTokens": 2620,
                    "overCap": False,
                    "hasActivity": True,
                    "shedUnits": [],
                },
            },
        },
    )
)

register(
    MethodSpec(
        "rebuild/insert",
        "request",
        "client → sidecar",
        "Rebuild",
        "Insert the rebuild boundary after the stored watermark (waiting for a writer in flight).",
        rb.InsertParams,
        rb.InsertResult,
        {"sessionId": _SID, "reason": "auto", "digestUpTo": _A1},
        {
            "outcome": "rebuilt",
            "revision": 8,
            "message": {
                "info": {
                    "id": "msg_g0193f2a1c0e00001Q2w3E4r5T",
                    "sessionID": _SID,
                    "role": "user",
                    "agentID": "main",
                    "time": {"created": 1760000000001},
                    "agent": "build",
                },
                "parts": [
                    {
                        "id": "prt_g0193f2a1c0e00002Q2w3E4r5T",
                        "sessionID": _SID,
                        "messageID": "msg_g0193f2a1c0e00001Q2w3E4r5T",
                        "type": "checkpoint",
                        "checkpointDir": "",
                        "checkpointNumber": 0,
                        "coveredUpTo": _U1,
                        "digestUpTo": _A1,
                    },
                    {
                        "id": "prt_g0193f2a1c0e00003Q2w3E4r5T",
                        "sessionID": _SID,
                        "messageID": "msg_g0193f2a1c0e00001Q2w3E4r5T",
                        "type": "text",
                        "synthetic": True,
                        "text": "## Checkpoint\n\nSession memory directory: "
                        "/home/dev/.local/share/mimocode/memory/"
                        "sessions/ses_demo/\n\nCurrent checkpoint topic: lexer rewrite. Its content is in "
                        "the \u201c# Session checkpoint\u201d section below.",
                    },
                    {
                        "id": "prt_g0193f2a1c0e00004Q2w3E4r5T",
                        "sessionID": _SID,
                        "messageID": "msg_g0193f2a1c0e00001Q2w3E4r5T",
                        "type": "text",
                        "synthetic": True,
                        "text": "The sections below are auto-loaded session context already in "
                        "this message. …",
                    },
                ],
            },
            "compacted": [{"messageId": _A1, "partId": "prt_a0011", "compactedAt": 1760000009000}],
            "sections": _SECTIONS_EXAMPLE,
            "watermark": _U1,
            "digestUpTo": _A1,
            "statusText": "Context rebuilt: the conversation now continues from the most recent checkpoint. "
            "Recent messages were kept; older context is represented by the checkpoint summary.",
            "warnings": [],
        },
    )
)

register(
    MethodSpec(
        "request/build",
        "request",
        "client → sidecar",
        "Rebuild",
        "What the host sends the model: the frozen prefix and the view's messages, as AI SDK "
        "ModelMessages or in a provider's own format.",
        rb.BuildParams,
        rb.BuildResult,
        {"sessionId": _SID},
        {
            "revision": 8,
            "prefix": {
                "system": ["You are a coding agent."],
                "tools": [{"name": "read"}],
                "hash": "sha256:5d0f7e0b1c3f4a2e9b8d7c6a5f4e3d2c1b0a99887766554433221100ffeeddcc",
            },
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Summary of previous conversation from checkpoint files:"},
                        {"type": "text", "text": "## Checkpoint\n\n…"},
                        {
                            "type": "text",
                            "text": "The sections below are auto-loaded session context already in "
                            "this message. …",
                        },
                        {
                            "type": "text",
                            "text": "<system-reminder>\nSession memory lives in …\n</system-reminder>",
                        },
                    ],
                },
            ],
            "sources": ["msg_g0193f2a1c0e00001Q2w3E4r5T"],
            "estimatedTokens": 2710,
            "collapsedMessageIds": [_A1],
            "reminderAdded": True,
            "usagePending": True,
            "warnings": [],
        },
    )
)

register(
    MethodSpec(
        "rebuild/status",
        "notification",
        "sidecar → client",
        "Rebuild",
        "Busy/idle status of a session while a rebuild waits for its checkpoint writer.",
        rb.StatusNotification,
        None,
        {"sessionId": _SID, "state": "busy", "message": "Preparing conversation context\u2026"},
    )
)

register(
    MethodSpec(
        "window/workDoneProgress/create",
        "request",
        "sidecar → client",
        "Rebuild",
        "Asks the client to create a progress token (only if it advertised window.workDoneProgress); "
        "answer null.",
        rb.WorkDoneProgressCreateParams,
        None,
        {"token": "mimo-rebuild-08b165b6d24d"},
        None,
    )
)

register(
    MethodSpec(
        "$/progress",
        "notification",
        "sidecar → client",
        "Rebuild",
        "Work-done progress of a rebuild: begin, report (status text changed), end.",
        rb.ProgressParams,
        None,
        {
            "token": "mimo-rebuild-08b165b6d24d",
            "value": {
                "kind": "begin",
                "title": "Rebuilding conversation context",
                "message": "Preparing conversation context\u2026",
                "cancellable": False,
            },
        },
    )
)
