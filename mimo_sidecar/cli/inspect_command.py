"""`mimo-sidecar inspect FILE`: what a rebuild would do to a session, offline, before wiring anything.

FILE is any transcript the importers read, or a `session/open` params file. The real core runs in
this process (no server): the trigger, the watermark, the dry-run boundary, the request before and
after (mimo_sidecar/inspection/run.py). The picture goes to stdout; `--json` prints the same data as
one JSON object instead (docs/inspect.md). A file or an option that cannot be used gives one line on
stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse

import orjson

from ..importers import FORMATS, TranscriptError
from ..inspection.run import DEFAULT_WINDOW, InspectError, Inspection, inspect_source
from ..inspection.source import SESSION_OPEN, read_source
from .oneshot import EXIT_OK, add_source_arguments, print_sessions, release_stdout, run_guarded, write_stdout

PROG = "mimo-sidecar inspect"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Show what a rebuild from checkpoint would do to a session now: where it stands "
        "against the trigger line, the watermark, the boundary section by section and the request "
        "before and after. Runs the sidecar's core offline; changes nothing on disk.",
    )
    add_source_arguments(
        parser,
        (*FORMATS, SESSION_OPEN),
        "a Claude Code, Codex, OpenCode, Cline, Gemini CLI or Aider transcript, or a session/open params "
        "JSON file",
    )
    parser.add_argument(
        "--memory-root",
        metavar="DIR",
        help="read checkpoint.md and the memory files from here (default: a temporary root holding "
        "checkpoint.md from the template)",
    )
    parser.add_argument(
        "--window",
        type=_positive,
        metavar="N",
        help=f"the model's context window in tokens (default: the file's, else {DEFAULT_WINDOW:,})",
    )
    parser.add_argument(
        "--watermark",
        metavar="ID",
        help="rebuild from this stored watermark (a message ID) instead of the one a checkpoint "
        "writer starting now would cover",
    )
    parser.add_argument(
        "--sidecar-tools",
        metavar="PREFIX",
        nargs="?",
        const="",
        help="the model has the sidecar's model tools, names prefixed with PREFIX (none when left "
        "out): the rebuilt text names them and the request after the rebuild carries them",
    )
    parser.add_argument(
        "--tools", action="store_true", help="also call each model tool once against the rebuilt session"
    )
    parser.add_argument("--json", action="store_true", help="print the data as one JSON object")
    parser.add_argument("--text", action="store_true", help="also show the whole rebuild text")
    parser.add_argument("--no-color", action="store_true", help="no colours (also: NO_COLOR=1)")
    return parser


def _positive(raw: str) -> int:
    try:
        value = int(raw.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of tokens: {raw!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {raw!r}")
    return value


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)  # usage errors: argparse prints them and exits with 2
    return run_guarded(PROG, "inspecting", args.file, lambda: _inspect(args), (TranscriptError, InspectError))


def _inspect(args: argparse.Namespace) -> int:
    if args.list_sessions:
        return print_sessions(args, as_json=args.json)
    source = read_source(args.file, args.format, session=args.session, tolerate_bad_lines=args.skip_bad_lines)
    inspection = inspect_source(
        source,
        memory_root=args.memory_root,
        window=args.window,
        watermark=args.watermark,
        sidecar_tools=args.sidecar_tools,
        sample_tools=args.tools,
    )
    if args.json:
        _print_json(inspection, include_text=args.text)
    else:
        _print_picture(inspection, show_text=args.text, no_color=args.no_color)
    return EXIT_OK


def _print_json(inspection: Inspection, *, include_text: bool) -> None:
    from ..inspection.report import inspection_json

    data = inspection_json(inspection, include_text=include_text)
    write_stdout(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))


def _print_picture(inspection: Inspection, *, show_text: bool, no_color: bool) -> None:
    from rich.console import Console  # imported here: the server never needs it

    from ..inspection.picture import render_picture

    console = Console(no_color=no_color or None, highlight=False)
    try:
        render_picture(inspection, console, show_text=show_text)
    except BrokenPipeError:
        release_stdout()
