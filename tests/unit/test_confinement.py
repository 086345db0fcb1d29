"""Confinement that holds against swaps: every read and write under the memory root is
walked from a handle of the root (core/memory/confined.py), so a directory swapped for a link to outside,
between a check and a use or all along, never leads a read or a write out of the root.

The race test exchanges a session's directory with a link to outside (`renameat2`
`RENAME_EXCHANGE`, atomically, thousands of times) while commits, reads and listings loop: no byte
outside changes, no temporary file appears there, no content from outside is read, and every
operation ends in a result or a clear refusal. Stale temporary files of killed writes go at open.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

import pytest

from mimo_sidecar.core.errors import DomainError
from mimo_sidecar.core.memory.confined import Refused, Walk
from mimo_sidecar.core.memory.files import MemoryRoot, ReadOutcome, list_confined, read_confined
from mimo_sidecar.core.memory.writes import WriteRefused, remove_stale_temp_files, write_atomically
from mimo_sidecar.service import OpenRequest, SidecarService

SECRET = "outside: never to be read or written"
SID = "S"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[MemoryRoot, Path]:
    root = tmp_path / "memory"
    (root / "sessions" / SID).mkdir(parents=True)
    (root / "sessions" / SID / "checkpoint.md").write_text("# Session checkpoint\n\nTopic: mine\n")
    (root / "sessions" / SID / "notes.md").write_text("my notes")
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("checkpoint.md", "notes.md", "other.md"):
        (outside / name).write_text(SECRET)
    return MemoryRoot(str(root)), outside


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# -- the walk ---------------------------------------------------------------------------------------


def test_links_are_followed_only_while_they_stay_beneath_the_root(layout: tuple[MemoryRoot, Path]) -> None:
    memory, outside = layout
    sdir = Path(memory.session_dir(SID))
    (sdir / "relative.md").symlink_to("notes.md")
    (sdir / "absolute.md").symlink_to(sdir / "notes.md")
    (sdir / "up.md").symlink_to("../../sessions/S/notes.md")
    (sdir / "above.md").symlink_to("../../../outside/notes.md")
    (sdir / "out.md").symlink_to(outside / "notes.md")
    (sdir / "loop.md").symlink_to("loop.md")
    for name in ("relative.md", "absolute.md", "up.md"):
        assert read_confined(memory, f"sessions/S/{name}") == ReadOutcome("my notes")
    assert read_confined(memory, "sessions/S/above.md").problem == "outside-root"
    assert read_confined(memory, "sessions/S/out.md").problem == "outside-root"
    assert read_confined(memory, "sessions/S/loop.md").problem == "unreadable"
    assert read_confined(memory, "../outside/notes.md").problem == "outside-root"
    assert read_confined(memory, str(outside / "notes.md")).problem == "outside-root"
    with pytest.raises(Refused) as refused:
        Walk(memory.root).locate(["sessions", "..", "..", "outside", "notes.md"])
    assert refused.value.problem == "outside-root"


def test_list_confined_lists_files_inside_only(layout: tuple[MemoryRoot, Path]) -> None:
    memory, outside = layout
    sdir = Path(memory.session_dir(SID))
    (sdir / "tasks" / "T1").mkdir(parents=True)
    (sdir / "tasks" / "T1" / "progress.md").write_text("p")
    (sdir / "escape").symlink_to(outside, target_is_directory=True)
    (sdir / "secret.md").symlink_to(outside / "other.md")
    (sdir / "alias.md").symlink_to("notes.md")
    assert list_confined(memory, "sessions/S") == [
        os.path.join("sessions", "S", name)
        for name in ("alias.md", "checkpoint.md", "notes.md", os.path.join("tasks", "T1", "progress.md"))
    ]
    assert list_confined(memory, "sessions/S", suffix="progress.md") == [
        os.path.join("sessions", "S", "tasks", "T1", "progress.md")
    ]
    assert list_confined(memory, "sessions/S/escape") == []  # a linked directory is not descended
    assert list_confined(memory, "..") == [] and list_confined(memory, str(outside)) == []


def test_a_directory_swapped_for_a_link_between_the_check_and_the_use_is_not_followed_out(
    layout: tuple[MemoryRoot, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap made deterministic: right after the walk's `lstat` sees `sessions/S` as a
    directory, it becomes a link to outside. The `O_NOFOLLOW` open refuses it, the walk looks
    again, finds the link, and refuses it: neither the read nor the write reaches outside."""
    memory, outside = layout
    sessions = Path(memory.root) / "sessions"
    real_stat = os.stat

    def swapping_stat(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        info = real_stat(path, *args, **kwargs)
        if path == SID and (sessions / SID).is_dir() and not (sessions / SID).is_symlink():
            (sessions / SID).rename(sessions / "S-moved")
            (sessions / SID).symlink_to(outside, target_is_directory=True)
        return info

    before = tree(outside)
    monkeypatch.setattr(os, "stat", swapping_stat)
    assert memory.read_text(memory.notes_path(SID)).problem == "outside-root"
    (sessions / SID).unlink()
    (sessions / "S-moved").rename(sessions / SID)
    with pytest.raises(WriteRefused) as refused:
        write_atomically(memory, memory.checkpoint_path(SID), b"must not land outside")
    monkeypatch.undo()
    assert refused.value.problem == "outside-root"
    assert tree(outside) == before


# -- the race ---------------------------------------------------------------------------------------


def _exchange() -> object | None:
    """`renameat2(..., RENAME_EXCHANGE)`, or None where the C library lacks it."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return None
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return renameat2


AT_FDCWD, RENAME_EXCHANGE = -100, 2


@pytest.mark.skipif(_exchange() is None, reason="no renameat2 in this C library (Linux only)")
def test_a_directory_exchanged_with_a_link_to_outside_while_commits_and_reads_loop(
    layout: tuple[MemoryRoot, Path],
) -> None:
    """Before the walk, the same race overwrote `outside/checkpoint.md` after 89 commits, read outside
    content into previews and left temporary files outside."""
    memory, outside = layout
    renameat2 = _exchange()
    sessions = Path(memory.root) / "sessions"
    (sessions / "S-swap").symlink_to(outside, target_is_directory=True)
    a, b = bytes(sessions / SID), bytes(sessions / "S-swap")
    before = tree(outside)
    svc = SidecarService(memory_root=memory.root)
    svc.open(OpenRequest(SID, messages=[{"info": {"id": "m1", "role": "user"}, "parts": []}]))
    stop = threading.Event()
    exchanges = [0]

    def swap() -> None:
        while not stop.is_set():
            if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0:  # type: ignore[operator]
                exchanges[0] += 1

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    outcomes: dict[str, int] = {}
    try:
        for n in range(600):
            content = f"# Session checkpoint\n\nTopic: commit {n}\n"
            try:
                svc.writer_started(SID, "m1")
                svc.commit_checkpoint(SID, content, "m1")
                outcomes["committed"] = outcomes.get("committed", 0) + 1
            except DomainError as refused:  # a clear refusal (1009), never anything else
                outcomes[refused.code.name] = outcomes.get(refused.code.name, 0) + 1
            for read in (
                memory.read_text(memory.checkpoint_path(SID)),
                memory.read_text(memory.notes_path(SID)),
            ):
                assert read.text is None or SECRET not in read.text
            assert SECRET not in " ".join(memory.memory_keys(SID, None))
    finally:
        stop.set()
        swapper.join()
    if os.path.islink(a):  # leave the directory at its own name
        renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)  # type: ignore[operator]
    assert exchanges[0] > 100, exchanges  # the race really ran
    assert tree(outside) == before, "a write landed outside the root"
    assert sorted(os.listdir(outside)) == ["checkpoint.md", "notes.md", "other.md"]  # no temp file
    assert outcomes.get("committed"), outcomes


# -- stale temporary files ----------------------------------------------------------------------------


def test_stale_temporary_files_are_removed_when_the_session_opens(layout: tuple[MemoryRoot, Path]) -> None:
    """SIGKILL during commits left 38 temporary files over 200 kills, and nothing
    removed them."""
    memory, outside = layout
    sdir = Path(memory.session_dir(SID))
    stale = [sdir / ".checkpoint.md.0123456789ab.tmp", sdir / ".checkpoint.md.ba9876543210.tmp"]
    for path in stale:
        path.write_bytes(b"half a checkpoint")
    kept = [sdir / "notes.md", sdir / ".checkpoint.md.tmp", sdir / "my.0123456789ab.tmp"]
    (sdir / ".other.md.aaaaaaaaaaaa.tmp").symlink_to(outside / "other.md")  # not a file of ours
    svc = SidecarService(memory_root=memory.root)
    for path in kept[1:]:
        path.write_bytes(b"the host's")
    svc.open(OpenRequest(SID))
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in kept) and (outside / "other.md").read_text() == SECRET
    assert remove_stale_temp_files(memory, memory.session_dir(SID)) == 0
    assert remove_stale_temp_files(memory, str(outside)) == 0
