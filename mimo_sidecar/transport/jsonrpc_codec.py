"""The JSON codec of the transport: frame bodies to Python values and back (no pygls).

orjson on the fast path; frames over `LARGE_FRAME_BYTES` slice by slice (`sliced_json`: orjson on
each slice, so the parse is linear and leaves the interpreter to others between slices); the
standard library only for what orjson refuses but JSON allows (lone surrogate escapes, numbers
beyond the double range).

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

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from .jsondepth import FrameTooDeep, nests_deeper_than, top_level_scalars
from .sliced_json import loads_sliced

# Frames above this size are parsed slice by slice. One orjson call on a 50 MB `session/open`
# holds the interpreter ~120 ms (no other session is answered meanwhile) and first copies the whole
# body, which put the one-shot open over its memory target; slices bound both (benchmarks/README.md).
LARGE_FRAME_BYTES = 8 * 1024 * 1024

__all__ = [
    "LARGE_FRAME_BYTES",
    "EncodedJson",
    "FrameTooDeep",
    "Unreadable",
    "decode_frame",
    "dumps",
    "encode_response",
    "loads",
    "loads_whole",
]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(body: bytes | bytearray) -> Any:
    """Parse a frame body. Raises FrameTooDeep, or ValueError (or UnicodeDecodeError) when it is not
    UTF-8 JSON."""
    if len(body) > LARGE_FRAME_BYTES:
        return loads_sliced(body, _loads_exact, _EXACT)
    return _loads_exact(body)


def loads_whole(body: bytes | bytearray) -> Any:
    """`loads` in one parser call whatever the size: for a client reading the sidecar's answers,
    where no other request waits on the thread that parses (one call is faster than slices: a 40 MB
    request takes about 60 ms instead of 90)."""
    return _loads_exact(body)


@dataclass(frozen=True)
class Unreadable:
    """A frame body that was not parsed: not JSON (`reason` says why), or JSON nested deeper than
    the limit (`too_deep`; `top` holds its top-level scalars, `id` and `method`, read without
    parsing it)."""

    reason: str
    size: int
    too_deep: bool = False
    top: dict[str, Any] | None = None


def decode_frame(body: bytes | bytearray) -> Any:
    """The message a frame body holds, or `Unreadable`."""
    try:
        return loads(body)
    except FrameTooDeep as exc:
        return Unreadable(str(exc), len(body), too_deep=True, top=top_level_scalars(body))
    except ValueError as exc:  # UnicodeDecodeError included
        return Unreadable(str(exc), len(body))


def _loads_exact(body: bytes | bytearray) -> Any:
    try:
        return orjson.loads(body)  # refuses more than 1024 levels (MAX_NESTING) itself
    except orjson.JSONDecodeError:
        if nests_deeper_than(body):  # before the stdlib parser, which would recurse that deep
            raise FrameTooDeep from None
        return _EXACT.decode(str(body, "utf-8"))


_INT_RANGE = range(-(2**63), 2**64)  # what orjson keeps as an integer (i64 or u64)


def _int_as_orjson_reads_it(text: str) -> int | float:
    if len(text) <= 20:  # every i64 and u64 fits in 20 characters (and int() refuses > 4300 digits)
        number = int(text)
        if number in _INT_RANGE:
            return number
    return float(text)  # the nearest double, or an infinity beyond the double range


# The standard library's decoder, reading numbers as orjson does and refusing NaN and Infinity.
_EXACT = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=float, parse_int=_int_as_orjson_reads_it
)


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


def encode_response(msg_id: int | str | None, result: EncodedJson) -> tuple[bytes, ...]:
    """The body of a response whose result is already encoded, in pieces to write one after the
    other: joining them would copy the result (40 MB for a long view's request) for nothing."""
    return (b'{"jsonrpc":"2.0","id":%s,"result":' % dumps(msg_id), result.body, b"}")


# In the text json.dumps makes, a surrogate code point can only stand for itself inside a string.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
