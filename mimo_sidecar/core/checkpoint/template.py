"""The shape of `checkpoint.md`: a title, a `Topic:` line and ten numbered `##` sections.

The template is written for the two readers of the file (behavior.md#checkpoint-topic,
behavior.md#section-aware-read):

- the checkpoint index takes the topic from the first `Topic:` line, so the line sits right under
  the title, before any section;
- the section-aware read keeps, whatever the budget, everything above the first `## ` line (the
  title and the topic), every `## ` heading and the first `_italic_` line of each section. Each
  section's purpose is therefore its italic line: a reader of a truncated file still sees what
  every section was for. Bodies are filled in file order, so the sections most needed to resume
  the work come first.

`CHECKPOINT_TEMPLATE` is the file a session starts with before any writer has run (its topic is a
placeholder and every body is empty); `is_template` recognises it, so a writer or a host can tell
"no checkpoint written yet" from a real one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..estimate.jstext import JS_WS_CLASS, is_blank, js_trim

CHECKPOINT_TITLE = "# Session checkpoint"
TOPIC_PREFIX = "Topic: "
UNWRITTEN_TOPIC = "(not written yet)"


# behavior.md#checkpoint-index: the topic the checkpoint index shows (and `is_template` reads).
# `^Topic:\s*(.+)$` with the `m` flag, in JavaScript semantics: `^`/`$` at any of the four line
# terminators, `.` excludes them, `\s` is the JavaScript whitespace class (it crosses lines).
_JS_LINE_TERMINATORS = "\n\r\u2028\u2029"
TOPIC_PATTERN = re.compile(
    rf"(?<![^{_JS_LINE_TERMINATORS}])Topic:{JS_WS_CLASS}*([^{_JS_LINE_TERMINATORS}]+)(?![^{_JS_LINE_TERMINATORS}])"
)


def checkpoint_topic(text: str) -> str | None:
    """The JS-trimmed capture of the first `Topic:` match; None when there is none or it is blank."""
    match = TOPIC_PATTERN.search(text)
    if match is None:
        return None
    return js_trim(match.group(1)) or None


@dataclass(frozen=True)
class CheckpointSection:
    number: int
    title: str
    purpose: str  # one sentence; the section's italic line and its line in the writer instructions

    @property
    def heading(self) -> str:
        return f"## §{self.number} {self.title}"

    @property
    def italic(self) -> str:
        # The section-aware read takes the first line that starts and ends with "_" as the italic.
        return f"_{self.purpose}_"


SECTIONS: tuple[CheckpointSection, ...] = (
    CheckpointSection(
        1,
        "Active intent",
        "What the user wants now, in their words where it matters, and the next step towards it.",
    ),
    CheckpointSection(
        2,
        "Decisions",
        "Choices made and why; an overturned one stays, marked superseded, with what replaced it.",
    ),
    CheckpointSection(
        3,
        "Work in flight",
        "What is half done: the change under way, the command last run and its result, what comes next.",
    ),
    CheckpointSection(
        4,
        "Constraints and preferences",
        "Rules the user set (do, don't, always, never), quoted when the wording matters.",
    ),
    CheckpointSection(
        5,
        "Open questions",
        "Questions not yet answered, and who has to answer each one.",
    ),
    CheckpointSection(
        6,
        "Errors seen",
        "Errors met, with the exact message, and whether each is fixed, worked around or still open.",
    ),
    CheckpointSection(
        7,
        "Discovered knowledge",
        "Facts about the code, the tools or the environment that took effort to find out.",
    ),
    CheckpointSection(
        8,
        "Files touched",
        "Each file created or changed in this session, with one line on what changed.",
    ),
    CheckpointSection(
        9,
        "Live resources",
        "What is still running or held: background jobs and actors, servers and ports, branches, temp files.",
    ),
    CheckpointSection(
        10,
        "Since the last checkpoint",
        "What happened between the previous checkpoint and this one, oldest first, in a few lines.",
    ),
)


def checkpoint_skeleton(topic: str) -> str:
    """The title, `Topic: <topic>` and every section's heading and italic line, bodies empty."""
    lines = [CHECKPOINT_TITLE, "", TOPIC_PREFIX + topic, ""]
    for section in SECTIONS:
        lines += [section.heading, section.italic, ""]
    return "\n".join(lines)


CHECKPOINT_TEMPLATE = checkpoint_skeleton(UNWRITTEN_TOPIC)


def is_template(text: str | None) -> bool:
    """True when `text` is absent, blank, or still the template: placeholder topic, no body line.

    Line endings and trailing spaces are not significant, so a template that went through an
    editor (CRLF, a final newline) is still recognised.
    """
    if is_blank(text):
        return True
    assert text is not None
    if checkpoint_topic(text) != UNWRITTEN_TOPIC:
        return False
    skeleton = {line.strip() for line in CHECKPOINT_TEMPLATE.split("\n")}
    return all(line.strip() in skeleton for line in text.replace("\r\n", "\n").split("\n"))
