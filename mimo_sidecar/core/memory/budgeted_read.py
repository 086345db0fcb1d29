"""Budgeted reads of memory files (behavior.md#budgeted-reads): proportional (notes.md) and section-aware
(checkpoint.md, both MEMORY.md).

Both functions are pure: they take the already decoded text (the caller reads the file through
`MemoryRoot`; a missing file means the caller uses ""). All lengths and cuts are in UTF-16 code
units, and the proportional cuts are evaluated in IEEE doubles in the documented order
(behavior.md#js-float-order), so the numbers match MiMo's. DEVIATION D9: a high surrogate left
dangling at the end of a cut is dropped before any offset is reported.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal

from ..estimate.jstext import JS_WS_CLASS, drop_dangling_high, est, head16, js_trim, len16
from ..tool_pointers import REFERENCE_TEXTS, PointerTexts
from .files import MemoryRoot, ReadOutcome

MIN_TOKENS_FOR_PARTIAL_BODY = 50  # a body is cut only when strictly more tokens than this remain

# `^- See \S+\.md \(\d+` in JavaScript: `\S` is "not JS whitespace" and `\d` is ASCII only.
_JS_NON_WS = "[^" + JS_WS_CLASS[1:]
INDEX_LINE = re.compile(r"- See " + _JS_NON_WS + r"+\.md \([0-9]")


@dataclass(frozen=True)
class BudgetedText:
    text: str
    truncated: bool
    total_tokens: int


def scaled_cut(length16: int, budget: int, total: int) -> int:
    """`floor(length16 × (budget / total) × 0.95)`, in doubles and in that order (behavior.md#budgeted-reads,
    behavior.md#js-float-order)."""
    if total == 0:
        return 0  # JS: 0 × ±Infinity is NaN, and slice(0, NaN) is empty
    q = float(budget) / float(total)
    return math.floor(float(length16) * q * 0.95)


# -- behavior.md#proportional-read ---------------------------------------------------------------
def proportional_read(
    full_text: str, budget: int, path: str, hints: PointerTexts = REFERENCE_TEXTS
) -> BudgetedText:
    """Keep the head that fits the budget, ending at the last newline; hint with the resume offset
    (`hints` words the hint for the model's tools, behavior.md#d18)."""
    total = est(full_text)
    if total <= budget:
        return BudgetedText(full_text, False, total)
    t = head16(full_text, scaled_cut(len16(full_text), budget, total))
    nl = t.rfind("\n")
    clean = drop_dangling_high(t[:nl] if nl > 0 else t)  # index 0 is the same in code units
    hint = hints.proportional_hint(budget, path, total, len16(clean))
    return BudgetedText(clean + "\n\n" + hint, True, total)


# -- behavior.md#section-aware-read --------------------------------------------------------------
@dataclass
class _Section:
    header: str
    italic: str = ""
    has_italic: bool = False
    body: list[str] = field(default_factory=list)
    index: list[str] = field(default_factory=list)

    def skeleton(self) -> list[str]:
        # The italic element is present even when empty: it still adds a joining newline.
        return [self.header, self.italic, *self.index]

    def body_without_index(self) -> str:
        index = set(self.index)
        return "\n".join(line for line in self.body if line not in index)


def _is_italic(line: str) -> bool:
    # A lone "_" qualifies (it starts and ends with "_"); "_x_\r" does not (it ends with "\r").
    return line.startswith("_") and line.endswith("_")


def _parse_sections(full_text: str) -> tuple[list[str], list[_Section]]:
    preamble: list[str] = []
    sections: list[_Section] = []
    for line in full_text.split("\n"):  # a line keeps its trailing "\r"
        if line.startswith("## "):  # "### x" does not start with "## "
            sections.append(_Section(header=line))
        elif not sections:
            preamble.append(line)
        elif not sections[-1].has_italic and _is_italic(line):
            sections[-1].italic, sections[-1].has_italic = line, True
        else:
            sections[-1].body.append(line)
            if INDEX_LINE.match(js_trim(line)):
                sections[-1].index.append(line)  # the original, untrimmed line
    return preamble, sections


def section_aware_read(
    full_text: str, budget: int, path: str, hints: PointerTexts = REFERENCE_TEXTS
) -> BudgetedText:
    """Keep every heading, italic note and index line; fill bodies greedily in file order."""
    total = est(full_text)
    if total <= budget:
        return BudgetedText(full_text, False, total)
    preamble, sections = _parse_sections(full_text)
    skeleton = preamble + [line for s in sections for line in s.skeleton()]
    if est("\n".join(skeleton)) >= budget:
        lines = preamble + [line for s in sections for line in [*s.skeleton(), ""]]
        warning = hints.skeleton_warning(total, budget, path)
        return BudgetedText("\n".join(lines) + "\n\n" + warning, True, total)
    out = _fill(preamble, sections, budget)
    return BudgetedText("\n".join(out) + "\n\n" + hints.section_aware_hint(budget, path, total), True, total)


def _fill(preamble: list[str], sections: list[_Section], budget: int) -> list[str]:
    out = list(preamble)
    used = est("\n".join(out))
    for section in sections:
        used += est("\n".join(section.skeleton()))
        out.extend(section.skeleton())
        full_body = section.body_without_index()
        bt = est(full_body)
        if used + bt <= budget:
            out.append(full_body)  # even when empty
            used += bt
        else:
            remaining = budget - used
            if remaining > MIN_TOKENS_FOR_PARTIAL_BODY:
                # Not aligned to a line boundary (unlike behavior.md#proportional-read). Here bt > remaining >
                # 0.
                out.append(drop_dangling_high(head16(full_body, scaled_cut(len16(full_body), remaining, bt))))
                used += remaining
        out.append("")
    return out


# -- convenience -------------------------------------------------------------------------------
ReadMode = Literal["proportional", "section"]


def read_budgeted(
    root: MemoryRoot, path: str, budget: int, mode: ReadMode
) -> tuple[BudgetedText | None, ReadOutcome]:
    """Read `path` through the root and apply the budgeted read; None when it cannot be read."""
    outcome = root.read_text(path)
    if outcome.text is None:
        return None, outcome
    read = proportional_read if mode == "proportional" else section_aware_read
    return read(outcome.text, budget, path), outcome
