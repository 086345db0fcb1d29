"""The estimated size of a request, without building it (spec §3.2, §11, §12).

`request_tokens` is what `request/build` reports as `estimatedTokens` for a view: the cached
estimates of the stored messages the collapse keeps (a carrier trimmed by the collapse counts as
trimmed). It skips the conversion, which costs a hundred times more on a long view, so the only
difference is a message that converts to nothing (an aborted assistant message without content),
which counts here. The trigger's usage fallback and the inflation guard use it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .collapse import collapse
from .jsjson import js_json_length
from .jstext import est_len
from .message import Json, Message
from .ordering import Ordering


def request_tokens(view: Sequence[Message], ordering: Ordering) -> int:
    """Estimated tokens of the stored messages a request over `view` keeps after the collapse."""
    return sum(m.tokens for m in collapse(list(view), ordering).messages)


def prefix_tokens(prefix: Json | None) -> int:
    """Estimated tokens of the frozen request prefix (system parts and tool definitions)."""
    if not prefix:
        return 0
    length = js_json_length([prefix.get("system") or [], prefix.get("tools") or []])
    return est_len(length) if length is not None else 0
