"""core.memory.files: layout, confinement, decoding, legacy migration, memory keys (behavior.md#memory-layout,
behavior.md#file-reading, behavior.md#section-memory-keys)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mimo_sidecar.core.memory import files as mf
from mimo_sidecar.core.memory.files import (
    MemoryRoot,
    ReadOutcome,
    UnsafeName,
    decode_memory_bytes,
    is_safe_name,
)

SECRET = "OUTSIDE-THE-ROOT-SECRET-7f3a"


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    (tmp_path / "memory").mkdir()
    return MemoryRoot(str(tmp_path / "memory"))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the root holding a file with distinctive content."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.md").write_text(SECRET)
    return d


def write(path: str, data: bytes | str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return path


def j(*parts: str) -> str:
    return os.path.join(*parts)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every path handed to os.open / open while the test runs."""
    seen: list[str] = []
    real_os_open, real_open = os.open, open

    def spy_os_open(path, *a, **k):  # type: ignore[no-untyped-def]
        seen.append(os.fspath(path))
        return real_os_open(path, *a, **k)

    def spy_open(path, *a, **k):  # type: ignore[no-untyped-def]
        if isinstance(path, (str, bytes, os.PathLike)):
            seen.append(os.fsdecode(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr("builtins.open", spy_open)
    return seen


# ============================================================================================
# layout
# ============================================================================================
def test_paths(root: MemoryRoot) -> None:
    r = root.root
    assert root.session_dir("ses_1") == j(r, "sessions", "ses_1")
    assert root.checkpoint_path("ses_1") == j(r, "sessions", "ses_1", "checkpoint.md")
    assert root.notes_path("ses_1") == j(r, "sessions", "ses_1", "notes.md")
    assert root.task_progress_path("ses_1", "T1.2") == j(
        r, "sessions", "ses_1", "tasks", "T1.2", "progress.md"
    )
    assert root.project_memory_path("p1") == j(r, "projects", "p1", "MEMORY.md")
    assert root.global_memory_path() == j(r, "global", "MEMORY.md")
    assert root.relative(root.notes_path("ses_1")) == j("sessions", "ses_1", "notes.md")


def test_trailing_separator_in_the_configured_root(tmp_path: Path) -> None:
    root = MemoryRoot(str(tmp_path) + os.sep)
    assert root.global_memory_path() == j(str(tmp_path), "global", "MEMORY.md")


@pytest.mark.parametrize("bad", ["", ".", "..", "../x", "a/b", "a/../../etc", "x\0y", os.sep + "abs"])
def test_unsafe_ids_are_refused(root: MemoryRoot, bad: str) -> None:
    assert not is_safe_name(bad)
    for build in (
        root.session_dir,
        root.checkpoint_path,
        root.notes_path,
        root.project_memory_path,
        root.session_dir_nonempty,
        root.migrate_legacy_project_memory,
    ):
        with pytest.raises(UnsafeName):
            build(bad)
    with pytest.raises(UnsafeName):
        root.task_progress_path("s1", bad)
    with pytest.raises(UnsafeName):
        root.memory_keys(bad, None)
    if bad:  # an empty project ID means "no project" for the keys listing
        with pytest.raises(UnsafeName):
            root.memory_keys("s1", bad)
    assert issubclass(UnsafeName, ValueError)


@pytest.mark.parametrize("good", ["ses_01HX", "..x", "a..b", "T1.2", "用户", "a b"])
def test_ordinary_ids_are_accepted(good: str) -> None:
    assert is_safe_name(good)


# ============================================================================================
# confinement
# ============================================================================================
def test_paths_inside_and_outside(root: MemoryRoot, outside: Path) -> None:
    """`parts`: where a path is written under the root (then walked from the root's handle)."""
    assert root.parts(root.root) == []
    assert root.parts(root.notes_path("s1")) == ["sessions", "s1", "notes.md"]
    assert root.parts(j(root.root, "sessions", "..", "..", "outside", "secret.md")) is None
    assert root.parts(j(root.root, "sessions", "x", "..", "s1")) == ["sessions", "s1"]
    assert root.parts(str(outside / "secret.md")) is None
    assert root.parts(root.root + "-sibling") is None  # a common string prefix is not containment
    assert root.read_text(root.root + "/a\0b").problem == "unreadable"


def test_dotdot_path_is_never_opened(root: MemoryRoot, outside: Path, opened: list[str]) -> None:
    path = j(root.root, "sessions", "..", "..", "outside", "secret.md")
    assert root.read_text(path) == ReadOutcome(None, "outside-root")
    assert not root.exists(path)
    assert not any("secret" in p for p in opened)


def test_symlinked_file_pointing_outside(root: MemoryRoot, outside: Path, opened: list[str]) -> None:
    link = root.checkpoint_path("s1")
    os.makedirs(os.path.dirname(link))
    os.symlink(outside / "secret.md", link)
    outcome = root.read_text(link)
    assert outcome == ReadOutcome(None, "outside-root")
    assert not root.exists(link)
    assert root.memory_keys("s1", None) == []
    assert not any("secret" in p or p == link for p in opened)


def test_symlinked_session_directory_pointing_outside(
    root: MemoryRoot, outside: Path, opened: list[str]
) -> None:
    (outside / "checkpoint.md").write_text(SECRET)
    (outside / "notes.md").write_text(SECRET)
    os.makedirs(j(root.root, "sessions"))
    os.symlink(outside, root.session_dir("s1"))
    assert root.read_text(root.checkpoint_path("s1")).problem == "outside-root"
    assert root.read_text(root.notes_path("s1")).text is None
    assert not root.session_dir_nonempty("s1")
    assert root.memory_keys("s1", None) == []
    assert not any(os.path.basename(p) in ("checkpoint.md", "notes.md") for p in opened)  # no file opened


def test_symlinked_subdirectory_is_not_descended(root: MemoryRoot, outside: Path) -> None:
    write(j(root.session_dir("s1"), "own.md"), "mine")
    os.symlink(outside, j(root.session_dir("s1"), "escape"))  # outside the root
    write(j(root.root, "global", "inside", "g.md"), "g")
    os.symlink(j(root.root, "global", "inside"), j(root.session_dir("s1"), "loop"))  # inside, still skipped
    os.symlink(root.session_dir("s1"), j(root.session_dir("s1"), "self"))  # a cycle
    assert root.memory_keys("s1", None) == [j("global", "inside", "g.md"), j("sessions", "s1", "own.md")]


def test_symlinked_file_inside_the_root_is_read_and_listed(root: MemoryRoot) -> None:
    target = write(j(root.root, "global", "real.md"), "real content")
    os.makedirs(root.session_dir("s1"))
    os.symlink(target, j(root.session_dir("s1"), "alias.md"))
    assert root.read_text(j(root.session_dir("s1"), "alias.md")) == ReadOutcome("real content")
    assert j("sessions", "s1", "alias.md") in root.memory_keys("s1", None)


def test_root_itself_behind_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real-memory"
    real.mkdir()
    os.symlink(real, tmp_path / "linked-memory")
    root = MemoryRoot(str(tmp_path / "linked-memory"))
    write(root.notes_path("s1"), "notes")
    assert root.read_text(root.notes_path("s1")) == ReadOutcome("notes")
    assert root.memory_keys("s1", None) == [j("sessions", "s1", "notes.md")]


# ============================================================================================
# read outcomes
# ============================================================================================
def test_missing(root: MemoryRoot) -> None:
    assert root.read_text(root.notes_path("s1")) == ReadOutcome(None, "missing")
    write(j(root.root, "sessions", "s2"), "a file where the session directory should be")
    assert root.read_text(root.notes_path("s2")) == ReadOutcome(None, "missing")


def test_directory_where_a_file_is_expected(root: MemoryRoot) -> None:
    os.makedirs(root.checkpoint_path("s1"))
    assert root.read_text(root.checkpoint_path("s1")) == ReadOutcome(None, "not-a-file")
    assert root.exists(root.checkpoint_path("s1"))  # a bare existence test


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="this platform has no FIFOs")
def test_fifo_is_not_a_file_and_does_not_block(root: MemoryRoot) -> None:
    os.makedirs(root.session_dir("s1"))
    os.mkfifo(root.notes_path("s1"))
    assert root.read_text(root.notes_path("s1")) == ReadOutcome(None, "not-a-file")


def test_symlink_loop_is_unreadable(root: MemoryRoot) -> None:
    os.makedirs(root.session_dir("s1"))
    a, b = j(root.session_dir("s1"), "a.md"), j(root.session_dir("s1"), "b.md")
    os.symlink(b, a)
    os.symlink(a, b)
    assert root.read_text(a) == ReadOutcome(None, "unreadable")
    assert root.memory_keys("s1", None) == []


def test_open_failure_is_unreadable(root: MemoryRoot, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests run as root, where chmod 000 does not stop a read: simulate the permission error.
    path = write(root.notes_path("s1"), "text")

    def deny(*_a: object, **_k: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", deny)
    assert root.read_text(path) == ReadOutcome(None, "unreadable")


def test_binary_file(root: MemoryRoot) -> None:
    path = write(root.notes_path("s1"), b"text\x00more")
    assert root.read_text(path) == ReadOutcome(None, "binary")
    # a NUL beyond the first 8 KiB is not sniffed: the file decodes as text
    path = write(root.notes_path("s2"), b"a" * 8192 + b"\x00")
    assert root.read_text(path) == ReadOutcome("a" * 8192 + "\x00")


def test_too_large(tmp_path: Path) -> None:
    root = MemoryRoot(str(tmp_path), max_file_bytes=10)
    assert root.read_text(write(root.notes_path("s1"), b"x" * 10)) == ReadOutcome("x" * 10)
    assert root.read_text(write(root.notes_path("s1"), b"x" * 11)) == ReadOutcome(None, "too-large")
    assert MemoryRoot(str(tmp_path)).max_file_bytes == 64 * 1024 * 1024


def test_file_replaced_between_check_and_open_is_not_read(
    root: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(root.notes_path("s1"), "original")
    other = write(j(root.root, "other.md"), "swapped in")
    real_os_open = os.open

    def swapped(name, flags, mode=0o777, *, dir_fd=None):  # type: ignore[no-untyped-def]
        if name == "notes.md":  # the file itself, once checked, is another one when opened
            return real_os_open(other, flags, mode)
        return real_os_open(name, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", swapped)
    assert root.read_text(path) == ReadOutcome(None, "unreadable")


# ============================================================================================
# decoding (behavior.md#file-reading)
# ============================================================================================
def test_bom_removed_once_and_crlf_kept(root: MemoryRoot) -> None:
    path = write(root.notes_path("s1"), b"\xef\xbb\xbf\xef\xbb\xbfa\r\nb\r\n")
    assert root.read_text(path) == ReadOutcome("\ufeffa\r\nb\r\n")


def test_invalid_utf8_is_replaced_and_reported(root: MemoryRoot) -> None:
    path = write(root.notes_path("s1"), b"ok \xff \xe2\x82 end")
    assert root.read_text(path) == ReadOutcome("ok \ufffd \ufffd end", "invalid-utf8")


@pytest.mark.parametrize(
    ("raw", "replacements"),
    [
        (b"\xe2\x82", 1),  # truncated 3-byte sequence: one maximal subpart
        (b"\xf0\x9f\x98A", 1),  # truncated 4-byte sequence, then ASCII
        (b"\xed\xa0\x80", 3),  # an encoded surrogate: each byte is invalid
        (b"\xc0\xaf", 2),  # overlong
        (b"\xe0\x80\xaf", 3),  # overlong 3-byte
        (b"\xf4\x90\x80\x80", 4),  # above U+10FFFF
        (b"\xf0\x80\x80", 3),
        (b"\x80\x80", 2),  # lone continuation bytes
        (b"\xef\xbbx", 1),  # a partial BOM is not a BOM
    ],
)
def test_whatwg_maximal_subpart_replacement(raw: bytes, replacements: int) -> None:
    text, valid = decode_memory_bytes(raw)
    assert not valid
    assert text.count("\ufffd") == replacements


def test_valid_astral_and_cjk_round_trip() -> None:
    assert decode_memory_bytes("用 Bun 不用 npm \U0001f44d".encode()) == ("用 Bun 不用 npm \U0001f44d", True)


_NODE = shutil.which("node")


@pytest.mark.skipif(_NODE is None, reason="node is not on PATH: the TextDecoder comparison needs it")
def test_decoding_matches_node_text_decoder() -> None:
    assert _NODE is not None
    rng = random.Random(7)
    alphabet = [
        0x00,
        0x41,
        0x7F,
        0x80,
        0xBF,
        0xC0,
        0xC2,
        0xDF,
        0xE0,
        0xED,
        0xEF,
        0xBB,
        0xF0,
        0xF4,
        0xF5,
        0xFF,
        0x9F,
    ]
    samples = [bytes(rng.choice(alphabet) for _ in range(rng.randrange(12))) for _ in range(2000)]
    samples += [b"\xef\xbb\xbf" + s for s in samples[:200]]
    script = (
        "const xs=JSON.parse(require('fs').readFileSync(0,'utf8'));"
        "const d=new TextDecoder('utf-8');"
        "process.stdout.write(JSON.stringify(xs.map(h=>d.decode(Buffer.from(h,'hex')))));"
    )
    done = subprocess.run(
        [_NODE, "-e", script],
        input=json.dumps([s.hex() for s in samples]).encode(),
        capture_output=True,
        check=True,
        timeout=60,
    )
    for raw, expected in zip(samples, json.loads(done.stdout), strict=True):
        assert decode_memory_bytes(raw)[0] == expected, raw


@given(st.binary(max_size=64))
def test_decoding_never_fails(raw: bytes) -> None:
    text, valid = decode_memory_bytes(raw)
    assert valid == (
        raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "ignore").encode()
        == raw.removeprefix(b"\xef\xbb\xbf")
    )
    assert not any("\ud800" <= ch <= "\udfff" for ch in text)


# ============================================================================================
# exists
# ============================================================================================
def test_exists(root: MemoryRoot, outside: Path) -> None:
    assert not root.exists(root.checkpoint_path("s1"))
    write(root.checkpoint_path("s1"), "")
    assert root.exists(root.checkpoint_path("s1"))
    assert not root.exists(str(outside / "secret.md"))


# ============================================================================================
# legacy migration (behavior.md#memory-layout)
# ============================================================================================
def test_migrates_lowercase_memory_md(root: MemoryRoot) -> None:
    legacy = write(j(root.project_dir("p1"), "memory.md"), "用 Bun 不用 npm")
    assert root.migrate_legacy_project_memory("p1") is True
    assert not os.path.exists(legacy)
    assert sorted(os.listdir(root.project_dir("p1"))) == ["MEMORY.md"]
    assert root.read_text(root.project_memory_path("p1")) == ReadOutcome("用 Bun 不用 npm")
    assert root.migrate_legacy_project_memory("p1") is False  # idempotent


def test_migration_never_replaces_an_existing_memory_md(root: MemoryRoot) -> None:
    write(j(root.project_dir("p1"), "memory.md"), "old")
    write(root.project_memory_path("p1"), "current")
    assert root.migrate_legacy_project_memory("p1") is False
    assert root.read_text(root.project_memory_path("p1")).text == "current"
    assert sorted(os.listdir(root.project_dir("p1"))) == ["MEMORY.md", "memory.md"]


def test_migration_without_any_file_or_directory(root: MemoryRoot) -> None:
    assert root.migrate_legacy_project_memory("nope") is False
    write(root.project_memory_path("p1"), "x")
    assert root.migrate_legacy_project_memory("p1") is False


def test_migration_does_not_touch_a_link_pointing_outside(root: MemoryRoot, outside: Path) -> None:
    os.makedirs(root.project_dir("p1"))
    os.symlink(outside / "secret.md", j(root.project_dir("p1"), "memory.md"))
    assert root.migrate_legacy_project_memory("p1") is False
    assert os.listdir(root.project_dir("p1")) == ["memory.md"]


def test_migration_on_a_case_insensitive_file_system(
    root: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # There, linking memory.md to MEMORY.md fails with EEXIST because both names are one file;
    # the case-only rename must still happen, once.
    write(j(root.project_dir("p1"), "memory.md"), "x")

    def eexist(*_a: object, **_k: object) -> None:
        raise FileExistsError(17, "File exists")

    monkeypatch.setattr(os, "link", eexist)
    monkeypatch.setattr(os.path, "samefile", lambda a, b: True)
    assert root.migrate_legacy_project_memory("p1") is True
    assert os.listdir(root.project_dir("p1")) == ["MEMORY.md"]
    assert root.migrate_legacy_project_memory("p1") is False


def test_migration_without_hard_links(root: MemoryRoot, monkeypatch: pytest.MonkeyPatch) -> None:
    write(j(root.project_dir("p1"), "memory.md"), "x")

    def eperm(*_a: object, **_k: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", eperm)
    assert root.migrate_legacy_project_memory("p1") is True
    assert os.listdir(root.project_dir("p1")) == ["MEMORY.md"]


# ============================================================================================
# memory keys (behavior.md#section-memory-keys)
# ============================================================================================
def populate(root: MemoryRoot) -> None:
    r = root.root
    for rel in [
        "global/MEMORY.md",  # excluded: injected as "# Global memory"
        "global/conventions.md",
        "global/sub/deep.md",
        "global/notes.txt",  # not .md
        "global/UPPER.MD",  # the suffix test is case-sensitive
        "sessions/s1/checkpoint.md",  # excluded
        "sessions/s1/notes.md",  # NOT excluded
        "sessions/s1/tasks/T1/progress.md",
        "sessions/s1/checkpoint/learning-1.md",  # excluded: spill-over learnings
        "sessions/s1/checkpoint/topic-lexer.md",
        "sessions/s2/notes.md",  # another session
        "sessions/s2/checkpoint.md",
        "projects/p1/MEMORY.md",  # excluded
        "projects/p1/decisions.md",
        "projects/p2/other.md",  # another project
        "projects/global/fallback.md",  # the global fallback is not a project scope
        "loose.md",  # no scope
    ]:
        write(j(r, *rel.split("/")), "x")
    os.makedirs(j(r, "global", "dir.md"))  # a directory named like a file


def test_memory_keys_for_a_real_project(root: MemoryRoot) -> None:
    populate(root)
    assert root.memory_keys("s1", "p1") == [
        j("global", "conventions.md"),
        j("global", "sub", "deep.md"),
        j("projects", "p1", "decisions.md"),
        j("sessions", "s1", "checkpoint", "topic-lexer.md"),
        j("sessions", "s1", "notes.md"),
        j("sessions", "s1", "tasks", "T1", "progress.md"),
    ]


@pytest.mark.parametrize("project", [None, "", "global"])
def test_memory_keys_without_a_real_project(root: MemoryRoot, project: str | None) -> None:
    populate(root)
    keys = root.memory_keys("s1", project)
    assert not any(k.startswith("projects") for k in keys)
    assert j("sessions", "s1", "notes.md") in keys and len(keys) == 5


def test_memory_keys_of_an_empty_root(root: MemoryRoot, tmp_path: Path) -> None:
    assert root.memory_keys("s1", "p1") == []
    assert MemoryRoot(str(tmp_path / "does-not-exist")).memory_keys("s1", "p1") == []


def test_memory_keys_sort_in_code_unit_order(root: MemoryRoot) -> None:
    # Python orders U+E000 before U+1F44D; JavaScript compares the surrogate U+D83D first.
    for name in ["\ue000.md", "\U0001f44d.md", "b.md", "B.md", "a.md"]:
        write(j(root.global_dir(), name), "x")
    assert root.memory_keys("s1", None) == [
        j("global", n) for n in ["B.md", "a.md", "b.md", "\U0001f44d.md", "\ue000.md"]
    ]


@pytest.mark.skipif(os.name != "posix", reason="needs a file system that accepts non-UTF-8 names")
def test_memory_keys_skip_names_that_are_not_utf8(root: MemoryRoot) -> None:
    os.makedirs(root.global_dir())
    with open(os.path.join(os.fsencode(root.global_dir()), b"bad\xff.md"), "wb"):
        pass
    write(j(root.global_dir(), "good.md"), "x")
    assert root.memory_keys("s1", None) == [j("global", "good.md")]


def test_relative_removes_the_first_occurrence_only(root: MemoryRoot) -> None:
    nested = j(root.root, "sessions", "s1") + root.root + os.sep + "x.md"
    assert root.relative(nested) == j("sessions", "s1") + root.root + os.sep + "x.md"


# ============================================================================================
# session directory test (behavior.md#memory-reminder)
# ============================================================================================
def test_session_dir_nonempty(root: MemoryRoot) -> None:
    assert not root.session_dir_nonempty("s1")  # missing
    os.makedirs(root.session_dir("s1"))
    assert not root.session_dir_nonempty("s1")  # empty
    os.makedirs(j(root.session_dir("s1"), "tasks"))
    assert root.session_dir_nonempty("s1")  # an empty subdirectory is still an entry
    write(j(root.root, "sessions", "s2"), "a file, not a directory")
    assert not root.session_dir_nonempty("s2")


def test_module_constants() -> None:
    assert mf.GLOBAL_PROJECT_ID == "global"
    assert mf.BINARY_SNIFF_BYTES == 8192
