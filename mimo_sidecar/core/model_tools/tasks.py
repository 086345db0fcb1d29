"""The task tool (behavior.md#d18): the session's task ledger in full, and one task's progress.md.

`list` shows every task the rebuild lists (archived ones are counted, not shown: D5), each with
its ID, raw status and summary, children under their parent at every depth (the boundary's ledger
shows two levels and cuts at its cap), and whether it has a progress file. `get` shows one task's
fields and its `progress.md` (`<sid>/tasks/<TID>/progress.md` under the memory root), paged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .. import texts
from ..memory.files import UnsafeName, is_safe_name
from ..rebuild.render import task_id_text
from ..session.message import Json
from ..words import TaskOperation
from .answer import Page, ToolAnswer, ToolRefusal, paged_answer
from .arguments import Arguments
from .context import ToolContext
from .transcript import iso_time

OPERATIONS: tuple[TaskOperation, ...] = ("list", "get")


def call(ctx: ToolContext, args: Arguments) -> ToolAnswer:
    operation = args.operation(OPERATIONS)
    if operation == "list":
        args.only(("offset",))
        return list_tasks(ctx, args.integer("offset", 0))
    args.only(("id", "offset"))
    return get(ctx, args.required_identifier("id"), args.integer("offset", 0))


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _progress_key(ctx: ToolContext, task_id: str) -> str | None:
    """The progress file's path under the memory root, or None when the ID cannot name a folder."""
    if not is_safe_name(task_id):
        return None
    try:
        return ctx.memory.task_progress_path(ctx.session.session_id, task_id)
    except UnsafeName:
        return None


def _lines(ctx: ToolContext, tasks: list[Json]) -> Iterator[str]:
    ids = {task_id_text(t) for t in tasks}
    children: dict[str, list[Json]] = {}
    for task in tasks:
        parent = _text(task.get("parent_task_id"))
        children.setdefault(parent if parent in ids else "", []).append(task)

    def walk(parent: str, depth: int, seen: frozenset[str]) -> Iterator[str]:
        for task in children.get(parent, []):
            tid = task_id_text(task)
            if tid in seen:
                continue  # a cycle of parents: shown once
            path = _progress_key(ctx, tid)
            has_progress = path is not None and ctx.memory.exists(path)
            yield texts.task_line(
                depth, tid, _text(task.get("status")), _text(task.get("summary")), has_progress
            )
            yield from walk(tid, depth + 1, seen | {tid})

    yield from walk("", 0, frozenset())


def list_tasks(ctx: ToolContext, offset: int) -> ToolAnswer:
    tasks = ctx.session.listed_tasks(ctx.now_ms, ctx.archive_days)
    archived = len(ctx.session.tasks) - len(tasks)
    body = "\n".join(_lines(ctx, tasks)) if tasks else texts.NO_TASKS
    head = texts.tasks_heading(len(tasks), archived)
    return paged_answer(head, body, offset, ctx.answer_tokens, {"tasks": len(tasks), "archived": archived})


def get(ctx: ToolContext, task_id: str, offset: int) -> ToolAnswer:
    tasks = ctx.session.listed_tasks(ctx.now_ms, ctx.archive_days)
    task = next((t for t in tasks if task_id_text(t) == task_id), None)
    if task is None:
        raise ToolRefusal(texts.no_task(task_id, [task_id_text(t) for t in tasks]))
    fields = texts.task_fields(
        task_id,
        _text(task.get("status")),
        _text(task.get("summary")),
        _text(task.get("parent_task_id")) or None,
        iso_time(task.get("created_at")),
        iso_time(task.get("ended_at")) if task.get("ended_at") is not None else None,
    )
    path = _progress_key(ctx, task_id)
    if path is None:
        return ToolAnswer(fields + "\n" + texts.no_progress("unsafe name"), structured={"id": task_id})
    key = ctx.memory.relative(path)
    session = ctx.session
    _, outcome = ctx.memory.read_key(key, session.session_id, session.project_id)  # no link followed
    if outcome.text is None:
        return ToolAnswer(
            fields + "\n" + texts.no_progress(outcome.problem or "missing"), structured={"id": task_id}
        )

    def head(p: Page) -> str:
        return fields + "\n" + texts.progress_heading(key, p.offset, p.end, p.total)

    return paged_answer(head, outcome.text, offset, ctx.answer_tokens, {"id": task_id, "path": key})
