"""The checkpoint writer's instructions: what to write, how big, what survives a cut, what to return.

A host runs a checkpoint writer with one model call: the writer's messages (the main view up to
the watermark, `request/build purpose: "writer"`) followed by these instructions. They carry

- the `checkpoint.md` template and the purpose of each section (`checkpoint_template`);
- the size budget, `push_caps.checkpoint` tokens, and how tokens are counted (behavior.md#est);
- what the section-aware read (behavior.md#section-aware-read) keeps when the file is over budget,
  so the model puts
  what matters most where it survives;
- the current `checkpoint.md`, to be updated rather than rewritten from scratch;
- the watermark message the checkpoint must cover, and the output contract: the whole new file,
  nothing else.

The text is a pure function of its inputs: the same inputs give the same bytes, so a host that
sends it as the last user turn after the writer's messages keeps a stable, cacheable prefix.
The wording is ours and lives here, as the other model-facing texts live in `texts`.
"""

from __future__ import annotations

from ..config import PushCaps
from ..estimate.jstext import est
from ..memory.budgeted_read import MIN_TOKENS_FOR_PARTIAL_BODY
from .template import CHECKPOINT_TEMPLATE, CHECKPOINT_TITLE, SECTIONS, is_template

# Sections named in the rules below, by title (the numbers are the template's own headings).
FIRST_THREE = ", ".join(s.title for s in SECTIONS[:2]) + " and " + SECTIONS[2].title
LAST = SECTIONS[-1].title
CHARS_PER_TOKEN = 4  # behavior.md#est: UTF-16 length / 4, rounded half up

# Delimiters of the embedded files. Tags rather than code fences: a checkpoint may itself hold
# fenced code, which would close a fence early.
TEMPLATE_OPEN, TEMPLATE_CLOSE = "<checkpoint-template>", "</checkpoint-template>"
CURRENT_OPEN, CURRENT_CLOSE = "<current-checkpoint>", "</current-checkpoint>"

# The instructions' first sentence: how a reader of a writer request (the stand-in writer) tells
# them from the user's own words.
INSTRUCTIONS_LEAD = "You are the checkpoint writer of this coding session."
INTRO = (
    INSTRUCTIONS_LEAD + " The conversation above is the session's "
    "history up to and including message {watermark}. Your job is to update the session's checkpoint "
    "file, {path}, so that it covers that history."
)

WHY = (
    "When the session's context fills up, the history you have just read is taken out of the model's "
    "context and this file is put in its place, next to the task list, the user's recent messages "
    "quoted verbatim and a one-line-per-step list of the latest tool calls. An agent that has lost "
    "the history must be able to pick the work up from the checkpoint: write down what it cannot "
    "see anywhere else, in plain, specific words (file paths, function names, commands, exact error "
    "messages), not a narrative."
)

FORMAT_HEAD = "## The format"
FORMAT_RULES = (
    "- The first line is `" + CHECKPOINT_TITLE + "`. The next non-empty line is `Topic: ` followed by "
    "one line saying what the session is about; it is shown on its own in the checkpoint index, "
    "so make it specific.",
    "- Keep the ten `## §N` headings exactly as written and in this order, each followed by its "
    "italic line, unchanged. Under them, write short `- ` bullets, most important first. A section "
    "with nothing to say keeps its heading and italic line and stays empty.",
    "- Do not add lines that start with `# `: they are removed when the file is read back. `###` "
    "subheadings are fine. Quote the user in their own language.",
    "- A line of the form `- See <name>.md (<count> ...` points to a file kept beside the "
    "checkpoint and is always read back. Keep any such line you find, unchanged; do not make new "
    "ones, since you write checkpoint.md only.",
)

SECTIONS_HEAD = "## What each section is for"

BUDGET_HEAD = "## Size"


def budget_text(budget: int) -> str:
    return (
        f"The file must stay within {budget} tokens. Tokens are counted as one token for every "
        f"{CHARS_PER_TOKEN} characters of the whole file, rounded to the nearest whole number, where "
        "characters are UTF-16 code units: most emoji count as two characters, Chinese characters "
        f"as one. {budget} tokens are about {budget * CHARS_PER_TOKEN} characters. Aim well below the "
        "limit: drop what is done and no longer matters before you drop anything still open."
    )


SURVIVAL_HEAD = "## What is kept when the file is too big"


def survival_rules(budget: int) -> tuple[str, ...]:
    return (
        f"If the file is over {budget} tokens it is not read back whole. What is kept:",
        "- everything above the first `## ` heading (the title and the Topic line);",
        "- every `## ` heading, the first italic line under it and every `- See ...` line, whatever "
        "the size;",
        "- then the section bodies in file order: each body whole while it fits in what is left of "
        "the budget. The first body that does not fit is cut off part-way, even in the middle of a "
        f"line, and only if more than {MIN_TOKENS_FOR_PARTIAL_BODY} tokens are left; the bodies after "
        "it are in practice lost;",
        "- if the headings, italic lines and `- See` lines alone reach the budget, nothing else.",
        "So the earlier sections and the top of every section are the safest places: keep "
        f"{FIRST_THREE} short and current, and put the most important bullet first in each section.",
    )


CURRENT_HEAD = "## The current checkpoint"
UPDATE_RULE = (
    "Update this file; do not start over. Keep what is still true, correct what changed, remove what "
    "is finished and no longer useful, and add what is new in the conversation. Decisions are "
    f"never dropped: mark an overturned one as superseded. Rewrite “{LAST}” for the stretch of "
    "conversation this checkpoint adds."
)
NO_CURRENT = (
    "There is no checkpoint yet: write the first one, starting from the template, and use "
    f"“{LAST}” for the whole conversation so far."
)

OUTPUT_HEAD = "## Your reply"
OUTPUT_RULE = (
    "Reply with the complete new content of checkpoint.md and nothing else: no introduction, no "
    "comment, no code fence around it. Your reply is written to the file exactly as you send it, "
    "so it starts with `" + CHECKPOINT_TITLE + "`. It covers the conversation up to and including "
    "message {watermark}; do not call tools."
)


def section_purposes() -> list[str]:
    return [f"- §{s.number} {s.title}: {s.purpose}" for s in SECTIONS]


def writer_instructions(
    current: str | None,
    caps: PushCaps,
    checkpoint_path: str,
    watermark_id: str,
    *,
    root_relative: bool = False,
) -> str:
    """The instructions that follow the writer's messages in its one model call.

    `current` is the text of `checkpoint.md` as it is now (None or "" when there is none; the bare
    template counts as none). `checkpoint_path` is the file's path as the session's texts show it:
    absolute, or relative to the memory root (`root_relative`, behavior.md#d22); `watermark_id` the
    ID of the last message the writer sees (the in-flight writer's watermark). Only
    `caps.checkpoint` is read. Deterministic: the same arguments give the same string.
    """
    budget = caps.checkpoint
    blocks = [
        INTRO.format(
            watermark=watermark_id,
            path=f"{checkpoint_path} (relative to the memory root)" if root_relative else checkpoint_path,
        ),
        WHY,
        "\n".join([FORMAT_HEAD, "", TEMPLATE_OPEN, CHECKPOINT_TEMPLATE, TEMPLATE_CLOSE, "", *FORMAT_RULES]),
        "\n".join([SECTIONS_HEAD, "", *section_purposes()]),
        "\n".join([BUDGET_HEAD, "", budget_text(budget)]),
        "\n".join([SURVIVAL_HEAD, "", *survival_rules(budget)]),
        _current_block(current, budget),
        "\n".join([OUTPUT_HEAD, "", OUTPUT_RULE.format(watermark=watermark_id)]),
    ]
    return "\n\n".join(blocks)


def _current_block(current: str | None, budget: int) -> str:
    if current is None or is_template(current):
        return "\n".join([CURRENT_HEAD, "", NO_CURRENT])
    size = est(current)
    over = f", over the {budget}-token budget: shorten it." if size > budget else "."
    status = f"It holds {size} tokens{over}"
    return "\n".join([CURRENT_HEAD, "", UPDATE_RULE, status, "", CURRENT_OPEN, current, CURRENT_CLOSE])
