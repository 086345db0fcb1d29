"""The pygls adapter: JSON-RPC message handling on top of pygls 2.1 (framing and the JSON codec
live in the pygls-free `mimo_sidecar.transport.framing` and `mimo_sidecar.transport.jsonrpc_codec`).

What this changes in pygls (docs/architecture.md, "pygls overrides", says why each one exists;
`PYGLS_OVERRIDES` below names the end-to-end tests that pin each one):

- Params and results of custom methods stay plain JSON (dicts, lists); pygls would turn every dict
  into a namedtuple. A request without `params` reaches its handler with `None`.
- Only the top-level object of a frame is treated as a JSON-RPC message: nested objects that happen
  to contain a `"jsonrpc"` key (MCP transcripts do) are plain data.
- Bad params on an LSP method are answered with -32602 instead of silence, listed in `data.errors`
  with the documented field paths; `initialize` is first held to its wire model (`processId`,
  `capabilities`, `initializationOptions`: no coercion), which lsprotocol's structuring is not.
- An unknown method gets -32601 `"<method>: method not found"` with `data.method`.
- Requests before `initialize` get -32002; requests after `shutdown` get -32600; a batch (array) or
  a non-object gets -32600; a body that is not JSON gets -32700 (id null); a frame nested deeper
  than the codec's limit gets -32600 with its request's id, read without parsing the frame. An id
  must be a string or an integer within 64 bits (`true` is not 1). A request method sent without an
  id is logged and ignored. Bytes that are not a frame at all are answered by `refuse_frame`.
- No future outlives its handler (pygls kept those of async notification handlers for good).
- Frames are parsed and written with the codec (orjson; lone surrogates written as escapes):
  UTF-8 bodies, byte-exact Content-Length, and results arrive already encoded by their handler
  (`EncodedJson`), so cattrs never walks them. A message that still cannot be encoded is replaced
  by an internal error for its id: every request gets exactly one response. Errors never carry a
  Python traceback (`errors.public_error`).
- Frames are read and parsed by a dedicated thread (`FrameReader`), not pygls's shared thread
  pool; the protocol receives decoded bodies (`receive`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol import types
from lsprotocol.types import ResponseErrorMessage
from pydantic.alias_generators import to_camel
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)

from ..transport.framing import FrameProblem, FrameWriter
from ..transport.jsonrpc_codec import EncodedJson, Piece, Unreadable, dumps, encode_response
from ..wire.lifecycle import InitializeParams
from ..wire.registry import REGISTRY
from . import errors
from .dispatch import validate_params

logger = logging.getLogger(__name__)

JSONRPC_VERSION = "2.0"
ALWAYS_ALLOWED = frozenset({types.INITIALIZE, types.EXIT})
# Methods that only make sense as requests: sent without an id, they are logged and ignored.
REQUEST_METHODS = frozenset(
    name for name, spec in REGISTRY.items() if spec.kind == "request" and spec.direction == "client → sidecar"
)
ID_RANGE = range(-(2**63), 2**63)  # request ids: strings, or integers within 64 bits (signed)


def _valid_id(msg_id: Any) -> bool:
    """A request id as JSON-RPC and LSP have them: a string, or an integer (not `true`, which
    Python would take for 1, nor `7.0`, nor one beyond 64 bits)."""
    if isinstance(msg_id, str):
        return True
    return type(msg_id) is int and msg_id in ID_RANGE


# LSP methods whose raw params are first validated as protocol.md documents them (lsprotocol's
# structuring coerces: `processId: "123"` would pass).
LSP_PARAMS = {types.INITIALIZE: InitializeParams}

# Every pygls hook this module and rpc/server.py override, with the end-to-end tests (in
# tests/e2e/) that fail if a pygls upgrade changes what the override relies on.
# tests/unit/test_pygls_seams.py checks that the list is complete and that each test exists.
PYGLS_OVERRIDES: dict[str, tuple[str, ...]] = {
    "raw_converter_factory": ("test_request_without_params", "test_nested_jsonrpc_object_is_plain_data"),
    "SidecarProtocol.structure_message": ("test_nested_jsonrpc_object_is_plain_data",),
    "SidecarProtocol.handle_message": (
        "test_request_before_initialize_and_bad_lsp_params",
        "test_invalid_requests",
        "test_requests_after_shutdown_are_refused",
        "test_initialize_validates_process_id_and_capabilities",
        "test_lsp_params_problems_are_listed_in_the_documented_path_form",
        "test_request_methods_sent_as_notifications_change_nothing_and_keep_nothing",
        "test_ids_that_are_not_strings_or_64_bit_integers_are_refused",
        "test_closed_sessions_leave_nothing_behind",
    ),
    "SidecarProtocol._execute_handler": (
        "test_async_notifications_keep_no_future",
        "test_an_unanswered_progress_request_does_not_hold_the_insert",
    ),
    "SidecarProtocol._send_handler_result": (
        "test_cancel_request",
        "test_unexpected_exception_is_32603_without_traceback",
    ),
    "SidecarProtocol._send_response": (
        "test_invalid_requests",
        "test_non_ascii_is_sent_raw_with_a_byte_length",
        "test_every_method_answers_and_build_returns_the_same_code_units",
    ),
    "SidecarProtocol._send_data": (
        "test_non_ascii_is_sent_raw_with_a_byte_length",
        "test_unknown_method_and_request_id_with_a_lone_surrogate",
    ),
    "SidecarProtocol._get_handler": ("test_method_not_found_names_the_method",),
    "SidecarProtocol.lsp_exit": ("test_shutdown_then_exit_is_code_0", "test_exit_without_shutdown_is_code_1"),
    "SidecarServer.report_server_error": (
        "test_failing_notification_pops_no_message_window",
        "test_an_unknown_method_is_not_logged_as_a_server_error",
    ),
    "SidecarServer.start_io": (
        "test_end_of_stdin_exits_within_1s",
        "test_lowercase_header_and_extra_headers",
        "test_a_malformed_frame_is_answered_and_the_next_three_are_served",
        "test_a_large_frame_does_not_hold_up_the_requests_behind_it",
        "test_a_closed_stdout_ends_the_process_like_a_closed_stdin",
    ),
}


# ---------------------------------------------------------------------------------------------
# Converter: keep params and results raw
# ---------------------------------------------------------------------------------------------


def raw_converter_factory() -> Any:
    """A pygls converter that leaves custom-method params and results as plain JSON."""
    make_default: Callable[[], Any] = default_converter  # pygls leaves it unannotated
    conv = make_default()

    def keep_params(obj: dict[str, Any], cls: type) -> Any:
        obj.setdefault("params", None)
        return cls(**obj)

    def keep_result(obj: dict[str, Any], cls: type) -> Any:
        obj.setdefault("result", None)
        return cls(**obj)

    conv.register_structure_hook(JsonRPCRequestMessage, keep_params)
    conv.register_structure_hook(JsonRPCNotification, keep_params)
    conv.register_structure_hook(JsonRPCResponseMessage, keep_result)
    return conv


# ---------------------------------------------------------------------------------------------
# Protocol
# ---------------------------------------------------------------------------------------------


def lsp_problems(exc: Exception) -> list[dict[str, Any]]:
    """lsprotocol's (cattrs') complaints about an LSP message as `[{field, message, type}]`, the
    field paths in the documented form: `workspaceFolders.0.uri`, not `$.params.workspace_folders[0].uri`."""
    lines = transform_error(exc) if isinstance(exc, ClassValidationError) else [str(exc)]
    problems = []
    for line in lines:
        message, sep, path = line.rpartition(" @ ")
        if not sep:
            message, path = line, ""
        steps = re.findall(r"\.(\w+)|\[(\d+)\]", path.removeprefix("$").removeprefix(".params"))
        field = ".".join(index or to_camel(name.rstrip("_")) for name, index in steps)
        problems.append({"field": field or "params", "message": message, "type": "lsp_params"})
    return problems


class SidecarProtocol(LanguageServerProtocol):
    """The sidecar's protocol: raw params, lifecycle gates, orjson frames, sanitized errors."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.initialized = False  # set by the initialize handler once it succeeds
        self.shutdown_requested = False  # set when `shutdown` arrives (before it completes)
        self.exit_requested = False
        self.shutdown_completed = False  # set by the shutdown handler when it answers
        self.frames: FrameWriter | None = None  # the transport's writer, set by the server
        self.on_exit: Callable[[], None] | None = None
        self.on_connection_lost: Callable[[], None] | None = None

    # -- incoming ------------------------------------------------------------------------------
    def structure_message(self, data: Any) -> Any:
        return data  # nested dicts stay plain data; handle_message structures the top level

    def receive(self, decoded: Any) -> None:
        """Entry point of the transport: one decoded frame body (`jsonrpc_codec.decode_frame`)."""
        if isinstance(decoded, Unreadable):
            self._refuse_unreadable(decoded)
            return
        try:
            self.handle_message(decoded)
        except Exception:
            logger.exception("failed to handle a message")

    def refuse_frame(self, problem: FrameProblem) -> None:
        """Answer bytes that were not a usable frame (the reader has moved on to the next one)."""
        logger.warning("not a usable frame: %s", problem.message)
        if problem.kind == "too-large":
            data = {"contentLength": problem.content_length, "maxFrameBytes": problem.max_frame_bytes}
            self._send_error(None, errors.INVALID_REQUEST, f"invalid request: {problem.message}", data)
        else:
            self._send_error(None, errors.PARSE_ERROR, f"parse error: {problem.message}")

    def _refuse_unreadable(self, body: Unreadable) -> None:
        """A body that is not JSON gets -32700 (id null); a request too deep to parse gets -32600
        with the id read from its top level."""
        if not body.too_deep:
            logger.warning("unparsable frame (%d bytes): %s", body.size, body.reason)
            self._send_error(None, errors.PARSE_ERROR, f"parse error: {body.reason}")
            return
        top = body.top or {}
        if "id" not in top:
            logger.warning("dropping a notification or response %s (%d bytes)", body.reason, body.size)
            return
        msg_id = top["id"] if _valid_id(top["id"]) else None
        method = top.get("method")
        what = f"{method}: invalid request" if isinstance(method, str) else "invalid request"
        self._send_error(msg_id, errors.INVALID_REQUEST, f"{what}: {body.reason}")

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            what = "batch requests are not supported" if isinstance(message, list) else "not a JSON object"
            self._send_error(None, errors.INVALID_REQUEST, f"invalid request: {what}")
            return
        msg_id = message.get("id")
        method = message.get("method")
        is_request = "id" in message and "method" in message
        if message.get("jsonrpc") != JSONRPC_VERSION or not (
            isinstance(method, str) or "result" in message or "error" in message
        ):
            if "id" in message:
                self._send_error(
                    msg_id, errors.INVALID_REQUEST, 'invalid request: not a JSON-RPC "2.0" message'
                )
            else:
                logger.warning("ignoring a message that is not JSON-RPC 2.0")
            return
        if is_request and not _valid_id(msg_id):
            self._send_error(
                None,
                errors.INVALID_REQUEST,
                "invalid request: id must be a string or an integer within 64 bits",
            )
            return
        if not is_request and method in REQUEST_METHODS:
            # JSON-RPC gives a notification no answer to carry a result or an error: running it
            # would change state unseen, and pygls would keep its future for good.
            logger.warning("ignoring %s sent without an id: it is a request, it needs one", method)
            return
        if isinstance(method, str) and not self._admit(method, msg_id if is_request else None, is_request):
            return
        try:
            if method in LSP_PARAMS:
                validate_params(method, LSP_PARAMS[method], message.get("params"))
            structured = self._structure(message)
        except Exception as exc:
            if not isinstance(exc, JsonRpcException):
                exc = errors.invalid_params(str(method), lsp_problems(exc))
            if is_request:
                self._send_response(msg_id, error=exc.to_response_error())
            else:
                logger.warning("ignoring %s message with invalid content: %s", method or "response", exc)
            return
        super().handle_message(structured)

    def _structure(self, data: dict[str, Any]) -> Any:
        """The top-level message as pygls expects it: lsprotocol types for LSP methods, the raw
        fallback types (params kept as plain JSON) for everything else."""
        method = data.get("method")
        if "id" in data and method is None:
            # The result type of our request is popped whatever the answer (pygls keeps it after an
            # error answer: one entry per declined progress token, for the process's life).
            result_type = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
            if "error" in data:
                return self._converter.structure(data, ResponseErrorMessage)
            return self._converter.structure(data, result_type)
        fallback = JsonRPCRequestMessage if "id" in data else JsonRPCNotification
        return self._converter.structure(data, self.get_message_type(method) or fallback)

    def _admit(self, method: str, msg_id: Any, is_request: bool) -> bool:
        """Lifecycle gates. Returns False when the message was answered or dropped."""
        if self.exit_requested:
            return False
        if self.shutdown_requested and method != types.EXIT:
            if is_request:
                self._send_error(msg_id, errors.INVALID_REQUEST, f"{method}: the server is shutting down")
            return False
        if method == types.INITIALIZE and self.initialized:
            self._send_error(msg_id, errors.INVALID_REQUEST, "initialize: the server is already initialized")
            return False
        if not self.initialized and method not in ALWAYS_ALLOWED and not method.startswith("$/"):
            if is_request:
                self._send_error(
                    msg_id, errors.SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized"
                )
            else:
                logger.debug("dropping notification %s received before initialize", method)
            return False
        if method == types.SHUTDOWN and is_request:
            self.shutdown_requested = True
        return True

    def _get_handler(self, feature_name: str) -> Any:
        try:
            return super()._get_handler(feature_name)
        except JsonRpcMethodNotFound:
            raise errors.method_not_found(feature_name) from None

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """pygls keeps the future of every async handler under its message id, and only a request's
        answer removes it: a notification's stayed for good. Here every future goes once done."""
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(lambda done: self.forget_future(msg_id, done))

    def forget_future(self, msg_id: Any, future: Any) -> None:
        """Drop the bookkeeping of `msg_id` if it is still `future`'s (a handler's, or a request
        of ours the client never answered)."""
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]
            self._result_types.pop(msg_id, None)

    # -- handler results -----------------------------------------------------------------------
    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        self._request_futures.pop(msg_id, None)
        if future.cancelled():
            self._send_error(msg_id, errors.REQUEST_CANCELLED, f"request {msg_id!r} was cancelled")
            return
        exc = future.exception()
        if exc is None:
            self._send_response(msg_id, result=future.result())
            return
        logger.debug("request %r failed: %s", msg_id, exc)
        self._send_data({"jsonrpc": JSONRPC_VERSION, "id": msg_id, "error": errors.error_of(exc)})

    # -- outgoing ------------------------------------------------------------------------------
    def _send_error(
        self, msg_id: Any, spec: errors.ErrorSpec, message: str, data: dict[str, Any] | None = None
    ) -> None:
        error = {"code": spec.code, "message": message, "data": {"name": spec.name, **(data or {})}}
        self._send_data({"jsonrpc": JSONRPC_VERSION, "id": msg_id, "error": error})

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is not None:  # pygls's own errors (e.g. a crash in a synchronous handler)
            payload = errors.public_error(error.code, error.message, getattr(error, "data", None))
            self._send_data({"jsonrpc": JSONRPC_VERSION, "id": msg_id, "error": payload})
            return
        self._result_types.pop(msg_id, None)
        if isinstance(result, EncodedJson):  # our handlers' results (rpc.dispatch)
            self._write_body(encode_response(msg_id, result))
            return
        if hasattr(result, "__attrs_attrs__"):
            result = self._converter.unstructure(result)
        self._send_data({"jsonrpc": JSONRPC_VERSION, "id": msg_id, "result": result})

    def _send_data(self, data: Any) -> None:
        if not data:
            return
        if isinstance(data, JsonRPCNotification) and not hasattr(data.params, "__attrs_attrs__"):
            data = {"jsonrpc": data.jsonrpc, "method": data.method, "params": data.params}
        elif hasattr(data, "__attrs_attrs__"):
            data = self._converter.unstructure(data)
        body: bytes | None
        try:
            body = dumps(data, self._serialize_message)
        except Exception:
            body = self._unencodable(data)
        if body is not None:
            self._write_body(body)

    def _unencodable(self, data: Any) -> bytes | None:
        """A message the codec cannot write: a response becomes an internal error for its id (the
        request still gets its one answer); anything else is dropped. Both are logged."""
        logger.exception("cannot serialize an outgoing message")
        if not (isinstance(data, dict) and "id" in data and ("result" in data or "error" in data)):
            return None
        error = errors.public_error(
            errors.INTERNAL_ERROR.code, errors.INTERNAL_MESSAGE, {"name": errors.INTERNAL_ERROR.name}
        )
        try:
            return dumps({"jsonrpc": JSONRPC_VERSION, "id": data["id"], "error": error})
        except Exception:
            return dumps({"jsonrpc": JSONRPC_VERSION, "id": None, "error": error})

    def _write_body(self, body: bytes | tuple[Piece, ...]) -> None:
        if self.frames is None:
            logger.error("cannot send: no transport")
            return
        try:
            self.frames.write_body(body)
        except (BrokenPipeError, ConnectionResetError, ValueError, OSError) as exc:
            # ValueError: write to a closed file. The client is gone either way.
            logger.error("connection to the client lost while writing: %s", exc)
            if self.on_connection_lost is not None:
                self.on_connection_lost()

    # -- exit ----------------------------------------------------------------------------------
    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> None:  # type: ignore[override]  # pygls's is a generator
        """End the process: code 0 if `shutdown` completed before, 1 otherwise (the server's
        `exit_code`). pygls would raise SystemExit from inside the loop; we stop the loop instead."""
        self.exit_requested = True
        if self.on_exit is not None:
            self.on_exit()
