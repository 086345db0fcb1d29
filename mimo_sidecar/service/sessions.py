"""The open sessions and what the service keeps beside each one.

A `SessionSlot` holds one open `core.session.session.Session` with its per-session service state: the
insert lock, the one-time notices already shown and the writer settlements that waiters read.
`SessionTable` is the only owner of slots; closing a session drops its slot whole, so nothing of
a closed session (lock, notices, waiters' history) outlives it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..core import texts
from ..core.engine import normalise_at_open
from ..core.errors import DomainError, ErrorCode, FieldPath
from ..core.memory.files import is_safe_name
from ..core.outcomes import Settlement
from ..core.request.build_memo import prepare
from ..core.session.message import Json
from ..core.session.session import Session, SyncBatch, batch_from_messages
from ..core.tool_pointers import ToolPointers
from ..core.words import NoticeKind

SETTLEMENT_HISTORY = 16  # settlements kept per session for waiters that resume late


@dataclass(frozen=True)
class OpenRequest:
    """A session to open: its history (`[{info, parts, seq?}]` in creation order) and context."""

    session_id: str
    project_id: str | None = None
    messages: Iterable[Json] = ()
    tasks: list[Json] | None = None
    actors: list[Json] | None = None
    watermark: str | None = None
    request_prefix: Json | None = None
    ids_ascending: bool = False
    # The open session this one inherits context from (behavior.md#inherited-context).
    parent_id: str | None = None
    parent_watermark: str | None = None
    # The host's tool names -> MiMo's, used by every insert (behavior.md#compactable-tools).
    tool_name_map: dict[str, str] | None = None
    # The model's tools the rebuilt text may name (behavior.md#d18); None: the reference's wording.
    tool_pointers: ToolPointers | None = None


@dataclass(eq=False)
class SessionSlot:
    session: Session
    insert_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    notices_shown: set[NoticeKind] = field(default_factory=set)
    settlements: deque[Settlement] = field(default_factory=lambda: deque(maxlen=SETTLEMENT_HISTORY))
    closed: bool = False
    _wake: asyncio.Event | None = None

    @property
    def session_id(self) -> str:
        return self.session.session_id

    def wake(self) -> None:
        """Wake every waiter (a writer settled, or the session closed)."""
        if self._wake is not None:
            self._wake.set()
            self._wake = None

    def waiter(self) -> asyncio.Event:
        """The event the next `wake` sets (bound to the running loop on first use)."""
        if self._wake is None:
            self._wake = asyncio.Event()
        return self._wake

    def last_settlement(self) -> Settlement | None:
        return self.settlements[-1] if self.settlements else None


def session_not_found(session_id: str, field: FieldPath = ("sessionId",)) -> DomainError:
    return DomainError(
        ErrorCode.SESSION_NOT_FOUND, texts.no_open_session(session_id), field, {"sessionId": session_id}
    )


class SessionTable:
    def __init__(self) -> None:
        self._slots: dict[str, SessionSlot] = {}

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._slots

    def require(self, session_id: str, field: FieldPath = ("sessionId",)) -> SessionSlot:
        slot = self._slots.get(session_id)
        if slot is None:
            raise session_not_found(session_id, field)
        return slot

    def open(self, request: OpenRequest) -> SessionSlot:
        """Register a session with its history; nothing is kept if any of it is invalid."""
        r = request
        parent = (
            self.require(r.parent_id, ("parent", "sessionId")).session if r.parent_id is not None else None
        )
        if r.session_id in self._slots:
            raise DomainError(
                ErrorCode.SESSION_EXISTS,
                texts.session_already_open(r.session_id),
                ("sessionId",),
                {"sessionId": r.session_id},
            )
        for name, value in (("sessionId", r.session_id), ("projectId", r.project_id)):
            if value is not None and not is_safe_name(value):
                # IDs name directories under the memory root: never let one climb out of it.
                raise DomainError(
                    ErrorCode.INVALID_SESSION_DATA, texts.unusable_directory_name(value), (name,)
                )
        session = Session(
            r.session_id, r.project_id, ids_ascending=r.ids_ascending, request_prefix=r.request_prefix
        )
        batch = batch_from_messages(r.messages)
        batch.tasks = list(r.tasks or [])
        batch.actors = list(r.actors or [])
        batch.tool_name_map = dict(r.tool_name_map or {})
        batch.tool_pointers = r.tool_pointers
        session.apply(batch, messages_field="messages")
        session.watermark = r.watermark
        if parent is not None:
            session.set_parent(parent, r.parent_watermark)
        prepare(session.messages())  # the first request converts with what open has just read
        normalise_at_open(session)
        slot = self._slots[r.session_id] = SessionSlot(session)
        return slot

    def sync(self, session_id: str, batch: SyncBatch, base_revision: int | None = None) -> int:
        """Apply a batch atomically; a stale `base_revision` changes nothing."""
        session = self.require(session_id).session
        if base_revision is not None and base_revision != session.revision:
            raise DomainError(
                ErrorCode.REVISION_CONFLICT,
                texts.stale_revision(base_revision, session_id, session.revision),
                ("baseRevision",),
                {"expected": base_revision, "actual": session.revision},
            )
        return session.apply(batch)

    def close(self, session_id: str) -> None:
        slot = self.require(session_id)
        del self._slots[session_id]
        slot.closed = True
        slot.wake()  # its writer waiters fail with session-not-found
