"""The calls of the sidecar's model tools that a rebuilt text writes out (behavior.md#d18), parsed
back into `tools/call` arguments, with the text's placeholders filled in from the session.

`mimo_memory(operation="search", path="<that path>", query="<keyword>")` in the preamble stands
for a call on each `File:` path of the text; `<keyword>`, `<task ID>` are filled with a word and a
task of the session.
"""

from __future__ import annotations

import json
import re
from typing import Any

FILE_LINE = re.compile(r"^File: (.+)$", re.MULTILINE)
ARGUMENT = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\d+)')


def calls_in(text: str, prefix: str) -> list[tuple[str, str]]:
    """`(tool name, argument text)` of every `<prefix>history|memory|task(...)` call in `text`."""
    pattern = re.compile(
        re.escape(prefix) + r'(history|memory|task)\(((?:\w+=(?:"(?:[^"\\]|\\.)*"|\d+)(?:, )?)*)\)'
    )
    return [(prefix + m.group(1), m.group(2)) for m in pattern.finditer(text)]


def arguments_of(args: str) -> dict[str, Any]:
    return {key: json.loads(value) for key, value in ARGUMENT.findall(args)}


def resolved_calls(
    text: str, prefix: str, *, keyword: str, task_id: str | None
) -> list[tuple[str, dict[str, Any]]]:
    """Every call the text writes, placeholders filled: one per `File:` path for `<that path>`;
    calls naming `<task ID>` are dropped when the session has no task to name."""
    files = FILE_LINE.findall(text)
    out: list[tuple[str, dict[str, Any]]] = []
    for name, raw in calls_in(text, prefix):
        args = arguments_of(raw)
        if args.get("query") == "<keyword>":
            args["query"] = keyword
        if args.get("id") == "<task ID>":
            if task_id is None:
                continue
            args["id"] = task_id
        if args.get("path") == "<that path>":
            out += [(name, {**args, "path": path}) for path in files]
        else:
            out.append((name, args))
    return out
