"""The newest genuine user ask of an imported session, by the sidecar's own rule.

"Genuine" is what "Recent user input" (behavior.md#section-recent-user) would quote: a main-slice
user message that is not a carrier and not a boundary, with non-synthetic, non-blank text. The rule
is the core's (`recent_user.newest_user_ask`), applied to the imported params.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..core.rebuild.recent_user import newest_user_ask as newest_ask_of
from ..core.rebuild.recent_user import raw_user_text
from ..core.session.message import Message
from ..core.words import MAIN_AGENT
from .fields import Json, as_dict, as_list


def _main_slice_newest_first(params: Json) -> Iterator[Message]:
    for raw in reversed(as_list(params.get("messages")) or []):
        info = as_dict(raw.get("info")) if isinstance(raw, dict) else None
        if info is not None and (info.get("agentID") or MAIN_AGENT) == MAIN_AGENT:
            yield Message(info, as_list(raw.get("parts")) or [])


def newest_user_ask(params: Json) -> tuple[str, str] | None:
    """(message ID, text) of the newest genuine user ask in the main slice, or None."""
    ask = newest_ask_of(_main_slice_newest_first(params))
    return (ask.id, raw_user_text(ask)) if ask is not None else None
