"""JavaScript `JSON.stringify` in Python: the exact text, and (fast) its UTF-16 length.

The token estimate of a message is the length of `JSON.stringify(part)` (behavior.md#message-estimate), so the
length must match JavaScript to the code unit. Python's serializers differ in three places
(behavior.md#stringify-parity): lone surrogates (JS escapes them as `\\udxxx`), float formatting (JS prints
`1` for `1.0`, `1e+21`, `1e-7`, plain decimals from 1e-6 to 1e21) and integers beyond 2^53 (JS prints the
nearest double). Everything else — compact separators, raw non-ASCII, the control-character escapes — is what
orjson and `json.dumps(ensure_ascii=False)` already produce.

`js_json_length` serializes with orjson (C speed, the common path) and corrects for floats and huge
integers with a walk that only visits containers; it falls back to the pure-Python `js_stringify`
when orjson refuses the value (lone surrogates, integers beyond 64 bits).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from .jstext import len16

_MAX_SAFE = 2**53
_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def js_number(x: float | int) -> str:
    """`String(x)` for a JavaScript number (Number::toString, radix 10)."""
    if isinstance(x, int) and abs(x) <= _MAX_SAFE:
        return str(x)
    try:
        f = float(x)
    except OverflowError:
        return "null"  # beyond the double range: JavaScript has Infinity, which stringifies to null
    if math.isnan(f) or math.isinf(f):
        return "null"
    if f == 0:
        return "0"  # also -0
    sign = "-" if f < 0 else ""
    digits, n = _shortest_digits(abs(f))
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        exp = ("+" if e >= 0 else "-") + str(abs(e))
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + "e" + exp
    return sign + body


def _shortest_digits(f: float) -> tuple[str, int]:
    """Shortest round-trip digits of a positive double and the decimal point position `n`
    (value = 0.digits × 10^n), as ECMAScript's Number::toString defines them."""
    r = repr(f)
    mantissa, _, exp = r.partition("e")
    e = int(exp) if exp else 0
    int_len = mantissa.index(".") if "." in mantissa else len(mantissa)
    digits = mantissa.replace(".", "")
    n = int_len + e
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    return digits, n


def _js_string(s: str) -> str:
    out = json.dumps(s, ensure_ascii=False)
    if not s.isascii() and _SURROGATES.search(s):
        out = _SURROGATES.sub(lambda m: m.group() if len(m.group()) == 2 else f"\\u{ord(m.group()):04x}", out)
    return out


_PLAIN_LEAVES = frozenset({str, int, bool, type(None)})


def _orjson_writes_it_as_js(value: Any) -> bool:
    """True when orjson's text of a container is `JSON.stringify`'s: no float, no integer beyond
    2^53 and no leaf of another type anywhere (orjson would serialize a datetime or a dataclass
    where JavaScript has no such value). Lone surrogates and non-string keys make orjson raise. A
    container met twice (shared, or a cycle) takes the exact path too."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        v = stack.pop()
        if isinstance(v, (dict, list, tuple)):
            if id(v) in seen:
                return False
            seen.add(id(v))
            stack.extend(v.values() if isinstance(v, dict) else v)
        elif type(v) not in _PLAIN_LEAVES or (type(v) is int and abs(v) > _MAX_SAFE):
            return False
    return True


def js_stringify(value: Any) -> str | None:
    """`JSON.stringify(value)` for JSON-like Python data; None where JavaScript returns undefined.

    Containers of plain values go through orjson (C speed: tool inputs are stringified for every
    OpenAI request); anything orjson would write differently takes the exact pure-Python path."""
    if isinstance(value, (dict, list, tuple)) and _orjson_writes_it_as_js(value):
        try:
            return orjson.dumps(value).decode()
        except (TypeError, orjson.JSONEncodeError):
            pass  # a lone surrogate or a non-string key
    return _js_stringify(value)


def _js_stringify(value: Any) -> str | None:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            sv = _js_stringify(v)
            if sv is not None:  # undefined members are omitted
                items.append(_js_string(str(k)) + ":" + sv)
        return "{" + ",".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_js_stringify(v) or "null" for v in value) + "]"
    return None


def _js_correction(value: Any) -> tuple[int, bool]:
    """Length difference JavaScript minus orjson over every float / huge int inside `value`, and
    whether there is none of them nor a leaf of a non-JSON type (orjson's text is then exactly
    `JSON.stringify`'s, of `value` and of everything inside it)."""
    stack = [value]
    delta = 0
    plain = True
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):  # orjson serializes tuples as arrays too
            stack.extend(v)
        elif isinstance(v, float) or (type(v) is int and abs(v) > _MAX_SAFE):
            delta += len(js_number(v)) - len(orjson.dumps(v))
            plain = False
        elif type(v) not in _PLAIN_LEAVES:
            plain = False
    return delta, plain


def _utf16_len_of_utf8(b: bytes) -> int:
    if b.isascii():
        return len(b)
    # Code points, plus one for every 4-byte (astral) sequence: it is a surrogate pair in UTF-16.
    astral = b.count(b"\xf0") + b.count(b"\xf1") + b.count(b"\xf2") + b.count(b"\xf3") + b.count(b"\xf4")
    return len(b.decode("utf-8")) + astral


def js_json_length(value: Any) -> int | None:
    """`JSON.stringify(value).length` in UTF-16 code units; None where the result is undefined."""
    return js_json_length_and_plain(value)[0]


def js_json_length_and_plain(value: Any) -> tuple[int | None, bool]:
    """`js_json_length(value)`, and whether orjson writes `value`, and every value inside it, as
    `JSON.stringify` does (no float, no integer beyond 2^53, no lone surrogate, no leaf of a
    non-JSON type): a part read from the wire is measured once, and what a request later
    stringifies of it (a tool call's input) can then skip the check (`ToolCall.input_json`)."""
    try:
        encoded = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        try:
            text = js_stringify(value)
        except RecursionError:
            # Nesting deeper than Python's stack: JavaScript's JSON.stringify also throws (a
            # RangeError) on deep enough nesting, and a part that cannot be serialized counts 1000.
            return None, False
        return (None if text is None else len16(text)), False
    delta, plain = _js_correction(value)
    return _utf16_len_of_utf8(encoded) + delta, plain
