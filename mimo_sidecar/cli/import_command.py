"""`mimo-sidecar import FILE [--format F] [--output OUT]`: a transcript as `session/open` params.
`--list-sessions` lists the sessions of an Aider history instead, `--session N` imports one of them.

The params go to stdout (or OUT) as JSON; the import report goes to stderr as a short table. A file
that cannot be imported gives one line on stderr naming the file and the line, and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from ..importers import FORMATS, ImportResult, TranscriptError, import_transcript
from .oneshot import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    add_source_arguments,
    fail,
    print_sessions,
    run_guarded,
    write_stdout,
)

PROG = "mimo-sidecar import"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Read an agent transcript and print the session/open params of the sidecar as JSON. "
        "The import report (what was kept, left out, adjusted) goes to stderr.",
    )
    add_source_arguments(parser, FORMATS, "transcript file (or OpenCode storage / Cline task directory)")
    parser.add_argument("--output", "-o", metavar="OUT", help="write the JSON here instead of stdout")
    parser.add_argument("--pretty", action="store_true", help="indent the JSON")
    parser.add_argument("--quiet", "-q", action="store_true", help="do not print the report")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)  # usage errors: argparse prints them and exits with 2
    return run_guarded(PROG, "importing", args.file, lambda: _import(args), (TranscriptError,))


def _import(args: argparse.Namespace) -> int:
    if args.list_sessions:
        return print_sessions(args)
    result = import_transcript(
        args.file, args.format, session=args.session, tolerate_bad_lines=args.skip_bad_lines
    )
    payload = _encode(result, pretty=args.pretty)
    try:
        _write(payload, args.output)
    except OSError as exc:
        return fail(PROG, f"cannot write {args.output}: {exc.strerror or exc}", EXIT_BAD_INPUT)
    if not args.quiet:
        sys.stderr.write(result.report.table() + "\n")
    return EXIT_OK


def _encode(result: ImportResult, *, pretty: bool) -> bytes:
    option = orjson.OPT_APPEND_NEWLINE | (orjson.OPT_INDENT_2 if pretty else 0)
    return orjson.dumps(result.params, option=option)


def _write(payload: bytes, output: str | None) -> None:
    if output is not None:
        Path(output).write_bytes(payload)
        return
    write_stdout(payload)
