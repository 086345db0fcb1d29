"""A session held in memory: its messages in listing order, tasks, actors, watermark and writer.

Mutations arrive as batches (`SyncBatch`). A batch is validated completely before anything is
applied, and applying a validated batch cannot fail, so a batch applies whole or not at all without
copying the session. Every applied batch bumps `revision`.

Token estimates are cached per part on each `Message`; the session keeps a running total, so a
streaming update of one part costs that part's serialization, not the session's.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any, Protocol, TypeVar, cast, overload

from .. import texts
from ..errors import DomainError, ErrorCode, FieldPath
from ..tool_pointers import ToolPointers
from ..words import MAIN_AGENT, WriterOutcome
from .data_model import with_string_ids
from .message import Json, Message, created_problem
from .ordering import Ordering, is_mimo_v2_message_id

ACTIVE_ACTOR_STATUSES = frozenset({"pending", "running"})
ENDED_TASK_STATUSES = frozenset({"done", "abandoned"})
DAY_MS = 86_400_000


INVALID = ErrorCode.INVALID_SESSION_DATA
F = TypeVar("F", bound="Follower")
K = TypeVar("K")


class Follower(Protocol):
    """A figure derived from the session's messages and kept up to date by change (the request
    size's running sum, `running_size`): told of every message changed, added or removed, and of
    every change it cannot follow (a resort)."""

    def touch(self, message: Message) -> None: ...

    def invalidate(self) -> None: ...


# Followers kept per session (one per agent and provider counting in use); the oldest goes first.
MAX_FOLLOWERS = 8
# Values kept per session for its next requests (`build_memo`: one per agent and purpose, each
# holding a converted view); the least recently used goes first.
MAX_KEPT = 3


@dataclass
class MessageUpsert:
    info: Json
    parts: list[Json] | None = None  # None: keep the stored parts (info-only update)
    seq: int | None = None


@dataclass
class PartUpsert:
    message_id: str
    part: Json
    # Where the host put them within the item, so that an error names what it sent: the part
    # under `part` (or the item itself, a bare part), the message ID in the wrapper's `messageId`
    # (or the part's `messageID`).
    part_field: FieldPath = ("part",)
    message_id_field: FieldPath = ("messageId",)


@dataclass
class SyncBatch:
    upsert_messages: list[MessageUpsert] = field(default_factory=list)
    upsert_parts: list[PartUpsert] = field(default_factory=list)
    remove_messages: list[str] = field(default_factory=list)
    remove_parts: list[tuple[str, str]] = field(default_factory=list)
    tasks: list[Json] | None = None
    actors: list[Json] | None = None
    tool_name_map: dict[str, str] | None = None  # replaces the session's map when present
    tool_pointers: ToolPointers | None = None  # replaces the session's declaration when present
    # Removes the session's declaration (the host sent `toolPointers: null`): the texts go back to
    # the reference's wording. A separate flag, since None above means "not sent".
    remove_tool_pointers: bool = False


@dataclass
class WriterState:
    """The writer registry of one session (behavior.md#writer-registry): at most one in flight, one queued."""

    in_flight: bool = False
    end_message_id: str | None = None
    started_at_ms: int = 0
    queued_end_message_id: str | None = None
    settlements: int = 0  # bumped on every settlement; waiters compare it
    last_outcome: WriterOutcome | None = None

    def as_dict(self) -> Json:
        return {
            "inFlight": self.in_flight,
            "endMessageId": self.end_message_id,
            "queuedEndMessageId": self.queued_end_message_id,
            "lastOutcome": self.last_outcome,
        }


class Session:
    def __init__(
        self,
        session_id: str,
        project_id: str | None = None,
        *,
        ids_ascending: bool = False,
        request_prefix: Json | None = None,
    ) -> None:
        self.session_id = session_id
        self.project_id = project_id
        self.request_prefix = request_prefix
        self.revision = 0
        self.watermark: str | None = None
        self.writer = WriterState()
        self.tasks: list[Json] = []
        self.actors: list[Json] = []
        # The host's tool names -> MiMo's, for microcompaction (behavior.md#compactable-tools).
        self.tool_name_map: dict[str, str] = {}
        # The model's tools that the rebuilt text may name (`toolPointers`, behavior.md#d18); None:
        # the reference's wording, which names MiMo's.
        self.tool_pointers: ToolPointers | None = None
        self._declared_ascending = ids_ascending
        self._id_mode = True  # until a non-conforming ID arrives (unless declared ascending)
        self._messages: dict[str, Message] = {}
        # Listing order (behavior.md#listing-order) for all slices together and for each agent slice, with
        # parallel key lists for bisection: slices and views are then list slices, not scans.
        self._order = _Listing()
        self._by_agent: dict[str, _Listing] = {}
        # Messages carrying a checkpoint/compaction part: a handful per session, so the view start
        # and "recover once" look at them instead of scanning the history.
        self._carriers: set[Message] = set()
        self._next_seq = 1
        self._total_tokens = 0
        self._parent: Session | None = None
        self._parent_watermark: str | None = None
        self._followers: dict[Any, Follower] = {}
        self._kept: dict[Any, Any] = {}
        # Per agent, its assistant messages that hold a usage record, in listing order: the trigger
        # looks for the newest one without walking a history of steps that have none (Codex, Cline).
        self._with_usage: dict[str, _Listing] = {}

    # -- reading -----------------------------------------------------------------------------
    @property
    def id_mode(self) -> bool:
        return self._declared_ascending or self._id_mode

    @property
    def declared_ascending(self) -> bool:
        """The host declared that its message IDs sort in creation order (`idsAscending`)."""
        return self._declared_ascending

    @property
    def all_ids_v2(self) -> bool:
        """Every message ID registered so far is a MiMo v2 ascending ID."""
        return self._id_mode

    def newest_id(self) -> str | None:
        """The greatest message ID as a plain string: the newest one in ID mode (behavior.md#creation-order).
        """
        return max(self._messages, default=None)

    def ordering(self) -> Ordering:
        return Ordering(self.id_mode, self._seq_of)

    def _seq_of(self, message_id: str) -> int | None:
        m = self._messages.get(message_id)
        return m.seq if m is not None else None

    def get(self, message_id: str) -> Message | None:
        return self._messages.get(message_id)

    def __len__(self) -> int:
        return len(self._order.msgs)

    @property
    def total_tokens(self) -> int:
        return self._total_tokens

    def messages(self) -> list[Message]:
        """Every message of every slice, in chronological listing order."""
        return list(self._order.msgs)

    def slice(self, agent_id: str = MAIN_AGENT) -> list[Message]:
        listing = self._by_agent.get(agent_id)
        return list(listing.msgs) if listing else []

    def newest_first(self, agent_id: str = MAIN_AGENT) -> Iterator[Message]:
        """The slice from its newest message back, lazily (no copy of the slice)."""
        listing = self._by_agent.get(agent_id)
        return reversed(listing.msgs) if listing else iter(())

    def view(self, agent_id: str = MAIN_AGENT) -> list[Message]:
        """From the newest checkpoint/compaction boundary on (inclusive), behavior.md#view."""
        listing = self._by_agent.get(agent_id)
        if not listing:
            return []
        start = self.view_start(agent_id)
        return listing.msgs[listing.index(start) :] if start is not None else list(listing.msgs)

    # -- inherited context (behavior.md#inherited-context) -------------------------------------
    def set_parent(self, parent: Session, watermark: str | None) -> None:
        """This session was created from `parent` with a context watermark (a host feature)."""
        self._parent = parent
        self._parent_watermark = watermark

    @property
    def parent_id(self) -> str | None:
        return self._parent.session_id if self._parent is not None else None

    def inherited_context(self) -> list[Message]:
        """The parent's main view (with its own inheritance) up to and including the context
        watermark; the whole of it when the watermark is not found there (behavior.md#inherited-context).

        The forks are walked in a loop, not by recursion, so that a chain of any depth is read
        (3,000 forked sessions exhausted the interpreter's stack)."""
        if self._parent is None:
            return []
        chain = [self._parent]  # the sessions whose views stack up, nearest first
        while (grandparent := chain[-1]._parent) is not None and chain[-1].view_start(MAIN_AGENT) is None:
            chain.append(grandparent)
        view = _StackedView(chain[-1].view_window(MAIN_AGENT))
        for forked in reversed(chain[:-1]):
            view.cut_after(forked._parent_watermark)
            view.extend(forked.view_window(MAIN_AGENT))
        view.cut_after(self._parent_watermark)
        return view.messages

    def inherits_context(self, agent_id: str = MAIN_AGENT) -> bool:
        """The agent's context view starts with an inherited context (`context_view`)."""
        return agent_id == MAIN_AGENT and self._inherits()

    def _inherits(self) -> bool:
        """Its main view starts with its parent's: forked, and no boundary of its own yet."""
        return self._parent is not None and self.view_start(MAIN_AGENT) is None

    def context_view(self, agent_id: str = MAIN_AGENT) -> Sequence[Message]:
        """The view the rebuild works on (behavior.md#inherited-context, behavior.md#view): for the main agent
        of a forked session, the inherited context comes first while the session's own view reaches back to
        the start of its slice. Once the session has a boundary of its own, what came before it (inherited
        context included) is behind that boundary like any other history."""
        window = self.view_window(agent_id)
        if agent_id != MAIN_AGENT or not self._inherits():
            return window
        return [*self.inherited_context(), *window]

    def find_in_context(self, message_id: str) -> Message | None:
        """A message of this session, or of its inherited context."""
        own = self._messages.get(message_id)
        if own is not None or self._parent is None:
            return own
        return next((m for m in self.inherited_context() if m.id == message_id), None)

    def view_window(self, agent_id: str = MAIN_AGENT) -> ListWindow:
        """The view without copying it: for read-only use before the session changes again.

        Copying a 20 000-message view touches every message object (reference counts), which
        made the per-step `rebuild/compute` grow with the session; the window reads only what
        its caller indexes (the tail, for the watermark and the trigger).
        """
        listing = self._by_agent.get(agent_id)
        if not listing:
            return ListWindow([], 0)
        start = self.view_start(agent_id)
        return ListWindow(listing.msgs, listing.index(start) if start is not None else 0)

    def listed_after(self, message: Message) -> ListWindow:
        """The messages of `message`'s slice listed after it (it must be listed), without a copy."""
        listing = self._by_agent[message.agent_id]
        return ListWindow(listing.msgs, listing.index(message) + 1)

    def view_with(self, boundary: Message) -> list[Message]:
        """The view of the boundary's slice as it would be once `boundary` is inserted (it is not).

        The boundary sorts as `insert_boundary` would list it: by its `time.created`, then its ID
        (ID mode) or the next sequence number. A newer boundary of the slice keeps starting the view.
        """
        agent_id = boundary.agent_id
        listing = self._by_agent.get(agent_id) or _Listing()
        key = (boundary.created, boundary.id if self.id_mode else self._next_seq)
        start = self.view_start(agent_id)
        if start is not None and self._listing_key(start) > key:
            return self.view(agent_id)
        return [boundary, *listing.msgs[bisect.bisect_right(listing.keys, key) :]]

    def view_start(self, agent_id: str = MAIN_AGENT) -> Message | None:
        """The boundary the agent's view starts at: its newest user message with a boundary part."""
        best: Message | None = None
        for m in self._carriers:
            if m.agent_id == agent_id and m.is_boundary():
                if best is None or self._listing_key(m) > self._listing_key(best):
                    best = m
        return best

    def newest_with_usage(self, agent_id: str = MAIN_AGENT) -> Iterator[Message]:
        """The agent's assistant messages that hold a usage record (`info.tokens`, an object),
        newest first, down to the start of its view (not a forked session's inherited context)."""
        listing = self._with_usage.get(agent_id)
        if not listing:
            return iter(())
        start = self.view_start(agent_id)
        floor = bisect.bisect_left(listing.keys, self._listing_key(start)) if start is not None else 0
        msgs = listing.msgs
        return (msgs[i] for i in range(len(msgs) - 1, floor - 1, -1))

    def view_carriers(self, agent_id: str = MAIN_AGENT) -> list[Message]:
        """The messages of the agent's view that carry a checkpoint or compaction part (any role)."""
        start = self.view_start(agent_id)
        floor = self._listing_key(start) if start is not None else None
        return [
            m
            for m in self._carriers
            if m.agent_id == agent_id and (floor is None or self._listing_key(m) >= floor)
        ]

    def view_checkpoint_boundary(self, agent_id: str = MAIN_AGENT) -> Message | None | EllipsisType:
        """The checkpoint boundary the agent's view holds last (the one collapse reads, behavior.md#collapse),
        found among the session's few boundary carriers instead of by a walk over the view: the view is in
        listing order, so the last one is the one with the greatest listing key. `...` when the view
        starts with inherited context (a forked session without a boundary of its own), whose boundaries
        are the parent's: the caller looks at the view itself."""
        if agent_id == MAIN_AGENT and self._inherits():
            return ...
        found: Message | None = None
        for m in self.view_carriers(agent_id):
            newer = found is None or self._listing_key(m) > self._listing_key(found)
            if newer and m.is_checkpoint_boundary():
                found = m
        return found

    def active_actors(self) -> list[Json]:
        """This session's background actors that are pending or running, in registry order (D1)."""
        return [
            a
            for a in self.actors
            if a.get("background") is True
            and a.get("status") in ACTIVE_ACTOR_STATUSES
            and a.get("sessionID", self.session_id) == self.session_id
        ]

    def listed_tasks(self, now_ms: int, archive_days: float) -> list[Json]:
        """Tasks in `created_at` order, archived ones excluded (behavior.md#task-archival, D5)."""
        kept = [t for t in self.tasks if not _is_archived(t, now_ms, archive_days)]
        return sorted(kept, key=lambda t: _num(t.get("created_at")))

    # -- writing -----------------------------------------------------------------------------
    def apply(self, batch: SyncBatch, messages_field: str = "upsertMessages") -> int:
        """Validate then apply a batch atomically; returns the new revision. `messages_field` is
        the name error paths give `upsert_messages` (`messages` for session/open)."""
        self._validate(batch, messages_field)
        for up in batch.upsert_messages:
            self._upsert_message(up)
        for pu in batch.upsert_parts:
            self._upsert_part(pu)
        for mid, pid in batch.remove_parts:
            self._remove_part(mid, pid)
        for mid in batch.remove_messages:
            self._remove_message(mid)
        if batch.tasks is not None:
            self.tasks = [with_string_ids(task) for task in batch.tasks]
        if batch.actors is not None:
            self.actors = list(batch.actors)
        if batch.tool_name_map is not None:
            self.tool_name_map = dict(batch.tool_name_map)
        if batch.tool_pointers is not None:
            self.tool_pointers = batch.tool_pointers
        elif batch.remove_tool_pointers:
            self.tool_pointers = None
        self.revision += 1
        return self.revision

    def insert_boundary(self, message: Message) -> None:
        """Register a sidecar-created boundary: it takes the next sequence number
        (behavior.md#creation-order)."""
        message.seq = self._take_seq(None)
        self._register(message)
        self.revision += 1

    def refresh_part(self, message: Message, index: int) -> None:
        """Re-estimate a part the sidecar changed in place (microcompaction marks)."""
        before = message.tokens
        message.refresh_part(index)
        self._total_tokens += message.tokens - before
        self._track(message)

    def bump_revision(self) -> int:
        self.revision += 1
        return self.revision

    # -- validation --------------------------------------------------------------------------
    def _validate(self, batch: SyncBatch, messages_field: str) -> None:
        incoming: set[str] = set()
        for i, up in enumerate(batch.upsert_messages):
            mid = up.info.get("id")
            where: FieldPath = (messages_field, i, "info", "id")
            if not isinstance(mid, str) or not mid:
                raise DomainError(INVALID, texts.NON_EMPTY_STRING_REQUIRED, where)
            if mid in incoming:
                raise DomainError(INVALID, texts.message_twice_in_batch(mid), where)
            incoming.add(mid)
            _validate_info(up.info, (messages_field, i, "info"))
            for j, part in enumerate(up.parts or []):
                _validate_part(part, (messages_field, i, "parts", j), require_id=False)
        removed = set(batch.remove_messages)
        for i, pu in enumerate(batch.upsert_parts):
            named_by: FieldPath = ("upsertParts", i, *pu.message_id_field)
            if pu.message_id not in self._messages and pu.message_id not in incoming:
                raise DomainError(ErrorCode.MESSAGE_NOT_FOUND, texts.no_message(pu.message_id), named_by)
            if pu.message_id in removed:
                raise DomainError(INVALID, texts.message_also_removed(pu.message_id), named_by)
            _validate_part(pu.part, ("upsertParts", i, *pu.part_field), require_id=True)
        for i, mid in enumerate(batch.remove_messages):
            if mid not in self._messages and mid not in incoming:
                raise DomainError(ErrorCode.MESSAGE_NOT_FOUND, texts.no_message(mid), ("removeMessages", i))
        for i, (mid, _pid) in enumerate(batch.remove_parts):
            if mid not in self._messages and mid not in incoming:
                raise DomainError(
                    ErrorCode.MESSAGE_NOT_FOUND, texts.no_message(mid), ("removeParts", i, "messageId")
                )
        for name, items in (("tasks", batch.tasks), ("actors", batch.actors)):
            for i, item in enumerate(items or []):
                if not isinstance(item, dict):
                    raise DomainError(INVALID, texts.OBJECT_REQUIRED, (name, i))
        for host_name, mimo_name in (batch.tool_name_map or {}).items():
            if not isinstance(host_name, str) or not host_name:
                raise DomainError(INVALID, texts.NON_EMPTY_STRING_REQUIRED, ("toolNameMap",))
            if not isinstance(mimo_name, str) or not mimo_name:
                raise DomainError(INVALID, texts.NON_EMPTY_STRING_REQUIRED, ("toolNameMap", host_name))

    # -- application (cannot fail after validation) ------------------------------------------
    def _upsert_message(self, up: MessageUpsert) -> None:
        mid = up.info["id"]
        existing = self._messages.get(mid)
        if existing is None:
            msg = Message(up.info, up.parts or [], seq=self._take_seq(up.seq))
            self._note_id(mid)
            self._register(msg)
            return
        old_tokens = existing.tokens
        self._unlist(existing)
        existing.info = up.info
        existing.changed()
        if up.parts is not None:
            existing.replace_parts(up.parts)
        if up.seq is not None:
            existing.seq = up.seq
            self._next_seq = max(self._next_seq, up.seq + 1)
        self._total_tokens += existing.tokens - old_tokens
        self._list(existing)

    def _upsert_part(self, pu: PartUpsert) -> None:
        msg = self._messages[pu.message_id]
        before = msg.tokens
        msg.set_part(pu.part)
        self._total_tokens += msg.tokens - before
        self._track(msg)

    def _remove_part(self, message_id: str, part_id: str) -> None:
        msg = self._messages.get(message_id)
        if msg is None:
            return
        before = msg.tokens
        msg.remove_part(part_id)
        self._total_tokens += msg.tokens - before
        self._track(msg)

    def _remove_message(self, message_id: str) -> None:
        msg = self._messages.pop(message_id, None)
        if msg is not None:
            self._unlist(msg)
            self._total_tokens -= msg.tokens

    def _take_seq(self, host_seq: int | None) -> int:
        if host_seq is not None:
            self._next_seq = max(self._next_seq, host_seq + 1)
            return host_seq
        seq = self._next_seq
        self._next_seq += 1
        return seq

    def _note_id(self, message_id: str) -> None:
        # D3: the first non-conforming ID switches the session to sequence mode for good.
        if self._id_mode and not is_mimo_v2_message_id(message_id):
            self._id_mode = False
            if not self._declared_ascending:
                self._resort()

    def _register(self, msg: Message) -> None:
        self._messages[msg.id] = msg
        self._total_tokens += msg.tokens
        self._list(msg)

    def _listing_key(self, msg: Message) -> tuple[Any, Any]:
        # Chronological listing order (behavior.md#listing-order): (time.created, creation key).
        return (msg.created, msg.id if self.id_mode else msg.seq)

    def listing_key(self, msg: Message) -> tuple[Any, Any]:
        """Where `msg` sorts in listing order (behavior.md#listing-order)."""
        return self._listing_key(msg)

    def follower(self, key: Any, make: Callable[[], F]) -> F:
        """The follower kept under `key`, made on first use (at most `MAX_FOLLOWERS`)."""
        found = self._followers.pop(key, None)
        if found is None:
            found = make()
            if len(self._followers) >= MAX_FOLLOWERS:
                del self._followers[next(iter(self._followers))]
        self._followers[key] = found  # newest last
        return cast(F, found)  # stored under its key by this method only, so made by `make`

    def kept(self, key: Any, make: Callable[[], K]) -> K:
        """The value kept under `key` for this session's next requests, made on first use (at most
        `MAX_KEPT`; it validates itself against the messages it is given, see `build_memo`)."""
        found = self._kept.pop(key, None)
        if found is None:
            found = make()
            if len(self._kept) >= MAX_KEPT:
                del self._kept[next(iter(self._kept))]
        self._kept[key] = found
        return cast(K, found)  # stored under its key by this method only, so made by `make`

    def _touch(self, msg: Message) -> None:
        for follower in self._followers.values():
            follower.touch(msg)

    def _track(self, msg: Message) -> None:
        self._touch(msg)
        if msg.carries_boundary_part():
            self._carriers.add(msg)
        else:
            self._carriers.discard(msg)

    def _list(self, msg: Message) -> None:
        key = self._listing_key(msg)
        self._order.insert(key, msg)
        self._by_agent.setdefault(msg.agent_id, _Listing()).insert(key, msg)
        if _holds_usage(msg):
            self._with_usage.setdefault(msg.agent_id, _Listing()).insert(key, msg)
        self._track(msg)

    def _unlist(self, msg: Message) -> None:
        self._touch(msg)
        key = self._listing_key(msg)
        self._order.remove(key, msg)
        for listings in (self._by_agent, self._with_usage):
            listing = listings.get(msg.agent_id)
            if listing is not None:
                listing.remove(key, msg)
        self._carriers.discard(msg)

    def _resort(self) -> None:
        for follower in self._followers.values():
            follower.invalidate()
        messages = self._order.msgs
        self._order = _Listing()
        self._by_agent = {}
        self._with_usage = {}
        for m in sorted(messages, key=self._listing_key):
            key = self._listing_key(m)
            self._order.append(key, m)
            self._by_agent.setdefault(m.agent_id, _Listing()).append(key, m)
            if _holds_usage(m):
                self._with_usage.setdefault(m.agent_id, _Listing()).append(key, m)


class ListWindow(Sequence[Message]):
    """`items[start:]` as a read-only sequence, without copying it."""

    __slots__ = ("_items", "_start")

    def __init__(self, items: list[Message], start: int) -> None:
        self._items = items
        self._start = start

    def __len__(self) -> int:
        return len(self._items) - self._start

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        n = len(self)
        if isinstance(index, slice):
            a, b, step = index.indices(n)
            return (
                self._items[self._start + a : self._start + b : step]
                if step == 1
                else [self._items[self._start + i] for i in range(a, b, step)]
            )
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("view index out of range")
        return self._items[self._start + index]

    def __iter__(self) -> Iterator[Message]:
        return itertools.islice(self._items, self._start, None)

    def __reversed__(self) -> Iterator[Message]:
        items, start = self._items, self._start
        return (items[i] for i in range(len(items) - 1, start - 1, -1))


class _Listing:
    """Messages sorted by listing key, with the keys alongside for bisection."""

    __slots__ = ("keys", "msgs")

    def __init__(self) -> None:
        self.keys: list[tuple[Any, Any]] = []
        self.msgs: list[Message] = []

    def __len__(self) -> int:
        return len(self.msgs)

    def append(self, key: tuple[Any, Any], msg: Message) -> None:
        self.keys.append(key)
        self.msgs.append(msg)

    def insert(self, key: tuple[Any, Any], msg: Message) -> None:
        i = bisect.bisect_right(self.keys, key)
        self.keys.insert(i, key)
        self.msgs.insert(i, msg)

    def _find(self, key: tuple[Any, Any], msg: Message) -> int | None:
        i = bisect.bisect_left(self.keys, key)
        while i < len(self.msgs) and self.keys[i] == key:
            if self.msgs[i] is msg:
                return i
            i += 1
        return None

    def remove(self, key: tuple[Any, Any], msg: Message) -> None:
        i = self._find(key, msg)
        if i is not None:
            del self.keys[i]
            del self.msgs[i]

    def index(self, msg: Message) -> int:
        """Position of a listed message (found by its key, then identity)."""
        for i in range(bisect.bisect_left(self.keys, (msg.created,)), len(self.msgs)):
            if self.msgs[i] is msg:
                return i
        raise ValueError(f"{msg.id} is not listed")


class _StackedView:
    """The inherited context being stacked up, fork after fork: cut after a watermark (its first
    occurrence; nothing cut when it is absent), then extended with the next fork's view. Each
    message's first position is indexed, so that a chain of n forks costs O(n) and not O(n²)."""

    def __init__(self, messages: Iterable[Message]) -> None:
        self.messages: list[Message] = []
        self._first: dict[str, int] = {}
        self.extend(messages)

    def extend(self, messages: Iterable[Message]) -> None:
        for m in messages:
            self._first.setdefault(m.id, len(self.messages))
            self.messages.append(m)

    def cut_after(self, watermark: str | None) -> None:
        end = self._first.get(watermark) if watermark is not None else None
        if end is None:
            return
        for m in self.messages[end + 1 :]:
            if self._first.get(m.id, -1) > end:
                del self._first[m.id]
        del self.messages[end + 1 :]


def _holds_usage(msg: Message) -> bool:
    return msg.role == "assistant" and isinstance(msg.info.get("tokens"), dict)


def _num(v: Any) -> float:
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


def _is_archived(task: Json, now_ms: int, archive_days: float) -> bool:
    cleanup = task.get("cleanup_after")
    if cleanup is None and task.get("status") in ENDED_TASK_STATUSES:
        ended = task.get("ended_at")
        if isinstance(ended, (int, float)) and not isinstance(ended, bool):
            cleanup = ended + archive_days * DAY_MS
    return isinstance(cleanup, (int, float)) and not isinstance(cleanup, bool) and cleanup <= now_ms


def _validate_info(info: Json, where: FieldPath) -> None:
    role = info.get("role")
    if role not in ("user", "assistant", "tool"):
        raise DomainError(INVALID, texts.ROLE_REQUIRED, (*where, "role"))
    t = info.get("time")
    if t is not None and not isinstance(t, dict):
        raise DomainError(INVALID, texts.OBJECT_REQUIRED, (*where, "time"))
    created = t.get("created") if isinstance(t, dict) else None
    if created is not None and created_problem(created) is not None:
        raise DomainError(INVALID, texts.MILLISECONDS_REQUIRED, (*where, "time", "created"))
    agent = info.get("agentID")
    if agent is not None and not isinstance(agent, str):
        raise DomainError(INVALID, texts.STRING_REQUIRED, (*where, "agentID"))


def _validate_part(part: Any, where: FieldPath, *, require_id: bool) -> None:
    if not isinstance(part, dict):
        raise DomainError(INVALID, texts.OBJECT_REQUIRED, where)
    if not isinstance(part.get("type"), str):
        raise DomainError(INVALID, texts.STRING_REQUIRED, (*where, "type"))
    pid = part.get("id")
    if require_id and (not isinstance(pid, str) or not pid):
        raise DomainError(INVALID, texts.PART_ID_REQUIRED, (*where, "id"))


def batch_from_messages(messages: Iterable[Json]) -> SyncBatch:
    """A batch registering `[{info, parts, seq?}]` in list order (used by session/open)."""
    return SyncBatch(
        upsert_messages=[MessageUpsert(m["info"], list(m.get("parts") or []), m.get("seq")) for m in messages]
    )


def message_ids(messages: Sequence[Message]) -> list[str]:
    return [m.id for m in messages]
