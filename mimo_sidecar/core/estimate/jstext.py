"""JavaScript string semantics in Python: UTF-16 lengths and slices, JS whitespace, the token estimate.

Every length, cut and offset of the rebuild rules is in UTF-16 code units (behavior.md#js-utf16).
Python strings index by code point, so astral characters (emoji) count 1 here and 2 in JavaScript.
The helpers below take a fast path for the common case (no astral character), where both agree.
"""

from __future__ import annotations

import re

# The JavaScript `\s` / `String.prototype.trim()` set (behavior.md#js-whitespace). Python's `\s` differs:
# it also matches \x1c-\x1f and \x85 and does not match \ufeff.
JS_WS_CHARS = (
    "\t\n\v\f\r \u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
JS_WS_CLASS = "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
JS_WS_RUN = re.compile(JS_WS_CLASS + "+")


def js_trim(s: str) -> str:
    """`String.prototype.trim()`."""
    return s.strip(JS_WS_CHARS)


def is_blank(s: str | None) -> bool:
    """True when `s` is absent or JS-trims to the empty string."""
    return not s or not js_trim(s)


def _astral_count(s: str) -> int:
    # Code points above U+FFFF take two UTF-16 code units.
    return len(s.encode("utf-16-le", "surrogatepass")) // 2 - len(s)


def len16(s: str) -> int:
    """Length in UTF-16 code units (JavaScript `.length`)."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def est(s: str | None) -> int:
    """Token estimate of a string (behavior.md#est): UTF-16 length / 4 rounded half up; 0 when empty."""
    if not s:
        return 0
    return (len16(s) + 2) // 4


def est_len(n16: int) -> int:
    """The token estimate of a string whose UTF-16 length is already known."""
    return (n16 + 2) // 4 if n16 > 0 else 0


def slice16(s: str, start: int, end: int | None = None) -> str:
    """`s.slice(start, end)` with JavaScript semantics, in UTF-16 code units.

    Negative indices count from the end, as in JavaScript and Python. A cut through a surrogate
    pair yields a lone surrogate, exactly as JavaScript does; callers repair it where D9 says so.
    """
    if s.isascii() or not _astral_count(s):
        return s[start:end]
    units = s.encode("utf-16-le", "surrogatepass")
    n = len(units) // 2
    a, b, _ = slice(start, end).indices(n)
    if b <= a:
        return ""
    return units[2 * a : 2 * b].decode("utf-16-le", "surrogatepass")


def head16(s: str, n: int) -> str:
    """The first `n` code units (`s.slice(0, n)`); `n` may be negative (counts from the end)."""
    return slice16(s, 0, n)


def tail16(s: str, k: int) -> str:
    """`s.slice(-k)`: the last `k` code units; `k == 0` returns the whole string (`slice(-0)`)."""
    return slice16(s, -k) if k else s


def is_high_surrogate(ch: str) -> bool:
    return "\ud800" <= ch <= "\udbff"


def is_low_surrogate(ch: str) -> bool:
    return "\udc00" <= ch <= "\udfff"


def drop_dangling_high(piece: str) -> str:
    """Drop a high surrogate left at the end of a cut piece (D9; `truncateUser` in MiMo)."""
    return piece[:-1] if piece and is_high_surrogate(piece[-1]) else piece


def drop_leading_low(piece: str) -> str:
    """Drop a low surrogate left at the start of a tail piece (D9; `truncateUser` in MiMo)."""
    return piece[1:] if piece and is_low_surrogate(piece[0]) else piece


def fold_ws(text: str) -> str:
    """Collapse every JS-whitespace run to one space, then JS-trim (first step of `fold`, behavior.md#fold).
    """
    return js_trim(JS_WS_RUN.sub(" ", text))
