"""The entries of "# Recent user input (verbatim)" (behavior.md#section-recent-user), with DEVIATIONS D11 and
D13.

- **Window (D11).** behavior.md#section-recent-user looks at the newest 200 messages of the main slice. In a
split shape a
  tool step costs two stored messages (the call and its carrier), and hosts such as Claude Code
  store one provider response as several entries sharing `info.providerMessageID`, so 200 stored
  messages covered only about 75 steps and the user's asks fell out of the window. The window
  therefore counts *logical* messages: a carrier does not count, nor does an entry of a provider
  response that a newer entry already counted. On inline data every message counts, as in MiMo.
- **Entries.** Newest to oldest under `recent_user` tokens, each head/tail-truncated to
  `recent_user_per_msg`; the first entry that does not fit stops the loop (MiMo's rule, kept).
- **The newest ask (D13).** The newest genuine user ask of the main slice (the newest message
behavior.md#section-recent-user
  would take as an entry, wherever it is) must not be missing: when the window or the cap left it
  out, it is appended as the newest entry, truncated to fit the section's cap, older entries giving
  way. The render reports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .. import texts
from ..config import PushCaps
from ..estimate.jstext import drop_dangling_high, drop_leading_low, est, head16, is_blank, tail16
from ..session.message import Message
from ..session.shapes import is_carrier, provider_id

# behavior.md#section-recent-user: the newest 200 main-slice messages (logical ones, D11)
RECENT_USER_WINDOW = 200
RECENT_USER_EXCLUDED_PARTS = frozenset({"tool", "checkpoint", "compaction"})
HEAD_SHARE = 0.6  # truncateUser keeps floor(cap × 0.6) × 4 units of head ...
TAIL_SHARE = 0.3  # ... and floor(cap × 0.3) × 4 units of tail (behavior.md#section-recent-user)
MIN_TRUNCATION_CAP = 4  # below it truncateUser's tail is the whole text (JavaScript `slice(-0)`)
# The elision marker: (elided tokens, message ID) -> its line (the reference's, or behavior.md#d18's).
Marker = Callable[[int, str], str]


# -- candidates ------------------------------------------------------------------------------------
def raw_user_text(msg: Message) -> str:
    """Non-synthetic, non-empty `text` parts joined with "\\n" (`ignored` ones are kept)."""
    return "\n".join(
        p["text"]
        for p in msg.parts
        if p.get("type") == "text" and not p.get("synthetic") and isinstance(p.get("text"), str) and p["text"]
    )


def is_recent_user_candidate(msg: Message) -> bool:
    """A user-role message with no tool/checkpoint/compaction part that is not a carrier (D8)."""
    if msg.role != "user":
        return False
    if any(p.get("type") in RECENT_USER_EXCLUDED_PARTS for p in msg.parts):
        return False  # earlier boundaries are never folded back in
    return not is_carrier(msg)


def is_user_ask(msg: Message) -> bool:
    """A genuine user ask: a candidate whose raw text is not blank (what behavior.md#section-recent-user makes
    an entry of). Harness-injected text is flagged `synthetic` by the host and is therefore not an ask."""
    return is_recent_user_candidate(msg) and not is_blank(raw_user_text(msg))


def logical_window(newest_first: Iterable[Message], limit: int = RECENT_USER_WINDOW) -> list[Message]:
    """D11: the newest messages back to the `limit`-th logical one, in chronological order.

    `newest_first` walks a slice from its newest message. Carriers, and entries of a provider
    response that a newer entry already counted, are taken without counting. Idempotent: the
    window of a window is itself.
    """
    window: list[Message] = []
    counted: set[str] = set()
    for m in newest_first:
        if not is_carrier(m):
            key = provider_id(m)
            if key not in counted:
                if len(counted) == limit:
                    break
                counted.add(key)
        window.append(m)
    window.reverse()
    return window


def newest_user_ask(newest_first: Iterable[Message]) -> Message | None:
    """The newest genuine user ask of a slice walked from its newest message, or None."""
    return next((m for m in newest_first if is_user_ask(m)), None)


# -- truncation ------------------------------------------------------------------------------------
def truncate_user(
    text: str, cap: int, message_id: str, marker: Marker = texts.user_elision_marker
) -> str:
    """behavior.md#truncate-user `truncateUser`: head 60 % / tail 30 % of the cap with an elision line
    between."""
    total = est(text)
    if total <= cap:
        return text
    head = drop_dangling_high(head16(text, math.floor(cap * HEAD_SHARE) * 4))
    k = math.floor(cap * TAIL_SHARE) * 4
    tail = drop_leading_low(tail16(text, k))  # k == 0: the whole text (JavaScript `slice(-0)`)
    elided = total - est(head) - est(tail)
    return head + "\n" + marker(elided, message_id) + "\n" + tail


def fit_user_entry(
    raw: str, per_msg: int, budget: int, message_id: str, marker: Marker = texts.user_elision_marker
) -> str | None:
    """`truncateUser(raw, per_msg)`, or with the largest smaller cap whose entry costs at most
    `budget` tokens; None when even the smallest truncation does not fit (D13)."""
    entry = truncate_user(raw, per_msg, message_id, marker)
    if est(entry) <= budget:
        return entry
    lo, hi, best = MIN_TRUNCATION_CAP, min(per_msg, budget), None
    while lo <= hi:  # the entry's cost grows with the cap: the largest cap that fits
        mid = (lo + hi) // 2
        candidate = truncate_user(raw, mid, message_id, marker)
        if est(candidate) <= budget:
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    return best


# -- entries ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RecentUser:
    entries: list[tuple[str, str]]  # (message ID, entry), chronological
    eligible: int  # candidates of the window with non-blank raw text
    truncated_ids: frozenset[str]  # entries shortened by truncateUser
    disabled: bool
    appended: str | None = None  # D13: why the newest ask had to be appended (it would be missing)
    unfit: str | None = None  # D13: why the newest ask could not be appended either

    @property
    def cut_entries(self) -> int:
        return len(self.truncated_ids)


def _eligible_user_texts(candidates: Sequence[Message]) -> list[tuple[str, str]]:
    """(message ID, raw text) of the candidates whose raw text is not blank, chronological."""
    return [(m.id, raw_user_text(m)) for m in candidates if is_user_ask(m)]


def _fill(
    eligible: list[tuple[str, str]], caps: PushCaps, marker: Marker
) -> tuple[list[tuple[str, str]], set[str]]:
    """Newest to oldest under `caps.recent_user`; the first entry that does not fit stops the loop."""
    remaining = caps.recent_user
    kept: list[tuple[str, str]] = []
    truncated: set[str] = set()
    for mid, raw in reversed(eligible):
        entry = truncate_user(raw, caps.recent_user_per_msg, mid, marker)
        cost = est(entry)
        if remaining - cost < 0:
            break  # older messages are dropped too, even smaller ones
        kept.append((mid, entry))
        if entry != raw:
            truncated.add(mid)
        remaining -= cost
    kept.reverse()
    return kept, truncated


def recent_user_entries(
    candidates: Sequence[Message],
    caps: PushCaps,
    newest_ask: Message | None = None,
    marker: Marker = texts.user_elision_marker,
) -> RecentUser:
    """The section's entries over the logical window of `candidates` (chronological main-slice
    messages). `newest_ask`, when given, is kept per D13."""
    if caps.recent_user <= 0:
        return RecentUser([], 0, frozenset(), True)
    eligible = _eligible_user_texts(logical_window(reversed(candidates)))
    kept, truncated = _fill(eligible, caps, marker)
    if newest_ask is None or (kept and kept[-1][0] == newest_ask.id):
        return RecentUser(kept, len(eligible), frozenset(truncated), False)
    in_window = any(mid == newest_ask.id for mid, _ in eligible)
    why = texts.ASK_OVER_SECTION_CAP if in_window else texts.ASK_OUTSIDE_WINDOW
    raw = raw_user_text(newest_ask)
    entry = fit_user_entry(raw, caps.recent_user_per_msg, caps.recent_user, newest_ask.id, marker)
    if entry is None:
        return RecentUser(
            kept, len(eligible), frozenset(truncated), False, unfit=texts.ASK_SECTION_CAP_TOO_SMALL
        )
    while kept and sum(est(e) for _, e in kept) + est(entry) > caps.recent_user:
        truncated.discard(kept.pop(0)[0])  # older entries give way to the newest ask
    kept.append((newest_ask.id, entry))
    if entry != raw:
        truncated.add(newest_ask.id)
    return RecentUser(kept, len(eligible), frozenset(truncated), False, appended=why)
