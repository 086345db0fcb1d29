"""Output helpers of the one-shot commands (`import`, `inspect`): stdout that tolerates a reader
leaving early, and the one-line error every bad input gets."""

from __future__ import annotations

import os
import sys

EXIT_OK = 0
EXIT_INTERNAL = 1  # a bug, not bad input
EXIT_BAD_INPUT = 2


def write_stdout(payload: bytes) -> None:
    try:
        sys.stdout.buffer.write(payload)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        release_stdout()


def release_stdout() -> None:
    """`... | head`: the reader left, which is not an error of ours; later writes go nowhere."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def fail(prog: str, message: str, code: int) -> int:
    """One line on stderr, `<prog>: error: <message>`; returns the exit code."""
    sys.stderr.write(f"{prog}: error: {message}\n")
    return code
