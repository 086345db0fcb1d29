"""How deep a JSON text nests, and the top-level members of one too deep to parse.

Every frame is held to `MAX_NESTING` levels, orjson's own parse limit (`FrameTooDeep` past it).
The limit matters on the other path: the stdlib parser (the fallback for lone surrogate escapes)
recurses and would raise RecursionError. `nests_deeper_than` checks a text before that parser runs,
without parsing it; `top_level_scalars` then finds the request's `id` and `method`, so even a frame
refused for its depth gets its answer.

Both work on the raw bytes: the escape pairs `\\\\` and `\\"` are dropped, after which every `"` left
is a string delimiter, so the brackets outside strings are the structure. The check costs about
3 ms per megabyte; orjson's own limit makes it free on the common path.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_NESTING = 1024


class FrameTooDeep(ValueError):
    """A frame body nests deeper than `MAX_NESTING` levels (it is not parsed)."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_NESTING} levels")


_CHUNK = 1 << 20  # bounds the temporary copies made for a large frame
_WINDOW = 512  # brackets counted at once: an exact walk only where the count could cross the limit

_STEP = [0] * 256
for _byte, _step in ((b"[", 1), (b"{", 1), (b"]", -1), (b"}", -1)):
    _STEP[_byte[0]] = _step
# One translate keeps what decides the structure: brackets, quotes, backslashes and the letters an
# escape can have after its backslash (folded into "e"), so each backslash still sits right before
# what it escapes; every other byte goes.
_ESCAPED = b"/bfnrtu"
_FOLD = bytes.maketrans(_ESCAPED, b"e" * len(_ESCAPED))
_DROP = bytes(b for b in range(256) if b not in b'[]{}"\\' + _ESCAPED)
_BACKSLASH = 0x5C


def _brackets_outside_strings(chunk: bytes, in_string: bool) -> tuple[bytes, bool]:
    """The brackets of `chunk` that are outside strings, and whether it ends inside one."""
    reduced = chunk.translate(_FOLD, _DROP)
    # Escape pairs go first (left to right, as JSON reads them); then every quote left delimits a
    # string, and the pair `""` (an empty string, or a string's end and the next one's start)
    # holds nothing outside, so it goes too: what remains splits into few pieces.
    reduced = reduced.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, b"\\e").replace(b'""', b"")
    pieces = reduced.split(b'"')
    outside = b"".join(pieces[1::2] if in_string else pieces[0::2])
    return outside, in_string != (len(pieces) % 2 == 0)


def nests_deeper_than(body: bytes | bytearray, limit: int = MAX_NESTING) -> bool:
    """Whether the JSON text `body` opens more than `limit` arrays/objects inside one another."""
    depth = 0
    in_string = False
    start, size = 0, len(body)
    while start < size:
        end = min(start + _CHUNK, size)
        while end < size and body[end - 1] == _BACKSLASH:  # never split an escape pair
            end += 1
        brackets, in_string = _brackets_outside_strings(bytes(body[start:end]), in_string)
        for i in range(0, len(brackets), _WINDOW):
            window = brackets[i : i + _WINDOW]
            opened = window.count(b"[") + window.count(b"{")
            if (
                depth + opened > limit
                and max(accumulate(map(_STEP.__getitem__, window), initial=depth)) > limit
            ):
                return True
            depth += 2 * opened - len(window)
        start = end
    return False


# Runs of openers or of closers are one token each: a frame refused for its depth is mostly brackets.
_TOKEN = re.compile(
    rb'\s*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([\[{]+)|([\]}]+)|([:,])|([^\s"\[\]{}:,]+))', re.DOTALL
)


def top_level_scalars(body: bytes | bytearray) -> dict[str, Any]:
    """The members of the top-level object whose values are strings, numbers, booleans or null
    (`jsonrpc`, `id`, `method`...), read without building anything nested. Best effort: {} for
    text that is not an object."""
    found: dict[str, Any] = {}
    depth = 0
    key: str | None = None
    expect_key = False
    pos = 0
    while True:
        m = _TOKEN.match(body, pos)
        if m is None:
            return found
        pos = m.end()
        string, opener, closer, punct, bare = m.groups()
        if opener:
            if depth == 0:
                expect_key = opener[:1] == b"{"
                if not expect_key:
                    return found
            depth += len(opener)
            key = None
        elif closer:
            depth -= len(closer)
            if depth <= 0:
                return found
        elif depth != 1:
            continue
        elif punct == b",":
            expect_key, key = True, None
        elif punct == b":":
            expect_key = False
        elif expect_key and string:
            key = _scalar(string)
        elif key is not None and (string or bare):
            found[key] = _scalar(string or bare)
            key = None


def _scalar(token: bytes) -> Any:
    try:
        return json.loads(token.decode("utf-8"))
    except ValueError:
        return None
