"""Checkpoint writer handlers: the handshake (checkpoint/writerStarted, /writerFinished) and the
kit (checkpoint/prepare, /commit; behavior.md#writer-kit)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.estimate.jstext import est
from ...core.outcomes import Built, Committed, Prepared, WriterFinish
from ...transport.jsonrpc_codec import EncodedJson
from ...wire import checkpoint as ck
from ...wire import session as w
from ..dispatch import WithRequest, encode_result, rpc_method
from .rebuild import build_fields, output_of
from .sessions import writer_info

if TYPE_CHECKING:
    from ..server import SidecarServer


# -- core -> wire ---------------------------------------------------------------------------------
def prepare_result(prepared: Prepared, fmt: str, host_view: bool = False) -> WithRequest:
    fields = build_fields(Built(prepared.revision, prepared.result), fmt, host_view)
    fields["warnings"] = [*fields["warnings"], *prepared.warnings]
    result = ck.PrepareResult.passing_through(
        **fields,
        watermark=prepared.watermark,
        started=prepared.started,
        stored_watermark=prepared.stored_watermark,
        checkpoint_path=prepared.checkpoint_path,
        current=prepared.current,
        instructions=prepared.instructions,
        instructions_tokens=est(prepared.instructions),
    )
    return WithRequest(result, prepared.result.request)


def finish_fields(done: WriterFinish) -> dict[str, Any]:
    """The fields of a `WriterFinishedResult` (also the first fields of `checkpoint/commit`'s)."""
    return dict(watermark=done.watermark, promoted=done.promoted, writer=writer_info(done.writer))


def commit_result(committed: Committed) -> ck.CommitResult:
    return ck.CommitResult(
        **finish_fields(committed.finish),
        path=committed.path,
        bytes_written=committed.bytes_written,
        created=committed.created,
        warnings=committed.warnings,
    )


def register(server: SidecarServer) -> None:
    @rpc_method(server, "checkpoint/writerStarted", w.WriterStartedParams)
    async def writer_started(ls: SidecarServer, p: w.WriterStartedParams) -> w.WriterStartedResult:
        start = ls.service.writer_started(p.session_id, p.watermark)
        return w.WriterStartedResult(state=start.state, watermark=start.watermark)

    @rpc_method(server, "checkpoint/writerFinished", w.WriterFinishedParams)
    async def writer_finished(ls: SidecarServer, p: w.WriterFinishedParams) -> w.WriterFinishedResult:
        done = ls.service.writer_finished(p.session_id, p.outcome, p.retryable)
        return w.WriterFinishedResult(**finish_fields(done))

    @rpc_method(server, "checkpoint/prepare", ck.PrepareParams)
    async def checkpoint_prepare(ls: SidecarServer, p: ck.PrepareParams) -> EncodedJson:
        # The answer (host text included) is encoded before the writer is registered.
        return ls.service.prepare_writer(
            p.session_id,
            p.watermark,
            output_of(p, ls.service.model_tool_prefix(p.session_id, None)),
            lambda prepared: encode_result(prepare_result(prepared, p.format, p.host_view)),
        )

    @rpc_method(server, "checkpoint/commit", ck.CommitParams)
    async def checkpoint_commit(ls: SidecarServer, p: ck.CommitParams) -> ck.CommitResult:
        return commit_result(ls.service.commit_checkpoint(p.session_id, p.content, p.watermark))
