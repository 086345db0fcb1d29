"""Assemble the sample session from the story: `build()` returns the session.json data.

Usage is settled last. The main slice's system prompt and tool schemas (`system_tokens`) are sized
so that the last step is the first one whose usage crosses the trigger line of the bundled model
(90% of a 200 000-token window): earlier steps stay under it, so no rebuild was due before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import home
import script
from kit import MODEL_ID, PROVIDER, Checkout, Story

HERE = Path(__file__).resolve().parent
SEED = 20260504
START_MS = 1_777_885_920_000  # 2026-05-04T09:12:00Z
MODEL = {"providerId": PROVIDER, "modelId": MODEL_ID, "contextWindow": 200_000, "maxOutputTokens": 32_000}
TRIGGER_LINE = int(MODEL["contextWindow"] * 0.9)
SUB_SYSTEM_TOKENS = 6_000  # a sub-agent's smaller prompt and tool set


def tell() -> Story:
    fs = Checkout.load(HERE / "tally")
    home.install(fs)
    story = Story(fs, seed=SEED, start_ms=START_MS)
    script.tell(story)
    return story


def main_totals(story: Story) -> list[int]:
    return [
        m["info"]["tokens"]["total"]
        for m in story.messages
        if m["info"]["role"] == "assistant" and "agentID" not in m["info"]
    ]


def settle(story: Story) -> int:
    """Size the system prompt, fill every usage record; returns the system prompt's tokens."""
    story.settle_usage({"main": 0, "sub": SUB_SYSTEM_TOKENS}, SEED)
    before_last, last = main_totals(story)[-2:]
    # Land the last step two thirds of its own growth above the line: the step before stays under.
    system = TRIGGER_LINE + (last - before_last) * 2 // 3 - last
    story.settle_usage({"main": system, "sub": SUB_SYSTEM_TOKENS}, SEED)
    totals = main_totals(story)
    if not (totals[-1] >= TRIGGER_LINE > max(totals[:-1])):
        raise ValueError(f"the last step must be the first over {TRIGGER_LINE}: {totals[-3:]}")
    if not 8_000 <= system <= 32_000:
        raise ValueError(f"implausible system prompt of {system} tokens: lengthen or shorten the story")
    return system


def build() -> dict[str, Any]:
    story = tell()
    settle(story)
    return {
        "sessionId": story.session_id,
        "projectId": story.project_id,
        # The stored watermark: the last message of the morning, which the bundled checkpoint.md
        # covers (an earlier writer's, as a host passes it to session/open after a restart).
        "watermark": story.marks["morning-done"],
        "model": dict(MODEL),
        "messages": story.messages,
        "tasks": story.board.tasks,
        "actors": story.actors,
    }
