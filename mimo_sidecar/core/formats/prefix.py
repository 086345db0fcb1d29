"""The frozen request prefix in each format, with its hash (behavior.md#request-prefix).

`requestPrefix.system` items may be strings or `{"text": …}` objects (Anthropic text blocks
included). `requestPrefix.tools` items may be in any of these shapes, recognised in this order:

- Gemini `{"functionDeclarations": [...]}` (each declaration is one tool);
- OpenAI Chat `{"type": "function", "function": {"name", "description"?, "parameters"?}}`;
- OpenAI Responses `{"type": "function", "name", "parameters"?}` and freeform
  `{"type": "custom", "name", "description"?, "format"?}`;
- Anthropic `{"name", "input_schema", "description"?}`; AI SDK / MCP `{"name", "inputSchema" |
  "parameters", "description"?}`; a bare `{"name"}`.

Anything else (provider server tools, unknown shapes) is passed through unchanged and reported.

Per format, `request` holds the prefix fields of the provider's request body:
`anthropic` `{"system": [text blocks], "tools": [...]}`; `openai-chat` `{"messages": [system or
developer message], "tools": [...]}` (put `messages` in front of the history); `openai-responses`
`{"instructions": str, "tools": [...]}`; `gemini` `{"systemInstruction": {"parts": [...]},
"tools": [{"functionDeclarations": [...]}]}`; `ai-sdk`: none (the stored prefix is returned as
is). Empty fields are left out. The hash is SHA-256 over the sorted-key JSON of `request` (over
the stored `{"system", "tools"}` for `ai-sdk`): equal hashes mean equal prefix bytes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import orjson

from ..estimate.jsjson import js_stringify
from ..session.shapes import block_text
from . import report as r
from .cache import cache_control
from .model import Json

EMPTY_SCHEMA: Json = {"type": "object", "properties": {}}
FREEFORM_SCHEMA: Json = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}
DEVELOPER_ROLE_MODELS = re.compile(r"^(o\d|gpt-5)")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str | None
    schema: Json
    custom: bool = False
    format: Json | None = None  # a freeform tool's grammar
    strict: bool | None = None


def system_texts(system: list[Any]) -> list[str]:
    """The non-empty texts of `requestPrefix.system`: text items as they are, other objects as JSON."""
    out = []
    for item in system:
        text = block_text(item)
        if text is None and item is not None:
            text = js_stringify(item) or ""
        out.append(text or "")
    return [t for t in out if t]


def tool_specs(tool: Any) -> list[ToolSpec] | None:
    """The tools one `requestPrefix.tools` item declares, or None when its shape is unknown."""
    if not isinstance(tool, dict):
        return None
    if isinstance(tool.get("functionDeclarations"), list):
        specs = [
            _spec(d, d.get("parametersJsonSchema") or d.get("parameters"))
            for d in tool["functionDeclarations"]
        ]
        return None if None in specs else [s for s in specs if s is not None]
    fn = tool.get("function")
    if tool.get("type") == "function" and isinstance(fn, dict):
        spec = _spec(fn, fn.get("parameters"), fn.get("strict"))
    elif tool.get("type") == "custom":
        nested = tool.get("custom")
        custom: Json = nested if isinstance(nested, dict) else tool
        spec = _spec(custom, FREEFORM_SCHEMA)
        if spec is not None:
            fmt = custom.get("format")
            spec = ToolSpec(
                spec.name, spec.description, FREEFORM_SCHEMA, True, fmt if isinstance(fmt, dict) else None
            )
    elif tool.get("type") not in (None, "function", "custom"):
        return None  # a provider's server tool (web search...): not convertible
    else:
        schema = tool.get("input_schema", tool.get("inputSchema", tool.get("parameters")))
        spec = _spec(tool, schema, tool.get("strict"))
    return None if spec is None else [spec]


def _spec(holder: Json, schema: Any, strict: Any = None) -> ToolSpec | None:
    name = holder.get("name")
    if not isinstance(name, str) or not name:
        return None
    description = holder.get("description")
    return ToolSpec(
        name,
        description if isinstance(description, str) else None,
        schema if isinstance(schema, dict) else EMPTY_SCHEMA,
        strict=strict if isinstance(strict, bool) else None,
    )


def _with_description(out: Json, spec: ToolSpec) -> Json:
    if spec.description is not None:
        out["description"] = spec.description
    return out


def tool_in_format(fmt: str, spec: ToolSpec) -> Json:
    """One tool in the provider tool shape of `fmt` (Gemini's for any other)."""
    if fmt == "anthropic":
        return {"name": spec.name, **_with_description({}, spec), "input_schema": spec.schema}
    if fmt == "openai-chat":
        if spec.custom:
            custom = _with_description({"name": spec.name}, spec)
            if spec.format is not None:
                custom["format"] = spec.format
            return {"type": "custom", "custom": custom}
        return {
            "type": "function",
            "function": {"name": spec.name, **_with_description({}, spec), "parameters": spec.schema},
        }
    if fmt == "openai-responses":
        if spec.custom:
            out = _with_description({"type": "custom", "name": spec.name}, spec)
            if spec.format is not None:
                out["format"] = spec.format
            return out
        out = _with_description({"type": "function", "name": spec.name}, spec)
        return {**out, "parameters": spec.schema, "strict": bool(spec.strict)}
    return {"name": spec.name, **_with_description({}, spec), "parametersJsonSchema": spec.schema}


def _tools(fmt: str, tools: list[Any], report: r.Report) -> list[Json]:
    out: list[Any] = []
    for i, tool in enumerate(tools):
        specs = tool_specs(tool)
        if specs is None:
            report.warn(
                r.TOOL_NOT_CONVERTED, f"requestPrefix.tools[{i}] has no recognised shape; sent unchanged"
            )
            out.append(tool)
        else:
            out += [tool_in_format(fmt, s) for s in specs]
    return out


def render_prefix(
    fmt: str,
    system: list[Any],
    tools: list[Any],
    *,
    model_id: str | None,
    cache_ttl: str | None,
    report: r.Report,
) -> Json | None:
    """The prefix fields of `fmt`'s request body (None for `ai-sdk`)."""
    if fmt == "ai-sdk":
        return None
    texts = system_texts(system)
    converted = _tools(fmt, tools, report)
    request: Json = {}
    if fmt == "anthropic":
        if texts:
            request["system"] = [{"type": "text", "text": t} for t in texts]
        if converted:
            request["tools"] = converted
        if cache_ttl is not None:
            holder = request.get("system") or request.get("tools")
            if holder:  # tools → system: the last block of the prefix covers both
                holder[-1] = {**holder[-1], "cache_control": cache_control(cache_ttl)}
        return request
    if fmt == "openai-chat":
        if texts:
            role = "developer" if model_id and DEVELOPER_ROLE_MODELS.search(model_id) else "system"
            content: Any = texts[0] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts]
            request["messages"] = [{"role": role, "content": content}]
    elif fmt == "openai-responses":
        if texts:
            request["instructions"] = "\n\n".join(texts)
    elif texts:  # gemini
        request["systemInstruction"] = {"parts": [{"text": t} for t in texts]}
    if converted:
        request["tools"] = [{"functionDeclarations": converted}] if fmt == "gemini" else converted
    return request


def declared_tool_names(tools: list[Any]) -> set[str]:
    """The names of the tools `requestPrefix.tools` declares, in any recognised shape (and the
    `name` of an unknown one, a provider's server tool, when it has one)."""
    names: set[str] = set()
    for tool in tools:
        specs = tool_specs(tool)
        if specs is not None:
            names.update(s.name for s in specs)
        elif isinstance(tool, dict) and isinstance(tool.get("name"), str):
            names.add(tool["name"])
    return names


TOOL_BLOCKS = frozenset({"tool_use", "tool_result"})


def warn_tools_missing(fmt: str, request: Json, messages: list[Json], report: r.Report) -> None:
    """Anthropic answers 400 ("Requests which include `tool_use` or `tool_result` blocks must
    define tools") when the history holds calls but `tools` is absent: say so. An imported
    transcript has no tool definitions (Claude Code and Cline do not record them); the host
    declares its own in `requestPrefix.tools`."""
    if fmt != "anthropic" or request.get("tools"):
        return
    content = (m.get("content") for m in messages)
    if any(isinstance(c, list) and any(b.get("type") in TOOL_BLOCKS for b in c) for c in content):
        report.warn(
            r.TOOLS_MISSING,
            "the history holds tool calls but requestPrefix.tools is empty: Anthropic rejects such a "
            "request; declare the host's tools in requestPrefix",
        )


def prefix_hash(system: list[Any], tools: list[Any], request: Json | None) -> str:
    body = {"system": system, "tools": tools} if request is None else request
    return "sha256:" + hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()
