"""The memory root: file layout, confined reads and decoding, legacy migration, memory keys.

behavior.md#memory-layout (file table), behavior.md#file-reading (decoding), behavior.md#section-memory-keys
(memory keys index), behavior.md#memory-reminder (the "session memory directory is non-empty" test). Every
path handed out is `<root>` joined with `os.sep`, exactly as the rendered text shows it; every read is
confined to the root: each path is walked one component at a time from a handle of the root
(`core.memory.confined`), so a path that leads outside the root (through `..` or a symbolic link, even one
swapped in while the sidecar reads) is never opened.

For tools that read the memory on a model's behalf: `read_confined(root, relpath)` and
`list_confined(root, reldir)` take paths relative to the root and give the same guarantees.

Session and project IDs become single path components. An ID that is empty, `.`, `..`, or holds a
path separator or NUL is refused with `UnsafeName` instead of being joined: even when such a path
stays inside the root it would reach another session's or scope's files.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from .confined import Refused, Walk, open_file, parts_of, scan

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
    "absolute",  # an absolute path inside the root: keys are relative to it (behavior.md#d22)
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
    @property
    def walk(self) -> Walk:
        return Walk(self.root)

    def parts(self, path: str) -> list[str] | None:
        """The components of `path` below the root, or None when it is not written under the root."""
        absolute = os.path.abspath(path)
        if absolute == self.root:
            return []
        if not absolute.startswith(self._prefix()):
            return None
        return parts_of(absolute[len(self._prefix()) :])

    def exists(self, path: str) -> bool:
        """Bare existence test inside the root (behavior.md#rebuild-from-checkpoint "the checkpoint file
        exists")."""
        parts = self.parts(path)
        if not parts:
            return False
        try:
            with self.walk.locate(parts) as entry:
                return entry.stat is not None
        except Refused:
            return False

    # -- reading ---------------------------------------------------------------------------
    def read_text(self, path: str) -> ReadOutcome:
        """Read and decode a memory file; anything that leads outside the root is never opened."""
        raw_or_problem = self._read_bytes(self.parts(path))
        if isinstance(raw_or_problem, str):
            return ReadOutcome(None, raw_or_problem)
        raw = raw_or_problem
        if b"\0" in raw[:BINARY_SNIFF_BYTES]:
            return ReadOutcome(None, "binary")
        text, valid = decode_memory_bytes(raw)
        return ReadOutcome(text, None if valid else "invalid-utf8")

    def _read_bytes(self, parts: list[str] | None) -> bytes | Problem:
        if not parts:
            return "outside-root"
        try:
            with self.walk.locate(parts) as entry:
                if entry.stat is None:
                    return "missing"
                if not entry.is_file:
                    return "not-a-file"  # directories, FIFOs (whose open would block), devices, sockets
                if entry.stat.st_size > self.max_file_bytes:
                    return "too-large"
                fd = open_file(entry)  # refused when swapped for a link or a FIFO since the lstat
        except Refused as refused:
            return _READ_PROBLEMS[refused.problem]
        with os.fdopen(fd, "rb") as f:
            try:
                raw = f.read(self.max_file_bytes + 1)
            except OSError:
                return "unreadable"
        if len(raw) > self.max_file_bytes:
            return "too-large"  # grew after the size check
        return raw

    # -- listing -----------------------------------------------------------------------------
    def files_under(self, parts: Sequence[str], suffix: str = "") -> Iterator[list[str]]:
        """The regular files beneath the directory `parts` names (its own components first), as
        components from the root in the order met. Symbolically linked directories are never
        descended (no cycles, no escape); a linked file is listed only if it leads to a regular
        file inside the root. Names that are not valid UTF-8 (surrogate-escaped by Python) are
        skipped: they cannot be sent over JSON-RPC."""
        try:
            fd, _where = self.walk.open_directory(parts)
        except Refused:
            return
        pending = [(fd, list(parts))]  # directories still to list, walked without recursion
        try:
            while pending:
                dir_fd, at = pending.pop()
                try:
                    yield from self._listed(dir_fd, at, suffix, pending)
                finally:
                    os.close(dir_fd)
        finally:
            for dir_fd, _at in pending:  # a consumer that stopped early
                os.close(dir_fd)

    def _listed(
        self, dir_fd: int, at: list[str], suffix: str, pending: list[tuple[int, list[str]]]
    ) -> Iterator[list[str]]:
        try:
            entries = sorted(scan(dir_fd))
        except OSError:
            return
        for name, info in entries:
            if _has_surrogate(name):
                continue
            if stat.S_ISDIR(info.st_mode):
                try:
                    pending.append((os.open(name, _DIRECTORY_FLAGS, dir_fd=dir_fd), [*at, name]))
                except OSError:
                    continue  # swapped for a link (or gone) since it was listed
            elif name.endswith(suffix) and (stat.S_ISREG(info.st_mode) or self._is_linked_file([*at, name])):
                yield [*at, name]

    def _is_linked_file(self, parts: list[str]) -> bool:
        try:
            with self.walk.locate(parts) as entry:
                return entry.is_file
        except Refused:
            return False

    # -- legacy migration (behavior.md#memory-layout) --------------------------------------
    def migrate_legacy_project_memory(self, project_id: str) -> bool:
        """Rename `projects/<id>/memory.md` to `MEMORY.md` when only the lowercase name exists.

        Idempotent. Names are compared as exact directory entries, so on a case-insensitive file
        system (where `MEMORY.md` "exists" as soon as `memory.md` does) the case-only rename still
        happens once and the next call sees `MEMORY.md` and does nothing. Returns True if renamed.
        The legacy file must be a regular file inside the root (a link out of it is left alone).
        """
        parts = ["projects", _checked(project_id, "project ID")]
        try:
            fd, _where = self.walk.open_directory(parts)
        except Refused:
            return False
        try:
            names = set(os.listdir(fd))
            if MEMORY_FILE in names or LEGACY_MEMORY_FILE not in names:
                return False
            if not self._is_linked_file([*parts, LEGACY_MEMORY_FILE]):
                return False
            directory = self.project_dir(project_id)
            return _rename_without_replacing(fd, directory, LEGACY_MEMORY_FILE, MEMORY_FILE)
        finally:
            os.close(fd)

    # -- memory keys (behavior.md#section-memory-keys) and the memory-artifacts test
    # (behavior.md#memory-reminder)
    def memory_keys(self, session_id: str, project_id: str | None) -> list[str]:
        """Relative paths of the memory files listed in "# Memory keys index", sorted by code units."""
        tops = [["global"], ["sessions", _checked(session_id, "session ID")]]
        excluded = {self.global_memory_path(), self.checkpoint_path(session_id)}
        if project_id and project_id != GLOBAL_PROJECT_ID:
            tops.append(["projects", _checked(project_id, "project ID")])
            excluded.add(self.project_memory_path(project_id))
        spill = os.sep + "checkpoint" + os.sep + "learning-"
        keys = []
        for top in tops:
            for parts in self.files_under(top, ".md"):
                path = os.path.join(self.root, *parts)
                if path not in excluded and spill not in path:
                    keys.append(self.relative(path))
        return sorted(keys, key=utf16_sort_key)

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
        the root, sorted by relative path (code units). Listed by the confined walk (`files_under`);
        a key through a symbolic link is left out, since `key_problem` refuses it."""
        files = [
            path
            for top in self.scopes(session_id, project_id)
            for parts in self.files_under(self.parts(top) or [], ".md")
            for path in [os.path.join(self.root, *parts)]
            if self.key_problem(self.relative(path), session_id, project_id)[1] is None
        ]
        return sorted(files, key=lambda path: utf16_sort_key(self.relative(path)))

    def key_problem(self, key: str, session_id: str, project_id: str | None) -> tuple[str, Problem | None]:
        """The path a model names a memory file by (`key`), checked: `(path under the root, None)`,
        or `(key, problem)`. A key is relative to the root (`sessions/<sid>/notes.md`), as every text
        the model reads shows it (behavior.md#d22). Refused: an absolute path (`absolute` when it
        lies under the root, so that the model can be told the key it meant; else `outside-root`),
        any `..` or `.` component (`outside-root`), a key outside the session's scopes
        (`outside-scope`), a symbolic link on the way (`symlink`).
        The read itself is confined by the walk whatever happens between this check and it."""
        if os.path.isabs(key):
            return key, "absolute" if key.startswith(self._prefix()) else "outside-root"
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
        try:
            fd, _where = self.walk.open_directory(["sessions", _checked(session_id, "session ID")])
        except Refused:
            return False
        try:
            return bool(os.listdir(fd))
        except OSError:
            return False
        finally:
            os.close(fd)


def read_confined(root: MemoryRoot, relpath: str) -> ReadOutcome:
    """The memory file at `relpath` (relative to the root; `..` may not climb above it), read and
    decoded as every memory file is (behavior.md#file-reading)."""
    parts = parts_of(relpath)
    if os.path.isabs(relpath) or not parts:
        return ReadOutcome(None, "outside-root")
    return root.read_text(os.path.join(root.root, *parts))


def list_confined(root: MemoryRoot, reldir: str = "", suffix: str = "") -> list[str]:
    """The regular files beneath `reldir` (relative to the root; "" is the whole root) whose names
    end with `suffix`, as paths relative to the root, sorted by UTF-16 code units. What cannot be
    listed (missing, outside the root) lists nothing."""
    if os.path.isabs(reldir):
        return []
    found = (os.path.join(*parts) for parts in root.files_under(parts_of(reldir), suffix))
    return sorted(found, key=utf16_sort_key)


_READ_PROBLEMS: dict[str, Problem] = {
    "no-root": "missing",
    "outside-root": "outside-root",
    "missing": "missing",
    "not-a-directory": "missing",  # a file where a directory of the path should be
    "unreadable": "unreadable",
}
_DIRECTORY_FLAGS = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


def _has_surrogate(name: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in name)


def _rename_without_replacing(dir_fd: int, directory: str, src: str, dst: str) -> bool:
    """Rename `src` to `dst` in the directory `dir_fd` unless some other `dst` already exists
    (never clobber a MEMORY.md). `directory` names it, for the case-insensitive test only."""
    at = {"src_dir_fd": dir_fd, "dst_dir_fd": dir_fd}
    try:
        os.link(src, dst, follow_symlinks=False, **at)  # fails if dst exists: no check-then-rename race
    except FileExistsError:
        # On a case-insensitive file system dst *is* src: do the case-only rename.
        try:
            if not os.path.samefile(os.path.join(directory, src), os.path.join(directory, dst)):
                return False
            os.rename(src, dst, **at)
            return True
        except OSError:
            return False
    except OSError:  # hard links unsupported here: fall back to a checked rename
        try:
            os.stat(dst, dir_fd=dir_fd, follow_symlinks=False)
            return False
        except FileNotFoundError:
            pass
        except OSError:
            return False
        try:
            os.rename(src, dst, **at)
            return True
        except OSError:
            return False
    try:
        os.unlink(src, dir_fd=dir_fd)
    except OSError:
        pass  # both names now point at the same file; MEMORY.md is what gets read
    return True
