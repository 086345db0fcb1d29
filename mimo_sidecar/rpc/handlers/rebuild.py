"""Rebuild handlers: rebuild/compute, rebuild/insert, request/build (status: `rpc.status`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.formats import BuildOutput, Target
from ...core.outcomes import Built, Computed, Inserted
from ...core.rebuild.render import RenderResult
from ...core.request.assembly import host_view as request_host_view
from ...core.words import PreviewMode
from ...service import InsertRequest
from ...transport.jsonrpc_codec import EncodedJson
from ...wire import rebuild as w
from ...wire.checkpoint import PrepareParams
from ..dispatch import WithRequest, encode_result, rpc_method

if TYPE_CHECKING:
    from ..server import SidecarServer


# -- wire -> core ---------------------------------------------------------------------------------
def target_of(t: w.BuildTarget | None) -> Target | None:
    if t is None:
        return None
    return Target(t.provider_id, t.model_id, t.thinking, t.images, t.tool_result_media, given=True)


def output_of(p: w.BuildParams | PrepareParams, declared_prefix: str = "") -> BuildOutput:
    """The output options; the sidecar's tools' prefix defaults to the session's declared one."""
    tools = p.sidecar_tools
    prefix = None if tools is None else (tools.prefix if tools.prefix is not None else declared_prefix)
    return BuildOutput(p.format, target_of(p.target), p.cache.ttl if p.cache else None, prefix)


def insert_request(p: w.InsertParams) -> InsertRequest:
    return InsertRequest(
        session_id=p.session_id,
        reason=p.reason,
        agent_id=p.agent_id,
        digest_up_to=p.digest_up_to,
        boundary_id=p.boundary_message_id,
        agent=p.agent,
        model={"providerID": p.model.provider_id, "modelID": p.model.model_id} if p.model else None,
        tool_name_map=p.tool_name_map,
    )


# -- core -> wire ---------------------------------------------------------------------------------
def report_of(rendered: RenderResult, include_text: bool = False) -> w.RenderReport:
    return w.RenderReport.of_fields(
        rendered,
        sections=[w.SectionInfo.of_fields(s) for s in rendered.sections],
        shed_units=list(rendered.shed_units),
        text=rendered.text if include_text else None,
    )


def preview_mode(preview: bool | PreviewMode) -> PreviewMode:
    """`preview` as hosts wrote it before the modes: `true` always, `false` never."""
    if isinstance(preview, bool):
        return "always" if preview else "never"
    return preview


def compute_result(computed: Computed, include_text: bool) -> w.ComputeResult:
    res = computed.result
    t, wm = res.trigger, res.watermark
    return w.ComputeResult(
        revision=computed.revision,
        trigger=w.TriggerInfo.of_fields(t, usage_pending=t.usage_recovered, warnings=list(t.warnings)),
        watermark=None if wm is None else w.WatermarkInfo.of_fields(wm, message_id=wm.id),
        stored_watermark=res.stored_watermark,
        writer_in_flight=computed.writer_in_flight,
        preview_computed=res.preview_computed,
        preview=None
        if res.preview is None or res.fidelity is None
        else w.PreviewInfo(
            outcome=res.preview_outcome or "insert-failed",
            report=report_of(res.preview, include_text),
            fidelity=w.FidelityReport.of(res.fidelity),
            sizes=w.RequestSizes.of(res.sizes) if res.sizes is not None else None,
        ),
        estimate_accuracy=[w.EstimateAccuracy.of(a) for a in res.accuracy],
    )


def insert_result(inserted: Inserted) -> w.InsertResult:
    res = inserted.result
    report = report_of(res.render) if res is not None and res.render is not None else None
    wait = inserted.wait
    notice = inserted.notice
    return w.InsertResult(
        outcome=inserted.outcome,
        revision=inserted.revision,
        message=res.message if res else None,
        compacted=[w.CompactedPart.of_fields(m) for m in (res.compacted if res else [])],
        sections=report.sections if report else [],
        report=report,
        watermark=res.watermark if res else None,
        digest_up_to=res.digest_up_to if res else None,
        wait=None if wait is None else w.WaitInfo.of_fields(wait),
        status_text=inserted.status_text,
        notice=None if notice is None else w.Notice(kind=notice.kind, text=notice.text),
        detail=inserted.detail,
        fidelity=w.FidelityReport.of(res.fidelity) if res and res.fidelity else None,
        sizes=w.RequestSizes.of(res.sizes) if res and res.sizes else None,
        warnings=res.warnings if res else [],
    )


def build_fields(built: Built, fmt: str, host_view: bool = False) -> dict[str, Any]:
    """The fields of a `BuildResult` (also the first fields of `checkpoint/prepare`'s result); with
    `host_view`, `view` too (the request in the host's stored shape)."""
    res = built.result
    return dict(
        revision=built.revision,
        prefix=w.RequestPrefixInfo(
            system=res.prefix.system, tools=res.prefix.tools, hash=res.prefix.hash, request=res.prefix.request
        ),
        format=fmt,
        messages=res.request.messages,
        sources=res.request.sources,
        source_groups=res.request.source_groups,
        call_id_map=res.request.call_id_map,
        overrides=res.request.overrides,
        estimated_tokens=res.request.estimated_tokens,
        collapsed_message_ids=res.request.collapsed_ids,
        reminder_added=res.reminder_added,
        usage_pending=res.usage_pending,
        warnings=res.request.warnings,
        view=request_host_view(res.request.kept, res.reminder) if host_view else None,
    )


def build_result(built: Built, fmt: str, host_view: bool = False) -> WithRequest:
    result = w.BuildResult.passing_through(**build_fields(built, fmt, host_view))
    return WithRequest(result, built.result.request)


def register(server: SidecarServer) -> None:
    @rpc_method(server, "rebuild/compute", w.ComputeParams)
    async def rebuild_compute(ls: SidecarServer, p: w.ComputeParams) -> w.ComputeResult:
        computed = ls.service.compute(
            p.session_id,
            agent_id=p.agent_id,
            usage=p.usage.model_dump() if p.usage else None,
            model=p.model.limits() if p.model else None,
            preview=preview_mode(p.preview),
        )
        return compute_result(computed, p.include_text)

    @rpc_method(server, "rebuild/insert", w.InsertParams)
    async def rebuild_insert(ls: SidecarServer, p: w.InsertParams) -> EncodedJson:
        # The answer is encoded before the boundary is inserted: no insert the host is not told of.
        return await ls.service.insert(insert_request(p), lambda done: encode_result(insert_result(done)))

    @rpc_method(server, "request/build", w.BuildParams)
    async def request_build(ls: SidecarServer, p: w.BuildParams) -> WithRequest:
        output = output_of(p, ls.service.model_tool_prefix(p.session_id, None))
        if p.purpose == "writer":
            writer = ls.service.build_for_writer(p.session_id, p.up_to, output)
            return build_result(writer, p.format, p.host_view)
        built = ls.service.build(
            p.session_id,
            agent_id=p.agent_id,
            collapse_tail=p.collapse_tail,
            shell_style=p.invocation_style == "shell",
            has_actor_tool=p.has_actor_tool,
            memory_reminder=p.memory_reminder,
            output=output,
        )
        return build_result(built, p.format, p.host_view)
