"""Creation-order comparisons (behavior.md#creation-order, DEVIATION D3).

MiMo compares message IDs as plain strings. That is right only while every ID is an ascending MiMo v2
ID (or the host declares its IDs ascending). Otherwise the sidecar compares a per-session sequence
number: the host's `seq` when supplied, else the order in which the sidecar first learned of the
message. An endpoint the sidecar does not know has no key in sequence mode, and the comparison that
needs it is not made (fail closed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MIMO_V2_MESSAGE_ID = re.compile(r"msg_g[0-9a-f]{16}[0-9A-Za-z]{9}")


def is_mimo_v2_message_id(message_id: Any) -> bool:
    return isinstance(message_id, str) and MIMO_V2_MESSAGE_ID.fullmatch(message_id) is not None


class Ordering:
    """Maps a message ID to its creation-order key.

    `id_mode`: keys are the IDs themselves (plain string comparison, as MiMo; unknown IDs still
    compare). Sequence mode: keys are the sequence numbers that `seq_of` returns, None when unknown.
    """

    __slots__ = ("id_mode", "_seq_of")

    def __init__(self, id_mode: bool, seq_of: Callable[[str], int | None]) -> None:
        self.id_mode = id_mode
        self._seq_of = seq_of

    def key(self, message_id: str | None) -> Any:
        if message_id is None or message_id == "":
            return None
        if self.id_mode:
            return message_id
        return self._seq_of(message_id)

    def key_of(self, message: Any) -> Any:
        """Key of a stored `Message` (never None)."""
        return message.id if self.id_mode else message.seq


def id_ordering() -> Ordering:
    """Pure ID mode, for tests and for data whose IDs are known to ascend."""
    return Ordering(True, lambda _id: None)
