"""MiMo-style identifiers (behavior.md#ids): minting v2 IDs and reading the time back out of an ID.

An ID is `{prefix}_{payload}` with a 26-character payload. The v2 ascending payload is the mark `g`,
16 lowercase hex digits of `n = ts_ms * 4096 + counter` and 9 base-62 random characters. `g` sorts
after every hex digit, so v2 IDs sort after the legacy v1 IDs of the same prefix, and among
themselves they sort in minting order because `n` only grows (behavior.md#id-monotonic, DEVIATION D10).

The legacy v1 payload (behavior.md#id-v1, OpenCode's scheme) is 12 hex digits of the low 48 bits of the same
`n`, then 14 base-62 characters. The sidecar mints v1 IDs for a boundary only when the host's own
IDs are v1 and declared ascending, so that the boundary sorts among them as a host ID would.

The minter is deterministic given `now_ms` and its `random_bytes` source, so tests inject both.
It is not thread-safe: the sidecar mints from its single event loop.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Literal

IdScheme = Literal["v2", "v1"]  # the ascending schemes the sidecar can mint

# Known prefixes (behavior.md#id-format); hosts may mint with others, so the minter does not restrict itself.
PREFIXES = {
    "message": "msg",
    "part": "prt",
    "session": "ses",
    "event": "evt",
    "permission": "per",
    "question": "que",
    "user": "usr",
    "pty": "pty",
    "tool": "tool",
    "workspace": "wrk",
    "entry": "ent",
    "workflow": "wf",
}

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
PAYLOAD_LENGTH = 26
RANDOM_CHARS_V2 = 9
RANDOM_CHARS_V1 = 14
COUNTER_SPAN = 4096  # n = ts_ms * 4096 + counter
ASCENDING_MARK = "g"
DESCENDING_MARK = "-"
_U64 = (1 << 64) - 1
_U48 = (1 << 48) - 1

# v1 (behavior.md#id-v1): 12 hex digits = the low 48 bits of n, so the time part wraps every 2^36 ms.
V1_CYCLE_MS = 1 << 36
_V1_PAYLOAD = re.compile(r"[0-9a-f]{12}[0-9A-Za-z]{14}")
_V2_PAYLOAD = re.compile(r"[g\-][0-9a-f]{16}[0-9A-Za-z]{9}")


class IdMinter:
    """Mints v2 IDs. One counter serves every prefix, as MiMo's process-global counter does."""

    __slots__ = ("_random_bytes", "_last_ts", "_counter", "_last_n")

    def __init__(self, random_bytes: Callable[[int], bytes] = os.urandom) -> None:
        self._random_bytes = random_bytes
        self._last_ts: int | None = None
        self._counter = 0
        self._last_n = -1

    def ascending(self, prefix: str, now_ms: int) -> str:
        """A new ascending ID: sorts after every ID this minter issued before."""
        return _join(prefix, ASCENDING_MARK + _hex16(self._next_n(now_ms)) + self._random_suffix())

    def ascending_v1(self, prefix: str, now_ms: int) -> str:
        """A new legacy v1 ID (behavior.md#id-v1): the low 48 bits of `n`, then 14 random base-62 characters.
        It sorts after the v1 IDs minted earlier in the same 2^36 ms cycle."""
        return _join(
            prefix, format(self._next_n(now_ms) & _U48, "012x") + self._random_suffix(RANDOM_CHARS_V1)
        )

    def mint(self, prefix: str, now_ms: int, scheme: IdScheme = "v2") -> str:
        """A new ascending ID in the given scheme."""
        return self.ascending_v1(prefix, now_ms) if scheme == "v1" else self.ascending(prefix, now_ms)

    def descending(self, prefix: str, now_ms: int) -> str:
        """A new descending ID (sessions): `n` inverted in 64 bits, so newer IDs sort first."""
        inverted = ~self._next_n(now_ms) & _U64
        return _join(prefix, DESCENDING_MARK + _hex16(inverted) + self._random_suffix())

    def _next_n(self, now_ms: int) -> int:
        # The counter restarts whenever the millisecond changes and is incremented before use,
        # so the first ID of a millisecond has counter 1 (behavior.md#id-v2).
        if now_ms != self._last_ts:
            self._last_ts = now_ms
            self._counter = 0
        self._counter += 1
        n = now_ms * COUNTER_SPAN + self._counter
        # D10: a clock that went backwards, or more than 4095 IDs in one millisecond, must not
        # yield an `n` that fails to increase.
        if n <= self._last_n:
            n = self._last_n + 1
        self._last_n = n
        return n

    def _random_suffix(self, length: int = RANDOM_CHARS_V2) -> str:
        # Each character is one random byte mod 62 (MiMo's scheme; the slight bias is kept).
        return "".join(BASE62[b % 62] for b in self._random_bytes(length))


def _hex16(n: int) -> str:
    return format(n & _U64, "016x")


def _join(prefix: str, payload: str) -> str:
    if not prefix or "_" in prefix:
        raise ValueError(f"invalid ID prefix: {prefix!r}")
    return f"{prefix}_{payload}"


def has_prefix(identifier: str, prefix: str) -> bool:
    """A host-supplied ID is accepted when it starts with the right prefix (behavior.md#id-v2)."""
    return isinstance(identifier, str) and identifier.startswith(prefix + "_")


def _payload(identifier: str) -> str:
    _, sep, payload = identifier.partition("_")
    if not sep or len(payload) != PAYLOAD_LENGTH:
        raise ValueError(f"not a MiMo ID: {identifier!r}")
    return payload


def is_v2(identifier: str) -> bool:
    try:
        return _V2_PAYLOAD.fullmatch(_payload(identifier)) is not None
    except ValueError:
        return False


def is_v1(identifier: str) -> bool:
    try:
        return _V1_PAYLOAD.fullmatch(_payload(identifier)) is not None
    except ValueError:
        return False


def ascending_scheme(identifier: str) -> IdScheme | None:
    """The scheme of an ascending ID: "v2", "v1", or None for anything else (descending v2 too)."""
    if is_v2(identifier):
        return "v2" if _payload(identifier)[0] == ASCENDING_MARK else None
    return "v1" if is_v1(identifier) else None


def timestamp_of(identifier: str, now_ms: int | None = None) -> int:
    """Creation time in ms encoded in an ID.

    v2: `floor(n / 4096)`; a descending ID is inverted back first. v1 (behavior.md#id-v1): the 36 time bits
    only give the time modulo 2^36 ms, so the latest cycle that is ≤ `now_ms` is chosen, which
    needs `now_ms`. Raises ValueError for anything else.
    """
    payload = _payload(identifier)
    if _V2_PAYLOAD.fullmatch(payload):
        n = int(payload[1:17], 16)
        if payload[0] == DESCENDING_MARK:
            n = ~n & _U64
        return n // COUNTER_SPAN
    if _V1_PAYLOAD.fullmatch(payload):
        if now_ms is None:
            raise ValueError("a v1 ID needs now_ms to resolve its 2^36 ms cycle")
        return _v1_timestamp(int(payload[:12], 16) // COUNTER_SPAN, now_ms)
    raise ValueError(f"not a MiMo ID: {identifier!r}")


def _v1_timestamp(time_bits: int, now_ms: int) -> int:
    # The latest t with t ≡ time_bits (mod 2^36) and t ≤ now. Before the first cycle has
    # completed (now < time_bits) the only sensible answer is the raw value.
    t = now_ms - (now_ms - time_bits) % V1_CYCLE_MS
    return t if t >= 0 else time_bits
