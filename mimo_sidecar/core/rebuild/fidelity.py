"""The fidelity report: what of the live conversation a rebuild keeps (behavior.md#d13).

No reference implementation has one. It answers, for every rendered rebuild (and its dry run):

- is the newest genuine user ask in the boundary's "# Recent user input": verbatim, truncated
  (with the elision marker) or missing, and why; whether D13 had to append it;
- how many open tasks the session holds and how many the "# Tasks ledger" lists, and why each
  unlisted one is not there;
- the newest tool error after the watermark: is its line in the "# Recent activity" digest, and if
  not, why (after `digestUpTo` it stays live; or the 200-line cap cut it);
- which sections were cut by their caps, and which were shed by the total cap (D7).

Pure: it reads the render's inputs and result, and the messages after the watermark.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .. import texts
from ..session.message import Json, Message
from ..session.session import ENDED_TASK_STATUSES
from ..session.shapes import LogicalCall, logical_calls
from .render import RenderInputs, RenderResult, task_id_text
from .tail_digest import tool_line

AskStatus = Literal["verbatim", "truncated", "missing", "none"]


@dataclass(frozen=True)
class UserAskFidelity:
    status: AskStatus  # "none": the main slice holds no genuine user ask at all
    message_id: str | None = None
    appended: bool = False  # D13 appended it: without D13 it would be missing
    reason: str | None = None  # why it is missing, or why D13 had to append it


@dataclass(frozen=True)
class UnlistedTask:
    task_id: str
    reason: str


@dataclass(frozen=True)
class TasksFidelity:
    open_held: int  # the session's open tasks (not done, abandoned or archived)
    open_listed: int  # those the rendered ledger lists
    unlisted: tuple[UnlistedTask, ...] = ()


@dataclass(frozen=True)
class ToolErrorFidelity:
    message_id: str  # the message issuing the call
    call_id: str
    tool: str
    in_digest: bool
    reason: str | None = None  # why its line is not in the digest


@dataclass(frozen=True)
class FidelityReport:
    newest_user_ask: UserAskFidelity
    tasks: TasksFidelity
    newest_tool_error: ToolErrorFidelity | None  # None: no tool error after the watermark
    cut_sections: tuple[str, ...]  # section keys cut by their own caps (and not shed)
    shed_sections: tuple[str, ...]  # section keys shed, wholly or partly, by the total cap (D7)


def fidelity_report(
    inputs: RenderInputs, rendered: RenderResult, after_watermark: Sequence[Message] | None
) -> FidelityReport:
    """`after_watermark`: the main-slice messages created after W (None when W is unknown)."""
    return FidelityReport(
        user_ask_fidelity(inputs, rendered),
        tasks_fidelity(inputs.tasks, rendered),
        tool_error_fidelity(inputs.tail, rendered, after_watermark),
        tuple(s.key for s in rendered.sections if s.truncated and not s.shed),
        tuple(s.key for s in rendered.sections if s.shed),
    )


# -- the newest user ask ---------------------------------------------------------------------------
def user_ask_fidelity(inputs: RenderInputs, rendered: RenderResult) -> UserAskFidelity:
    ask = inputs.newest_user_ask
    if ask is None:
        return UserAskFidelity("none")
    content = rendered.content
    appended = content.user_ask_appended
    if rendered.text and ask.id in content.user_entry_ids:
        status: AskStatus = "truncated" if ask.id in content.truncated_user_ids else "verbatim"
        return UserAskFidelity(status, ask.id, appended is not None, appended)
    return UserAskFidelity("missing", ask.id, False, _missing_reason(inputs, rendered))


def _missing_reason(inputs: RenderInputs, rendered: RenderResult) -> str:
    if not rendered.text:
        return texts.NOT_RENDERED + (f" ({rendered.empty_reason})" if rendered.empty_reason else "")
    if inputs.caps.recent_user <= 0:
        return texts.ASK_DISABLED
    return rendered.content.user_ask_unfit or texts.ASK_SECTION_CAP_TOO_SMALL


# -- open tasks ------------------------------------------------------------------------------------
def tasks_fidelity(tasks: Sequence[Json], rendered: RenderResult) -> TasksFidelity:
    open_tasks = [t for t in tasks if t.get("status") not in ENDED_TASK_STATUSES]
    listed = rendered.content.listed_task_ids if rendered.text else frozenset()
    unlisted = tuple(
        UnlistedTask(task_id_text(t), _unlisted_reason(t, tasks) if rendered.text else texts.NOT_RENDERED)
        for t in open_tasks
        if task_id_text(t) not in listed
    )
    return TasksFidelity(len(open_tasks), len(open_tasks) - len(unlisted), unlisted)


def _unlisted_reason(task: Json, tasks: Sequence[Json]) -> str:
    parent_id = task.get("parent_task_id")
    if not parent_id:
        return texts.TASK_CUT_BY_CAP
    parent = next((t for t in tasks if t.get("id") == parent_id), None)
    if parent is None:
        return texts.TASK_PARENT_UNLISTED
    if parent.get("parent_task_id"):
        return texts.TASK_NESTED
    return texts.TASK_CUT_BY_CAP


# -- the newest tool error -------------------------------------------------------------------------
def newest_tool_error(messages: Sequence[Message]) -> LogicalCall | None:
    """The newest call issued in `messages` whose (logical) state is an error."""
    newest = None
    for call in logical_calls(messages).values():
        if call.state().get("status") == "error":
            newest = call
    return newest


def tool_error_fidelity(
    tail: Sequence[Message] | None, rendered: RenderResult, after_watermark: Sequence[Message] | None
) -> ToolErrorFidelity | None:
    call = newest_tool_error(after_watermark) if after_watermark else None
    if call is None:
        return None
    found = ToolErrorFidelity(call.issuer.id, call.call_id, call.use.name, True)
    digested = {id(m) for m in tail} if tail is not None else set()
    held = [call.issuer] + ([call.carrier] if call.carrier is not None else [])
    if not all(id(m) in digested for m in held):  # the call or its result came after D
        return _absent(found, texts.ERROR_AFTER_DIGEST if tail is not None else texts.ERROR_NO_ACTIVITY)
    lines = rendered.content.digest_lines
    if tool_line(call.use.name, call.state()) not in lines:
        return _absent(found, texts.ERROR_LINE_CAP if lines else texts.ERROR_NO_ACTIVITY)
    return found


def _absent(found: ToolErrorFidelity, reason: str) -> ToolErrorFidelity:
    return ToolErrorFidelity(found.message_id, found.call_id, found.tool, False, reason)
