"""Wire models of the model tools: tools/list and tools/call (behavior.md#d18, protocol.md "Model tools").

`tools/call` answers in MCP's `CallToolResult` shape (`content` blocks, `isError`,
`structuredContent`), so that a host that bridges MCP tools hands the answer to the model as it is.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..core.words import RequestFormat
from .common import Json, NonEmptyStr, Params, Result, SessionId, ToolPrefix
from .rebuild import FormatParam


class ToolsListParams(Params):
    session_id: SessionId | None = Field(
        None,
        description="A session whose `toolPointers` declare the prefix to use (when `prefix` is absent).",
    )
    format: FormatParam = "ai-sdk"
    prefix: ToolPrefix | None = Field(
        None, description="Prefix of the names; default: the session's declared one, else none."
    )


class ToolsListResult(Result):
    format: RequestFormat = Field(
        description="The tool shape of `tools`: the format's, as `request/build` sends tools."
    )
    prefix: str = Field(description='The prefix the names carry (`""` for none).')
    tools: list[Json] = Field(
        description="The tools in the shape of `format`, ready for the request's `tools`: ai-sdk (and MCP) "
        "`{name, description, inputSchema}`, anthropic `{name, description, input_schema}`, openai-chat "
        "`{type: function, function}`, openai-responses `{type: function, name, parameters, strict}`, "
        "gemini one tool `{functionDeclarations: [{name, description, parametersJsonSchema}, ...]}`."
    )


class ToolsCallParams(Params):
    session_id: SessionId
    name: NonEmptyStr = Field(description="The tool's name as the model called it (with the prefix).")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The call's arguments, as the model sent them (an object)."
    )
    prefix: ToolPrefix | None = Field(
        None, description="The prefix `name` carries; default: the session's declared one, else none."
    )


class TextContent(Result):
    type: Literal["text"] = "text"
    text: str


class ToolsCallResult(Result):
    """MCP's `CallToolResult`."""

    content: list[TextContent] = Field(description="One text block: what the model reads.")
    is_error: bool = Field(
        description="The call's arguments could not be acted on; the text says what to send instead. "
        "Hand it to the model like any result."
    )
    structured_content: Json = Field(
        default_factory=dict,
        description="The answer's facts for a program: offsets to continue from (`nextOffset`, null at the "
        "end), match counts, the IDs resolved.",
    )
