"""core.estimate.jstext: UTF-16 lengths and slices, JS whitespace, the token estimate (behavior.md#est,
behavior.md#js-parity)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mimo_sidecar.core.estimate.jstext import (
    JS_WS_CHARS,
    JS_WS_CLASS,
    drop_dangling_high,
    drop_leading_low,
    est,
    est_len,
    fold_ws,
    head16,
    is_blank,
    is_high_surrogate,
    is_low_surrogate,
    js_trim,
    len16,
    slice16,
    tail16,
)

THUMBS = "\U0001f44d"  # astral: two UTF-16 code units
# Any code point, lone surrogates included (hypothesis excludes them by default).
ANY_TEXT = st.text(st.characters(exclude_categories=()))


def units(s: str) -> list[int]:
    """Reference: the UTF-16 code units of `s`."""
    b = s.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(b[i : i + 2], "little") for i in range(0, len(b), 2)]


def from_units(us: list[int]) -> str:
    return b"".join(u.to_bytes(2, "little") for u in us).decode("utf-16-le", "surrogatepass")


# -- behavior.md#tokens-examples ---------------------------------------------------------------
def test_est_spec_examples() -> None:
    assert est("ab") == 1  # round() would give 0
    assert est("abcdefghij") == 3  # round() would give 2
    assert est(THUMBS) == 1  # 2 code units -> 0.5 -> 1


def test_est_empty_and_absent() -> None:
    assert est("") == 0
    assert est(None) == 0
    assert est_len(0) == 0
    assert est_len(-3) == 0


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1001])
def test_est_rounds_half_up(n: int) -> None:
    assert est("x" * n) == (n + 2) // 4 == est_len(n)


@given(ANY_TEXT)
def test_len16_and_est_match_the_reference(s: str) -> None:
    assert len16(s) == len(units(s))
    assert est(s) == (0 if not s else (len(units(s)) + 2) // 4)


def test_len16_counts_code_units() -> None:
    assert len16("") == 0
    assert len16("abc") == 3
    assert len16("用 Bun") == 5  # CJK counts 1
    assert len16(THUMBS) == 2
    assert len16("a" + THUMBS + "b") == 4
    assert len16("\ud83d") == 1  # a lone surrogate is one unit


# -- slices ------------------------------------------------------------------------------------
def test_slice16_cuts_through_a_pair_like_javascript() -> None:
    s = "a" + THUMBS + "b"
    assert head16(s, 2) == "a\ud83d"
    assert tail16(s, 2) == "\udc4db"
    assert slice16(s, 1, 3) == THUMBS
    assert slice16(s, 3, 1) == ""


def test_negative_ends_count_from_the_end() -> None:
    s = "abc" + THUMBS
    assert head16(s, -1) == "abc\ud83d"
    assert head16("abcdef", -2) == "abcd"
    assert head16("abc", -10) == ""


def test_tail16_zero_is_the_whole_string() -> None:
    # JavaScript slice(-0) == slice(0) (behavior.md#js-slice-zero)
    assert tail16("abc" + THUMBS, 0) == "abc" + THUMBS
    assert tail16("abc", 10) == "abc"


@given(ANY_TEXT, st.integers(-30, 30), st.one_of(st.none(), st.integers(-30, 30)))
def test_slice16_matches_a_code_unit_reference(s: str, start: int, end: int | None) -> None:
    expected = from_units(units(s)[start:end])
    got = slice16(s, start, end)
    assert units(got) == units(expected)


# -- surrogate repair (D9) --------------------------------------------------------------------
def test_surrogate_predicates_and_repair() -> None:
    assert is_high_surrogate("\ud83d") and not is_high_surrogate("\udc4d")
    assert is_low_surrogate("\udc4d") and not is_low_surrogate("a")
    assert drop_dangling_high("a\ud83d") == "a"
    assert drop_dangling_high("a" + THUMBS) == "a" + THUMBS
    assert drop_dangling_high("") == ""
    assert drop_leading_low("\udc4db") == "b"
    assert drop_leading_low(THUMBS + "b") == THUMBS + "b"
    assert drop_leading_low("") == ""


# -- whitespace (behavior.md#js-whitespace) ----------------------------------------------------
def test_js_trim_uses_the_javascript_set() -> None:
    assert js_trim("\ufeff x \u3000") == "x"  # BOM is JS whitespace, Python's strip keeps it
    assert js_trim("\x1cx\x85") == "\x1cx\x85"  # Python's strip would remove these
    assert js_trim("\u00a0\u2028\u2029\u202f\u205f\u1680\u200a x\t\n\v\f\r") == "x"
    assert js_trim("\u200bx") == "\u200bx"  # zero-width space is not whitespace in JS


def test_ws_class_and_chars_agree() -> None:
    cls = re.compile(JS_WS_CLASS)
    for cp in range(0x10000):
        ch = chr(cp)
        assert bool(cls.fullmatch(ch)) == (ch in JS_WS_CHARS), hex(cp)


def test_is_blank() -> None:
    assert is_blank(None) and is_blank("") and is_blank(" \ufeff\n")
    assert not is_blank("\x1c")


def test_fold_ws() -> None:
    assert fold_ws("  a \t\n b\u3000\u3000c\ufeff ") == "a b c"
    assert fold_ws("a\x1cb") == "a\x1cb"
