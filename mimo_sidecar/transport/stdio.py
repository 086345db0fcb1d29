"""Reserve the process's real stdin/stdout for JSON-RPC frames.

After `claim_stdio()`:
- frames are written to a private duplicate of the original fd 1 and read from a private
  duplicate of the original fd 0;
- fd 1 points at stderr, so `print()`, C extensions and child processes that write to stdout end
  up in the log instead of corrupting the stream;
- fd 0 reads /dev/null, so a child process or a stray `input()` cannot consume protocol bytes.

Parse the command line first: `--version` and `--help` must still reach the real stdout.
"""

from __future__ import annotations

import io
import os
import sys
from typing import BinaryIO


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """Returns `(rpc_in, rpc_out)`, binary streams only the RPC transport may use."""
    sys.stdout.flush()
    rpc_out = os.fdopen(os.dup(1), "wb")  # buffered: one write() per frame, then flush
    rpc_in = os.fdopen(os.dup(0), "rb")
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "rb", closefd=False)))
    return rpc_in, rpc_out
