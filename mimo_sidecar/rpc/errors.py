"""The error table of the protocol: every code the sidecar answers with, its name and meaning.

Standard JSON-RPC/LSP codes are used for transport and validation problems; application errors use
codes from 1001 up, outside the range JSON-RPC reserves (-32768..-32000) and the codes LSP clients
such as vscode-jsonrpc generate themselves. 1010 and above belong to the rebuild methods.

Application errors carry `data` with at least `name` and, when one input is at fault, `field` (the
camelCase path of the offending param, with list indexes as numbers: `upsertParts.0.part.id`).
protocol.md documents every entry of `ERRORS`; tests/unit/test_protocol_doc.py checks that it does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcException

from ..core.session import SessionError


@dataclass(frozen=True)
class ErrorSpec:
    code: int
    name: str
    meaning: str


PARSE_ERROR = ErrorSpec(
    -32700, "ParseError", "The frame body is not valid UTF-8 JSON (answered with id null)."
)
INVALID_REQUEST = ErrorSpec(
    -32600,
    "InvalidRequest",
    "Not a JSON-RPC 2.0 request object, a batch (arrays are not supported), a second initialize, "
    "or a request after shutdown.",
)
METHOD_NOT_FOUND = ErrorSpec(-32601, "MethodNotFound", "No such method.")
INVALID_PARAMS = ErrorSpec(
    -32602,
    "InvalidParams",
    "Params fail the method's schema; the message names each field path and data.errors lists them.",
)
INTERNAL_ERROR = ErrorSpec(
    -32603, "InternalError", "A bug in the sidecar. Generic message, no traceback; details go to its log."
)
SERVER_NOT_INITIALIZED = ErrorSpec(
    -32002, "ServerNotInitialized", "A request other than initialize before initialize succeeded."
)
REQUEST_CANCELLED = ErrorSpec(
    -32800, "RequestCancelled", "Cancelled by $/cancelRequest, or by shutdown after the drain bound."
)
SESSION_NOT_FOUND = ErrorSpec(1001, "SessionNotFound", "No open session has this sessionId.")
REVISION_CONFLICT = ErrorSpec(
    1002,
    "RevisionConflict",
    "session/sync baseRevision is stale; nothing was applied. data: {expected, actual}.",
)
MESSAGE_NOT_FOUND = ErrorSpec(1003, "MessageNotFound", "A referenced message ID is not in the session.")
SESSION_ALREADY_OPEN = ErrorSpec(1004, "SessionAlreadyOpen", "session/open for a session that is open.")
INVALID_SESSION_DATA = ErrorSpec(
    1005,
    "InvalidSessionData",
    "Host data the schema accepts but the session cannot (duplicate IDs in a batch, a bad time.created...); "
    "nothing was applied.",
)
WRITER_STATE = ErrorSpec(1006, "WriterStateError", "checkpoint/writerFinished with no writer in flight.")
WATERMARK_UNAVAILABLE = ErrorSpec(
    1007, "WatermarkUnavailable", "checkpoint/writerStarted without a watermark, and none can be computed."
)

ERRORS: tuple[ErrorSpec, ...] = (
    PARSE_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    INVALID_PARAMS,
    INTERNAL_ERROR,
    SERVER_NOT_INITIALIZED,
    REQUEST_CANCELLED,
    SESSION_NOT_FOUND,
    REVISION_CONFLICT,
    MESSAGE_NOT_FOUND,
    SESSION_ALREADY_OPEN,
    INVALID_SESSION_DATA,
    WRITER_STATE,
    WATERMARK_UNAVAILABLE,
)

# core/state SessionError.code -> table entry. The rebuild issue extends this mapping.
SESSION_ERROR_CODES: dict[str, ErrorSpec] = {
    "session-not-found": SESSION_NOT_FOUND,
    "revision-conflict": REVISION_CONFLICT,
    "message-not-found": MESSAGE_NOT_FOUND,
    "session-exists": SESSION_ALREADY_OPEN,
    "invalid": INVALID_SESSION_DATA,
    "writer-state": WRITER_STATE,
    "watermark-unavailable": WATERMARK_UNAVAILABLE,
    "boundary-id-required": INVALID_PARAMS,  # a param the session's ID scheme makes required
}

INTERNAL_MESSAGE = "internal error in the sidecar (details are in its log)"

_INDEX = re.compile(r"\[(\d+)\]")


def field_path(path: str) -> str:
    """`upsertMessages[0].info.id` -> `upsertMessages.0.info.id` (one path style on the wire)."""
    return _INDEX.sub(r".\1", path)


def rpc_error(spec: ErrorSpec, message: str, data: dict[str, Any] | None = None) -> JsonRpcException:
    payload: dict[str, Any] = {"name": spec.name}
    if data:
        payload.update(data)
    return JsonRpcException(message=message, code=spec.code, data=payload)


def from_session_error(method: str, err: SessionError) -> JsonRpcException:
    """Map a domain error to its table entry; the message starts with the method and the field."""
    spec = SESSION_ERROR_CODES.get(err.code)
    if spec is None:
        spec = INVALID_SESSION_DATA
    text = str(err)
    data: dict[str, Any] = {}
    if err.field is not None:
        fld = field_path(err.field)
        if text.startswith(err.field):
            text = fld + text[len(err.field) :]
        data["field"] = fld
    if isinstance(err.data, dict):
        data.update(err.data)
    elif err.data is not None:
        data["detail"] = err.data
    if spec is INVALID_PARAMS and err.field is not None:  # -32602 always lists its problems
        data["errors"] = [{"field": field_path(err.field), "message": str(err), "type": "missing"}]
    return rpc_error(spec, f"{method}: {text}", data)
