"""The newest genuine user ask of an imported session, by the sidecar's own rule.

"Genuine" is what "Recent user input" (behavior.md#section-recent-user) would quote: a main-slice
user message that is not a carrier and not a boundary, with non-synthetic, non-blank text. The rule
is the core's (`render.is_recent_user_candidate`, `render.raw_user_text`), applied to the imported
params.
"""

from __future__ import annotations

from ..core.jstext import is_blank
from ..core.message import Message
from ..core.render import is_recent_user_candidate, raw_user_text
from .fields import Json, as_dict, as_list


def newest_user_ask(params: Json) -> tuple[str, str] | None:
    """(message ID, text) of the newest genuine user ask in the main slice, or None."""
    for raw in reversed(as_list(params.get("messages")) or []):
        info = as_dict(raw.get("info")) if isinstance(raw, dict) else None
        if info is None or (info.get("agentID") or "main") != "main":
            continue
        msg = Message(info, as_list(raw.get("parts")) or [])
        if is_recent_user_candidate(msg):
            text = raw_user_text(msg)
            if not is_blank(text):
                return msg.id, text
    return None
