"""Model tool handlers: tools/list, tools/call (behavior.md#d18)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...wire import tools as w
from ..dispatch import rpc_method

if TYPE_CHECKING:
    from ..server import SidecarServer


def register(server: SidecarServer) -> None:
    @rpc_method(server, "tools/list", w.ToolsListParams)
    async def tools_list(ls: SidecarServer, p: w.ToolsListParams) -> w.ToolsListResult:
        prefix, tools = ls.service.list_tools(p.session_id, p.format, p.prefix)
        return w.ToolsListResult(format=p.format, prefix=prefix, tools=tools)

    @rpc_method(server, "tools/call", w.ToolsCallParams)
    async def tools_call(ls: SidecarServer, p: w.ToolsCallParams) -> w.ToolsCallResult:
        answer = ls.service.call_tool(p.session_id, p.name, p.arguments, p.prefix)
        return w.ToolsCallResult(
            content=[w.TextContent(text=answer.text)],
            is_error=answer.is_error,
            structured_content=answer.structured,
        )
