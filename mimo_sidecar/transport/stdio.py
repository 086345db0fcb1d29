"""Reserve the process's real stdin/stdout for JSON-RPC frames.

After `claim_stdio()`:
- frames are written to a private duplicate of the original fd 1 and read from a private
  duplicate of the original fd 0;
- fd 1 points at stderr, so `print()`, C extensions and child processes that write to stdout end
  up in the log instead of corrupting the stream;
- fd 0 reads /dev/null, so a child process or a stray `input()` cannot consume protocol bytes.

Where the two are pipes (the usual spawn), each is widened to 1 MiB on Linux (`F_SETPIPE_SZ`, the
default system limit): a 40 MB response then crosses in 40 writes and wake-ups of the reader instead
of 640 with the default 64 KiB, and a 50 MB `session/open` arrives the same way.

Parse the command line first: `--version` and `--help` must still reach the real stdout.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from typing import BinaryIO

PIPE_BYTES = 1 << 20
F_SETPIPE_SZ = 1031  # Linux fcntl command (fcntl.F_SETPIPE_SZ from Python 3.10, Linux only)


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """Returns `(rpc_in, rpc_out)`, binary streams only the RPC transport may use."""
    sys.stdout.flush()
    rpc_out = os.fdopen(os.dup(1), "wb")  # buffered: one write() per frame, then flush
    rpc_in = os.fdopen(os.dup(0), "rb")
    for stream in (rpc_in, rpc_out):
        widen_pipe(stream.fileno())
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "rb", closefd=False)))
    return rpc_in, rpc_out


def widen_pipe(fd: int, size: int = PIPE_BYTES) -> bool:
    """Ask for a pipe buffer of `size` bytes; False where `fd` is no pipe or the system refuses
    (another platform, a lower limit in /proc/sys/fs/pipe-max-size): the default then stays."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        import fcntl

        fcntl.fcntl(fd, F_SETPIPE_SZ, size)
    except OSError:
        return False
    return True
