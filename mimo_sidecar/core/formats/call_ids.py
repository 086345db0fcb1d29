"""Call IDs within each provider's limits, by a deterministic remapping (docs/formats.md, "`callIdMap`").

An ID that already fits the target is sent unchanged. Any other ID becomes its sanitised, truncated
form plus `_` and 10 hex digits of the SHA-256 of the original ID: the same original ID maps to the
same ID in every request, whatever else the request holds, so prompt caches stay valid from turn to
turn and across rebuilds. The `mapped → original` table goes back to the host with the request so
the calls a provider returns can be matched to the stored tool parts.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

HASH_DIGITS = 10
ANTHROPIC_INVALID = re.compile(r"[^A-Za-z0-9_-]")


@dataclass
class CallIdMap:
    max_length: int | None = None
    invalid: re.Pattern[str] | None = None
    mapped: dict[str, str] = field(default_factory=dict)  # mapped ID → original ID
    # original ID → the ID sent, for this conversion: a call's ID is asked for by its call, its
    # result and the result's moved media
    _sent: dict[str, str] = field(default_factory=dict, repr=False)

    def __call__(self, original: str) -> str:
        sent = self._sent.get(original)
        if sent is None:
            sent = self._sent[original] = self._fitted(original)
        return sent

    def _fitted(self, original: str) -> str:
        fits = (self.max_length is None or len(original) <= self.max_length) and (
            self.invalid is None or not self.invalid.search(original)
        )
        if fits:
            return original
        base = self.invalid.sub("_", original) if self.invalid is not None else original
        suffix = "_" + hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]
        if self.max_length is not None:
            base = base[: self.max_length - len(suffix)]
        out = base + suffix
        self.mapped[out] = original
        return out


def unchanged() -> CallIdMap:
    return CallIdMap()


def anthropic() -> CallIdMap:
    """`tool_use.id` accepts only letters, digits, `_` and `-`."""
    return CallIdMap(invalid=ANTHROPIC_INVALID)


def openai_chat() -> CallIdMap:
    """`tool_calls[].id`: at most 40 characters."""
    return CallIdMap(max_length=40)


def openai_responses() -> CallIdMap:
    """`call_id`: at most 64 characters."""
    return CallIdMap(max_length=64)
