"""The memory root: file layout, confined reads and decoding, legacy migration, memory keys.

behavior.md#memory-layout (file table), behavior.md#file-reading (decoding), behavior.md#section-memory-keys
(memory keys index), behavior.md#memory-reminder (the "session memory directory is non-empty" test). Every
path handed out is `<root>` joined with `os.sep`, exactly as the rendered text shows it; every read is
confined to the root: a path that resolves (through `..` or symbolic links) outside the root is never opened.

Session and project IDs become single path components. An ID that is empty, `.`, `..`, or holds a
path separator or NUL is refused with `UnsafeName` instead of being joined: even when such a path
stays inside the root it would reach another session's or scope's files.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
BINARY_SNIFF_BYTES = 8 * 1024
UTF8_BOM = b"\xef\xbb\xbf"
# the global fallback project (behavior.md#memory-layout): it has no project scope
GLOBAL_PROJECT_ID = "global"
MEMORY_FILE = "MEMORY.md"
LEGACY_MEMORY_FILE = "memory.md"
CHECKPOINT_FILE = "checkpoint.md"
NOTES_FILE = "notes.md"

Problem = Literal[
    "missing",
    "outside-root",
    "not-a-file",
    "unreadable",
    "binary",
    "too-large",
    "invalid-utf8",
    "symlink",
    "outside-scope",
]


@dataclass(frozen=True)
class ReadOutcome:
    """The result of a confined read.

    `problem` is None when all went well. Every problem but "invalid-utf8" comes with `text=None`
    (the file cannot be used); "invalid-utf8" is a warning: the text is returned with U+FFFD.
    """

    text: str | None
    problem: Problem | None = None


class UnsafeName(ValueError):
    """A session, project or task ID that is not a single, ordinary path component."""


def is_safe_name(name: str) -> bool:
    """True when `name` can be used as one path component without leaving its parent directory."""
    if not name or name in (".", ".."):
        return False
    separators = {"/", os.sep, "\0"} | ({os.altsep} if os.altsep else set())
    return not any(ch in name for ch in separators)


def _checked(name: str, what: str) -> str:
    if not is_safe_name(name):
        raise UnsafeName(f"unsafe {what} for a memory path: {name!r}")
    return name


def decode_memory_bytes(raw: bytes) -> tuple[str, bool]:
    """Decode like WHATWG `TextDecoder("utf-8")`: drop one leading BOM, invalid sequences -> U+FFFD.

    Returns `(text, was_valid)`. Python's "replace" handler substitutes one U+FFFD per maximal
    subpart of an ill-formed sequence, which is the WHATWG rule (checked in the unit tests).
    """
    if raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM) :]
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), False


def utf16_sort_key(s: str) -> bytes:
    """Sort key giving JavaScript's code-unit order (differs from Python's for astral vs U+E000+)."""
    return s.encode("utf-16-be", "surrogatepass")


class MemoryRoot:
    """The sidecar's configured memory root (`<memoryRoot>` in behavior.md#memory-layout)."""

    def __init__(self, root: str, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> None:
        # abspath normalises away a trailing separator, so `<root><sep>` is well defined.
        self.root = os.path.abspath(root)
        self.max_file_bytes = max_file_bytes

    # -- layout (behavior.md#memory-layout) ------------------------------------------------
    def session_dir(self, session_id: str) -> str:
        return os.path.join(self.root, "sessions", _checked(session_id, "session ID"))

    def checkpoint_path(self, session_id: str) -> str:
        return os.path.join(self.session_dir(session_id), CHECKPOINT_FILE)

    def notes_path(self, session_id: str) -> str:
        return os.path.join(self.session_dir(session_id), NOTES_FILE)

    def task_progress_path(self, session_id: str, task_id: str) -> str:
        return os.path.join(
            self.session_dir(session_id), "tasks", _checked(task_id, "task ID"), "progress.md"
        )

    def project_dir(self, project_id: str) -> str:
        return os.path.join(self.root, "projects", _checked(project_id, "project ID"))

    def project_memory_path(self, project_id: str) -> str:
        return os.path.join(self.project_dir(project_id), MEMORY_FILE)

    def global_dir(self) -> str:
        return os.path.join(self.root, "global")

    def global_memory_path(self) -> str:
        return os.path.join(self.global_dir(), MEMORY_FILE)

    def relative(self, path: str) -> str:
        """`path` with the first occurrence of `<root><sep>` removed (behavior.md#section-memory-keys)."""
        return path.replace(self._prefix(), "", 1)

    def _prefix(self) -> str:
        return self.root if self.root.endswith(os.sep) else self.root + os.sep

    # -- confinement -----------------------------------------------------------------------
    def resolve(self, path: str) -> str | None:
        """The real path of `path` if it lies inside the (real) root, else None."""
        try:
            real_root = os.path.realpath(self.root)
            real = os.path.realpath(path)
            inside = os.path.commonpath([real_root, real]) == real_root
        except ValueError:  # embedded NUL, or mixed absolute/relative paths
            return None
        return real if inside else None

    def exists(self, path: str) -> bool:
        """Bare existence test inside the root (behavior.md#rebuild-from-checkpoint "the checkpoint file
        exists")."""
        real = self.resolve(path)
        return real is not None and os.path.exists(real)

    # -- reading ---------------------------------------------------------------------------
    def read_text(self, path: str) -> ReadOutcome:
        """Read and decode a memory file; anything that resolves outside the root is never opened."""
        real = self.resolve(path)
        if real is None:
            return ReadOutcome(None, "outside-root")
        raw_or_problem = self._read_bytes(real)
        if isinstance(raw_or_problem, str):
            return ReadOutcome(None, raw_or_problem)
        raw = raw_or_problem
        if b"\0" in raw[:BINARY_SNIFF_BYTES]:
            return ReadOutcome(None, "binary")
        text, valid = decode_memory_bytes(raw)
        return ReadOutcome(text, None if valid else "invalid-utf8")

    def _read_bytes(self, real: str) -> bytes | Problem:
        try:
            before = os.stat(real)
        except (FileNotFoundError, NotADirectoryError):
            return "missing"
        except OSError:  # ELOOP, EACCES on a parent directory, ...
            return "unreadable"
        if not stat.S_ISREG(before.st_mode):
            return "not-a-file"  # directories, FIFOs (whose open would block), devices, sockets
        if before.st_size > self.max_file_bytes:
            return "too-large"
        try:
            # O_NOFOLLOW + O_NONBLOCK: if the last component was swapped for a link or a FIFO
            # after the checks above, the open fails or returns at once instead of following it.
            flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
            fd = os.open(real, flags)
        except OSError:
            return "unreadable"
        with os.fdopen(fd, "rb") as f:
            after = os.fstat(f.fileno())
            if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(
                after.st_mode
            ):
                return "unreadable"  # replaced between the check and the open: do not read it
            try:
                raw = f.read(self.max_file_bytes + 1)
            except OSError:
                return "unreadable"
        if len(raw) > self.max_file_bytes:
            return "too-large"  # grew after the size check
        return raw

    # -- legacy migration (behavior.md#memory-layout) --------------------------------------
    def migrate_legacy_project_memory(self, project_id: str) -> bool:
        """Rename `projects/<id>/memory.md` to `MEMORY.md` when only the lowercase name exists.

        Idempotent. Names are compared as exact directory entries, so on a case-insensitive file
        system (where `MEMORY.md` "exists" as soon as `memory.md` does) the case-only rename still
        happens once and the next call sees `MEMORY.md` and does nothing. Returns True if renamed.
        """
        directory = self.project_dir(project_id)
        if self.resolve(directory) is None:
            return False
        try:
            names = set(os.listdir(directory))
        except OSError:
            return False
        if MEMORY_FILE in names or LEGACY_MEMORY_FILE not in names:
            return False
        legacy = os.path.join(directory, LEGACY_MEMORY_FILE)
        if self.resolve(legacy) is None:
            return False
        return _rename_without_replacing(legacy, os.path.join(directory, MEMORY_FILE))

    # -- memory keys (behavior.md#section-memory-keys) and the memory-artifacts test
    # (behavior.md#memory-reminder)
    def memory_keys(self, session_id: str, project_id: str | None) -> list[str]:
        """Relative paths of the memory files listed in "# Memory keys index", sorted by code units."""
        tops = [self.global_dir(), self.session_dir(session_id)]
        excluded = {self.global_memory_path(), self.checkpoint_path(session_id)}
        if project_id and project_id != GLOBAL_PROJECT_ID:
            tops.append(self.project_dir(project_id))
            excluded.add(self.project_memory_path(project_id))
        spill = os.sep + "checkpoint" + os.sep + "learning-"
        keys = [
            self.relative(path)
            for top in tops
            for path in self._markdown_files(top)
            if path not in excluded and spill not in path
        ]
        return sorted(keys, key=utf16_sort_key)

    def _markdown_files(self, top: str) -> Iterator[str]:
        """Regular `*.md` files under `top`, recursively, as `top`-joined paths.

        Symlinked directories are never descended (no cycles, no escape); a symlinked file is
        listed only if it resolves inside the root to a regular file. Names that are not valid
        UTF-8 (surrogate-escaped by Python) are skipped: they cannot be sent over JSON-RPC.
        """
        if self.resolve(top) is None or not os.path.isdir(top):
            return
        for dirpath, _dirnames, filenames in os.walk(top, followlinks=False):
            for name in filenames:
                if not name.endswith(".md") or _has_surrogate(name):
                    continue
                path = os.path.join(dirpath, name)
                real = self.resolve(path)
                if real is not None and os.path.isfile(real):
                    yield path

    # -- the memory of one session, by key (the model tools, behavior.md#d18) -----------------
    def scopes(self, session_id: str, project_id: str | None) -> list[str]:
        """The directories one session's memory lives in: its own, its project's (a real
        project only, as for the memory keys) and the global one."""
        dirs = [self.session_dir(session_id)]
        if project_id and project_id != GLOBAL_PROJECT_ID:
            dirs.append(self.project_dir(project_id))
        dirs.append(self.global_dir())
        return dirs

    def scoped_files(self, session_id: str, project_id: str | None) -> list[str]:
        """Every memory file (`*.md`, recursively) of the session's scopes, as paths joined under
        the root, sorted by relative path (code units). Symbolic links are never followed: a link
        is not listed, and a linked directory is not descended."""
        files = [
            path
            for top in self.scopes(session_id, project_id)
            for path in self._markdown_files(top)
            if self.key_problem(self.relative(path), session_id, project_id)[1] is None
        ]
        return sorted(files, key=lambda path: utf16_sort_key(self.relative(path)))

    def key_problem(self, key: str, session_id: str, project_id: str | None) -> tuple[str, Problem | None]:
        """The path a model names a memory file by (`key`), checked: `(path under the root, None)`,
        or `(key, problem)`. A key is relative to the root (`sessions/<sid>/notes.md`); an absolute
        path is accepted only when it starts with `<root><sep>`, and is read as the key after it.
        Refused: any other absolute path and any `..` or `.` component (`outside-root`), a key
        outside the session's scopes (`outside-scope`), a symbolic link on the way (`symlink`)."""
        if os.path.isabs(key):
            if not key.startswith(self._prefix()):
                return key, "outside-root"
            key = key[len(self._prefix()) :]
        parts = key.replace(os.altsep or os.sep, os.sep).split(os.sep)
        if not key or any(p in ("", ".", "..") or "\0" in p for p in parts):
            return key, "outside-root"
        path = os.path.join(self.root, *parts)
        if not any(path.startswith(top + os.sep) for top in self.scopes(session_id, project_id)):
            return key, "outside-scope"
        walked = self.root
        for part in parts:
            walked = os.path.join(walked, part)
            if os.path.islink(walked):
                return key, "symlink"
        return path, None

    def read_key(self, key: str, session_id: str, project_id: str | None) -> tuple[str, ReadOutcome]:
        """Read the memory file a model names by `key` (`key_problem`), confined like every read."""
        path, problem = self.key_problem(key, session_id, project_id)
        if problem is not None:
            return path, ReadOutcome(None, problem)
        return path, self.read_text(path)

    def session_dir_nonempty(self, session_id: str) -> bool:
        """True when the session memory directory exists inside the root and has any entry."""
        directory = self.session_dir(session_id)
        real = self.resolve(directory)
        if real is None or not os.path.isdir(real):
            return False
        try:
            with os.scandir(real) as entries:
                return next(entries, None) is not None
        except OSError:
            return False


def _has_surrogate(name: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in name)


def _rename_without_replacing(src: str, dst: str) -> bool:
    """Rename `src` to `dst` unless some other `dst` already exists (never clobber a MEMORY.md)."""
    try:
        os.link(src, dst, follow_symlinks=False)  # fails if dst exists: no check-then-rename race
    except FileExistsError:
        # On a case-insensitive file system dst *is* src: do the case-only rename.
        try:
            if not os.path.samefile(src, dst):
                return False
            os.rename(src, dst)
            return True
        except OSError:
            return False
    except OSError:  # hard links unsupported here: fall back to a checked rename
        try:
            if os.path.lexists(dst):
                return False
            os.rename(src, dst)
            return True
        except OSError:
            return False
    try:
        os.unlink(src)
    except OSError:
        pass  # both names now point at the same file; MEMORY.md is what gets read
    return True
