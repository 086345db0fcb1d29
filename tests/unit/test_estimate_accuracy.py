"""How far the request-size estimate was from the provider's count (behavior.md#d15).

A synthetic session whose steps record usage: the per-model ratio, the newest steps, the request
each step measured; `rebuild/compute` reports it with the preview (`estimateAccuracy`), `inspect`
in its picture and `--json`. Over shared/real-sessions, the estimate stays within the documented
margin of the usage every transcript with usage recorded (loosely: `make bench` prints the exact
ratios, benchmarks/estimate_accuracy.py).
"""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.request.estimate_accuracy import estimate_accuracy
from mimo_sidecar.core.request.size import message_token_counts
from mimo_sidecar.core.session.message import Message
from tests.harness import Harness
from tests.real_sessions import imported, real_session_files
from tests.unit.builders import assistant, session_of, text, usage, user
from tests.unit.importers.transcripts import open_in_core
from tests.unit.split_sessions import CLAUDE, GPT, T0

Json = dict[str, Any]
# The documented margin (behavior.md#d15): estimate / usage on the real corpus.
MARGIN = (0.4, 1.3)
SELF_CONTAINED = (0.9, 1.1)  # a transcript that holds its own instructions (Codex)


def steps(n: int, model: Json, start: int = 0, per_step: int = 1000) -> list[Message]:
    """User asks each answered by a step whose usage counts a little more than what came before."""
    out: list[Message] = []
    for k in range(start, start + n):
        out.append(user(f"u{k:02d}", text("x" * 4 * 100), created=T0 + 10 * k))
        out.append(
            assistant(
                f"a{k:02d}",
                text("y" * 4 * 100),
                created=T0 + 10 * k + 1,
                tokens=usage(per_step * (k + 1), 10),
                **model,
            )
        )
    return out


def test_each_step_is_compared_with_the_request_that_produced_it() -> None:
    msgs = steps(3, CLAUDE)
    counting = engine.session_counting(session_of(msgs, "s", "p"))
    [claude] = estimate_accuracy(msgs, prefix=500)
    assert (claude.provider_id, claude.model_id) == ("anthropic", "claude-sonnet-4-6")
    shares = message_token_counts(msgs, counting)
    assert [s.message_id for s in claude.steps] == ["a00", "a01", "a02"]
    assert [s.estimated for s in claude.steps] == [500 + sum(shares[:i]) for i in (1, 3, 5)]
    assert [s.counted for s in claude.steps] == [1000, 2000, 3000]
    assert claude.ratio == pytest.approx(claude.estimated / 6000)


def test_per_model_the_newest_steps_newest_model_first() -> None:
    msgs = steps(7, GPT) + steps(2, CLAUDE, start=7)
    claude, gpt = estimate_accuracy(msgs, prefix=0)
    assert claude.model_id == "claude-sonnet-4-6" and [s.message_id for s in claude.steps] == ["a07", "a08"]
    assert gpt.model_id == "gpt-5.3-codex" and [s.message_id for s in gpt.steps] == [
        f"a{k:02d}" for k in range(2, 7)
    ]


def test_steps_without_usage_are_not_compared() -> None:
    msgs = [
        user("u1", text("go"), created=T0),
        assistant("a1", text("ok"), created=T0 + 1, tokens=usage(0, 0)),
    ]
    assert estimate_accuracy(msgs, prefix=0) == []


def test_compute_reports_it_with_the_preview(tmp_path: Path) -> None:
    harness = Harness(memory_root=str(tmp_path))
    params = {
        "sessionId": "ses_acc",
        "messages": [{"info": m.info, "parts": m.parts} for m in steps(3, CLAUDE)],
        "requestPrefix": {"system": ["You are a coding agent."], "tools": []},
    }

    async def run() -> tuple[Any, Any]:
        await harness.call("session/open", params)
        with_preview = await harness.call("rebuild/compute", {"sessionId": "ses_acc", "preview": True})
        without = await harness.call("rebuild/compute", {"sessionId": "ses_acc", "preview": False})
        return with_preview, without

    with_preview, without = asyncio.run(run())
    [claude] = with_preview["estimateAccuracy"]
    assert claude["providerId"] == "anthropic" and claude["modelId"] == "claude-sonnet-4-6"
    assert [s["usageTokens"] for s in claude["steps"]] == [1000, 2000, 3000]
    assert claude["usageTokens"] == 6000 and claude["estimatedTokens"] == sum(
        s["estimatedTokens"] for s in claude["steps"]
    )
    assert claude["ratio"] == round(claude["estimatedTokens"] / 6000, 3)
    assert without["estimateAccuracy"] == []


# =================================================================================================
# The real corpus: within the documented margin
# =================================================================================================
def redacted(params: Json) -> bool:
    """The author replaced the texts with markers (the usage is real, the content is not)."""
    texts = [p["text"] for m in params["messages"] for p in m["parts"] if isinstance(p.get("text"), str)]
    return sum(t.startswith("[redacted:") for t in texts) > len(texts) // 2


@cache
def accuracy_of(path: Path) -> tuple[Json, list[Any]]:
    params = imported(path).params
    session = open_in_core(params)
    return params, engine.view_accuracy(session, session.context_view())


@pytest.mark.parametrize("path", real_session_files())
def test_the_estimate_is_within_the_margin_of_real_usage(path: Path) -> None:
    params, found = accuracy_of(path)
    if not found:
        pytest.skip("no step of the view records usage")
    if path.parent.name == "cline":
        pytest.skip(
            "Cline trims its own requests (its deleted range is not in the transcript): behavior.md#d15"
        )
    if redacted(params):
        pytest.skip("the author redacted the texts: the usage measured content the file no longer holds")
    low, high = SELF_CONTAINED if path.parent.name == "codex" else MARGIN
    for accuracy in found:
        assert low <= accuracy.ratio <= high, (accuracy.model_id, accuracy.ratio)
