"""The sidecar's model tools (behavior.md#d18, protocol.md "Model tools"): what a rebuild took out of
the model's view, on demand.

- `history` (`history.py`): `around`, `search`, `result`: every stored message, in full;
- `memory` (`memory.py`): `search`, `read`: the memory files of the session, its project, the
  global root;
- `task` (`tasks.py`): `list`, `get`: the ledger, and one task's progress.md.

`definitions.py` holds their schemas in each format's tool shape; `answer.py` the budget every
answer keeps and its paging; `arguments.py` the checks of a call's arguments; `matching.py` the
bounded-time search; `transcript.py` a stored message written out in full; `context.py` what a
call reads. Pure: no I/O but confined reads under the memory root.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import texts
from ..errors import DomainError, ErrorCode
from ..words import MODEL_TOOL_NAMES
from . import history, memory, tasks
from .answer import ToolAnswer, ToolRefusal
from .arguments import Arguments
from .context import ToolContext
from .definitions import DEFINITIONS, prefix_tools, tools_in_format

TOOLS = {"history": history.call, "memory": memory.call, "task": tasks.call}


def tool_named(name: str, prefix: str) -> str:
    """The sidecar's tool that the model calls `name` (with `prefix`); DomainError when none is."""
    bare = name[len(prefix) :] if name.startswith(prefix) else None
    if bare not in MODEL_TOOL_NAMES:
        raise DomainError(
            ErrorCode.UNKNOWN_TOOL,
            texts.unknown_tool(name, [prefix + n for n in MODEL_TOOL_NAMES]),
            ("name",),
            {"tool": name},
        )
    return bare


def call_tool(ctx: ToolContext, name: str, arguments: Mapping[str, Any]) -> ToolAnswer:
    """Run one tool call. A mistake in the arguments is an answer with `is_error` (the model can
    act on it); an unknown tool name is a DomainError (the host's mistake)."""
    bare = tool_named(name, ctx.prefix)
    try:
        return TOOLS[bare](ctx, Arguments(name, arguments))
    except ToolRefusal as refusal:
        return ToolAnswer(str(refusal), is_error=True)


__all__ = [
    "DEFINITIONS",
    "ToolAnswer",
    "ToolContext",
    "call_tool",
    "prefix_tools",
    "tool_named",
    "tools_in_format",
]
