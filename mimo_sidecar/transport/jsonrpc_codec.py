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

import bisect
import json
import math
import re
from array import array
from collections.abc import Callable, Collection
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
    "KnownLists",
    "ListCache",
    "Piece",
    "FrameTooDeep",
    "Unreadable",
    "decode_frame",
    "dumps",
    "dumps_in_pieces",
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


# A long list is encoded a slice at a time, each slice's bytes near this size, and a response
# after one step sends again the slices of the previous one whose items did not change
# (`ListCache`). Below glibc's mmap threshold and within its trim threshold (transport/allocator.py):
# the space a freed slice leaves in the heap is where the next response's slices are written (a
# fresh mapping faults on each page). With glibc's rising thresholds instead, the heap kept every
# large buffer, and the worst case's peak went 13 MiB over its target.
SLICE_BYTES = 512 * 1024
SLICED_LIST_ITEMS = 32  # a shorter list is encoded whole
FIRST_SLICE_ITEMS = 8  # the items of a first slice, before their size is known

Piece = bytes | memoryview


@dataclass
class _Slices:
    bounds: list[int]  # slice i holds items bounds[i] to bounds[i + 1]
    joined: list[Piece]  # the slices' bytes with a comma between two: slice i at 2i


class ListCache:
    """The slices a response's lists were encoded in, with the versions their items had then (one
    versions array for lists parallel to each other, a request's messages and their sources):
    items with the same versions are the same objects, unchanged (the core's promise for a
    request's lists, `formats.context.Rendered`), so a slice whose items all have the versions it
    was encoded with is the same JSON again. Holds the newest encode's slices only."""

    def __init__(self) -> None:
        self.versions: array[int] = array("q")
        self.lists: dict[str, _Slices] = {}


@dataclass(frozen=True)
class KnownLists:
    """The lists under `keys` of a payload, to encode with `cache`: `versions[i]` is the version of
    item `i` of each (a copy the caller will not change: the cache keeps it)."""

    keys: frozenset[str]
    versions: array[int]
    cache: ListCache


def dumps_in_pieces(
    payload: dict[str, Any], sliced: Collection[str], known: KnownLists | None = None
) -> tuple[Piece, ...]:
    """`dumps(payload)` as pieces whose concatenation is that JSON, the lists under the keys
    `sliced` encoded a slice at a time (`SLICE_BYTES`); with `known`, a list as long as its versions
    reuses the slices of its previous encode whose items have the same versions. orjson writes a
    list compactly, so a slice's items are the bytes the whole list's encoding has for them; a slice
    the standard library must encode (`dumps`) writes the same values."""
    agreeing: int | None = None
    pieces: list[Piece] = []
    sep = b"{"
    kept: dict[str, _Slices] = {}
    for key, value in payload.items():
        pieces.append(sep + dumps(key) + b":")
        sep = b","
        if key in sliced and isinstance(value, list) and len(value) > SLICED_LIST_ITEMS:
            if known is not None and key in known.keys and len(value) == len(known.versions):
                if agreeing is None:
                    agreeing = _agreeing(known.versions, known.cache.versions)
                before = known.cache.lists.get(key) or _Slices([0], [])
                kept[key] = slices = _slices(value, known.versions, known.cache.versions, agreeing, before)
            else:
                slices = _slices(value, array("q"), array("q"), 0, _Slices([0], []))
            pieces += (b"[", *slices.joined, b"]")
        else:
            pieces.append(dumps(value))
    pieces.append(b"}" if payload else b"{}")
    if known is not None:
        known.cache.versions, known.cache.lists = known.versions, kept
    return tuple(pieces)


def _agreeing(new: array[int], old: array[int]) -> int:
    """The length of the longest common prefix of two version arrays. A request after one step
    changes its end only: one comparison of all but the last items (at C speed), then a few steps."""
    n = min(len(new), len(old))
    a, b = memoryview(new), memoryview(old)
    lo = max(0, n - 64)
    if a[:lo] != b[:lo]:
        low, high = 0, lo  # the prefix of length `low` agrees, that of length `high` does not
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (mid, high) if a[:mid] == b[:mid] else (low, mid)
        lo = low
    while lo < n and new[lo] == old[lo]:
        lo += 1
    return lo


def _slices(
    items: list[Any], versions: array[int], old: array[int], agreeing: int, before: _Slices
) -> _Slices:
    """The slices of `items`: those of `before` that end within the first `agreeing` items, or whose
    items have their versions again, kept; the others encoded."""
    bounds, joined, n = before.bounds, before.joined, len(items)
    k = bisect.bisect_right(bounds, min(agreeing, n)) - 1  # slices 0 to k - 1 end within them
    out_bounds, out_joined = bounds[: k + 1], joined[: max(0, 2 * k - 1)]
    start, count = bounds[k], FIRST_SLICE_ITEMS
    j = k  # the old slice at `start`, while the old slices go on
    reused_last = k > 0
    while start < n:
        body: Piece | None = None
        if j + 1 < len(bounds) and bounds[j + 1] <= n:
            end = bounds[j + 1]  # a changed slice is encoded again within its bounds: the next still match
            if versions[start:end] == old[start:end]:
                body = joined[2 * j]
            j += 1
        else:
            j = len(bounds)
            slices = len(out_bounds) - 1
            if reused_last and slices and len(out_joined[-1]) < SLICE_BYTES // 2:
                # New items after a small slice kept from before (a growing tail): encoded
                # together with it, so that the tail does not become one slice per step.
                out_bounds.pop()
                del out_joined[-2 if slices > 1 else -1 :]
                count += start - out_bounds[-1]
                start = out_bounds[-1]
            end = min(n, start + count)
        reused_last = body is not None
        if body is None:
            encoded = dumps(items[start:end])
            body = memoryview(encoded)[1:-1]  # the items, without the slice's brackets
            # The next new slice sized from this one's bytes per item (within 8x of this count).
            per_item = max(1, len(encoded) // (end - start))
            count = max(1, min((end - start) * 8, SLICE_BYTES // per_item))
        if out_joined:
            out_joined.append(b",")
        out_joined.append(body)
        out_bounds.append(end)
        start = end
    return _Slices(out_bounds, out_joined)


@dataclass(frozen=True)
class EncodedJson:
    """A value already serialized (`dumps`, `dumps_in_pieces`): the transport writes its pieces as
    they are, one after the other."""

    pieces: tuple[Piece, ...]

    @classmethod
    def of(cls, body: bytes) -> EncodedJson:
        return cls((body,))

    @property
    def body(self) -> bytes:
        """The JSON in one piece (a copy when there are several: for tests and small values)."""
        first = self.pieces[0]
        return first if len(self.pieces) == 1 and isinstance(first, bytes) else b"".join(self.pieces)


def encode_response(msg_id: int | str | None, result: EncodedJson) -> tuple[Piece, ...]:
    """The body of a response whose result is already encoded, in pieces to write one after the
    other: joining them would copy the result (40 MB for a long view's request) for nothing."""
    return (b'{"jsonrpc":"2.0","id":%s,"result":' % dumps(msg_id), *result.pieces, b"}")


# In the text json.dumps makes, a surrogate code point can only stand for itself inside a string.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
