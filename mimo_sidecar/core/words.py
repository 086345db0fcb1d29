"""The protocol's words, defined once: the main agent's slice name and every closed set of words
(outcomes, gates, writer states, status states) as `Literal` types.

The core produces these words; the wire models (`mimo_sidecar.wire`) declare their fields with the
same types, so a word added here is a word the schema accepts, and mypy checks every hand-over.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

MAIN_AGENT: Final = "main"  # the user-facing agent's slice; sub-agents have their own IDs

# Provider families, as the AI SDK's `providerOptions` keys name them: which API verifies a replay
# token (signature, encrypted content), and which counting rules a request's size follows.
ANTHROPIC: Final = "anthropic"
OPENAI: Final = "openai"
GOOGLE: Final = "google"

# What `rebuild/insert` answers (behavior.md#rebuild-outcomes): one rebuild outcome, or the gate
# that stopped it.
GateOutcome = Literal[
    "no-checkpoint",
    "no-watermark",
    "not-main-agent",
    "checkpoint-off",
    "memory-write-off",
]
# What a rendered insertion ends with; `no-gain` is the inflation guard's refusal: the boundary
# plus the view after it would not be smaller than the request it replaces
# (behavior.md#inflation-guard).
RenderOutcome = Literal["rebuilt", "insert-failed", "no-gain"]
InsertOutcome = Literal[
    "rebuilt",
    "insert-failed",
    "no-gain",
    "writer-failed",
    "no-checkpoint",
    "no-watermark",
    "not-main-agent",
    "checkpoint-off",
    "memory-write-off",
]
# Gates whose outcome carries a one-time notice (behavior.md#one-time-notices).
NoticeKind = Literal["memory-write-off", "checkpoint-off"]
InsertReason = Literal["auto", "overflow", "manual"]

# Where the usage count of the trigger came from (behavior.md#overflow-test, #usage-fallback):
# the request's usage; the newest finished step's; when that step has none, the newest step since
# the view's boundary that has some; else the estimated request; none without a finished step.
UsageSource = Literal["request", "last-finished", "earlier-step", "estimate", "none"]

# When `rebuild/compute` dry-runs the rebuild (behavior.md#trigger-loop): only when the trigger says a
# rebuild is due (the default: the call a host makes before every model call stays flat), always,
# or never.
PreviewMode = Literal["when-due", "always", "never"]

# The checkpoint writer registry (behavior.md#writer).
WriterOutcome = Literal["success", "failure", "cancelled"]
WriterStartState = Literal["in-flight", "queued"]
WaitResult = Literal["no-writer", "success", "failure", "timeout"]

# The busy/idle status a host shows while a rebuild runs (behavior.md#render-time-wait, #manual-rebuild).
StatusState = Literal["busy", "idle"]
# The output formats of request/build (core.formats renders each).
RequestFormat = Literal["ai-sdk", "anthropic", "openai-chat", "openai-responses", "gemini"]

NOTICE_KINDS: Final[tuple[NoticeKind, ...]] = get_args(NoticeKind)

# The sidecar's model tools (behavior.md#d18, protocol.md "Model tools"), before any prefix, and the
# operations of each.
ModelToolName = Literal["history", "memory", "task"]
MODEL_TOOL_NAMES: Final[tuple[ModelToolName, ...]] = get_args(ModelToolName)
HistoryOperation = Literal["around", "search", "result"]
MemoryOperation = Literal["search", "read"]
TaskOperation = Literal["list", "get"]
