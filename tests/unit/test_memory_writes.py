"""core.memory.writes: atomic writes confined to the memory root (behavior.md#checkpoint-commit)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mimo_sidecar.core.memory import writes as memory_writes
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.memory.writes import WriteRefused, write_atomically

SID = "ses_w"


def snapshot(top: Path) -> dict[str, bytes | str]:
    """Every entry under `top` (symbolic links not followed): file bytes, link targets, directories."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(top))
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = path.read_bytes()
    return out


@pytest.fixture
def memory(tmp_path: Path) -> MemoryRoot:
    root = tmp_path / "root"
    root.mkdir()
    return MemoryRoot(str(root))


def test_creates_the_directories_and_the_file_and_leaves_no_temporary_file(memory: MemoryRoot) -> None:
    path = memory.checkpoint_path(SID)
    assert write_atomically(memory, path, b"# one\n") is True
    assert Path(path).read_bytes() == b"# one\n"
    assert os.listdir(os.path.dirname(path)) == ["checkpoint.md"]
    assert write_atomically(memory, path, "# två\n".encode()) is True
    assert Path(path).read_text(encoding="utf-8") == "# två\n"
    assert os.listdir(os.path.dirname(path)) == ["checkpoint.md"]


def test_a_replaced_file_keeps_its_permissions(memory: MemoryRoot) -> None:
    path = memory.checkpoint_path(SID)
    write_atomically(memory, path, b"old")
    os.chmod(path, 0o640)
    write_atomically(memory, path, b"new")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640 and Path(path).read_bytes() == b"new"


def test_create_only_never_replaces(memory: MemoryRoot) -> None:
    path = memory.checkpoint_path(SID)
    assert write_atomically(memory, path, b"first", replace=False) is True
    assert write_atomically(memory, path, b"second", replace=False) is False
    assert Path(path).read_bytes() == b"first"
    assert os.listdir(os.path.dirname(path)) == ["checkpoint.md"]


def test_a_symlinked_directory_leading_out_of_the_root_is_refused(memory: MemoryRoot, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    sessions = Path(memory.root) / "sessions"
    sessions.mkdir()
    (sessions / SID).symlink_to(outside, target_is_directory=True)
    before = snapshot(tmp_path)
    with pytest.raises(WriteRefused) as refused:
        write_atomically(memory, memory.checkpoint_path(SID), b"x")
    assert refused.value.problem == "outside-root"
    assert snapshot(tmp_path) == before


def test_a_checkpoint_linked_out_of_the_root_is_refused(memory: MemoryRoot, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_bytes(b"keep me")
    sdir = Path(memory.root) / "sessions" / SID
    sdir.mkdir(parents=True)
    (sdir / "checkpoint.md").symlink_to(secret)
    before = snapshot(tmp_path)
    with pytest.raises(WriteRefused) as refused:
        write_atomically(memory, memory.checkpoint_path(SID), b"x")
    assert refused.value.problem == "outside-root"
    assert snapshot(tmp_path) == before


def test_a_link_inside_the_root_is_written_through(memory: MemoryRoot) -> None:
    sdir = Path(memory.root) / "sessions" / SID
    sdir.mkdir(parents=True)
    real = Path(memory.root) / "shared.md"
    real.write_bytes(b"old")
    (sdir / "checkpoint.md").symlink_to(real)
    write_atomically(memory, memory.checkpoint_path(SID), b"new")
    assert (sdir / "checkpoint.md").is_symlink() and real.read_bytes() == b"new"
    assert sorted(os.listdir(memory.root)) == ["sessions", "shared.md"]


def test_a_directory_in_the_files_place_and_a_file_in_a_directorys_place(memory: MemoryRoot) -> None:
    sdir = Path(memory.root) / "sessions" / SID
    (sdir / "checkpoint.md").mkdir(parents=True)
    with pytest.raises(WriteRefused) as refused:
        write_atomically(memory, memory.checkpoint_path(SID), b"x")
    assert refused.value.problem == "not-a-file"
    (Path(memory.root) / "sessions" / "other").write_bytes(b"a file")
    with pytest.raises(WriteRefused) as refused:
        write_atomically(memory, memory.checkpoint_path("other"), b"x")
    assert refused.value.problem == "not-a-directory"


def test_a_missing_root_is_never_created(tmp_path: Path) -> None:
    memory = MemoryRoot(str(tmp_path / "gone"))
    with pytest.raises(WriteRefused) as refused:
        write_atomically(memory, memory.checkpoint_path(SID), b"x")
    assert refused.value.problem == "no-root" and not (tmp_path / "gone").exists()


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_failure_mid_write_leaves_the_old_file(
    memory: MemoryRoot, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    path = memory.checkpoint_path(SID)
    write_atomically(memory, path, b"the old checkpoint")
    before = snapshot(Path(memory.root))

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(memory_writes.os, failing, broken)
    with pytest.raises(WriteRefused) as refused:
        write_atomically(memory, path, b"the new one, never seen")
    monkeypatch.undo()
    assert refused.value.problem == "os-error" and "No space left" in refused.value.detail
    assert snapshot(Path(memory.root)) == before  # the old bytes, and no temporary file left
