"""The error table of the protocol: every code the sidecar answers with, its name and meaning.

Standard JSON-RPC/LSP codes are used for transport and validation problems; application errors use
codes from 1001 up, outside the range JSON-RPC reserves (-32768..-32000) and the codes LSP clients
such as vscode-jsonrpc generate themselves. 1010 belongs to the rebuild methods, 1011 to the model tools,
1012 to request/build.

Application errors carry `data` with at least `name` and, when one input is at fault, `field` (the
camelCase path of the offending param, with list indexes as numbers: `upsertParts.0.part.id`).
protocol.md documents every entry of `ERRORS`; tests/unit/test_protocol_doc.py checks that it does.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

from ..core.errors import DomainError, ErrorCode

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ErrorSpec:
    code: int
    name: str
    meaning: str


PARSE_ERROR = ErrorSpec(
    -32700,
    "ParseError",
    "The frame body is not valid UTF-8 JSON, or the bytes where a frame should be are not one "
    "(answered with id null).",
)
INVALID_REQUEST = ErrorSpec(
    -32600,
    "InvalidRequest",
    "Not a JSON-RPC 2.0 request object, a batch (arrays are not supported), an id that is not a "
    "string or a 64-bit integer, a frame over the maximum frame size, a frame nested deeper than "
    "1024 levels, a second initialize, or a request after shutdown.",
)
METHOD_NOT_FOUND = ErrorSpec(-32601, "MethodNotFound", "No such method. data: {method}.")
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
WRITER_STATE = ErrorSpec(
    1006,
    "WriterStateError",
    "checkpoint/writerFinished or checkpoint/commit with no writer in flight, or a watermark that is not "
    "the in-flight writer's (checkpoint/commit, checkpoint/prepare).",
)
WATERMARK_UNAVAILABLE = ErrorSpec(
    1007,
    "WatermarkUnavailable",
    "checkpoint/writerStarted or checkpoint/prepare without a watermark, and none can be computed.",
)
INVALID_CHECKPOINT = ErrorSpec(
    1008,
    "InvalidCheckpointContent",
    "checkpoint/commit content that is not text (NUL, lone surrogate), blank, or over "
    "checkpoint.commit_max_bytes; nothing was written. data: {reason, bytes?, limit?}.",
)
MEMORY_WRITE_FAILED = ErrorSpec(
    1009,
    "MemoryWriteFailed",
    "checkpoint/commit or session/open createCheckpoint could not write checkpoint.md (checkpoint/prepare: "
    "refused alike): memory writing is disabled, the path would leave the memory root, or the system "
    "refused; nothing changed. "
    "data: {reason, path?}.",
)
BOUNDARY_ID_REQUIRED = ErrorSpec(
    1010,
    "BoundaryIdRequired",
    "rebuild/insert without boundaryMessageId for a session whose declared-ascending IDs the "
    "sidecar cannot mint (neither MiMo v2 nor legacy v1); nothing was changed.",
)
UNKNOWN_TOOL = ErrorSpec(
    1011,
    "UnknownTool",
    "tools/call with a name that is not one of the sidecar's model tools with the prefix in use. "
    "data: {tool}. (A bad argument of a known tool is not an error: the result says isError.)",
)
EMPTY_REQUEST = ErrorSpec(
    1012,
    "EmptyRequest",
    "request/build whose request would hold no message at all (no provider accepts one): the view is "
    "empty, or nothing in it can be sent in the format; the message says which. "
    "data: {agentId, format, viewMessages, warnings}.",
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
    INVALID_CHECKPOINT,
    MEMORY_WRITE_FAILED,
    BOUNDARY_ID_REQUIRED,
    UNKNOWN_TOOL,
    EMPTY_REQUEST,
)

# Every domain error code and its wire error. Total: tests/unit/test_error_map.py fails when a code
# of `core.errors.ErrorCode` has no entry.
DOMAIN_ERRORS: dict[ErrorCode, ErrorSpec] = {
    ErrorCode.SESSION_NOT_FOUND: SESSION_NOT_FOUND,
    ErrorCode.REVISION_CONFLICT: REVISION_CONFLICT,
    ErrorCode.MESSAGE_NOT_FOUND: MESSAGE_NOT_FOUND,
    ErrorCode.SESSION_EXISTS: SESSION_ALREADY_OPEN,
    ErrorCode.INVALID_SESSION_DATA: INVALID_SESSION_DATA,
    ErrorCode.WRITER_STATE: WRITER_STATE,
    ErrorCode.WATERMARK_UNAVAILABLE: WATERMARK_UNAVAILABLE,
    ErrorCode.INVALID_CHECKPOINT: INVALID_CHECKPOINT,
    ErrorCode.MEMORY_WRITE_FAILED: MEMORY_WRITE_FAILED,
    ErrorCode.BOUNDARY_ID_REQUIRED: BOUNDARY_ID_REQUIRED,
    ErrorCode.UNKNOWN_TOOL: UNKNOWN_TOOL,
    ErrorCode.EMPTY_REQUEST: EMPTY_REQUEST,
}

INTERNAL_MESSAGE = "internal error in the sidecar (details are in its log)"


def rpc_error(spec: ErrorSpec, message: str, data: dict[str, Any] | None = None) -> JsonRpcException:
    payload: dict[str, Any] = {"name": spec.name, **(data or {})}
    payload["name"] = spec.name  # the error's, whatever `data` holds: clients dispatch on it
    return JsonRpcException(message=message, code=spec.code, data=payload)


def summary(items: list[dict[str, Any]]) -> str:
    """`"a.0.b: Field required; c: ..."`: the problems of a -32602, as its message lists them."""
    return "; ".join(f"{i['field']}: {i['message']}" for i in items)


def invalid_params(method: str, items: list[dict[str, Any]]) -> JsonRpcException:
    """-32602 listing every problem: `"<method>: invalid params: <field>: <problem>; ..."`, with
    `data.errors` = `[{field, message, type}]`."""
    return rpc_error(INVALID_PARAMS, f"{method}: invalid params: {summary(items)}", {"errors": items})


def method_not_found(method: str) -> JsonRpcMethodNotFound:
    """pygls's own class (its request path answers it without logging a traceback)."""
    return JsonRpcMethodNotFound(
        message=f"{method}: method not found", data={"name": METHOD_NOT_FOUND.name, "method": method}
    )


def from_domain_error(method: str, err: DomainError) -> JsonRpcException:
    """The wire error of a domain error: `"<method>: <field path>: <detail>"`, data with the field."""
    data: dict[str, Any] = {}
    if err.path is not None:
        data["field"] = err.path
    data.update(err.data)
    return rpc_error(DOMAIN_ERRORS[err.code], f"{method}: {err.message}", data)


def public_error(code: int, message: str, data: Any) -> dict[str, Any]:
    """The error object sent to the client. The one place where tracebacks are removed: pygls puts
    a Python traceback in the data of an unexpected exception; it goes to the log, and the client
    gets the generic internal error."""
    if isinstance(data, dict) and "traceback" in data:
        logger.error("internal error: %s\n%s", message, "".join(data["traceback"]))
        code, message, data = INTERNAL_ERROR.code, INTERNAL_MESSAGE, {"name": INTERNAL_ERROR.name}
    payload: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        payload["data"] = data
    return payload


def error_of(exc: BaseException) -> dict[str, Any]:
    """The error object for an exception that ended a request (unexpected ones: internal error)."""
    if isinstance(exc, JsonRpcException):
        return public_error(exc.code, exc.message, exc.data)
    logger.error("unexpected error in a request", exc_info=exc)
    return public_error(INTERNAL_ERROR.code, INTERNAL_MESSAGE, {"name": INTERNAL_ERROR.name})
