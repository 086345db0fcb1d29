"""The declared type of every field of the host's data that the sidecar reads (behavior.md#data-model,
docs/data-model.md "Data model"): message `info`, the parts the rebuild interprets (MiMo's, and the blocks of
the split shapes, behavior.md#shapes), the inline tool state, tasks, actors and the request prefix.

A field is declared here when some rule of the core reads it, with the type that rule expects; a
field no rule reads is left to the host. Required fields are those without which the object means
nothing (a message's `id` and `role`, a part's `type`, a call's ID...). `session/open` and
`session/sync` refuse data that breaks these types (`wire.host_data`), and so do the importers
(`importers.session_builder`), so that no value of the wrong type reaches a session: later requests
read only what is declared here, or values they treat as opaque.
"""

from __future__ import annotations

from typing import Any

from ..words import ANTHROPIC, GOOGLE, OPENAI
from .data_types import (
    AnyOf,
    Bool,
    Choice,
    CreatedMs,
    Json,
    Kind,
    ListOf,
    Named,
    Number,
    Obj,
    Requiring,
    Str,
    Tagged,
)

TEXT = Str()
NON_EMPTY = Str(min_length=1)
BOOL = Bool()
NUMBER = Number()
COUNT = Number(minimum=0)
INTEGER_COUNT = Number(minimum=0, integer=True)
# A part's (or a tool state's) `time`: only the compaction mark is read (behavior.md#time-compacted).
MARKED_TIME = Obj({"compacted": NUMBER})


# Replay tokens a MiMo reasoning part's metadata may hold, per family (the AI SDK's `providerOptions`
# keys; docs/data-model.md, "Split shapes: field reference").
REPLAY_KEYS = {
    ANTHROPIC: ("signature", "redactedData"),
    OPENAI: ("itemId", "reasoningEncryptedContent"),
    GOOGLE: ("thoughtSignature",),
    "vertex": ("thoughtSignature",),
    "bedrock": ("signature", "redactedData"),
}


def _replay_family(keys: tuple[str, ...]) -> Obj:
    return Obj({key: TEXT for key in keys})


# Replay tokens of a MiMo part, with the AI SDK's keys (docs/data-model.md, "Split shapes: field reference").
PART_METADATA = Obj(
    {
        family: _replay_family(keys + (("phase",) if family == "openai" else ()))
        for family, keys in REPLAY_KEYS.items()
    },
    description="Provider replay tokens under the AI SDK's keys; every other key is the host's.",
)
TOOL_PART_METADATA = Obj({**PART_METADATA.fields, "providerExecuted": BOOL})

TOKENS = Named(
    "TokenRecord",
    Obj(
        {
            "total": COUNT,
            "input": COUNT,
            "output": COUNT,
            "reasoning": COUNT,
            "cache": Obj({"read": COUNT, "write": COUNT}),
        },
        description="An assistant step's provider usage (behavior.md#messages), in tokens.",
    ),
)

MESSAGE_INFO = Named(
    "MessageInfo",
    Tagged(
        "role",
        Obj(
            {
                "id": Str(1, "Message ID (behavior.md#ordering, behavior.md#ids).", unicode=True),
                "role": Choice(
                    ("user", "assistant", "tool"),
                    "`user` or `assistant`; split shapes may also use `tool` (behavior.md#shapes).",
                ),
                "agentID": Str(description="Agent slice; absent means `main`.", unicode=True),
                "time": Obj(
                    {
                        "created": CreatedMs(
                            "Creation time: milliseconds since the epoch, a non-negative integer (an "
                            "integral number such as `1767225600000.0` counts) up to 2^53 − 1 "
                            "(behavior.md#messages)."
                        )
                    }
                ),
                "finish": Str(description="The stop reason (behavior.md#finish-values)."),
                "tokens": TOKENS,
                "providerID": TEXT,
                "modelID": TEXT,
                "providerMessageID": Str(description="Shared by the entries of one provider response."),
                "model": Obj({"providerID": TEXT, "modelID": TEXT}),
                "agent": TEXT,
                "limit": Obj({"context": INTEGER_COUNT, "input": INTEGER_COUNT, "output": INTEGER_COUNT}),
                "tool_call_id": Str(description="OpenAI Chat: the call a `tool`-role message answers."),
                "is_error": BOOL,
                "interrupted": BOOL,
                "providerRole": Str(description="`developer` or `system`: a provider's instruction message."),
                "error": Obj({"name": TEXT}),
            },
            required=("id", "role"),
        ),
        # OpenCode's user messages hold a `summary` object of their own; only an assistant's is read.
        {"assistant": Obj({"summary": Bool("`true` on a compaction summary.")})},
        description="A message's `info` (behavior.md#messages). The declared keys are checked, every "
        "other key is kept and counted.",
    ),
)

# -- parts (behavior.md#parts, docs/data-model.md "Split shapes: field reference") ------------------------
CALL_ID = Str(1, "The call ID.")
# A split result's flags, and its compaction mark (behavior.md#microcompaction-split).
RESULT_FLAGS: dict[str, Kind] = {"is_error": BOOL, "interrupted": BOOL, "time": MARKED_TIME}

FILE = Named(
    "FilePart",
    Obj(
        {"mime": TEXT, "url": Str(description="data:, https: or file: URL."), "filename": TEXT},
        required=("mime", "url"),
    ),
)
MEDIA_SOURCE = Named(
    "MediaSource",
    Obj(
        {"type": TEXT, "media_type": TEXT, "data": TEXT, "url": TEXT, "file_id": TEXT},
        required=("type",),
        description="An Anthropic image or document source: base64 `data`, a `url`, a `file_id` or text.",
    ),
)
TEXT_BLOCK = Named("TextBlock", Obj({"text": TEXT}, required=("text",)))
IMAGE_BLOCK = Named("ImageBlock", Obj({"source": MEDIA_SOURCE}, required=("source",)))
DOCUMENT_BLOCK = Named("DocumentBlock", Obj({"source": MEDIA_SOURCE, "title": TEXT}, required=("source",)))
INPUT_IMAGE = Named("InputImageItem", Obj({"image_url": TEXT, "file_id": TEXT, "detail": TEXT}))
INPUT_FILE = Named(
    "InputFileItem", Obj({"file_data": TEXT, "file_url": TEXT, "file_id": TEXT, "filename": TEXT})
)

# The items of a split result's content (Anthropic `tool_result.content`, Responses `output`).
CONTENT_BLOCK = Named(
    "ContentBlock",
    Tagged(
        "type",
        Obj({"type": NON_EMPTY}, required=("type",)),
        {
            "text": TEXT_BLOCK,
            "input_text": TEXT_BLOCK,
            "image": IMAGE_BLOCK,
            "document": DOCUMENT_BLOCK,
            "input_image": INPUT_IMAGE,
            "input_file": INPUT_FILE,
        },
        description="A block of a split tool result: text, image or document (Anthropic), "
        "input_text, input_image or input_file (Responses); other types are the host's.",
    ),
)
RESULT_CONTENT = AnyOf((TEXT, ListOf(CONTENT_BLOCK)), "A string, or a list of content blocks.")

# `metadata.interrupted` is read in every state; an interrupted call's partial output in `error`.
STATE_METADATA = Obj({"interrupted": BOOL})
TOOL_STATE = Named(
    "ToolState",
    Tagged(
        "status",
        Obj(
            {
                "status": Choice(("pending", "running", "completed", "error")),
                "input": Obj({}, description="The call's arguments."),
            },
            required=("status", "input"),
        ),
        {
            "pending": Obj({"metadata": STATE_METADATA}),
            "running": Obj({"metadata": STATE_METADATA}),
            "completed": Obj(
                {
                    "metadata": STATE_METADATA,
                    "output": TEXT,
                    "time": MARKED_TIME,
                    "attachments": ListOf(FILE, "Media results."),
                },
                required=("output",),
            ),
            "error": Obj(
                {
                    "metadata": Obj(
                        {
                            "interrupted": BOOL,
                            "output": Str(description="An interrupted call's partial output."),
                        }
                    ),
                    "error": TEXT,
                },
                required=("error",),
            ),
        },
        description="An inline tool call's state (behavior.md#tool-states).",
    ),
)


def _reasoning_items() -> ListOf:
    return ListOf(Obj({"type": TEXT, "text": TEXT}, required=("type",)))


PART_VARIANTS: dict[str, Kind] = {
    # MiMo / OpenCode
    "text": Named(
        "TextPart",
        Obj(
            {
                "text": TEXT,
                "synthetic": BOOL,
                "ignored": BOOL,
                "phase": TEXT,
                "metadata": PART_METADATA,
                "time": MARKED_TIME,
            },
            required=("text",),
        ),
    ),
    "reasoning": Named(
        "ReasoningPart",
        Obj(
            {
                "text": TEXT,
                "metadata": PART_METADATA,
                "summary": _reasoning_items(),
                "encrypted_content": TEXT,
                "content": _reasoning_items(),
            },
            description="A MiMo reasoning part (`text`), or a Responses reasoning item (`summary`, "
            "`encrypted_content`, `content`).",
        ),
    ),
    "file": FILE,
    "tool": Named(
        "ToolPart",
        Obj(
            {"callID": CALL_ID, "tool": TEXT, "state": TOOL_STATE, "metadata": TOOL_PART_METADATA},
            required=("callID", "tool", "state"),
        ),
    ),
    "checkpoint": Named(
        "CheckpointPart", Obj({"coveredUpTo": NON_EMPTY, "digestUpTo": TEXT}, required=("coveredUpTo",))
    ),
    "compaction": Named("CompactionPart", Obj({"encrypted_content": TEXT})),
    "subtask": Named(
        "SubtaskPart", Obj({"prompt": TEXT, "description": TEXT, "agent": TEXT, "command": TEXT})
    ),
    # Anthropic Messages
    "thinking": Named("ThinkingBlock", Obj({"thinking": TEXT, "signature": TEXT}, required=("thinking",))),
    "redacted_thinking": Named("RedactedThinkingBlock", Obj({"data": TEXT}, required=("data",))),
    "tool_use": Named(
        "ToolUseBlock", Obj({"id": CALL_ID, "name": TEXT, "input": Obj({})}, required=("id", "name"))
    ),
    "tool_result": Named(
        "ToolResultBlock",
        Obj({"tool_use_id": CALL_ID, "content": RESULT_CONTENT, **RESULT_FLAGS}, required=("tool_use_id",)),
    ),
    "image": IMAGE_BLOCK,
    "document": DOCUMENT_BLOCK,
    # OpenAI Chat Completions
    "function": Named(
        "FunctionPart",
        Obj(
            {"id": CALL_ID, "function": Obj({"name": TEXT, "arguments": TEXT}, required=("name",))},
            required=("id", "function"),
        ),
    ),
    # OpenAI Responses
    "function_call": Named(
        "FunctionCallItem",
        Obj({"call_id": CALL_ID, "name": TEXT, "arguments": TEXT}, required=("call_id", "name")),
    ),
    "custom_tool_call": Named(
        "CustomToolCallItem",
        Obj({"call_id": CALL_ID, "name": TEXT, "input": TEXT}, required=("call_id", "name")),
    ),
    "local_shell_call": Named(
        "LocalShellCallItem", Obj({"call_id": CALL_ID, "action": Obj({})}, required=("call_id",))
    ),
    "function_call_output": (
        OUTPUT_ITEM := Named(
            "FunctionCallOutputItem",
            Obj({"call_id": CALL_ID, "output": RESULT_CONTENT, **RESULT_FLAGS}, required=("call_id",)),
        )
    ),
    "custom_tool_call_output": OUTPUT_ITEM,
    "input_text": TEXT_BLOCK,
    "input_image": INPUT_IMAGE,
    "input_file": INPUT_FILE,
}

PART = Named(
    "Part",
    Tagged(
        "type",
        Obj(
            {
                "type": Str(1, "Part type: text, reasoning, tool, file, checkpoint, tool_use, ..."),
                "id": Str(1, "Part ID, unique within its message.", unicode=True),
                "messageID": Str(1, "Owning message ID.", unicode=True),
            },
            required=("type",),
        ),
        PART_VARIANTS,
        description="A part (behavior.md#parts). `type` is required; `id` is needed only to upsert or "
        "remove it later. The declared keys of the types listed are checked; any other type is the host's.",
    ),
)
STREAMED_PART = Named(
    "StreamedPart",
    Requiring(
        PART,
        ("id",),
        "A part sent on its own (`upsertParts`): it must carry an `id` so that later updates replace it.",
    ),
)

# -- session state (behavior.md#session-state) -------------------------------------------------------
# A task ID the host may send as a JSON integer (`3`): the session keeps it as its decimal string
# ("3"), the one form every ledger line, progress folder and task tool call names it by.
TASK_ID = AnyOf(
    (Str(1), Number(integer=True)),
    "`T1`, `T2`, …; children `T1.1`, …; an integer is kept as its decimal string (`3` as `'3'`).",
)
TASK_ID_KEYS = ("id", "parent_task_id")


def task_id_string(value: Any) -> Any:
    """An integer task ID as its decimal string (`3` -> `"3"`); any other value as it is."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def with_string_ids(task: Json) -> Json:
    """The task with integer IDs as decimal strings: the same dict when it has none (most hosts)."""
    if not any(
        isinstance(task.get(key), int) and not isinstance(task.get(key), bool) for key in TASK_ID_KEYS
    ):
        return task
    return {**task, **{key: task_id_string(task[key]) for key in TASK_ID_KEYS if key in task}}


TASK = Named(
    "Task",
    Obj(
        {
            "id": TASK_ID,
            "parent_task_id": AnyOf(
                (Str(), Number(integer=True)), "The parent's `id`; an integer as for `id`."
            ),
            "status": Str(description="`open`, `in_progress`, `blocked`, `done`, `abandoned`, or another."),
            "summary": TEXT,
            "created_at": Number(description="Milliseconds since the epoch; the ledger's order."),
            "ended_at": NUMBER,
            "cleanup_after": NUMBER,
        },
        required=("id", "status"),
        description="A task ledger entry (behavior.md#session-state).",
    ),
)
ACTOR = Named(
    "Actor",
    Obj(
        {
            "actorID": NON_EMPTY,
            "sessionID": TEXT,
            "status": Str(description="`pending`, `running`, or another."),
            "background": BOOL,
            "description": TEXT,
            "agent": TEXT,
            "lastTurnTime": NUMBER,
        },
        required=("actorID", "status"),
        description="An actor registry entry (behavior.md#session-state).",
    ),
)

# -- the request prefix (behavior.md#request-prefix, core/formats/prefix.py) ------------------------
SCHEMA = Obj({}, description="A JSON Schema.")
TOOL_FIELDS: dict[str, Kind] = {"name": TEXT, "description": TEXT, "strict": BOOL}
PREFIX_TOOL = Named(
    "PrefixTool",
    Obj(
        {
            **TOOL_FIELDS,
            "type": TEXT,
            "input_schema": SCHEMA,
            "inputSchema": SCHEMA,
            "parameters": SCHEMA,
            "format": SCHEMA,
            "function": Obj({**TOOL_FIELDS, "parameters": SCHEMA}),
            "custom": Obj({**TOOL_FIELDS, "format": SCHEMA}),
            "functionDeclarations": ListOf(
                Obj({**TOOL_FIELDS, "parameters": SCHEMA, "parametersJsonSchema": SCHEMA})
            ),
        },
        description="A tool definition in one of the shapes core/formats/prefix.py reads: Anthropic, "
        "AI SDK / MCP, OpenAI Chat or Responses, Gemini `functionDeclarations`.",
    ),
)
REQUEST_PREFIX = Named(
    "RequestPrefix",
    Obj(
        {
            "system": ListOf(
                AnyOf((TEXT, Obj({"text": TEXT}))), "System prompt parts: strings or `{text}` blocks."
            ),
            "tools": ListOf(PREFIX_TOOL, "Tool definitions."),
        },
        description="The host's frozen request prefix (behavior.md#request-prefix), kept verbatim.",
    ),
)

ALL = (MESSAGE_INFO, PART, STREAMED_PART, TASK, ACTOR, REQUEST_PREFIX)
