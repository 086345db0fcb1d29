"""The RPC handlers, one module per area. Each handler validates (via `rpc_method`), calls the
`SidecarService` and converts its answer (core types) to wire models: no decisions, no wording.

A new method: a `MethodSpec` in `wire/registry.py` with its models, a service method returning a
core type, and a handler of a few lines here:

    @rpc_method(server, "area/name", w.NameParams)
    async def area_name(ls: SidecarServer, p: w.NameParams) -> w.NameResult:
        return name_result(ls.service.name(p.session_id, ...))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import checkpoint, lifecycle, rebuild, sessions, testhooks, tools

if TYPE_CHECKING:
    from ..server import SidecarServer

AREAS = (lifecycle, sessions, checkpoint, rebuild, tools, testhooks)


def register_all(server: SidecarServer) -> None:
    """Register every area's handlers on `server`. A new area adds its module to `AREAS`."""
    for area in AREAS:
        area.register(server)
