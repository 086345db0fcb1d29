"""Every method and notification of the protocol, with its wire models and the params of its example.

This registry is the single list protocol.md is generated and checked from (`wire.protocol_doc`),
and the RPC layer refuses to serve a method that is not in it. The examples in protocol.md are
recorded from a real run of the sidecar (`rpc.doc_examples`): for a message the client sends, the
registry gives the params it sends in that run; everything the sidecar answers or sends is recorded,
never written here. To add a method: append a `MethodSpec` with `register(...)` below, add a
`### \\`name\\`` section to protocol.md with an empty example block
(`<!-- BEGIN GENERATED: example name -->` / `<!-- END GENERATED -->`), give the recording a step
that sends or provokes it (`rpc/doc_examples.py`), then run `make docs`.
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
    # client → sidecar: the params the recorded example sends (NO_PARAMS: no params member).
    # sidecar → client: None, the example is what the sidecar sent in the recording.
    params_example: Any = None


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


# What the assistant read: long enough that a rebuild makes the request smaller (the inflation guard).
_APP_TS = "".join(
    f"export function step{n}(input: Input): Output {{\n  return transform(input, {{ stage: {n} }})\n}}\n"
    for n in range(1, 25)
)

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
                "output": _APP_TS,
                "title": "src/app.ts",
                "metadata": {},
                "time": {"start": 1760000002000, "end": 1760000003000},
            },
        }
    ],
}

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
            "capabilities": {"window": {"workDoneProgress": True}},
            "initializationOptions": {
                "memoryRoot": "/home/dev/.local/share/mimocode/memory",
                "config": {
                    "checkpoint": {
                        "push_caps": {"memory": 8000, "total": 40000, "focus_task": 4000},
                        "task_archive_days": 7,
                    },
                    "compaction": {"max_context": {"anthropic/*": "150K"}, "trigger_ratio": "85%"},
                },
            },
        },
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
    )
)

# ---------------------------------------------------------------------------------------------
# Checkpoint writer registry (behavior.md#writer-registry)
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
    )
)

# ---------------------------------------------------------------------------------------------
# Rebuild methods: registered by the rebuild issue (rebuild/compute, rebuild/insert,
# request/build, rebuild/status).
# ---------------------------------------------------------------------------------------------

from . import rebuild as rb  # noqa: E402  (kept beside its entries)

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
    )
)

# ---------------------------------------------------------------------------------------------
# The checkpoint writer kit (behavior.md#writer-kit)
# ---------------------------------------------------------------------------------------------

from . import checkpoint as ck  # noqa: E402  (kept beside its entries)

register(
    MethodSpec(
        "checkpoint/prepare",
        "request",
        "client → sidecar",
        "Checkpoint writer",
        "The checkpoint writer's one model call: its messages with the instructions last, in any format; "
        "registers the writer when none is in flight.",
        ck.PrepareParams,
        ck.PrepareResult,
        {"sessionId": _SID, "watermark": _A1, "format": "anthropic"},
    )
)
register(
    MethodSpec(
        "checkpoint/commit",
        "request",
        "client → sidecar",
        "Checkpoint writer",
        "Writes the writer's reply as checkpoint.md (atomically, inside the memory root) and settles the "
        "writer as a success.",
        ck.CommitParams,
        ck.CommitResult,
        {
            "sessionId": _SID,
            "watermark": _A1,
            "content": "# Session checkpoint\n\nTopic: fix the failing build\n\n## §1 Active intent\n"
            "_What the user wants now, …_\n- Latest ask: “Fix the failing build”\n…",
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
    )
)

# ---------------------------------------------------------------------------------------------
# The model tools (behavior.md#d18)
# ---------------------------------------------------------------------------------------------

from . import tools as tl  # noqa: E402  (kept beside its entries)

register(
    MethodSpec(
        "tools/list",
        "request",
        "client → sidecar",
        "Model tools",
        "The sidecar's model tools (history, memory, task) in a format's own tool shape, names prefixed.",
        tl.ToolsListParams,
        tl.ToolsListResult,
        {"sessionId": _SID, "format": "anthropic", "prefix": "mimo_"},
    )
)
register(
    MethodSpec(
        "tools/call",
        "request",
        "client → sidecar",
        "Model tools",
        "Runs one model tool call against the session; answers MCP's CallToolResult (a bad argument is "
        "`isError: true`, not an RPC error).",
        tl.ToolsCallParams,
        tl.ToolsCallResult,
        {
            "sessionId": _SID,
            "name": "mimo_history",
            "arguments": {"operation": "result", "callID": "call_1"},
            "prefix": "mimo_",
        },
    )
)
