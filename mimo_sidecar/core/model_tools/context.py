"""What one model tool call reads: the session, the memory root, the clock, the names in use."""

from __future__ import annotations

from dataclasses import dataclass

from ..memory.files import MemoryRoot
from ..session.session import Session
from ..tool_pointers import sidecar_tool_names
from .answer import DEFAULT_ANSWER_TOKENS


@dataclass(frozen=True)
class ToolContext:
    """`prefix`: the prefix the model's names of the sidecar's tools carry (the history search
    leaves their own calls and results out: a search would find its own query, and the answers
    of earlier searches, again). `answer_tokens`: the cap of one answer."""

    session: Session
    memory: MemoryRoot
    now_ms: int
    archive_days: float
    prefix: str = ""
    answer_tokens: int = DEFAULT_ANSWER_TOKENS

    @property
    def own_tool_names(self) -> frozenset[str]:
        return frozenset(sidecar_tool_names(self.prefix))
