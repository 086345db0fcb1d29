"""When a rebuild triggers (behavior.md#trigger): the usable line, the overflow test, "recover once".

`usable_tokens` resolves the working window of a model (behavior.md#window-budget): the hard limit, an
optional budget (`compaction.max_context`, possibly a glob map per model) that can only shrink it, and the
trigger ratio. `is_overflow` compares one assistant usage record with that line (behavior.md#overflow-test).
`usage_recovered` says whether a usage record has already been answered by a rebuild or compaction
(behavior.md#recover-once). `choose_usage` picks the usage record to count when the host passes none, with the
fallback for hosts whose newest finished step carries no usage (Codex, Cline transcripts).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import texts
from ..config import DEFAULT_TRIGGER_RATIO, RebuildConfig
from ..estimate.jsjson import js_stringify
from ..estimate.jstext import js_trim, len16
from ..session.message import Message
from ..session.ordering import Ordering
from ..words import UsageSource

RESERVED_OUTPUT_CAP = 33000  # default `compaction.reserved` = min(33000, maxOutputTokens)
RESERVED_INPUT_HEADROOM_CAP = 20000  # added when the model has no separate input limit

_DECIMAL = r"(?:\d+(?:\.\d*)?|\.\d+)"
_PERCENT_FORM = re.compile(rf"({_DECIMAL})%")
_SCALED_FORM = re.compile(rf"({_DECIMAL})([kKmM]?)")
_SCALES = {"": 1, "k": 1000, "m": 1_000_000}
# The largest budget: JavaScript's largest exact integer (a config that says more says nothing).
MAX_BUDGET_TOKENS = 2**53 - 1


# -- ratio -----------------------------------------------------------------------------------------
def parse_ratio(raw: Any, default: float | None = DEFAULT_TRIGGER_RATIO) -> float | None:
    """The trigger ratio from `"0.85"`, `"85%"` or a number; `default` unless finite and in (0, 1]."""
    value: float | None = None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        value = float(raw)
    elif isinstance(raw, str):
        text = js_trim(raw)
        percent = _PERCENT_FORM.fullmatch(text)
        if percent:
            value = float(percent.group(1)) / 100
        elif re.fullmatch(_DECIMAL, text):
            value = float(text)
    if value is None or not math.isfinite(value) or not 0 < value <= 1:
        return default
    return value


# -- budget ----------------------------------------------------------------------------------------
class BudgetWarnings:
    """Remembers which (model key, raw budget value) pairs were already warned about
    (behavior.md#window-budget)."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: set[tuple[str, str]] = set()

    def first_time(self, model_key: str, raw: Any) -> bool:
        key = (model_key, js_stringify(raw) or repr(raw))
        if key in self._seen:
            return False
        self._seen.add(key)
        return True


def glob_match(pattern: str, key: str) -> bool:
    """Whole-string glob: `*` any run, `?` one character, backslashes read as `/` on both sides.

    A two-pointer match that returns to the last `*` only: at most len(pattern) × len(key) steps
    whatever the pattern holds (a regex of `.*` runs backtracks exponentially: `"********/gpt*"`
    took seconds, 5,000 `*` stopped the sidecar)."""
    p, k = pattern.replace("\\", "/"), key.replace("\\", "/")
    i = j = 0
    star, resume = -1, 0  # the last `*` seen, and the key position it has absorbed up to
    while j < len(k):
        if i < len(p) and p[i] == "*":
            star, resume = i, j
            i += 1
        elif i < len(p) and (p[i] == "?" or p[i] == k[j]):
            i += 1
            j += 1
        elif star >= 0:
            resume += 1  # the `*` takes one more character
            i, j = star + 1, resume
        else:
            return False
    return all(c == "*" for c in p[i:])


def _js_sort_key(pattern: str) -> tuple[int, bytes]:
    # JavaScript compares lengths and strings in UTF-16 code units.
    return len16(pattern), pattern.encode("utf-16-be", "surrogatepass")


def select_budget_value(max_context: Any, model_key: str) -> Any:
    """The raw configured value for `model_key`: a map resolves by glob, last (longest) match wins."""
    if not isinstance(max_context, Mapping):
        return max_context
    chosen = None
    for pattern in sorted(max_context, key=_js_sort_key):
        if glob_match(pattern, model_key):
            chosen = max_context[pattern]
    return chosen


def parse_budget(raw: Any, hard: int) -> int | None:
    """A budget value in tokens (behavior.md#window-budget value forms); None = no budget (unset or empty
    string).

    Raises ValueError for a value of no accepted form, or one beyond `MAX_BUDGET_TOKENS`.
    """
    if raw is None:
        return None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        if math.isfinite(raw) and 0 <= raw <= MAX_BUDGET_TOKENS:
            return math.floor(raw)
        raise ValueError("not a finite non-negative number")
    if not isinstance(raw, str):
        raise ValueError("neither a number nor a string")
    text = js_trim(raw)
    if text == "":
        return None
    percent = _PERCENT_FORM.fullmatch(text)
    if percent:
        p = float(percent.group(1))
        if 0 < p <= 100:
            return math.floor(hard * p / 100)
        raise ValueError("percentage outside (0, 100]")
    scaled = _SCALED_FORM.fullmatch(text)
    if scaled:
        tokens = float(scaled.group(1)) * _SCALES[scaled.group(2).lower()]
        if tokens > MAX_BUDGET_TOKENS:  # `"1" × 5000` reads as infinity
            raise ValueError(f"more than {MAX_BUDGET_TOKENS} tokens")
        return math.floor(tokens)
    raise ValueError("not a number, a percentage or a K/M amount")


# -- usable line -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class UsableLine:
    hard: int  # 0 = overflow handling off
    reserved: int
    budget: int | None
    effective: int
    ratio: float
    usable: int
    warnings: tuple[str, ...] = field(default=())

    @property
    def enabled(self) -> bool:
        return self.hard > 0


def reserved_tokens(input_limit: int, max_output: int, config: RebuildConfig) -> int:
    """behavior.md#usable-line; only used to reject budgets that leave no room for the model's reply."""
    output_reserve = (
        config.compaction_reserved
        if config.compaction_reserved is not None
        else min(RESERVED_OUTPUT_CAP, max_output)
    )
    return output_reserve + (0 if input_limit else min(max_output, RESERVED_INPUT_HEADROOM_CAP))


def _resolve_budget(
    raw: Any, hard: int, reserved: int, model_key: str, warned: BudgetWarnings | None
) -> tuple[int | None, str | None]:
    """(budget or None, warning or None), per behavior.md#window-budget "Resolution"."""

    def ignored(problem: str) -> tuple[None, str | None]:
        if warned is not None and not warned.first_time(model_key, raw):
            return None, None
        return None, texts.budget_ignored_warning(model_key, js_stringify(raw) or repr(raw), problem)

    try:
        value = parse_budget(raw, hard)
    except ValueError as exc:
        return ignored(str(exc))
    if not value:
        return None, None  # unset, empty string or 0: no budget, silently
    if value <= reserved:
        return ignored(f"not above the {reserved} reserved tokens")
    if value >= hard:
        return None, None  # a budget only ever shrinks the window
    return value, None


def usable_tokens(
    context: int,
    input_limit: int,
    max_output: int,
    config: RebuildConfig,
    model_key: str,
    warned: BudgetWarnings | None = None,
) -> UsableLine:
    """behavior.md#window-budget: `usable = floor((budget or hard) × ratio)`; `warned` dedupes budget
    warnings."""
    ratio = config.trigger_ratio
    reserved = reserved_tokens(input_limit, max_output, config)
    hard = 0 if context == 0 else (input_limit or context)
    if hard == 0:
        return UsableLine(0, reserved, None, 0, ratio, 0)
    raw = select_budget_value(config.max_context, model_key)
    budget, warning = _resolve_budget(raw, hard, reserved, model_key, warned)
    effective = budget if budget is not None else hard
    usable = math.floor(effective * ratio)
    return UsableLine(hard, reserved, budget, effective, ratio, usable, (warning,) if warning else ())


# -- overflow --------------------------------------------------------------------------------------
def _num(value: Any) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def overflow_count(tokens: Mapping[str, Any] | None) -> float:
    """`total` when non-zero, else input + output + cache read + cache write; never reasoning."""
    if not isinstance(tokens, Mapping):
        return 0
    total = _num(tokens.get("total"))
    if total:
        return total
    cache = tokens.get("cache")
    cache = cache if isinstance(cache, Mapping) else {}
    return (
        _num(tokens.get("input"))
        + _num(tokens.get("output"))
        + _num(cache.get("read"))
        + _num(cache.get("write"))
    )


def is_overflow(tokens: Mapping[str, Any] | None, usable: int, config: RebuildConfig, context: int) -> bool:
    """behavior.md#overflow-test: has this usage record reached the trigger line?"""
    if not config.compaction_auto or context == 0:
        return False
    if not isinstance(tokens, Mapping):
        return False
    return overflow_count(tokens) >= usable


# -- recover once ----------------------------------------------------------------------------------
def last_finished(msgs: Sequence[Message]) -> Message | None:
    """The newest assistant message with a truthy `finish` (behavior.md#trigger-loop; unlike
    behavior.md#watermark-compute's "present")."""
    for m in reversed(msgs):
        if m.role == "assistant" and m.finish:
            return m
    return None


def usage_recovered(
    msgs: Sequence[Message], ordering: Ordering, carriers: Iterable[Message] | None = None
) -> bool:
    """behavior.md#recover-once: a boundary created after the last finished assistant already answered its
    usage.

    Creation order, not `time.created`: the boundary is back-dated to the watermark + 1 ms.
    `carriers`, when the caller knows them, are the messages of `msgs` that carry a checkpoint or
    compaction part; only they can answer, so the history need not be scanned.
    """
    finished = last_finished(msgs)
    if finished is None:
        return False
    threshold = ordering.key_of(finished)
    candidates = msgs if carriers is None else carriers
    return any(m.carries_boundary_part() and ordering.key_of(m) > threshold for m in candidates)


# -- which usage record to count -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class UsageChoice:
    tokens: Mapping[str, Any] | None  # the record to count; None when nothing is counted
    source: UsageSource
    message_id: str | None = None  # the step the record comes from (not for an estimate)
    warning: str | None = None  # set whenever the count does not come from the newest finished step


def has_usage(tokens: Any) -> bool:
    """A usage record that counts something (absent, empty and all-zero records do not)."""
    return isinstance(tokens, Mapping) and overflow_count(tokens) > 0


def choose_usage(
    msgs: Sequence[Message],
    ordering: Ordering,
    boundary: Message | None,
    estimate: Callable[[], int],
    with_usage: Iterable[Message] | None = None,
) -> UsageChoice:
    """The usage of the newest finished step (behavior.md#trigger-loop); when it has none, the newest
    assistant step with usage created after the view's `boundary`; when there is none either, `estimate()`
    (the estimated request). Older steps never count: their usage measured the request the boundary already
    replaced, and counting it again would rebuild after every step.

    `with_usage`, when the caller knows them, are the messages of `msgs` that may hold a usage record,
    newest first (`Session.newest_with_usage`): a history without usage is then not walked."""
    finished = last_finished(msgs)
    if finished is None:
        return UsageChoice(None, "none")
    tokens = finished.info.get("tokens")
    if has_usage(tokens):
        return UsageChoice(tokens, "last-finished", finished.id)
    floor = ordering.key_of(boundary) if boundary is not None else None
    for m in reversed(msgs) if with_usage is None else with_usage:
        if m.role != "assistant" or not has_usage(m.info.get("tokens")):
            continue
        if floor is None or ordering.key_of(m) > floor:
            return UsageChoice(
                m.info["tokens"], "earlier-step", m.id, texts.usage_from_earlier_step(finished.id, m.id)
            )
    count = estimate()
    return UsageChoice({"total": count}, "estimate", None, texts.usage_estimated(finished.id, count))
