"""Process-level settings made at start-up: glibc's mmap threshold (transport/allocator.py) and
the width of the RPC pipes (transport/stdio.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mimo_sidecar.transport.allocator import fix_malloc_thresholds

# A 16 MiB buffer freed (glibc then raises its threshold to 16 MiB), then 8 MiB buffers, each
# followed by a small live block so that the heap cannot shrink from its top: the pages that stay
# resident once the buffers are freed.
SCRIPT = """
import sys
if sys.argv[1] == "fixed":
    from mimo_sidecar.transport.allocator import fix_malloc_thresholds
    assert fix_malloc_thresholds()
def resident_pages():
    return int(open("/proc/self/statm").read().split()[1])
first = b"x" * (16 << 20)
del first
base = resident_pages()
buffers, pins = [], []
for i in range(4):
    buffers.append(b"y" * (8 << 20))
    pins.append(bytearray(100_000 + i))
del buffers
print(resident_pages() - base)
"""


def _kept_pages(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_freed_large_buffers_go_back_to_the_system_once_the_threshold_is_fixed() -> None:
    """Run in child processes: the setting is process-wide. Without it, glibc serves the 8 MiB
    buffers from the heap and keeps their 32 MiB resident; with it, they are mapped and returned."""
    assert _kept_pages("default") > 4 * 2048  # the behaviour the fix is for (8 MiB = 2048 pages)
    assert _kept_pages("fixed") < 1024


def test_it_reports_when_it_cannot_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert fix_malloc_thresholds() is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ: Linux only")
def test_the_rpc_pipes_are_widened_and_other_files_left_alone(tmp_path: object) -> None:
    """transport/stdio.widen_pipe: a pipe's buffer goes to 1 MiB (64 KiB by default); a regular
    file is not a pipe and is left as it is."""
    import fcntl
    import os
    from pathlib import Path

    from mimo_sidecar.transport.stdio import PIPE_BYTES, widen_pipe

    read_end, write_end = os.pipe()
    try:
        before = fcntl.fcntl(write_end, 1032)  # F_GETPIPE_SZ
        assert widen_pipe(write_end)
        assert fcntl.fcntl(read_end, 1032) >= PIPE_BYTES > before
    finally:
        os.close(read_end)
        os.close(write_end)
    path = Path(str(tmp_path)) / "plain"
    path.write_bytes(b"")
    with path.open("rb") as plain:
        assert widen_pipe(plain.fileno()) is False
