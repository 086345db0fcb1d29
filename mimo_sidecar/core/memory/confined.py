"""Confined access beneath the memory root: every path walked one component at a time from a
directory handle of the root, and no symbolic link ever followed by the kernel.

Checking a path's real path and then opening the path string leaves a window in which a directory
on the way can be swapped for a link to elsewhere (an attack found it: `sessions/S` exchanged with a link to
outside while commits looped had `outside/checkpoint.md` overwritten within a second). Here each
directory is opened from the one before it (`openat` with `O_NOFOLLOW | O_DIRECTORY`), so what was
checked is what is used. A symbolic link met on the way is read (`readlinkat`) and followed by the
walk itself, and only while it stays beneath the root: a relative one from where it sits, `..`
never above the root, an absolute one only when it names a place under the root. Every link is
resolved once, at the moment it is met; a link swapped in after that is refused by the next
`O_NOFOLLOW` open, and the walk starts that step again (a few times at most).

`Walk.locate` returns the directory that holds the last component, as an open handle, with the
component's name and `lstat`: readers open the file from it with `O_NOFOLLOW`, writers create their
temporary file in it and rename it there (`os.replace(..., src_dir_fd=, dst_dir_fd=)`), so a write
never lands anywhere else. A walk that cannot stay beneath the root raises `Refused`.

POSIX only (Linux, macOS): it needs `dir_fd` support, which Windows lacks.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

MAX_LINKS = 40  # as the kernel's own limit on the links one path resolution may follow
MAX_RETRIES = 8  # a component that keeps changing under the walk is refused
DIRECTORY_MODE = 0o777  # before the umask
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC
# An entry that is no longer what `lstat` said when `openat` reaches it.
_RACED = frozenset({errno.ELOOP, errno.ENOTDIR, errno.ENOENT, errno.EMLINK})

Problem = Literal["no-root", "outside-root", "missing", "not-a-directory", "unreadable"]


class Refused(Exception):
    """A walk that cannot stay beneath the root, or cannot go on (`problem`)."""

    def __init__(self, problem: Problem, detail: str = "") -> None:
        super().__init__(problem + (f": {detail}" if detail else ""))
        self.problem: Problem = problem
        self.detail = detail


@dataclass
class Entry:
    """The last component of a walked path: `dir_fd`, an open handle of the directory that holds
    it (the caller's to close, `close` or `with`), its `name` there, and its `lstat` (None when it
    does not exist). `parts` is where it is, from the root, once every link is resolved."""

    dir_fd: int
    name: str
    stat: os.stat_result | None
    parts: tuple[str, ...]

    def close(self) -> None:
        os.close(self.dir_fd)

    def __enter__(self) -> Entry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def is_file(self) -> bool:
        return self.stat is not None and stat.S_ISREG(self.stat.st_mode)

    @property
    def is_dir(self) -> bool:
        return self.stat is not None and stat.S_ISDIR(self.stat.st_mode)


def parts_of(relative: str) -> list[str]:
    """The components of a path relative to the root (separators of the platform and `/`)."""
    text = relative.replace(os.sep, "/")
    if os.altsep:
        text = text.replace(os.altsep, "/")
    return [p for p in text.split("/") if p not in ("", ".")]


class Walk:
    """Walks beneath one root directory (the root itself may be behind links: it is the trust
    anchor, opened as it is named)."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)

    def _open_root(self) -> int:
        try:
            return os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
        except FileNotFoundError:
            raise Refused("no-root", self.root) from None
        except NotADirectoryError:
            raise Refused("no-root", self.root) from None
        except OSError as exc:
            raise Refused("unreadable", exc.strerror or str(exc)) from exc

    def _beneath(self, target: str) -> list[str] | None:
        """The components of an absolute link target under the root (by its name or its real
        path), or None when it names a place outside."""
        for base in (self.root, os.path.realpath(self.root)):
            if target == base or target.startswith(base.rstrip(os.sep) + os.sep):
                return parts_of(target[len(base) :])
        return None

    def locate(self, parts: Sequence[str], *, follow_last: bool = True, create_dirs: bool = False) -> Entry:
        """The entry `parts` names beneath the root. Links on the way are followed by the walk;
        the last one too with `follow_last`. `create_dirs`: missing directories on the way are
        created (not through a link). Raises `Refused`; an empty `parts` is refused too (the
        root is not an entry of a directory beneath it)."""
        stack = [self._open_root()]  # the directories walked, the root first: `..` pops one
        where: list[str] = []
        pending = deque(parts)
        links = retries = 0
        try:
            while pending:
                name = pending.popleft()
                if name in ("", "."):
                    continue
                if name == "..":
                    if len(stack) == 1:
                        raise Refused("outside-root", "'..' above the root")
                    os.close(stack.pop())
                    where.pop()
                    continue
                last = not pending
                try:
                    info: os.stat_result | None = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
                except FileNotFoundError:
                    info = None
                except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
                    raise Refused("unreadable", getattr(exc, "strerror", None) or str(exc)) from exc
                if info is not None and stat.S_ISLNK(info.st_mode) and (follow_last or not last):
                    links += 1
                    if links > MAX_LINKS:
                        raise Refused("unreadable", "too many levels of symbolic links")
                    target = self._link_target(stack[-1], name)
                    if os.path.isabs(target):
                        beneath = self._beneath(target)
                        if beneath is None:
                            raise Refused("outside-root", "a symbolic link leads out of the root")
                        for fd in stack[1:]:
                            os.close(fd)
                        del stack[1:], where[:]
                        pending.extendleft(reversed(beneath))
                    else:
                        pending.extendleft(reversed(parts_of(target)))
                    create_dirs = False  # never create directories where a link points
                    continue
                if last:
                    entry = Entry(stack.pop(), name, info, (*where, name))
                    return entry
                if info is None:
                    if not create_dirs:
                        raise Refused("missing", name)
                    self._mkdir(stack[-1], name)
                    pending.appendleft(name)
                    continue
                if not stat.S_ISDIR(info.st_mode):
                    raise Refused("not-a-directory", name)
                try:
                    stack.append(os.open(name, DIRECTORY_FLAGS, dir_fd=stack[-1]))
                except OSError as exc:
                    if exc.errno not in _RACED or retries >= MAX_RETRIES:
                        raise Refused("unreadable", exc.strerror or str(exc)) from exc
                    retries += 1  # swapped since the lstat (for a link, a file...): look again
                    pending.appendleft(name)
                    continue
                where.append(name)
            raise Refused("not-a-directory", "no entry named")
        finally:
            for fd in stack:
                os.close(fd)

    @staticmethod
    def _link_target(dir_fd: int, name: str) -> str:
        try:
            return os.readlink(name, dir_fd=dir_fd)
        except OSError as exc:  # no longer a link: refused rather than guessed at
            raise Refused("unreadable", exc.strerror or str(exc)) from exc

    @staticmethod
    def _mkdir(dir_fd: int, name: str) -> None:
        try:
            os.mkdir(name, DIRECTORY_MODE, dir_fd=dir_fd)
        except FileExistsError:
            pass  # created meanwhile: looked at again like any existing one
        except OSError as exc:
            raise Refused("unreadable", exc.strerror or str(exc)) from exc

    def open_directory(self, parts: Sequence[str]) -> tuple[int, tuple[str, ...]]:
        """An open handle of the directory `parts` names (links followed beneath the root), and
        where it is from the root. The root itself for empty `parts`. Raises `Refused`."""
        if not parts_of("/".join(parts)):
            return self._open_root(), ()
        with self.locate(parts) as entry:
            if entry.stat is None:
                raise Refused("missing", entry.name)
            if not entry.is_dir:
                raise Refused("not-a-directory", entry.name)
            try:
                return os.open(entry.name, DIRECTORY_FLAGS, dir_fd=entry.dir_fd), entry.parts
            except OSError as exc:
                raise Refused("unreadable", exc.strerror or str(exc)) from exc


def open_file(entry: Entry) -> int:
    """The file `entry` names, opened for reading without following a link and without blocking
    (a FIFO swapped in); refused when it is no longer the file `lstat` saw."""
    if entry.stat is None:
        raise Refused("missing", entry.name)
    try:
        fd = os.open(entry.name, FILE_FLAGS, dir_fd=entry.dir_fd)
    except FileNotFoundError:
        raise Refused("missing", entry.name) from None
    except OSError as exc:
        raise Refused("unreadable", exc.strerror or str(exc)) from exc
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (entry.stat.st_dev, entry.stat.st_ino) or not stat.S_ISREG(now.st_mode):
        os.close(fd)
        raise Refused("unreadable", "replaced between the check and the open")
    return fd


def scan(dir_fd: int) -> Iterator[tuple[str, os.stat_result]]:
    """The entries of an open directory with their `lstat` (entries that vanish are skipped)."""
    for name in os.listdir(dir_fd):
        try:
            yield name, os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
