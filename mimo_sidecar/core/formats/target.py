"""The target of a request: which model it goes to and what that model accepts (protocol.md,
"`target`").

`Target` is what the host says (`request/build` `target`); `resolve` fills the gaps:

- `provider_id` / `model_id`: the model the request goes to. Reasoning (thinking signatures,
  encrypted reasoning, thought signatures) is replayed only to the provider and model that produced
  it. Default for the provider formats: the provider and model of the session's newest stored
  assistant message (the host continues with the model it used last), also when a rebuild
  collapsed it out of the request and for the writer's older fork. For `ai-sdk` nothing is filtered unless
  the host gives a target (today's output is kept byte for byte).
- `thinking`: Anthropic extended thinking on (`True`), off (`False`) or unknown (`None`, the
  default: signed thinking is kept and the final-message thinking rules of `rules` are not
  enforced).
- `images`: the model takes image and file input (default true); when false, media becomes a
  fixed text placeholder.
- `tool_result_media`: media may sit inside a tool result. Default per format: true for
  `anthropic`, `openai-responses` and `ai-sdk`; false for `openai-chat` (impossible there) and
  `gemini` (only Gemini 3 takes it); when false, media moves to a user turn after the results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .model import Reasoning, Turn


@dataclass(frozen=True)
class Target:
    provider_id: str | None = None
    model_id: str | None = None
    thinking: bool | None = None
    images: bool = True
    tool_result_media: bool | None = None
    given: bool = False  # the host described the target (ai-sdk filters reasoning only then)


def resolve(
    target: Target | None,
    turns: Sequence[Turn],
    *,
    filter_by_default: bool,
    model_in_use: tuple[str | None, str | None] | None = None,
) -> Target:
    """The target with provider/model defaulted to `model_in_use` (the session's newest stored
    assistant message), else to the newest assistant turn's (see module doc)."""
    target = target or Target()
    if not (target.given or filter_by_default):
        return target
    if target.provider_id is None and target.model_id is None:
        if model_in_use is not None:
            return replace(target, provider_id=model_in_use[0], model_id=model_in_use[1])
        newest = next((t for t in reversed(turns) if t.role == "assistant" and (t.provider or t.model)), None)
        if newest is not None:
            return replace(target, provider_id=newest.provider, model_id=newest.model)
    return target


def replay_refusal(reasoning: Reasoning, turn: Turn, family: str | None, target: Target) -> str | None:
    """Why `reasoning` may not be replayed to `target` (None: it may).

    `family` is the replay family the format can carry (None: any, for `ai-sdk`).
    """
    if family is not None and reasoning.family != family:
        if reasoning.family is None:
            return "no replay token (a provider takes back only the reasoning it signed or encrypted)"
        who = reasoning.family
        return f"replay token of another provider ({who}; only the provider that signed it verifies it)"
    if target.model_id is not None and turn.model is not None and turn.model != target.model_id:
        return "produced by another model (a replay token is bound to the model that wrote it)"
    if target.provider_id is not None and turn.provider is not None and turn.provider != target.provider_id:
        return "produced by another provider (a replay token is bound to the provider that wrote it)"
    return None
