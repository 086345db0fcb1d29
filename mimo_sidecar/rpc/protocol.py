"""JSON-RPC framing and message handling on top of pygls 2.1.

What this changes in pygls (see ../shared/notes/pygls-sidecar-notes.md §1.3, §1.10, §4):

- Params and results of custom methods stay plain JSON (dicts, lists); pygls would turn every dict
  into a namedtuple. A request without `params` reaches its handler with `None`.
- Only the top-level object of a frame is treated as a JSON-RPC message: nested objects that happen
  to contain a `"jsonrpc"` key (MCP transcripts do) are plain data.
- Bad params on an LSP method (e.g. `initialize`) are answered with -32602 instead of silence.
- Requests before `initialize` get -32002; requests after `shutdown` get -32600; a batch (array) or
  a non-object gets -32600; a body that is not JSON gets -32700 (id null).
- Frames are parsed and written with orjson: UTF-8 bodies, byte-exact Content-Length, and results
  are sent without cattrs walking them. Errors never carry a Python traceback.
- Frames are read by a dedicated thread (`FrameReader`), not pygls's shared thread pool.
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

import ijson
import orjson
from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol import types
from lsprotocol.types import ResponseErrorMessage
from pygls.exceptions import JsonRpcException
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)

from . import errors

logger = logging.getLogger(__name__)

JSONRPC_VERSION = "2.0"
ALWAYS_ALLOWED = frozenset({types.INITIALIZE, types.EXIT})
MAX_HEADER_LINE = 65_536
MAX_BODY_BYTES = 1 << 30  # a larger Content-Length is treated as a broken stream


# ---------------------------------------------------------------------------------------------
# Converter: keep params and results raw
# ---------------------------------------------------------------------------------------------


def raw_converter_factory() -> Any:
    """A pygls converter that leaves custom-method params and results as plain JSON."""
    conv = default_converter()

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
# JSON
# ---------------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# Frames above this size are parsed with ijson's C backend instead of orjson. orjson builds its
# own document from a copy of the input before making Python objects, so a 50 MB `session/open`
# briefly needs the body, that copy and the objects at once; the streaming parser makes the
# objects directly (peak RSS 202 instead of 240 MiB for a 50 MB history; benchmarks/README.md).
LARGE_FRAME_BYTES = 8 * 1024 * 1024


def _streaming_backend() -> Any:
    try:
        return ijson.get_backend("yajl2_c")  # the pure-Python backends would be far too slow
    except ImportError:
        return None


_STREAMING = _streaming_backend()
# yajl turns a lone surrogate escape into "?" (silently changing the host's text and its token
# estimate); frames with any surrogate escape take the exact path instead.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def loads(body: bytes) -> Any:
    """Parse a frame body: orjson (ijson's C backend for large frames); the stdlib only for what
    those refuse but JSON allows (lone surrogate escapes, numbers beyond the double range)."""
    try:
        if _STREAMING is not None and len(body) > LARGE_FRAME_BYTES and not _SURROGATE_ESCAPE.search(body):
            return _loads_streaming(body)
        return orjson.loads(body)
    except (orjson.JSONDecodeError, ijson.JSONError):
        return json.loads(body.decode("utf-8"), parse_constant=_reject_constant)


def _loads_streaming(body: bytes) -> Any:
    # Parsed to the end (not just the first value), so trailing bytes are an error, as in orjson.
    values = list(_STREAMING.items(io.BytesIO(body), "", use_float=True))
    if len(values) != 1:
        raise ijson.JSONError(f"expected one JSON value, found {len(values)}")
    return values[0]


def dumps(payload: Any, default: Callable[[Any], Any]) -> bytes:
    """Serialize an outgoing message as UTF-8 JSON (no ASCII escaping)."""
    try:
        return orjson.dumps(payload, default=default)
    except TypeError:  # e.g. an integer beyond 64 bits
        return json.dumps(payload, default=default, ensure_ascii=False, separators=(",", ":")).encode()


# ---------------------------------------------------------------------------------------------
# Framing
# ---------------------------------------------------------------------------------------------

_CONTENT_LENGTH = re.compile(rb"content-length\s*:\s*(\d+)\s*", re.IGNORECASE)


class FrameReader:
    """Reads `Content-Length` framed bodies from a binary stream (blocking; run it in a thread).

    Header names are matched case-insensitively and other headers are ignored. A header block
    without a usable Content-Length is skipped with a warning.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def read(self) -> bytes | None:
        """The next body, or None at end of input."""
        while True:
            length: int | None = None
            saw_header = False
            while True:
                line = self._stream.readline(MAX_HEADER_LINE)
                if not line:
                    return None
                if line in (b"\r\n", b"\n"):
                    if saw_header:
                        break
                    continue  # blank lines between frames are tolerated
                saw_header = True
                match = _CONTENT_LENGTH.fullmatch(line.rstrip(b"\r\n"))
                if match:
                    length = int(match.group(1))
            if length is None:
                logger.warning("ignoring a frame header without Content-Length")
                continue
            if length > MAX_BODY_BYTES:
                logger.error(
                    "Content-Length %d exceeds %d bytes; closing the connection", length, MAX_BODY_BYTES
                )
                return None
            body = self._stream.read(length)
            if len(body) < length:
                return None  # end of input inside a body
            return body


class FrameWriter:
    """Writes whole frames (header and body in one write) and flushes; thread-safe."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.closed = False

    def write(self, data: bytes) -> None:
        with self._lock:
            if self.closed:
                return
            self._stream.write(data)
            self._stream.flush()

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            try:
                self._stream.flush()
                self._stream.close()
            except OSError:
                pass


# ---------------------------------------------------------------------------------------------
# Protocol
# ---------------------------------------------------------------------------------------------


class SidecarProtocol(LanguageServerProtocol):
    """The sidecar's protocol: raw params, lifecycle gates, orjson frames, sanitized errors."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.initialized = False  # set by the initialize handler once it succeeds
        self.shutdown_requested = False  # set when `shutdown` arrives (before it completes)
        self.exit_requested = False
        self.on_exit: Callable[[], None] | None = None
        self.on_connection_lost: Callable[[], None] | None = None

    # -- incoming ------------------------------------------------------------------------------
    def structure_message(self, data: Any) -> Any:
        return data  # nested dicts stay plain data; handle_message structures the top level

    def handle_body(self, body: bytes) -> None:
        """Entry point of the transport: one frame body."""
        try:
            message = loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            logger.warning("unparsable frame (%d bytes): %s", len(body), exc)
            self._send_error(None, errors.PARSE_ERROR, f"parse error: {exc}")
            return
        try:
            self.handle_message(message)
        except Exception:
            logger.exception("failed to handle a message")

    def handle_message(self, message: Any) -> None:  # type: ignore[override]
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
        if is_request and not isinstance(msg_id, (int, str)):
            self._send_error(None, errors.INVALID_REQUEST, "invalid request: id must be a number or a string")
            return
        if isinstance(method, str) and not self._admit(method, msg_id if is_request else None, is_request):
            return
        try:
            structured = self._structure(message)
        except Exception as exc:
            detail = "; ".join(transform_error(exc)) if isinstance(exc, ClassValidationError) else str(exc)
            if is_request:
                self._send_error(msg_id, errors.INVALID_PARAMS, f"{method}: invalid params: {detail}")
            else:
                logger.warning("ignoring %s message with invalid content: %s", method or "response", detail)
            return
        super().handle_message(structured)

    def _structure(self, data: dict[str, Any]) -> Any:
        """The top-level message as pygls expects it: lsprotocol types for LSP methods, the raw
        fallback types (params kept as plain JSON) for everything else."""
        method = data.get("method")
        if "id" in data and method is None:
            if "error" in data:
                return self._converter.structure(data, ResponseErrorMessage)
            result_type = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
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

    # -- handler results -----------------------------------------------------------------------
    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        self._request_futures.pop(msg_id, None)
        if future.cancelled():
            self._send_error(msg_id, errors.REQUEST_CANCELLED, f"request {msg_id!r} was cancelled")
            return
        exc = future.exception()
        if exc is None:
            self._send_response(msg_id, result=future.result())
        elif isinstance(exc, JsonRpcException):
            logger.debug("request %r failed with %s: %s", msg_id, exc.code, exc.message)
            self._send_response(msg_id, error=exc.to_response_error())
        else:
            logger.error("unexpected error in request %r", msg_id, exc_info=exc)
            self._send_error(msg_id, errors.INTERNAL_ERROR, errors.INTERNAL_MESSAGE)

    # -- outgoing ------------------------------------------------------------------------------
    def _send_error(self, msg_id: Any, spec: errors.ErrorSpec, message: str) -> None:
        error = {"code": spec.code, "message": message, "data": {"name": spec.name}}
        self._send_data({"jsonrpc": JSONRPC_VERSION, "id": msg_id, "error": error})

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is not None:
            data = getattr(error, "data", None)
            message = error.message
            if isinstance(data, dict) and "traceback" in data:
                # pygls attaches a traceback to internal errors; it stays in the log only.
                logger.error(
                    "internal error for request %r: %s\n%s", msg_id, message, "".join(data["traceback"])
                )
                message, data = errors.INTERNAL_MESSAGE, {"name": errors.INTERNAL_ERROR.name}
            payload: dict[str, Any] = {"code": error.code, "message": message}
            if data is not None:
                payload["data"] = data
            self._send_data({"jsonrpc": JSONRPC_VERSION, "id": msg_id, "error": payload})
            return
        self._result_types.pop(msg_id, None)
        if hasattr(result, "__attrs_attrs__"):
            result = self._converter.unstructure(result)
        self._send_data({"jsonrpc": JSONRPC_VERSION, "id": msg_id, "result": result})

    def _send_data(self, data: Any) -> None:
        if not data:
            return
        if self.writer is None:
            logger.error("cannot send: no transport")
            return
        if isinstance(data, JsonRPCNotification) and not hasattr(data.params, "__attrs_attrs__"):
            data = {"jsonrpc": data.jsonrpc, "method": data.method, "params": data.params}
        elif hasattr(data, "__attrs_attrs__"):
            data = self._converter.unstructure(data)
        try:
            body = dumps(data, self._serialize_message)
        except Exception:
            logger.exception("cannot serialize an outgoing message")
            return
        try:
            self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        except (BrokenPipeError, ConnectionResetError, ValueError, OSError) as exc:
            # ValueError: write to a closed file. The client is gone either way.
            logger.error("connection to the client lost while writing: %s", exc)
            if self.on_connection_lost is not None:
                self.on_connection_lost()

    # -- exit ----------------------------------------------------------------------------------
    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> None:  # type: ignore[override]
        """End the process: code 0 if `shutdown` completed before, 1 otherwise (the server's
        `exit_code`). pygls would raise SystemExit from inside the loop; we stop the loop instead."""
        self.exit_requested = True
        if self.on_exit is not None:
            self.on_exit()
