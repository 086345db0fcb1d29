"""What `checkpoint/commit` accepts as the new `checkpoint.md`, and what it warns about
(behavior.md#checkpoint-commit).

Refused (nothing is written, the writer stays in flight):

- content that is not text: a NUL character (the reader would take the file for binary, D14) or a
  lone UTF-16 surrogate (no UTF-8 encoding exists for it);
- blank content (empty or whitespace only): it would replace the checkpoint with nothing, which is
  a failed writer, not a checkpoint;
- content over `checkpoint.commit_max_bytes` bytes of UTF-8.

Accepted with a warning, because the readers cope with it but the host should know:

- over the `push_caps.checkpoint` token budget: the section-aware read keeps only part of it;
- no `Topic:` line: the checkpoint index shows "(unknown)";
- the bare template: no section has a body yet.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import texts
from ..estimate.jstext import est, is_blank
from .template import checkpoint_topic, is_template


@dataclass(frozen=True)
class ContentProblem:
    reason: str  # "nul", "surrogate", "blank", "too-large": the wire's `data.reason`
    detail: str


def content_problem(content: str, max_bytes: int) -> tuple[bytes, None] | tuple[None, ContentProblem]:
    """The UTF-8 bytes to write, or why `content` cannot be the checkpoint."""
    nul = content.find("\0")
    if nul >= 0:
        return None, ContentProblem("nul", texts.checkpoint_has_nul(nul))
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError as exc:
        return None, ContentProblem("surrogate", texts.checkpoint_has_surrogate(exc.start))
    if is_blank(content):
        return None, ContentProblem("blank", texts.CHECKPOINT_BLANK)
    if len(data) > max_bytes:
        return None, ContentProblem("too-large", texts.checkpoint_too_large(len(data), max_bytes))
    return data, None


def content_warnings(content: str, budget: int) -> list[str]:
    """What the readers will make of an accepted `content` that the host may not expect."""
    warnings = []
    if is_template(content):
        warnings.append(texts.CHECKPOINT_IS_TEMPLATE)
    elif checkpoint_topic(content) is None:
        warnings.append(texts.CHECKPOINT_NO_TOPIC)
    tokens = est(content)
    if tokens > budget:
        warnings.append(texts.checkpoint_over_budget(tokens, budget))
    return warnings
