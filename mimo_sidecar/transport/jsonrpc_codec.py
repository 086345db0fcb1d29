"""The JSON codec of the transport: frame bodies to Python values and back (no pygls).

orjson on the fast path; ijson's C backend for very large frames; the standard library only for
what those refuse but JSON allows (lone surrogate escapes, numbers beyond the double range).

What a JavaScript host may send, and what comes back:

- A lone UTF-16 surrogate (`"\\udc00"`, from an editor buffer or model output cut mid-character) is
  read as that code point and written back as the same `\\udc00` escape, the way `JSON.stringify`
  writes it: valid UTF-8 JSON that gives the host the same code units. Only messages holding one
  leave orjson, whose output would be refused.
- An integer beyond 64 bits is read as the nearest double, as orjson reads it (and JavaScript's
  `JSON.parse`), whichever parser the frame takes; a number beyond the double range (`1e400`) is
  read as an infinity, as `JSON.parse` reads it. A field of the wire models that takes a number
  then refuses it (-32602, protocol.md "Conventions"), so `baseRevision: 1e400` is not taken for
  an absent one; in the host's own free-form data it is kept, counted and written back as null,
  what `JSON.stringify` makes of an infinity.
- A frame nested deeper than `MAX_NESTING` levels raises `FrameTooDeep` (`jsondepth` says why the
  limit is checked before parsing), so no parser recurses past what the serializer can write back.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ijson
import orjson

from .jsondepth import MAX_NESTING, nests_deeper_than


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


class FrameTooDeep(ValueError):
    """A frame body nests deeper than `MAX_NESTING` levels (it is not parsed)."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_NESTING} levels")


def loads(body: bytes) -> Any:
    """Parse a frame body. Raises FrameTooDeep, or ValueError (or UnicodeDecodeError) when it is not
    UTF-8 JSON."""
    try:
        if _STREAMING is not None and len(body) > LARGE_FRAME_BYTES and not _SURROGATE_ESCAPE.search(body):
            if nests_deeper_than(body):
                raise FrameTooDeep
            return _loads_streaming(body)
        return orjson.loads(body)  # refuses more than 1024 levels (MAX_NESTING) itself
    except (orjson.JSONDecodeError, ijson.JSONError):
        if nests_deeper_than(body):  # before the stdlib parser, which would recurse that deep
            raise FrameTooDeep from None
        return json.loads(
            body.decode("utf-8"),
            parse_constant=_reject_constant,
            parse_float=float,
            parse_int=_int_as_orjson_reads_it,
        )


_INT_RANGE = range(-(2**63), 2**64)  # what orjson keeps as an integer (i64 or u64)


def _int_as_orjson_reads_it(text: str) -> int | float:
    if len(text) <= 20:  # every i64 and u64 fits in 20 characters (and int() refuses > 4300 digits)
        number = int(text)
        if number in _INT_RANGE:
            return number
    return float(text)  # the nearest double, or an infinity beyond the double range


def _loads_streaming(body: bytes) -> Any:
    # Parsed to the end (not just the first value), so trailing bytes are an error, as in orjson.
    values = list(_STREAMING.items(io.BytesIO(body), "", use_float=True))
    if len(values) != 1:
        raise ijson.JSONError(f"expected one JSON value, found {len(values)}")
    return values[0]


def dumps(payload: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """Serialize an outgoing message as UTF-8 JSON (no ASCII escaping; lone surrogates escaped).
    Raises TypeError or ValueError for what cannot be JSON."""
    try:
        return orjson.dumps(payload, default=default)  # an infinity is written null
    except TypeError:  # a lone surrogate, an integer beyond 64 bits, more than 254 levels
        finite = _infinities_as_null(payload)
        text = json.dumps(finite, default=default, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return _LONE_SURROGATE.sub(_escape, text).encode("utf-8")


def _infinities_as_null(value: Any) -> Any:
    """A copy of `value` with every non-finite float as None, as orjson and `JSON.stringify` write
    them (the standard library would write `Infinity`, which is not JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _infinities_as_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_infinities_as_null(v) for v in value]
    return value


@dataclass(frozen=True)
class EncodedJson:
    """A value already serialized by `dumps`: the transport writes its bytes as they are."""

    body: bytes


def encode_response(msg_id: int | str | None, result: EncodedJson) -> bytes:
    """The body of a response whose result is already encoded."""
    return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (dumps(msg_id), result.body)


# In the text json.dumps makes, a surrogate code point can only stand for itself inside a string.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
