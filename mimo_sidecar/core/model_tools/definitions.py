"""The definitions of the sidecar's model tools, in each request format's own tool shape
(behavior.md#d18, protocol.md "Model tools").

One JSON Schema per tool; `tools/list` and `request/build`'s `sidecarTools` put them in the shape
of the format: the AI SDK's and MCP's `{name, description, inputSchema}`, and each provider's as the
frozen prefix converts a host's own tools (`formats.prefix`). A host may prefix the names
(`mimo_history`) so that they cannot clash with its own tools.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import texts
from ..formats.prefix import ToolSpec, tool_in_format
from ..session.message import Json
from ..words import ModelToolName, RequestFormat

OFFSET: Json = {"type": "integer", "minimum": 0, "description": texts.ARG_OFFSET}
QUERY: Json = {"type": "string", "description": texts.ARG_QUERY}
REGEX: Json = {"type": "boolean", "description": texts.ARG_REGEX}


@dataclass(frozen=True)
class ToolDefinition:
    name: ModelToolName
    description: str
    input_schema: Json

    def spec(self, prefix: str) -> ToolSpec:
        return ToolSpec(prefix + self.name, self.description, self.input_schema)

    def shaped(self, fmt: RequestFormat, prefix: str) -> Json:
        """This tool in the tool shape of `fmt`."""
        if fmt == "ai-sdk":
            return {
                "name": prefix + self.name,
                "description": self.description,
                "inputSchema": self.input_schema,
            }
        return tool_in_format(fmt, self.spec(prefix))


def _schema(operations: list[str], properties: Json) -> Json:
    return {
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": operations, "description": texts.ARG_OPERATION},
            **properties,
        },
        "required": ["operation"],
        "additionalProperties": False,
    }


HISTORY = ToolDefinition(
    "history",
    texts.HISTORY_TOOL_DESCRIPTION,
    _schema(
        ["around", "search", "result"],
        {
            "messageID": {"type": "string", "description": texts.ARG_MESSAGE_ID},
            "before": {"type": "integer", "minimum": 0, "maximum": 20, "description": texts.ARG_BEFORE},
            "after": {"type": "integer", "minimum": 0, "maximum": 20, "description": texts.ARG_AFTER},
            "query": QUERY,
            "regex": REGEX,
            "callID": {"type": "string", "description": texts.ARG_CALL_ID},
            "offset": OFFSET,
        },
    ),
)
MEMORY = ToolDefinition(
    "memory",
    texts.MEMORY_TOOL_DESCRIPTION,
    _schema(
        ["search", "read"],
        {
            "query": QUERY,
            "regex": REGEX,
            "path": {"type": "string", "description": texts.ARG_PATH},
            "offset": OFFSET,
        },
    ),
)
TASK = ToolDefinition(
    "task",
    texts.TASK_TOOL_DESCRIPTION,
    _schema(["list", "get"], {"id": {"type": "string", "description": texts.ARG_TASK_ID}, "offset": OFFSET}),
)
DEFINITIONS: dict[ModelToolName, ToolDefinition] = {d.name: d for d in (HISTORY, MEMORY, TASK)}


def tools_in_format(fmt: RequestFormat, prefix: str = "") -> list[Json]:
    """Every model tool in the shape of `fmt`, names prefixed with `prefix`: for Gemini, one tool
    holding the three function declarations, as its `tools` takes them."""
    shaped = [d.shaped(fmt, prefix) for d in DEFINITIONS.values()]
    return [{"functionDeclarations": shaped}] if fmt == "gemini" else shaped


def prefix_tools(prefix: str = "") -> list[Json]:
    """The tools as `requestPrefix.tools` items (the AI SDK / MCP shape, which every format converts)."""
    return tools_in_format("ai-sdk", prefix)
