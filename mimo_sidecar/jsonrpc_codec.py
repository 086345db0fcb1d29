"""The JSON codec of the transport: frame bodies to Python values and back (no pygls).

orjson on the fast path; ijson's C backend for very large frames; the standard library only for
what those refuse but JSON allows (lone surrogate escapes, numbers beyond the double range).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import ijson
import orjson


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
    """Parse a frame body. Raises ValueError (or UnicodeDecodeError) when it is not UTF-8 JSON."""
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


def dumps(payload: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """Serialize an outgoing message as UTF-8 JSON (no ASCII escaping)."""
    try:
        return orjson.dumps(payload, default=default)
    except TypeError:  # e.g. an integer beyond 64 bits
        return json.dumps(payload, default=default, ensure_ascii=False, separators=(",", ":")).encode()
