"""`inspect --json`: an `Inspection` as one JSON object, keys in a fixed order (docs/inspect.md).

Keys are camelCase, as on the wire; the objects that mirror a protocol object (the trigger, the
watermark, the section report) use its field names, so a host author reads them the same way.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic.alias_generators import to_camel

from ..core.rebuild.render import RenderResult
from ..core.rebuild.watermark import WatermarkResult
from ..wire import rebuild as wire
from ..wire.common import Result
from .run import Inspection, RequestSide

SCHEMA_VERSION = 1
Json = dict[str, Any]


def inspection_json(ins: Inspection, *, include_text: bool = False) -> Json:
    return {
        "inspect": SCHEMA_VERSION,
        "source": _source(ins),
        "model": _model(ins),
        "trigger": _trigger(ins),
        "watermark": _watermark(ins),
        "memory": {
            "root": None if ins.memory.temporary else ins.memory.root,
            "temporary": ins.memory.temporary,
            "checkpoint": ins.memory.checkpoint,
        },
        "preview": {
            "outcome": ins.computed.preview_outcome,
            "report": None if ins.computed.preview is None else _render_report(ins.computed.preview, False),
        },
        "rebuild": _rebuild(ins, include_text),
        "request": {
            "before": {
                **_side(ins.before),
                "upToWatermarkTokens": ins.covered_tokens,
                "afterWatermarkTokens": ins.before.estimated_tokens - ins.covered_tokens,
            },
            "after": None
            if ins.after is None
            else {
                **_side(ins.after),
                "boundaryTokens": ins.boundary_tokens,
                "keptTokens": ins.after.estimated_tokens - ins.boundary_tokens,
            },
            "sizes": None if ins.sizes is None else _wire(wire.RequestSizes.of(ins.sizes)),
        },
        "estimateAccuracy": [_wire(wire.EstimateAccuracy.of(a)) for a in ins.computed.accuracy],
        "fidelity": None if ins.fidelity is None else _wire(wire.FidelityReport.of(ins.fidelity)),
        "modelView": _model_view(ins),
        "toolCalls": [
            {
                "name": s.name,
                "arguments": s.arguments,
                "isError": s.answer.is_error,
                "text": s.answer.text,
                "structuredContent": s.answer.structured,
            }
            for s in ins.tool_samples
        ],
        "warnings": list(ins.warnings),
    }


def _model_view(ins: Inspection) -> Json:
    view = ins.model_view
    return {
        "toolPointers": "declared" if view.pointers is not None else "reference",
        "sidecarTools": view.sidecar_prefix,
        "toolsKnown": view.held is not None,
        "toolsNamed": [{"name": name, "held": view.holds(name)} for name in view.named],
    }


def _source(ins: Inspection) -> Json:
    s = ins.source
    return {
        "path": s.path,
        "format": s.format,
        "sessionId": s.session_id,
        "messages": s.messages,
        "slices": dict(s.slices),
        "mainView": ins.main_view,
        "notImported": s.not_imported,
        "adjusted": s.adjusted,
    }


def _model(ins: Inspection) -> Json:
    m = ins.model.limits
    return {
        "contextWindow": m.context_window,
        "inputLimit": m.input_limit,
        "maxOutputTokens": m.max_output_tokens,
        "providerId": m.provider_id or None,
        "modelId": m.model_id or None,
        "source": ins.model.source,
    }


def _trigger(ins: Inspection) -> Json:
    return _fields(ins.computed.trigger)


def _watermark(ins: Inspection) -> Json:
    w = ins.watermark
    return {
        "messageId": w.message_id,
        "source": w.source,
        "indexInView": w.position,
        "writer": _writer(ins.writer_watermark),
    }


def _writer(wm: WatermarkResult | None) -> Json | None:
    if wm is None:
        return None
    return {
        "messageId": wm.id,
        "index": wm.index,
        "tailTokens": wm.tail_tokens,
        "tailTextBlocks": wm.tail_text_blocks,
        "adjusted": wm.adjusted,
    }


def _rebuild(ins: Inspection, include_text: bool) -> Json:
    res = ins.insertion
    return {
        "outcome": ins.outcome,
        "detail": ins.inserted.detail,
        "statusText": ins.inserted.status_text,
        "boundaryMessageId": res.message["info"]["id"] if res is not None and res.message else None,
        "digestUpTo": res.digest_up_to if res is not None else None,
        "compactedParts": len(res.compacted) if res is not None else 0,
        "report": _render_report(res.render, include_text) if res is not None and res.render else None,
    }


def _render_report(r: RenderResult, include_text: bool) -> Json:
    report: Json = {
        "sections": [_fields(s) for s in r.sections],
        "totalTokens": r.total_tokens,
        "totalCap": r.total_cap,
        "overCap": r.over_cap,
        "hasActivity": r.has_activity,
        "shedUnits": list(r.shed_units),
        "emptyReason": r.empty_reason,
    }
    if include_text:
        report["text"] = r.text
    return report


def _side(side: RequestSide) -> Json:
    return {
        "messages": side.messages,
        "storedMessages": side.stored_messages,
        "collapsedMessages": side.collapsed,
        "estimatedTokens": side.estimated_tokens,
    }


def _fields(record: Any) -> Json:
    """A core dataclass as a JSON object: its fields in their order, named in camelCase."""
    return {to_camel(k): list(v) if isinstance(v, tuple) else v for k, v in asdict(record).items()}


def _wire(model: Result) -> Json:
    """A protocol object as the protocol serialises it (camelCase, every key present)."""
    data: Json = model.model_dump(mode="json", by_alias=True)
    return data
