"""core.checkpoint.template: the template reads back as the core reads checkpoint.md.

behavior.md#checkpoint-topic, behavior.md#section-checkpoint, behavior.md#section-aware-read.
"""

from __future__ import annotations

import os

import pytest

from mimo_sidecar.core import texts
from mimo_sidecar.core.checkpoint.template import (
    CHECKPOINT_TEMPLATE,
    CHECKPOINT_TITLE,
    SECTIONS,
    UNWRITTEN_TOPIC,
    checkpoint_skeleton,
    is_template,
)
from mimo_sidecar.core.estimate.jstext import est
from mimo_sidecar.core.memory.budgeted_read import section_aware_read
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.boundary import checkpoint_topic, render_index
from mimo_sidecar.core.rebuild.render import strip_h1

SID = "ses_1"
PATH = "/mem/sessions/ses_1/checkpoint.md"
TOPIC = "ledger import: Kontor Bank amounts and split rows"


def filled(bodies: dict[int, str], topic: str = TOPIC) -> str:
    """The template with `bodies[n]` written under section n."""
    lines = [CHECKPOINT_TITLE, "", "Topic: " + topic, ""]
    for s in SECTIONS:
        lines += [s.heading, s.italic, *([bodies[s.number]] if s.number in bodies else []), ""]
    return "\n".join(lines)


def test_ten_numbered_sections_in_the_documented_order() -> None:
    assert [s.heading for s in SECTIONS] == [
        "## §1 Active intent",
        "## §2 Decisions",
        "## §3 Work in flight",
        "## §4 Constraints and preferences",
        "## §5 Open questions",
        "## §6 Errors seen",
        "## §7 Discovered knowledge",
        "## §8 Files touched",
        "## §9 Live resources",
        "## §10 Since the last checkpoint",
    ]
    # One line each, and each is an italic line for the section-aware read (starts and ends with "_").
    for s in SECTIONS:
        assert "\n" not in s.italic and s.italic.startswith("_") and s.italic.endswith("_")
        assert "_" not in s.purpose


def test_template_topic_is_found_by_the_index_pattern(tmp_path) -> None:
    assert checkpoint_topic(CHECKPOINT_TEMPLATE) == UNWRITTEN_TOPIC
    assert checkpoint_topic(checkpoint_skeleton(TOPIC)) == TOPIC
    mem = MemoryRoot(str(tmp_path))
    os.makedirs(mem.session_dir(SID))
    with open(mem.checkpoint_path(SID), "w", encoding="utf-8") as f:
        f.write(filled({1: "- fix the amounts"}))
    assert render_index(mem, SID).split("\n")[-1] == texts.index_topic_line(TOPIC)


def test_topic_sits_in_the_preamble_so_every_read_keeps_it() -> None:
    # The smallest budget still returns the outline: title, topic, then every heading and italic.
    got = section_aware_read(filled({n: "- body " * 50 for n in range(1, 11)}), 1, PATH)
    assert got.truncated
    lines = got.text.split("\n")
    assert lines[:4] == [CHECKPOINT_TITLE, "", "Topic: " + TOPIC, ""]
    outline = [line for line in lines[4:] if line.startswith("## ") or line.startswith("_")]
    assert outline == [x for s in SECTIONS for x in (s.heading, s.italic)]
    assert "- body" not in got.text


def test_over_budget_keeps_early_bodies_whole_and_every_outline_line() -> None:
    bodies = {n: "\n".join(f"- item {n}.{i} " + "x" * 60 for i in range(12)) for n in range(1, 11)}
    text = filled(bodies)
    budget = est(text) // 3
    got = section_aware_read(text, budget, PATH)
    assert got.truncated
    assert bodies[1] in got.text and bodies[2] in got.text  # the first sections survive whole
    assert bodies[10] not in got.text and "- item 10.0" not in got.text  # the last body is lost
    for s in SECTIONS:  # but every heading keeps its italic right under it
        assert f"{s.heading}\n{s.italic}\n" in got.text


def test_under_budget_the_whole_file_comes_back() -> None:
    text = filled({1: "- a", 6: "- TypeError: x is undefined (fixed)"})
    assert section_aware_read(text, 11000, PATH).text == text


def test_rendered_section_drops_only_the_title() -> None:
    # The checkpoint section is pushed with stripH1: the title goes, the Topic line and all ## stay.
    got = strip_h1(CHECKPOINT_TEMPLATE)
    assert CHECKPOINT_TITLE not in got.split("\n")
    assert got.startswith("Topic: " + UNWRITTEN_TOPIC)
    assert [line for line in got.split("\n") if line.startswith("## ")] == [s.heading for s in SECTIONS]


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "  \n",
        CHECKPOINT_TEMPLATE,
        CHECKPOINT_TEMPLATE.replace("\n", "\r\n"),
        CHECKPOINT_TEMPLATE.rstrip(),
    ],
)
def test_is_template_accepts_the_unwritten_file(text: str | None) -> None:
    assert is_template(text)


@pytest.mark.parametrize(
    "text",
    [
        checkpoint_skeleton(TOPIC),  # a real topic
        filled({3: "- running bun test"}, UNWRITTEN_TOPIC),  # a body line
        "Topic: something\n",
        "# Notes\n\nanything",
    ],
)
def test_is_template_rejects_a_written_checkpoint(text: str) -> None:
    assert not is_template(text)
