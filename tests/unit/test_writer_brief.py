"""core.checkpoint.writer_brief: the checkpoint writer's instructions (behavior.md#writer-instructions)."""

from __future__ import annotations

from mimo_sidecar.core.checkpoint.template import CHECKPOINT_TEMPLATE, SECTIONS, checkpoint_skeleton
from mimo_sidecar.core.checkpoint.writer_brief import (
    CURRENT_CLOSE,
    CURRENT_OPEN,
    NO_CURRENT,
    writer_instructions,
)
from mimo_sidecar.core.config import PushCaps
from mimo_sidecar.core.estimate.jstext import est
from mimo_sidecar.core.memory.budgeted_read import MIN_TOKENS_FOR_PARTIAL_BODY

PATH = "/mem/sessions/ses_1/checkpoint.md"
W = "msg_g0019df5441fa8001Fb3YgxpBk"
DECISIONS = SECTIONS[1]
CURRENT = checkpoint_skeleton("CSV import fixes").replace(
    DECISIONS.italic + "\n", DECISIONS.italic + "\n- keep cents as integers\n"
)


def test_carries_budget_path_watermark_and_template() -> None:
    got = writer_instructions(None, PushCaps(checkpoint=7000), PATH, W)
    assert "7000 tokens" in got and "28000 characters" in got  # the budget and its rule in characters
    assert "11000" not in got  # the default is not what the host configured
    assert PATH in got
    assert got.count(W) == 2  # where the history ends, and what the reply covers
    assert CHECKPOINT_TEMPLATE in got
    for s in SECTIONS:
        assert f"- §{s.number} {s.title}: {s.purpose}" in got
    assert f"more than {MIN_TOKENS_FOR_PARTIAL_BODY} tokens" in got  # the partial-cut rule


def test_includes_the_current_file_verbatim_to_update() -> None:
    got = writer_instructions(CURRENT, PushCaps(), PATH, W)
    assert f"{CURRENT_OPEN}\n{CURRENT}\n{CURRENT_CLOSE}" in got
    assert "do not start over" in got
    assert f"It holds {est(CURRENT)} tokens." in got
    assert NO_CURRENT not in got


def test_no_current_file_or_the_bare_template_asks_for_a_first_checkpoint() -> None:
    for current in (None, "", CHECKPOINT_TEMPLATE):
        got = writer_instructions(current, PushCaps(), PATH, W)
        assert NO_CURRENT in got
        assert CURRENT_OPEN not in got


def test_an_oversized_current_file_is_flagged() -> None:
    big = CURRENT + "- " + "x" * 400 + "\n"
    got = writer_instructions(big, PushCaps(checkpoint=50), PATH, W)
    assert f"It holds {est(big)} tokens, over the 50-token budget: shorten it." in got


def test_deterministic_and_sensitive_to_every_input() -> None:
    base = (CURRENT, PushCaps(), PATH, W)
    assert writer_instructions(*base) == writer_instructions(*base)
    variants = [
        (CURRENT + "- more\n", PushCaps(), PATH, W),
        (CURRENT, PushCaps(checkpoint=9000), PATH, W),
        (CURRENT, PushCaps(), "/other/checkpoint.md", W),
        (CURRENT, PushCaps(), PATH, "msg_other"),
    ]
    assert len({writer_instructions(*base), *(writer_instructions(*v) for v in variants)}) == 5


def test_output_contract_is_the_last_block() -> None:
    got = writer_instructions(CURRENT, PushCaps(), PATH, W)
    last = got.split("\n\n")[-1]
    assert "complete new content of checkpoint.md and nothing else" in last
    assert "no code fence" in last
