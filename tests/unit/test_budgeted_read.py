"""core.memory.budgeted_read: proportional and section-aware reads (behavior.md#budgeted-reads)."""

from __future__ import annotations

import math
import os
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mimo_sidecar.core import texts
from mimo_sidecar.core.estimate.jstext import est, js_trim, len16
from mimo_sidecar.core.memory.budgeted_read import (
    INDEX_LINE,
    BudgetedText,
    proportional_read,
    read_budgeted,
    scaled_cut,
    section_aware_read,
)
from mimo_sidecar.core.memory.files import MemoryRoot
from tests.fuzz import examples

P = "/mem/sessions/s1/notes.md"
THUMBS = "\U0001f44d"


def has_lone_surrogate(s: str) -> bool:
    # Intact pairs come back from the UTF-16 slicing as one astral code point.
    return any("\ud800" <= ch <= "\udfff" for ch in s)


# ============================================================================================
# behavior.md#proportional-read proportional read
# ============================================================================================
def test_short_content_is_returned_unchanged() -> None:
    assert proportional_read("short content", 1000, P) == BudgetedText("short content", False, 3)


def test_spec_example_word_times_5000() -> None:
    full = "word " * 5000
    assert (len16(full), est(full)) == (25000, 6250)
    assert scaled_cut(25000, 100, 6250) == 380
    got = proportional_read(full, 100, P)
    assert got == BudgetedText("word " * 76 + "\n\n" + texts.proportional_hint(100, P, 6250, 380), True, 6250)


def test_budget_equal_to_total_is_not_truncated() -> None:
    assert proportional_read("x" * 40, 10, P).truncated is False
    assert proportional_read("x" * 41, 10, P).truncated is False  # est 10 (10.25 rounds down)
    assert proportional_read("x" * 42, 10, P).truncated is True  # est 11 (10.5 rounds up)


def test_cut_is_evaluated_in_the_spec_order() -> None:
    # floor(75 × (12/19) × 0.95) = 44 in doubles; 75 × 12 / 19 × 0.95 would give 45.
    assert scaled_cut(75, 12, 19) == 44
    assert math.floor(75 * 12 / 19 * 0.95) == 45
    got = proportional_read("x" * 75, 12, P)
    assert got.text == "x" * 44 + "\n\n" + texts.proportional_hint(12, P, 19, 44)


def test_cut_uses_doubles_not_exact_arithmetic() -> None:
    # Exact rational arithmetic gives 45; IEEE doubles (what JavaScript computes) give 44.
    assert math.floor(Fraction(75) * Fraction(12, 19) * Fraction(95, 100)) == 45
    assert scaled_cut(75, 12, 19) == 44


def test_crlf_lines_keep_their_carriage_return() -> None:
    full = "line\r\n" * 200  # 1200 units, total 300
    got = proportional_read(full, 100, P)
    clean = full[:377]  # t = 380 units; its last "\n" is at 377
    assert clean.endswith("line\r")
    assert got.text == clean + "\n\n" + texts.proportional_hint(100, P, 300, 377)


def test_last_newline_cut() -> None:
    got = proportional_read("ab\n" + "x" * 997, 100, P)  # t = 380 units, last "\n" at 2
    assert got.text == "ab\n\n" + texts.proportional_hint(100, P, 250, 2)


def test_newline_only_at_index_0_keeps_the_whole_cut() -> None:
    full = "\n" + "x" * 999
    got = proportional_read(full, 100, P)
    assert got.text == full[:380] + "\n\n" + texts.proportional_hint(100, P, 250, 380)


def test_zero_budget() -> None:
    assert proportional_read("abc", 0, P).text == "\n\n" + texts.proportional_hint(0, P, 1, 0)


def test_d9_surrogate_pair_at_the_proportional_cut() -> None:
    full = THUMBS * 500  # 1000 units, total 250
    cut = scaled_cut(1000, 11, 250)
    assert cut == 41  # odd: the cut falls inside a pair
    got = proportional_read(full, 11, P)
    # the dangling high surrogate is dropped BEFORE the offset is computed: 40, not 41
    assert got.text == THUMBS * 20 + "\n\n" + texts.proportional_hint(11, P, 250, 40)
    assert not has_lone_surrogate(got.text)


# ============================================================================================
# behavior.md#section-aware-read section-aware read
# ============================================================================================
SPEC_FILE = (
    "# Title\n"
    "## §7 Discovered knowledge\n"
    "_instruction_\n"
    "\n" + "y " * 3000 + "\n"
    "- See checkpoint-lexer.md (15 items) — Position type, Token shape\n"
    "\n"
    "## §9 Live resources\n"
    "_instruction_\n"
    "short\n"
)
SPEC_INDEX = "- See checkpoint-lexer.md (15 items) — Position type, Token shape"


def test_spec_example_numbers() -> None:
    assert (len16(SPEC_FILE), est(SPEC_FILE)) == (6159, 1540)
    assert est("# Title") == 2
    assert (len16("## §7 Discovered knowledge"), len16("_instruction_"), len16(SPEC_INDEX)) == (26, 13, 65)
    assert est("## §7 Discovered knowledge\n_instruction_\n" + SPEC_INDEX) == 27
    body = "\n" + "y " * 3000 + "\n"
    assert (len16(body), est(body)) == (6002, 1501)
    assert scaled_cut(6002, 71, 1501) == 269
    assert est("## §9 Live resources\n_instruction_") == 9


def test_spec_example_index_hoisting() -> None:
    expected = (
        "# Title\n## §7 Discovered knowledge\n_instruction_\n"
        + SPEC_INDEX
        + "\n"
        + "\n"
        + "y " * 134
        + "\n\n## §9 Live resources\n_instruction_\n"
        + "\n\n"
        + texts.section_aware_hint(100, "P", 1540)
    )
    assert section_aware_read(SPEC_FILE, 100, "P") == BudgetedText(expected, True, 1540)


def test_within_budget_is_unchanged() -> None:
    assert section_aware_read(SPEC_FILE, 1540, "P") == BudgetedText(SPEC_FILE, False, 1540)


BIG = "## A\n_i_\n" + "x" * 1000  # skeleton "## A\n_i_" = 8 units -> est 2; body est 250; total 252


def test_skeleton_at_equality() -> None:
    got = section_aware_read(BIG, 2, "F")  # headerOnly 2 >= 2
    assert got == BudgetedText("## A\n_i_\n" + "\n\n" + texts.skeleton_warning(252, 2, "F"), True, 252)


def test_fill_just_above_the_skeleton() -> None:
    got = section_aware_read(BIG, 3, "F")  # 2 < 3: fill; remaining 1 -> no body
    assert got.text == "## A\n_i_\n" + "\n\n" + texts.section_aware_hint(3, "F", 252)


def test_remaining_exactly_50_appends_nothing() -> None:
    got = section_aware_read(BIG, 52, "F")  # used 2, remaining 50
    assert got.text == "## A\n_i_\n" + "\n\n" + texts.section_aware_hint(52, "F", 252)


def test_remaining_51_appends_a_partial_cut() -> None:
    got = section_aware_read(BIG, 53, "F")  # remaining 51: floor(1000 × 51/250 × 0.95) = 193
    assert scaled_cut(1000, 51, 250) == 193
    assert got.text == "## A\n_i_\n" + "x" * 193 + "\n" + "\n\n" + texts.section_aware_hint(53, "F", 252)


def test_empty_italic_still_adds_a_joining_newline_to_the_skeleton() -> None:
    full = "## ab\n" + "x" * 1000
    # "## ab" alone is 5 units (est 1); with the empty italic it is "## ab\n" (6 units, est 2).
    got = section_aware_read(full, 2, "F")
    assert got.text == "## ab\n\n" + "\n\n" + texts.skeleton_warning(est(full), 2, "F")


def test_skeleton_keeps_preamble_headers_italics_and_index_lines() -> None:
    full = "# T\nintro\n## A\n_a_\nbody\n  - See k.md (3 items)\n## B\nmore " + "z" * 400
    got = section_aware_read(full, 5, "F")
    skeleton = "# T\nintro\n## A\n_a_\n  - See k.md (3 items)\n\n## B\n\n"
    assert got.text == skeleton + "\n\n" + texts.skeleton_warning(est(full), 5, "F")
    warning = texts.skeleton_warning(est(full), 5, "F").split("\n")
    assert len(warning) == 2 and warning[1].startswith("   ")


def test_caps_smaller_than_the_preamble() -> None:
    full = "# A rather long title for this checkpoint\n## S\n" + "q" * 500
    for budget in (1, 0, -5):
        got = section_aware_read(full, budget, "F")
        assert got.text.startswith("# A rather long title for this checkpoint\n## S\n\n\n\n")
        assert got.text.endswith(texts.skeleton_warning(est(full), budget, "F"))


def test_file_without_sections_is_all_preamble() -> None:
    full = "just text\n" * 100
    got = section_aware_read(full, 10, "F")
    # No "## " line: everything is preamble, and the skeleton keeps the preamble whole.
    assert got.text == full + "\n\n" + texts.skeleton_warning(est(full), 10, "F")


def test_empty_bodies_are_appended_and_a_skipped_body_leaves_its_blank_line() -> None:
    full = "## A\n## B\n_b_\n" + "y" * 400 + "\n## C\n"
    got = section_aware_read(full, 40, "F")
    # A: used 1, empty body appended; B: used 3, bt 100, remaining 37 -> skipped; C: used 4, body "".
    assert got.text == "## A\n\n\n\n## B\n_b_\n\n## C\n\n\n" + "\n\n" + texts.section_aware_hint(
        40, "F", est(full)
    )


def test_a_later_small_body_is_still_appended_after_a_skip() -> None:
    full = "## A\n" + "x" * 1000 + "\n## B\nsmall"
    got = section_aware_read(full, 40, "F")  # A skipped (remaining 39), B fits
    assert got.text == "## A\n\n\n## B\n\nsmall\n" + "\n\n" + texts.section_aware_hint(40, "F", est(full))


def test_after_a_partial_cut_later_sections_get_headers_only() -> None:
    full = "## A\n" + "x" * 1000 + "\n## B\n_b_\n"
    got = section_aware_read(full, 60, "F")
    # "## A" + empty italic = "## A\n" (est 1): remaining 59, cut floor(1000 × 59/250 × 0.95) = 224.
    assert scaled_cut(1000, 59, 250) == 224
    # Then used == 60; B's header makes it 62, so B's body [""] is not appended (62 + 0 > 60).
    assert got.text == (
        "## A\n\n" + "x" * 224 + "\n\n## B\n_b_\n" + "\n\n" + texts.section_aware_hint(60, "F", est(full))
    )


def test_crlf_file() -> None:
    full = "# T\r\n## A\r\n_i_\r\n- See a.md (1 item)\r\n" + "w" * 800 + "\r\n## B\r\n_j_\n"
    got = section_aware_read(full, 100, "F")
    # "_i_\r" is not an italic (it ends with "\r"), so A's italic is empty and "_i_\r" is body;
    # the index line matches after JS-trim and is hoisted with its "\r"; "_j_" is B's italic.
    a_body = "_i_\r\n" + "w" * 800 + "\r"
    used = est("# T\r") + est("## A\r\n\n- See a.md (1 item)\r")
    cut = scaled_cut(len16(a_body), 100 - used, est(a_body))
    assert got.text == (
        "# T\r\n## A\r\n\n- See a.md (1 item)\r\n"
        + a_body[:cut]
        + "\n\n## B\r\n_j_\n"
        + "\n\n"
        + texts.section_aware_hint(100, "F", est(full))
    )


def test_lone_underscore_is_an_italic_and_only_the_first_counts() -> None:
    full = "## A\nfirst\n_\n_second_\n" + "x" * 1000
    got = section_aware_read(full, 3, "F")
    assert got.text.startswith("## A\n_\n\n")  # "_" hoisted as the italic
    full = "## A\nfirst\n_it_\n_second_\n" + "x" * 1000
    body = "first\n_second_\n" + "x" * 1000
    got = section_aware_read(full, 200, "F")
    cut = scaled_cut(len16(body), 200 - est("## A\n_it_"), est(body))
    assert got.text == "## A\n_it_\n" + body[:cut] + "\n" + "\n\n" + texts.section_aware_hint(
        200, "F", est(full)
    )


def test_h3_is_not_a_section_header() -> None:
    full = "## A\n### sub\n" + "x" * 1000
    got = section_aware_read(full, 1, "F")  # skeleton: "## A\n" only (est 1 >= 1)
    assert got.text == "## A\n\n" + "\n\n" + texts.skeleton_warning(est(full), 1, "F")
    assert "### sub" not in got.text


@pytest.mark.parametrize(
    ("line", "is_index"),
    [
        ("- See x.md (15 items)", True),
        ("   - See x.md (1", True),
        ("\u00a0- See x.md (2)", True),  # NBSP is JS whitespace: trimmed
        ("\ufeff- See x.md (2)", True),  # so is the BOM
        ("\t- See x.md (2)\r", True),
        ("- See a.md.md (3", True),
        ("- See x\x1cy.md (2)", True),  # \x1c is not JS whitespace, so JS \S matches it
        ("\x1c- See x.md (2)", False),  # and JS trim does not remove it
        ("- See x y.md (2)", False),
        ("- See x\u3000y.md (2)", False),
        ("- See x.md (N items)", False),
        ("- See x.md (\u0661)", False),  # JS \d is ASCII only
        ("- see x.md (1)", False),
        ("- See a.MD (3)", False),
        ("- See .md (1)", False),
        ("* See x.md (1)", False),
    ],
)
def test_index_line_pattern(line: str, is_index: bool) -> None:
    assert bool(INDEX_LINE.match(js_trim(line))) is is_index


def test_index_line_hoisted_untrimmed_and_removed_from_body() -> None:
    full = "## A\n_i_\nalpha\n  - See k.md (2 items)\nomega\n" + "x" * 1000
    body = "alpha\nomega\n" + "x" * 1000
    got = section_aware_read(full, 100, "F")
    used = est("## A\n_i_\n  - See k.md (2 items)")
    cut = scaled_cut(len16(body), 100 - used, est(body))
    assert got.text == (
        "## A\n_i_\n  - See k.md (2 items)\n"
        + body[:cut]
        + "\n"
        + "\n\n"
        + texts.section_aware_hint(100, "F", est(full))
    )


def test_d9_surrogate_pair_at_the_section_cut() -> None:
    body = THUMBS * 1000  # 2000 units, bt 500
    full = "## A\n" + body
    # "## A\n" costs 1, so remaining = budget - 1; pick a budget whose cut is odd (inside a pair).
    budget = next(b for b in range(52, 200) if scaled_cut(2000, b - 1, 500) % 2 == 1)
    cut = scaled_cut(2000, budget - 1, 500)
    got = section_aware_read(full, budget, "F")
    assert got.text == "## A\n\n" + THUMBS * (cut // 2) + "\n" + "\n\n" + texts.section_aware_hint(
        budget, "F", est(full)
    )
    assert not has_lone_surrogate(got.text)


# ============================================================================================
# read_budgeted: through the memory root
# ============================================================================================
def test_read_budgeted_missing_file(tmp_path: object) -> None:
    root = MemoryRoot(str(tmp_path))
    got, outcome = read_budgeted(root, root.notes_path("s1"), 100, "proportional")
    assert got is None and outcome.problem == "missing"


def test_read_budgeted_bom_crlf_and_invalid_utf8(tmp_path: object) -> None:
    root = MemoryRoot(str(tmp_path))
    path = root.checkpoint_path("s1")
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as f:
        f.write(b"\xef\xbb\xbf# T\r\n## A\r\nbad \xff byte\r\n")
    got, outcome = read_budgeted(root, path, 1000, "section")
    assert outcome.problem == "invalid-utf8"
    assert got == BudgetedText(
        "# T\r\n## A\r\nbad \ufffd byte\r\n", False, est("# T\r\n## A\r\nbad \ufffd byte\r\n")
    )
    got, _ = read_budgeted(root, path, 1, "proportional")
    assert got is not None and got.truncated


# ============================================================================================
# properties
# ============================================================================================
LINES = st.one_of(
    st.sampled_from(
        [
            "## H",
            "## H\r",
            "### h",
            "# T",
            "_it_",
            "_",
            "_x_\r",
            "",
            "\r",
            "- See a.md (1 item)",
            "  - See b.md (22",
            "word " * 20,
            THUMBS * 30,
            "y " * 200,
            "用" * 50,
        ]
    ),
    st.text(max_size=80),
)
DOCS = st.lists(LINES, max_size=40).map("\n".join)
BUDGETS = st.integers(min_value=-5, max_value=600)


def ref_proportional_clean(full: str, budget: int) -> str:
    """Reference behavior.md#proportional-read on explicit UTF-16 code units, with the D9 repair."""
    raw = full.encode("utf-16-le", "surrogatepass")
    n = len(raw) // 2
    total = (n + 2) // 4 if n else 0
    if total == 0:
        return ""  # JS: 0 × (budget/0) is NaN and slice(0, NaN) is empty
    cut = math.floor(n * (budget / total) * 0.95)
    t = raw[: 2 * cut] if cut >= 0 else raw[: max(0, 2 * (n + cut))]
    nl = max((i for i in range(0, len(t), 2) if t[i : i + 2] == b"\n\x00"), default=-1) // 2 if t else -1
    if nl > 0:
        t = t[: 2 * nl]
    if len(t) >= 2 and 0xD8 <= t[-1] <= 0xDB:
        t = t[:-2]
    return t.decode("utf-16-le", "surrogatepass")


@settings(max_examples=examples(300))
@given(DOCS, BUDGETS)
def test_proportional_properties(full: str, budget: int) -> None:
    got = proportional_read(full, budget, P)
    assert got.total_tokens == est(full)
    if not got.truncated:
        assert got.text == full
        return
    clean, sep, hint = got.text.rpartition("\n\n")
    assert sep and hint == texts.proportional_hint(budget, P, est(full), len16(clean))
    assert full.startswith(clean)  # (d) the output before the hint is a prefix of the input
    assert not has_lone_surrogate(clean)  # (c) no dangling half at the cut
    assert clean.encode("utf-16-le", "surrogatepass") == ref_proportional_clean(full, budget).encode(
        "utf-16-le", "surrogatepass"
    )


@settings(max_examples=examples(300))
@given(DOCS, BUDGETS)
def test_section_aware_properties(full: str, budget: int) -> None:
    got = section_aware_read(full, budget, "F")
    assert got.total_tokens == est(full)
    if not got.truncated:
        assert got.text == full
        return
    assert not has_lone_surrogate(got.text)  # (c)
    out_lines = got.text.split("\n")
    for line in full.split("\n"):
        if line.startswith("## "):
            assert line in out_lines  # every header survives, in either branch
    assert got.text.endswith(texts.section_aware_hint(budget, "F", est(full))) or got.text.endswith(
        texts.skeleton_warning(est(full), budget, "F")
    )
