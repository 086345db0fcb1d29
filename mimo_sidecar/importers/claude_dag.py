"""The active branch of a Claude Code transcript, read from its `uuid`/`parentUuid` DAG.

Claude Code appends records; each names its parent. The conversation the model saw is the path
from the newest message record back to the root, with three corrections (docs/importers.md,
"Claude Code"):

1. **Compaction.** A `compact_boundary` record has no parent; its `logicalParentUuid` names the
   pre-compaction leaf. The walk continues there, so the older history is imported too (behind the
   boundary, where the sidecar keeps it out of the request but reads it for "Recent user input").
   Claude Code 1.0.x wrote no `logicalParentUuid`, and a compaction summary can start the chain
   with no boundary record at all: the walk then continues at the newest earlier message record
   it has not visited (the pre-compaction leaf: the file is appended to), counted apart.
2. **Dangling links.** A parent that is not in the file (a record never written, or a subagent file
   forking from its parent session) is bridged to the newest earlier message record of the same
   thread that the walk has not visited. Each bridge is counted.
3. **Sibling branches.** Claude Code writes one provider response as several entries (one content
   block each) and records a parallel call's result as a *sibling* of the next entry, so a plain
   walk loses results. Records off the path are added back when they are
   - an assistant entry of a provider response already on the path (same `message.id`), unless it
     repeats one of its entries block for block (a compaction replay), or
   - a user entry holding only tool results that answer calls on the path not yet answered.
   This repeats until nothing changes.

The result is in **graph order**: file order (append order), except that a record whose parent
comes later in the file is moved to just after its parent. Claude Code 2.1.x can write a
`tool_result` record before the assistant record holding the `tool_use` it answers (the result's
`parentUuid` points forward); in file order the call would look unanswered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import orjson

from .fields import Json, as_dict, as_list, as_str, nonempty_str
from .source import Record

MESSAGE_TYPES = frozenset({"user", "assistant"})
COMPACT_BOUNDARY = "compact_boundary"


@dataclass
class ActiveBranch:
    # The message records and compaction boundaries of the branch, in graph order.
    records: list[Record] = field(default_factory=list)
    order: list[Record] = field(default_factory=list)  # every record of the file, in graph order
    repeated: set[int] = field(default_factory=set)  # lines whose uuid an earlier record has (it wins)
    bridges: int = 0
    compactions_bridged: int = 0  # compactions naming no pre-compaction leaf (1.0.x), bridged to it
    moved: int = 0  # message records placed after a parent written later in the file
    siblings: int = 0  # records added back from sibling branches


def is_message(record: Json) -> bool:
    return as_str(record.get("type")) in MESSAGE_TYPES and nonempty_str(record.get("uuid")) is not None


def is_compact_boundary(record: Json) -> bool:
    return record.get("type") == "system" and record.get("subtype") == COMPACT_BOUNDARY


def is_compact_summary(record: Json) -> bool:
    """The user record holding a compaction's summary: what the model read first after it."""
    return record.get("type") == "user" and record.get("isCompactSummary") is True


def active_branch(records: Sequence[Record], *, main_thread: bool) -> ActiveBranch:
    """The active branch of one file. In a main session file, sidechain records (older inline
    subagents) are not part of the thread; in a subagent file every record is."""
    result = ActiveBranch()
    by_uuid: dict[str, int] = {}
    for index, rec in enumerate(records):
        uuid = nonempty_str(rec.data.get("uuid"))
        if uuid is None:
            continue
        if uuid in by_uuid:
            result.repeated.add(rec.line)
        else:
            by_uuid[uuid] = index
    order = graph_order(records, by_uuid)
    result.order = [records[i] for i in order]

    def in_thread(index: int) -> bool:
        data = records[index].data
        if by_uuid.get(str(data.get("uuid"))) != index:
            return False  # a repeated uuid: the first record with it is the one on the DAG
        return is_message(data) and not (main_thread and data.get("isSidechain") is True)

    thread = [i for i in range(len(records)) if in_thread(i)]
    if not thread:
        return result
    path = _walk(records, by_uuid, thread, result)
    chosen = {i for i in path if in_thread(i) or is_compact_boundary(records[i].data)}
    result.siblings = _add_siblings(records, chosen, [i for i in thread if i not in chosen])
    result.records = [records[i] for i in order if i in chosen]
    result.moved = sum(
        1 for i in chosen if (parent := _parent_index(records[i], i, by_uuid)) is not None and parent > i
    )
    return result


def graph_order(records: Sequence[Record], by_uuid: dict[str, int]) -> list[int]:
    """The indices of `records` with every record after its parent: file order, except that a
    record whose parent is not placed yet waits, and is placed (with whatever waits on it) right
    after its parent. A record whose parent is not in the file, or that repeats an earlier uuid,
    keeps its place; records caught in a parent cycle are placed last, in file order."""
    waiting: dict[int, list[int]] = {}  # parent index -> records waiting for it, in file order
    placed = [False] * len(records)
    order: list[int] = []

    def place(index: int) -> None:
        stack = [index]
        while stack:
            current = stack.pop()
            if placed[current]:
                continue
            placed[current] = True
            order.append(current)
            stack.extend(reversed(waiting.pop(current, [])))

    for index, rec in enumerate(records):
        parent = _parent_index(rec, index, by_uuid)
        if parent is None or placed[parent]:
            place(index)
        else:
            waiting.setdefault(parent, []).append(index)
    for index in range(len(records)):  # only a cycle leaves records unplaced
        place(index)
    return order


def _parent_index(rec: Record, index: int, by_uuid: dict[str, int]) -> int | None:
    if by_uuid.get(str(rec.data.get("uuid"))) != index:
        return None  # no uuid, or a repeat: not a node of the graph
    parent_uuid = nonempty_str(rec.data.get("parentUuid"))
    parent = by_uuid.get(parent_uuid) if parent_uuid is not None else None
    return None if parent == index else parent


def _walk(
    records: Sequence[Record], by_uuid: dict[str, int], thread: list[int], result: ActiveBranch
) -> list[int]:
    visited: set[int] = set()
    path: list[int] = []
    current: int | None = thread[-1]
    while current is not None and current not in visited:
        visited.add(current)
        path.append(current)
        data = records[current].data
        parent = nonempty_str(data.get("parentUuid"))
        compaction = parent is None and (is_compact_boundary(data) or is_compact_summary(data))
        if compaction:
            parent = nonempty_str(data.get("logicalParentUuid"))
        found = by_uuid.get(parent) if parent is not None else None
        if found is None and (parent is not None or compaction):
            if parent is None:
                result.compactions_bridged += 1
            else:
                result.bridges += 1
            found = next((i for i in reversed(thread) if i < current and i not in visited), None)
        current = found
    return path


def _add_siblings(records: Sequence[Record], chosen: set[int], candidates: list[int]) -> int:
    branch = _BranchIndex()
    for index in chosen:
        branch.add(records[index].data)
    added = 0
    changed = True
    while changed:  # an added entry can make another candidate qualify: repeat until stable
        changed = False
        for index in candidates:
            data = records[index].data
            if index not in chosen and (branch.continues_response(data) or branch.answers_open_calls(data)):
                chosen.add(index)
                branch.add(data)
                added += 1
                changed = True
    return added


class _BranchIndex:
    """What the branch holds so far: each provider response's entries, the calls and the answers."""

    def __init__(self) -> None:
        self.entries: dict[str, set[bytes]] = {}  # provider message ID -> serialized entry contents
        self.calls: set[str] = set()
        self.answered: set[str] = set()

    def add(self, data: Json) -> None:
        message = _message(data)
        kind = data.get("type")
        if kind == "assistant":
            mid = nonempty_str(message.get("id"))
            if mid is not None:
                self.entries.setdefault(mid, set()).add(_content_key(message))
        for block in as_list(message.get("content")) or []:
            block = as_dict(block) or {}
            if kind == "assistant" and block.get("type") == "tool_use":
                self.calls.add(str(block.get("id")))
            elif kind == "user" and block.get("type") == "tool_result":
                self.answered.add(str(block.get("tool_use_id")))

    def continues_response(self, data: Json) -> bool:
        if data.get("type") != "assistant":
            return False
        message = _message(data)
        mid = nonempty_str(message.get("id"))
        return mid is not None and mid in self.entries and _content_key(message) not in self.entries[mid]

    def answers_open_calls(self, data: Json) -> bool:
        if data.get("type") != "user":
            return False
        blocks = as_list(_message(data).get("content"))
        if not blocks:
            return False
        for block in blocks:
            block = as_dict(block) or {}
            call = nonempty_str(block.get("tool_use_id"))
            if block.get("type") != "tool_result" or call is None:
                return False
            if call not in self.calls or call in self.answered:
                return False
        return True


def _message(data: Json) -> Json:
    return as_dict(data.get("message")) or {}


def _content_key(message: Json) -> bytes:
    try:
        return orjson.dumps(message.get("content"), option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return b""
