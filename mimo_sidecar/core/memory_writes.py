"""Atomic, confined writes of memory files: the one way the sidecar writes under the memory root.

A write replaces a file whole or not at all (behavior.md#checkpoint-commit):

1. every directory from the root down to the file's directory is checked (an existing one must
   resolve inside the real root and be a directory) or created, one level at a time, so a symbolic
   link on the way can never lead the write out of the root;
2. an existing target must resolve inside the root and be a regular file; a symbolic link inside
   the root is written through (the file the readers read is the one replaced);
3. the bytes go to a temporary file in the target's own directory (`.<name>.<random>.tmp`: a name
   no reader lists), which is flushed and fsynced, then renamed over the target — or, for a
   create-only write, hard-linked to it, which fails when the target exists, so an existing file is
   never replaced; the directory is fsynced after the rename;
4. on any failure the temporary file is removed and the old file, if any, is left as it was.

A refused or failed write raises `WriteRefused` with its `problem`; the caller turns it into a
domain error. The root itself must exist: it is never created.
"""

from __future__ import annotations

import os
import secrets
import stat
from typing import Literal

from .memory_files import MemoryRoot

WriteProblem = Literal["no-root", "outside-root", "not-a-directory", "not-a-file", "os-error"]
NEW_FILE_MODE = 0o666  # before the umask, like any file an editor creates
DIRECTORY_MODE = 0o777


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
    real_root = _real_root(memory)
    directory = _confined_directory(memory, real_root, os.path.dirname(path))
    target = os.path.join(directory, os.path.basename(path))
    existing = _existing_target(memory, target)
    if existing is not None and not replace:
        return False
    target = existing.path if existing is not None else target
    mode = existing.mode if existing is not None else None
    temp = _write_temp(os.path.dirname(target), os.path.basename(target), data, mode)
    try:
        if replace:
            os.replace(temp, target)
        elif not _link_new(temp, target):
            return False
        _fsync_directory(os.path.dirname(target))
    except OSError as exc:
        raise WriteRefused("os-error", path, exc.strerror or str(exc)) from exc
    finally:
        _remove(temp)  # after a rename it is gone already; after a link it is the second name
    return True


class _Existing:
    def __init__(self, path: str, mode: int) -> None:
        self.path = path
        self.mode = mode


def _real_root(memory: MemoryRoot) -> str:
    real = os.path.realpath(memory.root)
    if not os.path.isdir(real):
        raise WriteRefused("no-root", memory.root)
    return real


def _confined_directory(memory: MemoryRoot, real_root: str, directory: str) -> str:
    """The real path of `directory`, each missing level created inside the root."""
    relative = os.path.relpath(os.path.abspath(directory), memory.root)
    if relative == os.curdir:
        return real_root
    if relative.startswith(os.pardir):
        raise WriteRefused("outside-root", directory)
    current = real_root
    for name in relative.split(os.sep):
        step = os.path.join(current, name)
        if not os.path.lexists(step):
            try:
                os.mkdir(step, DIRECTORY_MODE)
            except FileExistsError:
                pass  # created meanwhile: checked below like any existing one
            except OSError as exc:
                raise WriteRefused("os-error", step, exc.strerror or str(exc)) from exc
        real = memory.resolve(step)
        if real is None:
            raise WriteRefused("outside-root", step)
        if not os.path.isdir(real):
            raise WriteRefused("not-a-directory", step)
        current = real
    return current


def _existing_target(memory: MemoryRoot, target: str) -> _Existing | None:
    if not os.path.lexists(target):
        return None
    real = memory.resolve(target)
    if real is None:
        raise WriteRefused("outside-root", target)
    try:
        info = os.stat(real)
    except FileNotFoundError:
        return None  # a dangling link inside the root: written as a new file at its own place
    except OSError as exc:
        raise WriteRefused("os-error", target, exc.strerror or str(exc)) from exc
    if not stat.S_ISREG(info.st_mode):
        raise WriteRefused("not-a-file", target)
    return _Existing(real, stat.S_IMODE(info.st_mode))


def _write_temp(directory: str, name: str, data: bytes, mode: int | None) -> str:
    temp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), NEW_FILE_MODE)
    except OSError as exc:
        raise WriteRefused("os-error", temp, exc.strerror or str(exc)) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if mode is not None:
                os.fchmod(f.fileno(), mode)  # keep the replaced file's permissions
            os.fsync(f.fileno())
    except OSError as exc:
        _remove(temp)
        raise WriteRefused("os-error", temp, exc.strerror or str(exc)) from exc
    return temp


def _link_new(temp: str, target: str) -> bool:
    """Give `temp` the name `target` unless `target` exists; False when it does."""
    try:
        os.link(temp, target, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError:
        # No hard links here (some network and FAT file systems): an exclusive rename is not
        # available either, so check, then rename; a file created in between is replaced.
        if os.path.lexists(target):
            return False
        os.rename(temp, target)
    return True


def _fsync_directory(directory: str) -> None:
    """Make the rename durable. Not every system can open a directory (Windows): skipped there."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a directory; the rename itself has happened
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:
        pass  # best effort: a temporary file the next write does not reuse (random name)
