"""Typed reads of untrusted JSON: each returns the value when it has the expected type, else None.

Transcripts are third-party files that change shape between tool versions, and any byte of them
may be damaged. Every field is read through these helpers, so a surprise becomes a `None` the
caller decides about (skip, infer, or report a bad record) instead of an exception.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

Json = dict[str, Any]

MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z: larger values are damage, not time


def as_dict(value: Any) -> Json | None:
    return value if isinstance(value, dict) else None


def as_list(value: Any) -> list[Any] | None:
    return value if isinstance(value, list) else None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def nonempty_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def as_count(value: Any) -> int | None:
    """A non-negative integer count (token counts); floats with an integral value are accepted."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


def epoch_ms(value: Any) -> int | None:
    """Milliseconds since the epoch from an ISO-8601 string (`...Z` or with an offset; naive = UTC)
    or from a number already in milliseconds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value) if 0 <= value <= MAX_EPOCH_MS else None
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        ms = round(moment.timestamp() * 1000)
    except (OverflowError, OSError, ValueError):
        return None
    return ms if 0 <= ms <= MAX_EPOCH_MS else None
