"""`inspect --tools`: one sample call of each kind of the sidecar's model tools, against the
session after its rebuild (behavior.md#d18), to see what a model that follows the text's pointers
would read.

The arguments are picked from the session itself: the newest user ask for `history around` and a
word of it for both searches, the first result the rebuild cleared (else the newest call) for
`history result`, the session's `checkpoint.md` for `memory read`, its first task for `task get`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.engine import InsertResult
from ..core.model_tools import ToolAnswer
from ..core.session.message import Json
from ..core.session.session import Session
from ..core.session.shapes import logical_calls
from ..core.words import MAIN_AGENT
from ..service import SidecarService

WORD = re.compile(r"[^\W\d_]{5,}")
FALLBACK_QUERY = "the"


@dataclass(frozen=True)
class ToolSample:
    name: str
    arguments: Json
    answer: ToolAnswer


def sample_calls(
    service: SidecarService,
    session: Session,
    ask_id: str | None,
    ask_text: str,
    inserted: InsertResult | None,
) -> list[ToolSample]:
    """One call of each operation, in the order of tools/list."""
    prefix = service.model_tool_prefix(session.session_id, None)
    word = max(WORD.findall(ask_text), key=len, default=FALLBACK_QUERY)
    calls: list[tuple[str, Json]] = []
    around = ask_id or next((m.id for m in session.newest_first(MAIN_AGENT)), None)
    if around is not None:
        calls.append(("history", {"operation": "around", "messageID": around, "before": 0, "after": 1}))
    calls.append(("history", {"operation": "search", "query": word}))
    call_id = _a_call(session, inserted)
    if call_id is not None:
        calls.append(("history", {"operation": "result", "callID": call_id}))
    calls.append(("memory", {"operation": "search", "query": word}))
    memory = service.settings().memory
    calls.append(
        ("memory", {"operation": "read", "path": memory.relative(memory.checkpoint_path(session.session_id))})
    )
    calls.append(("task", {"operation": "list"}))
    tasks = session.listed_tasks(service.clock_ms(), service.config.task_archive_days)
    if tasks:
        calls.append(("task", {"operation": "get", "id": str(tasks[0].get("id"))}))
    return [
        ToolSample(prefix + name, args, service.call_tool(session.session_id, prefix + name, args))
        for name, args in calls
    ]


def _a_call(session: Session, inserted: InsertResult | None) -> str | None:
    if inserted is not None and inserted.compacted:
        return inserted.compacted[0].call_id
    calls = logical_calls(session.slice(MAIN_AGENT))
    return next(reversed(calls), None) if calls else None
