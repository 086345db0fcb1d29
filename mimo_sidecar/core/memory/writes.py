"""Atomic, confined writes of memory files: the one way the sidecar writes under the memory root.

A write replaces a file whole or not at all (behavior.md#checkpoint-commit):

1. the path is walked from a handle of the root one component at a time (`core.memory.confined`): every
   directory on the way is opened from the one before it without following a link, missing ones
   are created there, and a symbolic link is followed only while it stays beneath the root, so no
   link, even one swapped in during the write, can lead it out of the root;
2. an existing target must be a regular file; a symbolic link to one inside the root is written
   through (the file the readers read is the one replaced);
3. the bytes go to a temporary file created in the directory so opened (`.<name>.<random>.tmp`: a
   name no reader lists), flushed and fsynced, then renamed over the target within that same
   directory (`os.replace` with `src_dir_fd`/`dst_dir_fd`) — or, for a create-only write,
   hard-linked to it, which fails when the target exists, so an existing file is never replaced;
   the directory is fsynced after the rename;
4. on any failure the temporary file is removed and the old file, if any, is left as it was. A
   process killed mid-write leaves its temporary file; `remove_stale_temp_files` removes those of
   a directory (a session's, when it opens).

A refused or failed write raises `WriteRefused` with its `problem`; the caller turns it into a
domain error. The root itself must exist: it is never created.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from typing import Literal

from .confined import Refused
from .files import MemoryRoot

WriteProblem = Literal["no-root", "outside-root", "not-a-directory", "not-a-file", "os-error"]
NEW_FILE_MODE = 0o666  # before the umask, like any file an editor creates
TEMP_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")  # `_temp_name`'s names, and nothing a host writes
_WALK_PROBLEMS: dict[str, WriteProblem] = {
    "no-root": "no-root",
    "outside-root": "outside-root",
    "not-a-directory": "not-a-directory",
    "missing": "not-a-directory",  # a directory through a link that is not there
    "unreadable": "os-error",
}


class WriteRefused(Exception):
    """A write that did not happen; nothing was changed (a directory may have been created)."""

    def __init__(self, problem: WriteProblem, path: str, detail: str = "") -> None:
        super().__init__(f"{path}: {problem}" + (f" ({detail})" if detail else ""))
        self.problem = problem
        self.path = path
        self.detail = detail


def write_atomically(memory: MemoryRoot, path: str, data: bytes, *, replace: bool = True) -> bool:
    """Write `data` to `path` (a path under the memory root) as one atomic step.

    With `replace=False` an existing file is left alone. Returns True when the file was written,
    False when it existed and `replace` was False. Raises `WriteRefused`.
    """
    parts = memory.parts(path)
    if not parts:
        raise WriteRefused("outside-root", path)
    try:
        entry = memory.walk.locate(parts, create_dirs=True)
    except Refused as refused:
        raise WriteRefused(_WALK_PROBLEMS[refused.problem], path, refused.detail) from None
    with entry:
        if entry.stat is not None and not entry.is_file:
            raise WriteRefused("not-a-file", path)
        if entry.stat is not None and not replace:
            return False
        mode = stat.S_IMODE(entry.stat.st_mode) if entry.stat is not None else None
        temp = _write_temp(entry.dir_fd, entry.name, data, mode, path)
        at = {"src_dir_fd": entry.dir_fd, "dst_dir_fd": entry.dir_fd}
        try:
            if replace:
                os.replace(temp, entry.name, **at)
            elif not _link_new(temp, entry.name, at):
                return False
            _fsync(entry.dir_fd)
        except OSError as exc:
            raise WriteRefused("os-error", path, exc.strerror or str(exc)) from exc
        finally:
            _remove(entry.dir_fd, temp)  # after a rename it is gone already; after a link, the second name
    return True


def remove_stale_temp_files(memory: MemoryRoot, directory: str) -> int:
    """Remove the temporary files that writes into `directory` (under the memory root) left when
    their process died mid-write; returns how many. Best effort: what cannot be removed stays."""
    parts = memory.parts(directory)
    if parts is None:
        return 0
    try:
        fd, _where = memory.walk.open_directory(parts)
    except Refused:
        return 0
    removed = 0
    try:
        for name in os.listdir(fd):
            if not TEMP_NAME.fullmatch(name):
                continue
            try:
                if stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=fd)
                    removed += 1
            except OSError:
                continue
    except OSError:
        pass
    finally:
        os.close(fd)
    return removed


def _temp_name(name: str) -> str:
    return f".{name}.{secrets.token_hex(6)}.tmp"


def _write_temp(dir_fd: int, name: str, data: bytes, mode: int | None, path: str) -> str:
    temp = _temp_name(name)
    try:
        fd = os.open(temp, TEMP_FLAGS, NEW_FILE_MODE, dir_fd=dir_fd)
    except OSError as exc:
        raise WriteRefused("os-error", path, exc.strerror or str(exc)) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if mode is not None:
                os.fchmod(f.fileno(), mode)  # keep the replaced file's permissions
            os.fsync(f.fileno())
    except OSError as exc:
        _remove(dir_fd, temp)
        raise WriteRefused("os-error", path, exc.strerror or str(exc)) from exc
    return temp


def _link_new(temp: str, target: str, at: dict[str, int]) -> bool:
    """Give `temp` the name `target` unless `target` exists; False when it does."""
    try:
        os.link(temp, target, follow_symlinks=False, **at)
    except FileExistsError:
        return False
    except OSError:
        # No hard links here (some network and FAT file systems): an exclusive rename is not
        # available either, so check, then rename; a file created in between is replaced.
        try:
            os.stat(target, dir_fd=at["dst_dir_fd"], follow_symlinks=False)
            return False
        except FileNotFoundError:
            os.rename(temp, target, **at)
    return True


def _fsync(dir_fd: int) -> None:
    """Make the rename durable (some file systems refuse fsync on a directory: the rename has
    happened anyway)."""
    try:
        os.fsync(dir_fd)
    except OSError:
        pass


def _remove(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass  # gone already, or best effort: a temporary file the next open removes
