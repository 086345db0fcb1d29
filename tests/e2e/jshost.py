"""What a JavaScript host puts on the wire, and how to compare what comes back.

A JavaScript string is a sequence of UTF-16 code units, any of which may be a lone surrogate (an
editor buffer cut mid-character, model output split between two chunks). `JSON.stringify` writes
such a unit as a `\\udxxx` escape and every other character raw, so the frame stays valid UTF-8.
`js_frame` writes frames the same way; `Raw` splices in JSON text no encoder would produce (nesting
deeper than Python can serialize, number literals beyond the double range).

Comparisons are made on code units (`units`), the host's own view of its strings: Python folds an
escaped surrogate pair into one code point, but a lone half stays a code point of its own.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import struct
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from mimo_sidecar.transport.framing import frame

from .rawclient import RawClient

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Raw:
    """JSON text inserted verbatim where this object sits in a payload."""

    text: str


def js_json(payload: Any) -> bytes:
    """`JSON.stringify(payload)` as UTF-8 bytes: raw non-ASCII, surrogate code points escaped."""
    raws: dict[str, str] = {}

    def placeholder(obj: Any) -> str:
        if not isinstance(obj, Raw):
            raise TypeError(f"not JSON: {obj!r}")
        key = f"@raw:{secrets.token_hex(12)}@"
        raws[key] = obj.text
        return key

    text = json.dumps(
        payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=placeholder
    )
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    for key, raw in raws.items():
        text = text.replace(json.dumps(key), raw, 1)
    return text.encode("utf-8")


def js_frame(payload: Any) -> bytes:
    return frame(js_json(payload))


class JsHostClient(RawClient):
    """A raw client that writes its frames as a JavaScript host does (`js_frame`)."""

    def send(self, payload: Any) -> None:
        self.send_raw(js_frame(payload))


def units(text: str) -> bytes:
    """The UTF-16 code units of a string (lone surrogates kept as they are)."""
    return text.encode("utf-16-le", "surrogatepass")


def as_read(number: int | float) -> int | float | None:
    """A number as protocol.md says the sidecar reads it: integers within 64 bits exactly, others as
    the nearest double, null beyond the double range."""
    if isinstance(number, int) and not isinstance(number, bool) and -(2**63) <= number < 2**64:
        return number
    try:
        as_double = float(number)
    except OverflowError:
        return None
    return None if math.isinf(as_double) else as_double


def in_units(value: Any) -> Any:
    """A JSON value as the host will get it back: every string (keys included) as its code units,
    every number as the sidecar reads it (`as_read`)."""
    if isinstance(value, Raw):
        return as_read(json.loads(value.text, parse_int=lambda t: int(t) if len(t) < 4000 else float(t)))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return as_read(value)
    if isinstance(value, str):
        return units(value)
    if isinstance(value, list):
        return [in_units(v) for v in value]
    if isinstance(value, dict):
        return {units(k): in_units(v) for k, v in value.items()}
    return value


def strings_of(value: Any) -> list[str]:
    """Every string value in a JSON value (keys excluded), depth first."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in strings_of(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_of(v)]
    return []


def nested(depth: int, kind: str = "list") -> Raw:
    """A value nested `depth` containers deep, as raw JSON text."""
    if kind == "list":
        return Raw("[" * depth + "]" * depth)
    return Raw('{"a":' * depth + "0" + "}" * depth)


# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

# Code units a host's text is made of: anything in the BMP (lone surrogates included), the ones
# that broke real clients, and astral characters as proper pairs.
_SPECIAL_UNITS = (0x0000, 0x0001, 0x001F, 0x0022, 0x005C, 0x007F, 0x2028, 0x2029, 0xFEFF, 0xFFFF)
_LONE_UNITS = (0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xD83D, 0xDE00)
_chunk = st.one_of(
    st.integers(0x20, 0x7E).map(lambda u: (u,)),
    st.integers(0, 0xFFFF).map(lambda u: (u,)),
    st.sampled_from(_SPECIAL_UNITS + _LONE_UNITS).map(lambda u: (u,)),
    st.integers(0x10000, 0x10FFFF).map(lambda cp: (0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + (cp & 0x3FF))),
)


def _decode(chunks: list[tuple[int, ...]]) -> str:
    flat = [u for c in chunks for u in c]
    return struct.pack(f"<{len(flat)}H", *flat).decode("utf-16-le", "surrogatepass")


def js_text(min_size: int = 0, max_size: int = 16) -> st.SearchStrategy[str]:
    """A JavaScript string: arbitrary UTF-16 code units, lone surrogates and NUL included."""
    return st.lists(_chunk, min_size=min_size, max_size=max_size).map(_decode)


LONE_SURROGATE = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "a\ud83d", "\ude00b"])

HUGE_NUMBERS = st.sampled_from(
    [
        Raw("1e400"),
        Raw("-1e400"),
        Raw("123456789012345678901234567890"),
        Raw("-123456789012345678901234567890"),
        Raw("1.5e-400"),
        Raw("-0"),
        Raw("7" * 5000),
        2**53 + 1,
        2**63,
        2**64,
        -(2**63) - 1,
        1.7976931348623157e308,
        5e-324,
    ]
)
DEEP = st.tuples(
    st.sampled_from([64, 254, 255, 256, 500, 1023, 1024, 1025, 3000, 100_000]),
    st.sampled_from(["list", "dict"]),
).map(lambda dk: nested(*dk))

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    scalars | js_text() | HUGE_NUMBERS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(js_text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
nasty_values = st.one_of(json_values, DEEP, HUGE_NUMBERS, LONE_SURROGATE)
