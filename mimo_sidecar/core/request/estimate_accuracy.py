"""How far the request-size estimate was from what the provider counted (behavior.md#d15).

A step's usage record says how many prompt tokens the provider counted for the request that
produced it (input + cache reads + cache writes). The estimate of that request is the frozen
prefix plus the request-size figure of the messages the view kept before the step
(`request_size.message_token_counts`, as the step's own provider counts them). For each model, over
its newest `LAST_STEPS` steps with usage in the view, `ratio` = Σ estimate / Σ counted: 1.0 means
the estimate matched; below 1, it was short (a system prompt the transcript does not hold, a
tokenizer denser than 4 characters per token), above 1, it was over (a host that trims its own
requests).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..estimate.provider_count import counting_for, prompt_count
from ..session.message import Message
from .size import message_token_counts

LAST_STEPS = 5


@dataclass(frozen=True)
class StepCount:
    message_id: str
    estimated: int  # the estimate of the request that produced the step
    counted: int  # the provider's prompt count for it


@dataclass(frozen=True)
class ModelAccuracy:
    provider_id: str | None
    model_id: str | None
    steps: tuple[StepCount, ...]  # the newest steps with usage, oldest first

    @property
    def estimated(self) -> int:
        return sum(s.estimated for s in self.steps)

    @property
    def counted(self) -> int:
        return sum(s.counted for s in self.steps)

    @property
    def ratio(self) -> float:
        return self.estimated / self.counted if self.counted else 0.0


def _model_of(message: Message) -> tuple[str | None, str | None]:
    provider, model = message.info.get("providerID"), message.info.get("modelID")
    return (provider if isinstance(provider, str) else None, model if isinstance(model, str) else None)


def estimate_accuracy(kept: Sequence[Message], prefix: int, last: int = LAST_STEPS) -> list[ModelAccuracy]:
    """Per model (the one of the newest step first), its newest `last` steps with usage among `kept`
    (the view as the collapse keeps it, in request order) and the estimate of each one's request;
    `prefix` is the frozen prefix's estimate."""
    steps: dict[tuple[str | None, str | None], list[int]] = {}
    for i, m in enumerate(kept):
        if m.role == "assistant" and prompt_count(m.info.get("tokens")) > 0:
            steps.setdefault(_model_of(m), []).append(i)
    newest_first = sorted(steps.items(), key=lambda item: -item[1][-1])
    return [
        ModelAccuracy(*model, _counts(kept, positions[-last:], prefix, model))
        for model, positions in newest_first
    ]


def _counts(
    kept: Sequence[Message], positions: list[int], prefix: int, model: tuple[str | None, str | None]
) -> tuple[StepCount, ...]:
    """Each step's request: the prefix and the messages before it, as that request held them (a
    model that keeps only the turn in progress no longer reads the reasoning of turns over)."""
    counting = counting_for(*model)
    return tuple(
        StepCount(
            kept[i].id,
            prefix + sum(message_token_counts(kept[:i], counting)),
            prompt_count(kept[i].info.get("tokens")),
        )
        for i in positions
    )
