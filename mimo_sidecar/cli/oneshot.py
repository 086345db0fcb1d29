"""What the one-shot commands (`import`, `inspect`) share: the arguments that pick the source,
the session list of a history, stdout that tolerates a reader leaving early, and the one-line error
every bad input gets."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

import orjson

from ..importers import SessionSummary, list_sessions

EXIT_OK = 0
EXIT_INTERNAL = 1  # a bug, not bad input
EXIT_BAD_INPUT = 2


def add_source_arguments(parser: argparse.ArgumentParser, formats: Sequence[str], file_help: str) -> None:
    """FILE, `--format`, `--session`, `--skip-bad-lines`: what the importers need to read a source."""
    parser.add_argument("file", metavar="FILE", help=file_help)
    parser.add_argument(
        "--format", choices=formats, help="source format (default: detected from the content)"
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        help="the session to read when the source holds several (an Aider history: also its number, "
        "as --list-sessions shows it; default: the newest one with an exchange)",
    )
    parser.add_argument(
        "--list-sessions",
        action="store_true",
        help="list the sessions of an Aider history (number, start, first ask, size, whether it holds "
        "an exchange) and exit",
    )
    parser.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="skip (and count) unreadable JSONL lines or storage files instead of stopping at the first",
    )


def print_sessions(args: argparse.Namespace, *, as_json: bool = False) -> int:
    """`--list-sessions`: the source's sessions on stdout, a table (or a JSON array), oldest first."""
    sessions = list_sessions(args.file, args.format)
    if as_json:
        payload = orjson.dumps([s.as_dict() for s in sessions], option=orjson.OPT_INDENT_2)
    else:
        payload = sessions_table(sessions).encode("utf-8")
    write_stdout(payload + b"\n")
    return EXIT_OK


def sessions_table(sessions: Sequence[SessionSummary]) -> str:
    header = ("#", "started", "messages", "characters", "exchange", "first ask")
    rows = [
        (str(s.index), s.started, str(s.messages), str(s.characters), "yes" if s.has_exchange else "no")
        for s in sessions
    ]
    asks = [s.first_ask or "-" for s in sessions]
    widths = [max(len(row[i]) for row in [header[:-1], *rows]) for i in range(len(header) - 1)]
    right = {0, 2, 3}  # numbers right-aligned

    def line(cells: tuple[str, ...], ask: str) -> str:
        padded = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(cells)]
        return "  ".join([*padded, ask])

    lines = [line(header[:-1], header[-1])] + [line(row, ask) for row, ask in zip(rows, asks, strict=True)]
    return "\n".join(lines)


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
