"""`rpc_method`: registers an async handler with param validation and error mapping.

    @rpc_method(server, "session/get", SessionRef)
    async def session_get(ls: SidecarServer, params: SessionRef) -> SessionInfo: ...

The handler receives validated params (a pydantic model) and returns a pydantic model, a plain
JSON value or None. Around it:

- params are validated with `params_model`; a missing `params` counts as `{}`. Failures answer
  -32602 with `"<method>: invalid params: <field.path>: <problem>; ..."` and `data.errors`;
- `DomainError` maps to its table entry (`rpc.errors.DOMAIN_ERRORS`); `JsonRpcException` and
  cancellation pass through; anything else reaches the protocol, which logs it and answers -32603
  with a generic message (`rpc.errors.error_of`);
- the task counts as in-flight work, which `shutdown` waits for;
- results are dumped with `model_dump(by_alias=True, exclude_none=True)` and encoded to JSON bytes
  (`EncodedJson`) in the handler's own task: a result that cannot be written fails its request
  with -32603 like any other error, instead of leaving the request unanswered. A handler that
  changes state encodes its answer before the change (`encode_result`; the insert passes it to
  the service as its `answer`), so a change is never made that its response does not report.

The wrapped handler (raw params in, encoded JSON out) is also kept in `server.handlers[method]`, which is
what in-process tests call. Every method must be documented in `wire.registry`; registering an
undocumented one fails at startup (methods under `test/` excepted).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..core.errors import DomainError
from ..core.request.assembly import BuiltRequest
from ..transport.jsonrpc_codec import EncodedJson, KnownLists, ListCache, dumps, dumps_in_pieces
from ..wire.common import Result
from ..wire.registry import REGISTRY
from . import errors
from .collector import collection_paused, pauses_collection

if TYPE_CHECKING:
    from .server import SidecarServer

logger = logging.getLogger(__name__)
# Per-request handler time (validation + handler + result dump, not the transport): --log-level DEBUG.
timing = logging.getLogger("mimo_sidecar.timing")

P = TypeVar("P", bound=BaseModel)
Handler = Callable[["SidecarServer", P], Awaitable[Any]]
RawHandler = Callable[[Any], Awaitable[Any]]


def describe_errors(exc: ValidationError, prefix: str = "") -> tuple[str, list[dict[str, Any]]]:
    """`("a.0.b: Field required; c: ...", [{field, message, type}...])` without echoing input."""
    items: list[dict[str, Any]] = []
    for e in exc.errors(include_url=False, include_input=False, include_context=False):
        loc = ".".join(str(p) for p in e["loc"])
        fld = ".".join(x for x in (prefix, loc) if x) or "params"
        items.append({"field": fld, "message": e["msg"], "type": e["type"]})
    return errors.summary(items), items


def validate_params(method: str, model: type[P], raw: Any, prefix: str = "") -> P:
    """Validate raw params or raise -32602 naming each offending field."""
    if raw is None:
        raw = {}
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise errors.invalid_params(method, describe_errors(exc, prefix)[1]) from None


# A request's lists parallel to its messages, which share their versions (`Rendered.versions`).
VERSIONED_LISTS = frozenset({"messages", "sources", "sourceGroups"})


@dataclass(frozen=True)
class WithRequest:
    """A result that holds a request (`request/build`, `checkpoint/prepare`): its lists are encoded
    with the slices the memo's previous response kept (`jsonrpc_codec.ListCache`), so that a
    request after one step encodes that step and the slices that changed."""

    result: Result
    request: BuiltRequest

    def known_lists(self) -> KnownLists | None:
        slot = self.request.output
        if slot is None:
            return None
        if not isinstance(slot.value, ListCache):
            slot.value = ListCache()
        # The cache keeps the versions: a copy, which nothing changes.
        return KnownLists(VERSIONED_LISTS, self.request.versions[:], slot.value)


def encode_result(result: Any) -> EncodedJson:
    """A handler's result as the JSON bytes of the response. Python mode, not pydantic's JSON
    mode: that one refuses a dict key holding a lone surrogate, which host data may have (the
    codec escapes it)."""
    if isinstance(result, EncodedJson):
        return result
    known: KnownLists | None = None
    if isinstance(result, WithRequest):
        result, known = result.result, result.known_lists()
    if isinstance(result, Result) and result.PASS_THROUGH:
        others = result.model_dump(by_alias=True, exclude_none=True, exclude=set(result.PASS_THROUGH))
        fields = result.wire_fields(others)
        # The passed-through lists (a request's messages) a slice at a time (`dumps_in_pieces`).
        return EncodedJson(dumps_in_pieces(fields, result.pass_through_keys(), known))
    if isinstance(result, BaseModel):
        result = result.model_dump(by_alias=True, exclude_none=True)
    return EncodedJson.of(dumps(result))


async def run_handler(method: str, call: Callable[[], Awaitable[Any]]) -> EncodedJson:
    """Run a handler body; a domain error becomes its wire error. At DEBUG, the timing log gives the
    encode of the result apart: a long view's response takes most of a handler's time to serialise
    (a fresh output buffer's pages included), and a benchmark tells the work from it."""
    try:
        result = await call()
    except DomainError as exc:
        raise errors.from_domain_error(method, exc) from None
    if not timing.isEnabledFor(logging.DEBUG) or isinstance(result, EncodedJson):
        return encode_result(result)
    started = time.perf_counter()
    encoded = encode_result(result)
    timing.debug("%s encode %.3f ms", method, (time.perf_counter() - started) * 1000)
    return encoded


def rpc_method(
    server: SidecarServer, method: str, params_model: type[P]
) -> Callable[[Handler[P]], Handler[P]]:
    if method not in REGISTRY and not method.startswith("test/"):
        raise RuntimeError(f"{method} is served but not documented: add it to mimo_sidecar/wire/registry.py")

    def decorate(fn: Handler[P]) -> Handler[P]:
        pause = collection_paused if pauses_collection(method) else nullcontext

        async def handler(raw: Any) -> Any:
            with server.track_current_task(), pause():
                started = time.perf_counter()
                params = validate_params(method, params_model, raw)
                try:
                    return await run_handler(method, lambda: fn(server, params))
                finally:
                    if timing.isEnabledFor(logging.DEBUG):
                        timing.debug("%s %.3f ms", method, (time.perf_counter() - started) * 1000)

        handler.__name__ = handler.__qualname__ = f"rpc:{method}"
        server.feature(method)(handler)
        server.handlers[method] = handler
        return fn

    return decorate
