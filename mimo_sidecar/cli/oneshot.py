"""What the one-shot commands (`import`, `inspect`) share: the arguments that pick the source,
stdout that tolerates a reader leaving early, and the one-line error every bad input gets."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

EXIT_OK = 0
EXIT_INTERNAL = 1  # a bug, not bad input
EXIT_BAD_INPUT = 2


def add_source_arguments(parser: argparse.ArgumentParser, formats: Sequence[str], file_help: str) -> None:
    """FILE, `--format`, `--session`, `--skip-bad-lines`: what the importers need to read a source."""
    parser.add_argument("file", metavar="FILE", help=file_help)
    parser.add_argument(
        "--format", choices=formats, help="source format (default: detected from the content)"
    )
    parser.add_argument("--session", metavar="ID", help="the session to read when the source holds several")
    parser.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="skip (and count) unreadable JSONL lines or storage files instead of stopping at the first",
    )


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


def run_guarded(
    prog: str, doing: str, file: str, work: Callable[[], int], bad_input: tuple[type[Exception], ...]
) -> int:
    """`work()`'s exit code; `bad_input` errors as their one line and exit code 2, and any other
    exception (a bug, not bad input) as one line too, with exit code 1: never a traceback on the
    user's terminal."""
    try:
        return work()
    except bad_input as exc:
        return fail(prog, str(exc), EXIT_BAD_INPUT)
    except Exception as exc:
        return fail(prog, f"internal error while {doing} {file}: {type(exc).__name__}: {exc}", EXIT_INTERNAL)
