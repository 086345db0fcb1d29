"""Session handlers: session/open, /sync, /get, /close (the writer handshake is in `checkpoint`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.outcomes import WriterSummary
from ...core.session.session import MessageUpsert, PartUpsert, SyncBatch
from ...service import OpenRequest
from ...wire import session as w
from ..dispatch import rpc_method

if TYPE_CHECKING:
    from ..server import SidecarServer


# -- wire -> core ---------------------------------------------------------------------------------
def batch_of(params: w.SyncParams) -> SyncBatch:
    return SyncBatch(
        upsert_messages=[MessageUpsert(m.info, m.parts, m.seq) for m in params.upsert_messages],
        upsert_parts=[
            PartUpsert(u.target, u.part, u.part_field, u.message_id_field) for u in params.upsert_parts
        ],
        remove_messages=list(params.remove_messages),
        remove_parts=[(r.message_id, r.part_id) for r in params.remove_parts],
        tasks=params.tasks,
        actors=params.actors,
        tool_name_map=params.tool_name_map,
        tool_pointers=params.tool_pointers.pointers() if params.tool_pointers is not None else None,
        # absent keeps the declaration, an explicit null removes it
        remove_tool_pointers=params.tool_pointers is None and "tool_pointers" in params.model_fields_set,
    )


# -- core -> wire ---------------------------------------------------------------------------------
def writer_info(writer: WriterSummary) -> w.WriterInfo:
    return w.WriterInfo.of_fields(writer)


def register(server: SidecarServer) -> None:
    @rpc_method(server, "session/open", w.OpenParams)
    async def session_open(ls: SidecarServer, p: w.OpenParams) -> w.OpenResult:
        request = OpenRequest(
            session_id=p.session_id,
            project_id=p.project_id,
            messages=[{"info": m.info, "parts": m.parts or [], "seq": m.seq} for m in p.messages],
            tasks=p.tasks,
            actors=p.actors,
            watermark=p.watermark,
            request_prefix=p.request_prefix,
            ids_ascending=p.ids_ascending,
            parent_id=p.parent.session_id if p.parent else None,
            parent_watermark=p.parent.watermark if p.parent else None,
            tool_name_map=p.tool_name_map,
            tool_pointers=p.tool_pointers.pointers() if p.tool_pointers is not None else None,
        )
        opened = ls.service.open(request, create_checkpoint=p.create_checkpoint)
        return w.OpenResult(
            session_id=p.session_id, revision=opened.revision, checkpoint_created=opened.checkpoint_created
        )

    @rpc_method(server, "session/sync", w.SyncParams)
    async def session_sync(ls: SidecarServer, p: w.SyncParams) -> w.SyncResult:
        return w.SyncResult(revision=ls.service.sync(p.session_id, batch_of(p), p.base_revision))

    @rpc_method(server, "session/get", w.SessionRef)
    async def session_get(ls: SidecarServer, p: w.SessionRef) -> w.SessionInfo:
        s = ls.service.describe(p.session_id)
        return w.SessionInfo.of_fields(s, writer=writer_info(s.writer))

    @rpc_method(server, "session/close", w.SessionRef)
    async def session_close(ls: SidecarServer, p: w.SessionRef) -> w.CloseResult:
        ls.service.close(p.session_id)
        return w.CloseResult()
