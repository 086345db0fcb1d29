"""How deep a JSON text nests, and the top-level members of one too deep to parse.

Every frame is held to `MAX_NESTING` levels, orjson's own parse limit. The limit matters on the
other paths: the stdlib parser (the fallback for lone surrogate escapes) recurses and would raise
RecursionError, and ijson's C backend (large frames) keeps a prefix string per level, so a frame of
a few megabytes of `[` took gigabytes. `nests_deeper_than` checks a body before those parsers run,
without parsing it; `top_level_scalars` then finds the request's `id` and `method`, so even a frame
refused for its depth gets its answer.

Both work on the raw bytes: the escape pairs `\\\\` and `\\"` are dropped, after which every `"` left
is a string delimiter, so the brackets outside strings are the structure.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_NESTING = 1024
_CHUNK = 1 << 20  # bounds the temporary copies made for a large frame

_STEP = [0] * 256
for _byte, _step in ((b"[", 1), (b"{", 1), (b"]", -1), (b"}", -1)):
    _STEP[_byte[0]] = _step
_NOT_BRACKET = bytes(b for b in range(256) if not _STEP[b])
_BACKSLASH = 0x5C


def _unescaped(chunk: bytes) -> bytes:
    return chunk.replace(b"\\\\", b"").replace(b'\\"', b"")


def nests_deeper_than(body: bytes, limit: int = MAX_NESTING) -> bool:
    """Whether the JSON text `body` opens more than `limit` arrays/objects inside one another."""
    depth = 0
    in_string = False
    start, size = 0, len(body)
    while start < size:
        end = min(start + _CHUNK, size)
        while end < size and body[end - 1] == _BACKSLASH:  # never split an escape pair
            end += 1
        pieces = _unescaped(body[start:end]).split(b'"')
        outside = b"".join(pieces[1::2] if in_string else pieces[0::2])
        if len(pieces) % 2 == 0:
            in_string = not in_string
        brackets = outside.translate(None, _NOT_BRACKET)
        if brackets:
            levels = list(accumulate(map(_STEP.__getitem__, brackets), initial=depth))
            if max(levels) > limit:
                return True
            depth = levels[-1]
        start = end
    return False


_TOKEN = re.compile(rb'\s*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([\[{])|([\]}])|([:,])|([^\s"\[\]{}:,]+))', re.DOTALL)


def top_level_scalars(body: bytes) -> dict[str, Any]:
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
            depth += 1
            if depth == 1:
                expect_key = opener == b"{"
                if not expect_key:
                    return found
            key = None
        elif closer:
            depth -= 1
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
