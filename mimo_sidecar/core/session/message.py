"""One stored message: the host's own data plus the sidecar's cached per-part token estimates.

Messages are kept exactly as the host sent them (`info` and `parts` are the host's JSON objects, unknown
fields included) because every byte counts in the token estimate (behavior.md#message-estimate). The sidecar's
own annotations (`seq`, the caches) live on this record, never inside the host's dicts.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal, cast

from ..estimate.jsjson import js_json_length, js_json_length_and_plain
from ..estimate.jstext import est_len
from ..estimate.provider_count import Counting, PartCost, cost_tokens, sized_part_cost
from ..words import MAIN_AGENT

# behavior.md#stringify-parity: a part that cannot be serialized counts 1000
UNSERIALIZABLE_PART_TOKENS = 1000
TEXT_BLOCK_TYPES = frozenset({"text", "reasoning"})
BOUNDARY_PART_TYPES = frozenset({"checkpoint", "compaction"})

Json = dict[str, Any]

# behavior.md#messages: `time.created` is a non-negative integer of milliseconds, at most JavaScript's
# largest exact integer, so that a boundary's time (one more) is still exact for a JavaScript host.
MAX_CREATED_MS = 2**53 - 1
CreatedProblem = Literal["type", "fraction", "negative", "too-large"]


def created_problem(value: Any) -> CreatedProblem | None:
    """Why `value` is not a valid `time.created`, or None. An integral JSON number written with a
    fraction (`1767225600000.0`, which a Python host may send) is the same integer and is valid."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "type"
    if isinstance(value, float) and not math.isfinite(value):
        return "type"  # `1e400` on the wire: not a number of milliseconds at all
    if isinstance(value, float) and not value.is_integer():
        return "fraction"
    if value < 0:
        return "negative"
    return "too-large" if value > MAX_CREATED_MS else None


def part_tokens(part: Any) -> int:
    """`est(JSON.stringify(part))`, rounded per part (behavior.md#message-estimate)."""
    return tokens_of_length(js_json_length(part))


def tokens_of_length(n: int | None) -> int:
    """`part_tokens` of a part whose `JSON.stringify` length is `n` (None: unserialisable)."""
    if n is None:
        return UNSERIALIZABLE_PART_TOKENS
    return est_len(n)


# The key a request memo sets in `derived` on each message it keeps (core/request/build_memo.py). A
# change to such a message counts in `Message.kept_changes`: while that count stays, no kept
# message of any memo has changed, and a memo need not look at each of its own.
KEPT = "kept-by-a-request-memo"
_PLAIN_TOKENS = "request-tokens-for-any-provider"


class Message:
    """A message of a session: `info` (the host's message object), `parts` (in creation order).

    `part_tokens` caches each part's estimate and `tokens` their sum. They are maintained by
    `set_part`/`remove_part`/`replace_parts`, so a session re-estimate after one change costs O(1).
    `part_costs()` caches, the same way but lazily, what each part costs a provider
    (`provider_count`, behavior.md#d15), and `request_tokens` the message's request-size figure.
    """

    __slots__ = (
        "info",
        "parts",
        "seq",
        "part_tokens",
        "tokens",
        "_part_index",
        "derived",
        "_flags",
        "_costs",
        "_lengths",
        "plain_json",
    )

    def __init__(self, info: Json, parts: list[Json] | None = None, seq: int = 0) -> None:
        self.info = info
        self.seq = seq
        self.parts: list[Json] = []
        self.part_tokens: list[int] = []
        self.tokens = 0
        self._part_index: dict[str, int] = {}
        # Values other modules derive from this message (the watermark projection...). Cleared on
        # every change, so a derived value is computed once per version of the message.
        self.derived: dict[Any, Any] = {}
        self._flags: tuple[bool, bool, bool] | None = None
        self._costs: list[PartCost | None] = []
        self._lengths: list[int | None] = []  # each part's JSON length, which its cost starts from
        # True while orjson is known to write every part as `JSON.stringify` does (no float...,
        # `js_json_length_and_plain`): a tool input inside one is stringified without a check. A
        # part replaced or removed leaves it as it was (False stays False: the check then runs).
        self.plain_json = True
        self.replace_parts(parts or [])

    # -- identity and classification -------------------------------------------------------
    @property
    def id(self) -> str:
        message_id: str = self.info["id"]
        return message_id

    @property
    def role(self) -> str:
        role: str = self.info.get("role", "")
        return role

    @property
    def agent_id(self) -> str:
        return self.info.get("agentID") or MAIN_AGENT

    @property
    def created(self) -> int:
        t = self.info.get("time")
        c = t.get("created") if isinstance(t, dict) else None
        return int(c) if isinstance(c, (int, float)) and not isinstance(c, bool) else 0

    @property
    def finish(self) -> Any:
        """The `finish` field; None when absent (present-but-empty is `""`, behavior.md#watermark-compute)."""
        return self.info.get("finish")

    @property
    def has_finish(self) -> bool:
        return "finish" in self.info and self.info["finish"] is not None

    kept_changes: ClassVar[int] = 0

    def changed(self) -> None:
        """Forget everything derived from the message (call after any change to info or parts)."""
        if KEPT in self.derived:
            Message.kept_changes += 1
        self.derived.clear()
        self._flags = None

    def _part_flags(self) -> tuple[bool, bool, bool]:
        """(has a text block, carries a checkpoint/compaction part, carries a checkpoint part)."""
        if self._flags is None:
            types = {p.get("type") for p in self.parts}
            self._flags = (
                not types.isdisjoint(TEXT_BLOCK_TYPES),
                not types.isdisjoint(BOUNDARY_PART_TYPES),
                "checkpoint" in types,
            )
        return self._flags

    def has_text_block(self) -> bool:
        return self._part_flags()[0]

    def carries_boundary_part(self) -> bool:
        """Any role carrying a `checkpoint` or `compaction` part (the "recover once" test,
        behavior.md#recover-once)."""
        return self._part_flags()[1]

    def first_part(self, ptype: str) -> Json | None:
        for p in self.parts:
            if p.get("type") == ptype:
                return p
        return None

    def is_boundary(self) -> bool:
        """A user message carrying a `checkpoint` or `compaction` part (behavior.md#view)."""
        return self.role == "user" and self._part_flags()[1]

    def is_checkpoint_boundary(self) -> bool:
        return self.role == "user" and self._part_flags()[2]

    # -- incremental part maintenance ------------------------------------------------------
    def replace_parts(self, parts: list[Json]) -> None:
        self.parts = list(parts)
        self._lengths = []
        plain_json = True
        for part in self.parts:
            length, plain = js_json_length_and_plain(part)
            self._lengths.append(length)
            plain_json = plain_json and plain
        self.plain_json = plain_json
        self.part_tokens = [tokens_of_length(n) for n in self._lengths]
        self._costs = [None] * len(self.parts)
        self.tokens = sum(self.part_tokens)
        self._reindex()
        self.changed()

    def _reindex(self) -> None:
        self._part_index = {p["id"]: i for i, p in enumerate(self.parts) if isinstance(p.get("id"), str)}

    def part_position(self, part_id: str) -> int | None:
        return self._part_index.get(part_id)

    def set_part(self, part: Json) -> None:
        """Insert or replace one part (matched by `id`); only that part is re-estimated."""
        length, plain = js_json_length_and_plain(part)
        self.plain_json = self.plain_json and plain
        cost = tokens_of_length(length)
        pid = part.get("id")
        i = self._part_index.get(pid) if isinstance(pid, str) else None
        if i is None:
            self.parts.append(part)
            self.part_tokens.append(cost)
            self._costs.append(None)
            self._lengths.append(length)
            if isinstance(pid, str):
                self._part_index[pid] = len(self.parts) - 1
            self.tokens += cost
        else:
            self.tokens += cost - self.part_tokens[i]
            self.parts[i] = part
            self.part_tokens[i] = cost
            self._costs[i] = None
            self._lengths[i] = length
        self.changed()

    def remove_part(self, part_id: str) -> bool:
        i = self._part_index.get(part_id)
        if i is None:
            return False
        self.tokens -= self.part_tokens[i]
        del self.parts[i]
        del self.part_tokens[i]
        del self._costs[i]
        del self._lengths[i]
        self._reindex()
        self.changed()
        return True

    def refresh_part(self, index: int) -> None:
        """Re-estimate one part after the sidecar mutated it in place (microcompaction)."""
        length, plain = js_json_length_and_plain(self.parts[index])
        self.plain_json = self.plain_json and plain
        cost = tokens_of_length(length)
        self.tokens += cost - self.part_tokens[index]
        self.part_tokens[index] = cost
        self._costs[index] = None
        self._lengths[index] = length
        self.changed()

    # -- the request-size figure (behavior.md#d15) ---------------------------------------------
    def part_costs(self) -> list[PartCost]:
        """Each part's provider cost, computed once per version of the part."""
        costs = self._costs
        for i, cost in enumerate(costs):
            if cost is None:
                costs[i] = sized_part_cost(self.parts[i], self._lengths[i])
        return cast(list[PartCost], costs)  # every entry is set above

    def request_tokens(self, counting: Counting) -> int:
        """What the message's parts cost `counting`'s provider in a request (the reasoning a usage
        record says a response produced is added per response: `request_size`)."""
        plain = self.plain_request_tokens()
        if plain is not None:
            return plain
        key = ("request-tokens", counting)
        cached = self.derived.get(key)
        if cached is None:
            cached = self.derived[key] = sum(cost_tokens(c, counting) for c in self.part_costs())
        return int(cached)

    def plain_request_tokens(self) -> int | None:
        """`request_tokens` when no part holds media or an encrypted compaction, which every
        provider counts alike (None otherwise); computed once per version of the message."""
        cached = self.derived.get(_PLAIN_TOKENS)
        if cached is None:
            costs = self.part_costs()
            plain = all(not c.media and not c.compaction for c in costs)
            cached = self.derived[_PLAIN_TOKENS] = sum(c.text for c in costs) if plain else -1
        return None if cached < 0 else int(cached)

    def to_json(self) -> Json:
        return {"info": self.info, "parts": self.parts}

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Message({self.id!r}, {self.role}, seq={self.seq}, parts={len(self.parts)})"
