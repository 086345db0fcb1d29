"""The rebuild boundary and what surrounds it (behavior.md#boundary).

- `classify`: the shape of the last message, which picks the closing reminder (behavior.md#classify,
behavior.md#reminders).
- `render_index` / `render_actors`: the two companion texts of the boundary (behavior.md#actors-block).
- `build_boundary`: the boundary message itself, parts in the behavior.md#boundary-message order, IDs minted
in part order.
- `microcompact`: marking compactable tool results created after the watermark (behavior.md#microcompaction).

Microcompaction marks (DEVIATION D8 convention for split shapes)
---------------------------------------------------------------- The mark is always a `time.compacted =
now_ms` field, set on a *copy* of the part that holds the result; the copy replaces the original in
`message.parts` and `on_change(message, part_index)` is called so the session re-estimates that one part
(behavior.md#time-compacted: the field counts in the estimate).

- Inline `tool` part (MiMo): `part["state"]["time"]["compacted"]`.
- Anthropic `tool_result` / OpenAI Responses `function_call_output` part: `part["time"]["compacted"]`
  (the part gains a `time` object if it has none).
- OpenAI Chat tool-role message (the message is the result): its **first `text` part** gets
  `part["time"]["compacted"]`. A tool-role message without a text part cannot be marked and is
  skipped.

`request_build` reads the mark back from the same places. Each reported mark names its message, the
logical call's ID (in every shape) and the marked part's `id` when it has one.

Tool names are the host's, read through a tool-name map onto MiMo's (behavior.md#compactable-tools). A
completed result left uncleared only because its name is neither compactable, nor one of MiMo's kept tools
(`KEPT_TOOLS`), nor mapped is counted by name, so that the insert can say so.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from .. import texts
from ..checkpoint.template import checkpoint_topic
from ..memory.files import MemoryRoot
from ..session.ids import IdMinter, IdScheme
from ..session.message import Json, Message
from ..session.ordering import Ordering
from ..session.shapes import MESSAGE_LEVEL_RESULT, is_carrier, logical_calls, tool_results, tool_uses
from ..tool_pointers import REFERENCE_TEXTS, PointerTexts
from ..words import MAIN_AGENT
from .collapse import INTERRUPTED_CALLS, digested_range

# behavior.md#compactable-tools: exact and case-sensitive; the list itself is fixed (hosts map their names
# onto it).
COMPACTABLE = frozenset(
    {
        "read",
        "view_image",
        "bash",
        "grep",
        "glob",
        "webfetch",
        "websearch",
        "edit",
        "write",
        "multiedit",
        "apply_patch",
        "codesearch",
    }
)
# behavior.md#microcompaction-rule (4): MiMo's tools whose results later turns refer to. Never
# compacted, like every name outside COMPACTABLE, but by design: a result of one of them is not
# reported as left uncleared for want of a mapped name.
KEPT_TOOLS = frozenset({"actor", "task", "question", "skill", "memory", "todowrite"})

# =============================================================================================
# behavior.md#classify classify
# =============================================================================================
LastKind = Literal["assistant", "tool", "user"]
Finish = Literal["tool-calls", "stop"]


@dataclass(frozen=True)
class LastMessageInfo:
    kind: LastKind
    finish: Finish | None = None
    # The newest step stays live after the boundary (D19, D20): its results are below the reminder.
    step_live: bool = False


def classify(msgs: Sequence[Message]) -> LastMessageInfo | None:
    """None for no messages; assistant → tool-calls/stop; tool role or any carrier → tool; else user."""
    if not msgs:
        return None
    last = msgs[-1]
    if last.role == "assistant":
        # Only exactly "tool-calls" counts as a loop step; absent or unknown finish is a stop.
        return LastMessageInfo("assistant", "tool-calls" if last.finish == "tool-calls" else "stop")
    if last.role == "tool" or is_carrier(last):  # D8: a carrier, whatever its role
        return LastMessageInfo("tool")
    return LastMessageInfo("user")


# =============================================================================================
# behavior.md#checkpoint-index the checkpoint index
# =============================================================================================
def render_index(memory: MemoryRoot, session_id: str, pointers: PointerTexts = REFERENCE_TEXTS) -> str:
    """Five lines: `## Checkpoint`, "", the session directory + separator (relative to the memory
    root when the texts show such paths, D22), "", the topic line."""
    path = memory.checkpoint_path(session_id)
    if not memory.exists(path):
        return texts.NO_CHECKPOINT_INDEX
    content = memory.read_text(path).text
    topic = checkpoint_topic(content) if content is not None else None
    return "\n".join(
        [
            texts.INDEX_HEADING,
            "",
            texts.index_directory_line(
                pointers.memory_path(memory.session_dir(session_id), memory.relative) + os.sep,
                pointers.root_relative,
            ),
            "",
            texts.index_topic_line(topic if topic is not None else texts.UNKNOWN_TOPIC),
        ]
    )


# =============================================================================================
# behavior.md#actors-block the active actors block
# =============================================================================================
def _idle_ms(actor: Json, now_ms: int) -> int:
    last = actor.get("lastTurnTime")
    if not isinstance(last, (int, float)) or isinstance(last, bool):
        return 0  # no last turn recorded: report it as just active
    return int(now_ms - last)


def _field(actor: Json, key: str) -> str:
    value = actor.get(key)
    return "" if value is None else str(value)


def render_actors(actors: Sequence[Json], now_ms: int, pointers: PointerTexts = REFERENCE_TEXTS) -> str:
    """The `## Active Actors` block for the given (already active, session-scoped) actors, or ""."""
    if not actors:
        return ""
    lines = [texts.ACTORS_BLOCK_HEADING, "", pointers.actors_count_line(len(actors)), ""]
    for actor in actors:
        lines += texts.actor_block_lines(
            _field(actor, "actorID"),
            _field(actor, "status"),
            texts.format_idle(_idle_ms(actor, now_ms)),
            _field(actor, "description"),
            _field(actor, "agent"),
        )
    return "\n".join(lines)


# =============================================================================================
# behavior.md#boundary-message the boundary message
# =============================================================================================
class BoundaryMessage(TypedDict):
    info: Json
    parts: list[Json]


def _boundary_info(
    message_id: str, session_id: str, created: int, agent: str | None, model: Mapping[str, Any] | None
) -> Json:
    info: Json = {"id": message_id, "sessionID": session_id, "role": "user", "time": {"created": created}}
    if agent is not None:
        info["agent"] = agent
    if model is not None:
        info["model"] = {"providerID": model.get("providerID"), "modelID": model.get("modelID")}
    info["agentID"] = MAIN_AGENT
    return info


def _checkpoint_part(
    watermark: str,
    digest_up_to: str | None,
    has_activity: bool,
    interrupted: Sequence[str],
    tools_named: Sequence[str],
) -> Json:
    part: Json = {"type": "checkpoint", "checkpointDir": "", "checkpointNumber": 0, "coveredUpTo": watermark}
    if digest_up_to and has_activity:
        # Without a rendered activity list, collapsing (W, D] would drop a tail nothing recorded.
        part["digestUpTo"] = digest_up_to
        if interrupted:
            # D20: the calls the digest shows as interrupted; a result that still arrives for one
            # brings its step back into the request instead of being collapsed with it.
            part[INTERRUPTED_CALLS] = list(interrupted)
    if tools_named:
        # What the boundary's texts name, so that every later request can be checked against its
        # tools (D18) without reading the texts again.
        part[TOOLS_NAMED] = list(tools_named)
    return part


TOOLS_NAMED = "toolsNamed"


def tools_named_by(boundary: Message) -> tuple[str, ...] | None:
    """The tools a boundary's texts name, as its checkpoint part records them; None when the
    boundary records nothing (one the sidecar did not make)."""
    part = next((p for p in boundary.parts if p.get("type") == "checkpoint"), None)
    names = part.get(TOOLS_NAMED) if part is not None else None
    if not isinstance(names, list):
        return None
    return tuple(n for n in names if isinstance(n, str))


def _synthetic_text(text: str) -> Json:
    return {"type": "text", "synthetic": True, "text": text}


def recorded_time(message: Message | None) -> int | None:
    """`time.created` when the message exists and records one; None otherwise (never a fake 0)."""
    if message is None:
        return None
    t = message.info.get("time")
    c = t.get("created") if isinstance(t, dict) else None
    return int(c) if isinstance(c, (int, float)) and not isinstance(c, bool) else None


def boundary_base_time(
    watermark: Message | None, listed_after: Iterable[Message], ordering: Ordering
) -> int | None:
    """The time the boundary is stamped one millisecond after, and microcompaction's threshold
    (behavior.md#boundary-time): the newest `time.created` among the messages the checkpoint
    covers; None when W is unknown or records no time (the boundary is then stamped now + 1).

    The checkpoint covers W, what lists before W (all of it created no later than W), and, when W
    is itself a checkpoint boundary, the range its collapse removed from the request
    `(coveredUpTo, digestUpTo]` (D12): those messages list after W, since W was back-dated to its
    own watermark, and a boundary stamped W + 1 would show them again, in full, while its own
    collapse (`ord > ord(W)`) would not remove them. `listed_after` is W's slice after W; only a
    checkpoint boundary reads it.
    """
    base = recorded_time(watermark)
    if base is None or watermark is None or not watermark.is_checkpoint_boundary():
        return base
    span, _ = digested_range(watermark, ordering)
    if span is None:  # W collapsed nothing (no digest, or an unknown endpoint): nothing to step over
        return base
    return max([base, *(m.created for m in listed_after if span.collapses(ordering.key_of(m)))])


def build_boundary(
    *,
    session_id: str,
    watermark: str,
    digest_up_to: str | None,
    has_activity: bool,
    rendered_text: str,
    index_text: str,
    actors_text: str,
    agent: str | None,
    model: Mapping[str, Any] | None,
    boundary_created_at: int | None,
    now_ms: int,
    minter: IdMinter,
    message_id: str | None = None,
    id_scheme: IdScheme = "v2",
    interrupted_calls: Sequence[str] = (),
    tools_named: Sequence[str] = (),
) -> BoundaryMessage:
    """behavior.md#boundary-message: the boundary `{info, parts}`; raises ValueError on an empty rendered
    text.

    IDs not given are minted in `id_scheme` (the host's ascending scheme,
    behavior.md#id-host-scheme)."""
    if not rendered_text:
        raise ValueError("an empty rebuild text must not be inserted (behavior.md#insert-steps)")
    mid = message_id if message_id is not None else minter.mint("msg", now_ms, id_scheme)
    created = (boundary_created_at if boundary_created_at is not None else now_ms) + 1
    bodies = [_checkpoint_part(watermark, digest_up_to, has_activity, interrupted_calls, tools_named)]
    if index_text:
        bodies.append(_synthetic_text(index_text))
    bodies.append(_synthetic_text(rendered_text))
    if actors_text:
        bodies.append(_synthetic_text(actors_text))
    # Part IDs are minted in part order, so they ascend (behavior.md#id-use).
    parts = [
        {"id": minter.mint("prt", now_ms, id_scheme), "sessionID": session_id, "messageID": mid, **b}
        for b in bodies
    ]
    return {"info": _boundary_info(mid, session_id, created, agent, model), "parts": parts}


# =============================================================================================
# behavior.md#microcompaction microcompaction
# =============================================================================================
@dataclass(frozen=True)
class CompactMark:
    """A mark as an insert reports it: the message holding the marked part, the logical call whose
    result it is (`callId`: found in every shape), the part's own `id` when it has one, the time set."""

    message_id: str
    call_id: str
    part_id: str | None
    compacted_at: int


OnChange = Callable[[Message, int], None]


def _is_compacted(holder: Json) -> bool:
    t = holder.get("time")
    return isinstance(t, dict) and bool(t.get("compacted"))


def _with_compacted(holder: Json, now_ms: int) -> Json:
    """A copy of `holder` whose `time.compacted` is `now_ms` (the host's dicts are not mutated)."""
    t = holder.get("time")
    return {**holder, "time": {**(t if isinstance(t, dict) else {}), "compacted": now_ms}}


@dataclass(frozen=True)
class PlannedMark:
    """A compaction mark microcompaction would set: on `message.parts[index]` (the part holding
    the result of call `call_id`), in its `state` for an inline tool part, else on the part itself."""

    message: Message
    index: int
    inline: bool
    call_id: str

    @property
    def part(self) -> Json:
        return self.message.parts[self.index]

    def compact_mark(self, now_ms: int) -> CompactMark:
        """The mark as an insert reports it (before or after it is set)."""
        return CompactMark(self.message.id, self.call_id, self.part.get("id"), now_ms)

    def marked(self, now_ms: int) -> Json:
        """A copy of the part carrying the mark (the host's dicts are never mutated)."""
        part = self.part
        if self.inline:
            return {**part, "state": _with_compacted(part["state"], now_ms)}
        return _with_compacted(part, now_ms)


@dataclass(frozen=True)
class MicrocompactionPlan:
    """What microcompaction would do: the marks, and the completed results after the threshold it
    leaves only because their tool's name is neither compactable, nor one of MiMo's kept tools,
    nor in the tool-name map (name -> how many), for the insert's warning."""

    marks: list[PlannedMark] = field(default_factory=list)
    unmapped: dict[str, int] = field(default_factory=dict)


def _apply(mark: PlannedMark, now_ms: int, on_change: OnChange | None) -> CompactMark:
    reported = mark.compact_mark(now_ms)
    mark.message.parts[mark.index] = mark.marked(now_ms)
    if on_change is not None:
        on_change(mark.message, mark.index)
    return reported


def cleared_value(part: Json) -> Any:
    """What the request replaces with the cleared placeholder once `part` carries a mark: an
    inline state's output, a split result's content, a tool-role message's first text."""
    ptype = part.get("type")
    if ptype == "tool":
        state = part.get("state")
        return state.get("output") if isinstance(state, dict) else None
    if ptype == "tool_result":
        return part.get("content")
    if ptype in ("function_call_output", "custom_tool_call_output"):
        return part.get("output")
    return part.get("text") if ptype == "text" else None


def is_marked(part: Json) -> bool:
    """The part carries a compaction mark (where `microcompact` puts it)."""
    state = part.get("state")
    if part.get("type") == "tool" and isinstance(state, dict):
        return _is_compacted(state)
    return _is_compacted(part)


class _ToolNames:
    """The host's tool names read through its map (behavior.md#compactable-tools), counting the
    names that are neither compactable nor kept by design nor mapped."""

    def __init__(self, tool_name_map: Mapping[str, str] | None) -> None:
        self.map = tool_name_map or {}
        self.unmapped: Counter[str] = Counter()

    def compactable(self, name: str) -> bool:
        """Whether a completed, unmarked result of tool `name` is cleared; one that is not is
        counted when only its unknown, unmapped name keeps it."""
        if self.map.get(name, name) in COMPACTABLE:
            return True
        if name not in self.map and name not in KEPT_TOOLS:
            self.unmapped[name] += 1
        return False


def _inline_candidate(part: Json, names: _ToolNames) -> str | None:
    """The call ID of an inline tool part to mark, else None. A part without a call ID is not a
    call (`core.session.shapes`), and a request never sends it."""
    state, call_id = part.get("state"), part.get("callID")
    if part.get("type") != "tool" or not isinstance(state, dict) or not isinstance(call_id, str):
        return None
    if not call_id or state.get("status") != "completed" or _is_compacted(state):
        return None
    name = part.get("tool")
    return call_id if names.compactable(name if isinstance(name, str) else "") else None


def _result_holder_index(carrier: Message, part_index: int) -> int | None:
    """The part that carries a split result's mark: the result part, or a tool message's first text."""
    if part_index != MESSAGE_LEVEL_RESULT:
        return part_index
    return next((i for i, p in enumerate(carrier.parts) if p.get("type") == "text"), None)


def _issuer_window(messages: Sequence[Message], first_later: int) -> int | None:
    """Where to start resolving the split results held at or after `first_later`: far enough back
    to include the assistant message issuing each of them (normally just before its carrier).
    None when those messages hold no split result at all (always, on inline data)."""
    needed = {
        r.call_id
        for m in messages[first_later:]
        for r in tool_results(m)
        if not _is_inline_result(m, r.part_index)
    }
    if not needed:
        return None
    start = first_later
    needed -= {u.call_id for m in messages[start:] for u in tool_uses(m)}
    while needed and start > 0:
        start -= 1
        needed -= {u.call_id for u in tool_uses(messages[start])}
    return start


def _is_inline_result(message: Message, part_index: int) -> bool:
    return part_index >= 0 and message.parts[part_index].get("type") == "tool"


def _plan_split(
    messages: Sequence[Message],
    first_later: int,
    later: Callable[[Message], bool],
    names: _ToolNames,
) -> list[PlannedMark]:
    start = _issuer_window(messages, first_later)
    if start is None:
        return []
    marks: list[PlannedMark] = []
    for call in logical_calls(messages[start:]).values():
        carrier, result = call.carrier, call.result
        if carrier is None or result is None or call.inline or not later(carrier):
            continue
        if call.state().get("status") != "completed":
            continue
        index = _result_holder_index(carrier, result.part_index)
        if index is None or _is_compacted(carrier.parts[index]) or not names.compactable(call.use.name):
            continue
        marks.append(PlannedMark(carrier, index, False, call.call_id))
    return marks


def plan_microcompaction(
    messages_all_slices: Sequence[Message],
    boundary_time: int | None,
    boundary_id: str | None,
    *,
    tool_name_map: Mapping[str, str] | None = None,
    spared: frozenset[str] = frozenset(),
) -> MicrocompactionPlan:
    """The marks `microcompact` would set, without setting them (see `microcompact`), and the
    results it leaves only for want of a mapped name. The messages in `spared` (by ID: the live
    step the boundary keeps after its digest, D19) are not marked: the model is to answer them."""
    if boundary_time is None:
        return MicrocompactionPlan()
    names = _ToolNames(tool_name_map)

    def later(m: Message) -> bool:
        return m.id != boundary_id and m.created > boundary_time and m.id not in spared

    # Messages come in listing order, which is by `time.created`: the ones created after the
    # boundary time are a suffix, so only the tail is visited, not the whole session.
    first_later = len(messages_all_slices)
    while first_later > 0 and messages_all_slices[first_later - 1].created > boundary_time:
        first_later -= 1
    marks: list[PlannedMark] = []
    for message in messages_all_slices[first_later:]:
        if not later(message):
            continue
        for index, part in enumerate(message.parts):
            call_id = _inline_candidate(part, names)
            if call_id is not None:
                marks.append(PlannedMark(message, index, True, call_id))
    marks += _plan_split(messages_all_slices, first_later, later, names)
    return MicrocompactionPlan(marks, dict(names.unmapped))


def microcompact(
    messages_all_slices: Sequence[Message],
    boundary_time: int | None,
    boundary_id: str | None,
    now_ms: int,
    *,
    on_change: OnChange | None = None,
    tool_name_map: Mapping[str, str] | None = None,
) -> list[CompactMark]:
    """Mark completed COMPACTABLE results held by messages created strictly after `boundary_time`.

    `messages_all_slices` must be in listing order (by `time.created`), as `Session.messages()`.

    `boundary_time` None → nothing is marked (never fall back to 0); the caller reports a warning.
    """
    planned = plan_microcompaction(
        messages_all_slices, boundary_time, boundary_id, tool_name_map=tool_name_map
    )
    return apply_marks(planned.marks, now_ms, on_change)


def apply_marks(
    planned: Sequence[PlannedMark], now_ms: int, on_change: OnChange | None = None
) -> list[CompactMark]:
    """Set the planned marks (`time.compacted = now_ms`), each on a copy of its part."""
    return [_apply(mark, now_ms, on_change) for mark in planned]
