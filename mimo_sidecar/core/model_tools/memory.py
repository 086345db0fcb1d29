"""The memory tool (behavior.md#d18): the memory files of the session, its project and the global
root, searched and read through the memory root's confinement (`core.memory.files`).

A file is named by its key, the path relative to the memory root that the "Memory keys index"
lists and the boundary's `File:` lines show when the model has this tool (`sessions/<sid>/notes.md`,
behavior.md#d22). Refused, with the reason: an absolute path (one under the root is answered with
the key to call again with), `..`, a symbolic link anywhere on the way, a file of another session
or project, anything that is not a regular text file.
"""

from __future__ import annotations

from functools import partial

from .. import texts
from ..memory.files import UnsafeName
from ..words import MemoryOperation
from .answer import HitPager, Page, ToolAnswer, ToolRefusal, paged_answer
from .arguments import Arguments
from .context import ToolContext
from .matching import Matcher, matcher, snippet

OPERATIONS: tuple[MemoryOperation, ...] = ("search", "read")


def call(ctx: ToolContext, args: Arguments) -> ToolAnswer:
    operation = args.operation(OPERATIONS)
    if operation == "read":
        args.only(("path", "offset"))
        return read(ctx, args.required_string("path"), args.integer("offset", 0))
    args.only(("query", "regex", "path", "offset"))
    found = matcher(args.required_string("query"), args.boolean("regex", False))
    return search(ctx, found, args.string("path"), args.integer("offset", 0))


def _read(ctx: ToolContext, key: str) -> tuple[str, str]:
    """(key relative to the root, text) of one memory file; ToolRefusal saying why it cannot be read."""
    memory, session = ctx.memory, ctx.session
    try:
        path, outcome = memory.read_key(key, session.session_id, session.project_id)
    except UnsafeName as exc:
        raise ToolRefusal(texts.memory_unreadable(key, str(exc))) from None
    if outcome.problem == "absolute":
        raise ToolRefusal(texts.memory_absolute_path(key, memory.relative(key)))
    if outcome.text is None:
        raise ToolRefusal(texts.memory_refused(key, outcome.problem or "unreadable"))
    return memory.relative(path), outcome.text


def read(ctx: ToolContext, key: str, offset: int) -> ToolAnswer:
    relative, text = _read(ctx, key)

    def head(p: Page) -> str:
        return texts.memory_read_heading(relative, p.offset, p.end, p.total)

    return paged_answer(head, text, offset, ctx.answer_tokens, {"path": relative})


def _files(ctx: ToolContext, only: str | None) -> list[str]:
    session, memory = ctx.session, ctx.memory
    if only is not None:
        return [_read(ctx, only)[0]]
    try:
        paths = memory.scoped_files(session.session_id, session.project_id)
    except UnsafeName as exc:
        raise ToolRefusal(texts.memory_unreadable("", str(exc))) from None
    return [memory.relative(p) for p in paths]


def search(ctx: ToolContext, found: Matcher, only: str | None, offset: int) -> ToolAnswer:
    pager = HitPager(offset, ctx.answer_tokens)
    files = 0
    for key in _files(ctx, only):
        try:
            _, text = _read(ctx, key)
        except ToolRefusal:
            continue  # listed but unreadable now (binary, replaced): nothing to find in it
        files += 1
        for number, line in enumerate(text.split("\n"), start=1):
            span = found.find(line)
            if span is not None:
                pager.match(partial(_hit, key, number, line, span))
    heading = texts.memory_hits_heading(pager.total, files, offset, len(pager.shown))
    return pager.answer(heading, {"files": files})


def _hit(key: str, number: int, line: str, span: tuple[int, int]) -> str:
    return texts.memory_hit(key, number, snippet(line, span))
