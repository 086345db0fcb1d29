"""core.rebuild.trigger: the usable line (behavior.md#usable-line), the overflow test
(behavior.md#overflow-test), "recover once" (behavior.md#recover-once)."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.rebuild.trigger import (
    BudgetWarnings,
    glob_match,
    is_overflow,
    overflow_count,
    parse_budget,
    parse_ratio,
    reserved_tokens,
    select_budget_value,
    usable_tokens,
    usage_recovered,
)
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.ordering import Ordering, id_ordering
from tests.fuzz import examples
from tests.unit.builders import assistant, checkpoint, compaction, seq_ordering, text, usage, user

DEFAULT = RebuildConfig()


def line(
    context, input_limit=0, max_output=32000, config=DEFAULT, key="anthropic/claude-sonnet-4", warned=None
):
    return usable_tokens(context, input_limit, max_output, config, key, warned)


# -- behavior.md#trigger-examples ------------------------------------------------------------------
def test_example_overflow_at_90_percent():
    usable = line(100000).usable
    assert usable == 90000
    assert is_overflow(usage(88000, 5000), usable, DEFAULT, 100000)


def test_example_no_overflow_in_a_large_window():
    usable = line(200000).usable
    assert usable == 180000
    assert not is_overflow(usage(100000, 10000), usable, DEFAULT, 200000)


def test_example_input_limit_is_the_hard_limit():
    result = line(200000, input_limit=120000, max_output=10000)
    assert (result.hard, result.usable) == (120000, 108000)
    assert not is_overflow(usage(50000, 9999), result.usable, DEFAULT, 200000)


def test_example_context_zero_is_never_an_overflow():
    result = line(0, input_limit=50000)
    assert (result.hard, result.usable, result.enabled) == (0, 0, False)
    assert not is_overflow(usage(10**9, 10**9), result.usable, DEFAULT, 0)


def test_auto_off_is_never_an_overflow():
    config = RebuildConfig(compaction_auto=False)
    assert not is_overflow(usage(10**9), 1, config, 100000)


def test_overflow_count_total_then_sum_never_reasoning():
    assert overflow_count(usage(1, 2, total=50, read=3, write=4, reasoning=100)) == 50
    assert overflow_count(usage(1, 2, total=0, read=3, write=4, reasoning=100)) == 10
    assert overflow_count({"input": 5}) == 5
    assert overflow_count(None) == 0
    assert not is_overflow(None, 0, DEFAULT, 100000)


def test_overflow_is_inclusive():
    assert is_overflow(usage(total=90000), 90000, DEFAULT, 100000)
    assert not is_overflow(usage(total=89999), 90000, DEFAULT, 100000)


# -- ratio -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("0.85", 0.85),
        ("85%", 0.85),
        (" 0.5 ", 0.5),
        ("100%", 1.0),
        ("1", 1.0),
        (0.7, 0.7),
        ("0", 0.9),
        ("0%", 0.9),
        ("1.5", 0.9),
        ("150%", 0.9),
        ("-0.5", 0.9),
        ("abc", 0.9),
        ("nan", 0.9),
        ("", 0.9),
        (None, 0.9),
        (float("inf"), 0.9),
    ],
)
def test_parse_ratio(raw, expected):
    assert parse_ratio(raw) == pytest.approx(expected)


def test_parse_ratio_without_default_reports_invalid():
    assert parse_ratio("2", default=None) is None
    assert parse_ratio("80%", default=None) == pytest.approx(0.8)


def test_configured_ratio_is_applied_with_floor():
    config = RebuildConfig(trigger_ratio=0.85)
    assert line(200000, config=config).usable == 170000
    assert line(100001, config=RebuildConfig(trigger_ratio=0.5)).usable == 50000


# -- reserved and budget ---------------------------------------------------------------------------
def test_reserved():
    assert reserved_tokens(0, 32000, DEFAULT) == 32000 + 20000
    assert reserved_tokens(0, 8000, DEFAULT) == 8000 + 8000
    assert reserved_tokens(120000, 64000, DEFAULT) == 33000
    assert reserved_tokens(0, 32000, RebuildConfig(compaction_reserved=1000)) == 1000 + 20000


@pytest.mark.parametrize(
    ("raw", "tokens"),
    [
        (150000, 150000),
        (150000.9, 150000),
        (0, 0),
        ("150000", 150000),
        ("  120K ", 120000),
        ("1.5k", 1500),
        ("0.1M", 100000),
        ("2m", 2000000),
        ("50%", 100000),
        ("33.3%", 66599),  # hard × p / 100 in doubles, as in JavaScript: 6659999.999…
        ("100%", 200000),
        ("", None),
        ("   ", None),
        (None, None),
    ],
)
def test_parse_budget_forms(raw, tokens):
    assert parse_budget(raw, 200000) == tokens


@pytest.mark.parametrize(
    "raw", [-1, math.inf, math.nan, "0%", "101%", "-5", "12G", "K", "1e5", "abc", True, [1]]
)
def test_parse_budget_invalid(raw):
    with pytest.raises(ValueError):
        parse_budget(raw, 200000)


def test_budget_shrinks_the_window():
    result = line(200000, config=RebuildConfig(max_context="100K"))
    assert (result.budget, result.effective, result.usable, result.warnings) == (100000, 100000, 90000, ())


def test_budget_at_or_above_hard_is_ignored_silently():
    for raw in ("200K", 250000, "100%"):
        result = line(200000, config=RebuildConfig(max_context=raw))
        assert (result.budget, result.usable, result.warnings) == (None, 180000, ())


def test_budget_zero_and_empty_are_silent():
    for raw in (0, "0", "", "0K"):
        result = line(200000, config=RebuildConfig(max_context=raw))
        assert (result.budget, result.warnings) == (None, ())


def test_budget_not_above_reserved_warns_once_per_model_and_value():
    warned = BudgetWarnings()
    config = RebuildConfig(max_context="52000")  # reserved = 32000 + 20000
    first = line(200000, config=config, warned=warned)
    assert first.budget is None and first.usable == 180000
    assert len(first.warnings) == 1 and "52000" in first.warnings[0]
    assert line(200000, config=config, warned=warned).warnings == ()
    assert len(line(200000, config=config, key="openai/gpt-5", warned=warned).warnings) == 1
    assert len(line(200000, config=RebuildConfig(max_context="52001"), warned=warned).warnings) == 0


def test_invalid_budget_warns_once():
    warned = BudgetWarnings()
    config = RebuildConfig(max_context="lots")
    assert len(line(200000, config=config, warned=warned).warnings) == 1
    assert line(200000, config=config, warned=warned).warnings == ()
    # Without a cache every call warns.
    assert len(line(200000, config=config).warnings) == 1


def test_number_and_string_are_different_raw_values():
    warned = BudgetWarnings()
    assert warned.first_time("m", 5)
    assert warned.first_time("m", "5")
    assert not warned.first_time("m", 5)


# -- budget map ------------------------------------------------------------------------------------
def test_glob_match():
    assert glob_match("*", "anthropic/claude")
    assert glob_match("anthropic/*", "anthropic/claude-sonnet-4")
    assert glob_match("anthropic/claude-?", "anthropic/claude-4")
    assert not glob_match("anthropic/claude-?", "anthropic/claude-45")
    assert not glob_match("anthropic", "anthropic/claude")
    assert glob_match("local\\*", "local/llama")
    assert glob_match("a.b/*", "a.b/x") and not glob_match("a.b/*", "aXb/x")
    assert glob_match("x/[1]", "x/[1]")


def _regex_glob(pattern: str, key: str) -> bool:
    """The translation the matcher replaced (`*` → `.*`): the reference for what a glob matches."""
    pieces = [".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern.replace("\\", "/")]
    return re.fullmatch("".join(pieces), key.replace("\\", "/"), re.DOTALL) is not None


@settings(max_examples=examples(300), deadline=None)
@given(st.text("ab*?/\\", max_size=8), st.text("ab/\\", max_size=8))
def test_glob_matches_what_the_regex_translation_matched(pattern: str, key: str) -> None:
    assert glob_match(pattern, key) == _regex_glob(pattern, key)


def test_globs_that_made_the_regex_backtrack_are_matched_at_once() -> None:
    """`"********/gpt*"` cost seconds per trigger and 5,000 `*` stopped every answer for
    over a minute (the regex backtracked exponentially); the two-pointer match is at most
    pattern × key steps (a hang here fails by the suite's timeout)."""
    key = "openai/" + "g" * 200 + "x"
    assert not glob_match("********/gpt*", key)
    assert not glob_match("*" * 5000 + "/gpt*y", key)
    assert glob_match("*" * 5000, key) and glob_match("*g*g*g*g*g*g*g*g*x", key)
    assert not glob_match("*g" * 2000 + "y", "g" * 3000)
    config = RebuildConfig(max_context={"*" * 5000 + "/gpt*": 1000, "o*": "1" * 60})
    line = usable_tokens(200_000, 0, 32_000, config, key, BudgetWarnings())
    assert line.budget is None and "more than" in line.warnings[0]  # too large a budget: ignored, said


def test_map_precedence_longest_pattern_wins_then_string_order():
    budgets = {
        "anthropic/claude-*": "120K",
        "*": "50%",
        "*/claude-sonnet-4": "110K",
        "anthropic/*": "100K",
    }
    # Sorted: "*", "anthropic/*", "*/claude-sonnet-4" (17), "anthropic/claude-*" (18).
    assert select_budget_value(budgets, "anthropic/claude-sonnet-4") == "120K"
    assert select_budget_value(budgets, "anthropic/haiku") == "100K"
    assert select_budget_value(budgets, "other/claude-sonnet-4") == "110K"
    assert select_budget_value(budgets, "openai/gpt-5") == "50%"
    assert select_budget_value({"openai/*": 1}, "anthropic/x") is None
    result = line(200000, config=RebuildConfig(max_context=budgets))
    assert (result.budget, result.usable) == (120000, 108000)


def test_map_same_length_patterns_sorted_by_string():
    # Both have length 3 and match "a/b": "*/b" < "a/*", so "a/*" is applied last and wins.
    assert select_budget_value({"a/*": "A", "*/b": "B"}, "a/b") == "A"


def test_map_without_match_means_no_budget():
    result = line(200000, config=RebuildConfig(max_context={"openai/*": "100K"}))
    assert (result.budget, result.usable, result.warnings) == (None, 180000, ())


def test_hard_zero_skips_budget_warnings():
    result = line(0, config=RebuildConfig(max_context="junk"))
    assert result.warnings == ()


# -- behavior.md#recover-once recover once ---------------------------------------------------------
T0 = 1_700_000_000_000


def test_recover_once_id_mode_with_back_dated_boundary():
    minter = IdMinter(lambda n: bytes(n))
    u1 = user(minter.ascending("msg", T0), text("q"), created=T0)
    a1 = assistant(minter.ascending("msg", T0 + 10), text("a"), created=T0 + 10, tokens=usage(95000))
    # The rebuild inserts the boundary later: a newer ID, but created at W + 1 ms.
    boundary = user(minter.ascending("msg", T0 + 20), checkpoint(u1.id), created=T0 + 1)
    view = [boundary, a1]  # listing order (time.created, id)
    assert boundary.created < a1.created  # a timestamp comparison would miss it
    assert usage_recovered(view, id_ordering())
    # A newer finished assistant is a new usage record: eligible again.
    a2 = assistant(minter.ascending("msg", T0 + 30), text("b"), created=T0 + 30)
    assert not usage_recovered([boundary, a1, a2], id_ordering())
    del u1


def test_recover_once_sequence_mode_with_back_dated_boundary():
    u1 = user("7f3c-u1", text("q"), created=T0, seq=1)
    a1 = assistant("0a1b-a1", text("a"), created=T0 + 10, seq=2)
    boundary = user("ffff-b", checkpoint(u1.id), created=T0 + 1, seq=3)
    ordering = seq_ordering(u1, a1, boundary)
    assert not ordering.id_mode
    assert usage_recovered([boundary, a1], ordering)
    a2 = assistant("0000-a2", text("b"), created=T0 + 30, seq=4)
    assert not usage_recovered([boundary, a1, a2], seq_ordering(u1, a1, boundary, a2))


def test_recover_once_also_counts_compaction_boundaries():
    a1 = assistant("a1", text("a"), seq=1)
    comp = user("c1", compaction(), seq=2)
    assert usage_recovered([comp, a1], Ordering(False, {"a1": 1, "c1": 2}.get))


def test_last_finished_needs_a_truthy_finish():
    a1 = assistant("a1", text("a"), seq=1)
    boundary = user("b", checkpoint("u0"), seq=2)
    streaming = assistant("a2", text("..."), finish="", seq=3)  # present but falsy: not finished
    assert usage_recovered([boundary, a1, streaming], seq_ordering(a1, boundary, streaming))


def test_no_finished_assistant_means_not_recovered():
    boundary = user("b", checkpoint("u0"), seq=2)
    assert not usage_recovered([boundary], seq_ordering(boundary))
    assert not usage_recovered([], id_ordering())


def test_a_boundary_older_than_the_usage_does_not_count():
    boundary = user("b", checkpoint("u0"), seq=1)
    a1 = assistant("a1", text("a"), seq=2)
    assert not usage_recovered([boundary, a1], seq_ordering(boundary, a1))
