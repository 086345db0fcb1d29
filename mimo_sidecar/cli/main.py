"""Command line: `mimo-sidecar [--stdio] [--clientProcessId PID] [--max-frame-bytes N] [--log-file PATH]
[--log-level LEVEL]`.

`mimo-sidecar import ...` and `mimo-sidecar inspect ...` are separate commands (import_command.py,
inspect_command.py): they read a transcript and exit, without claiming stdio or starting the server.

Order matters: arguments are parsed while stdout is still the real one (so `--version` and
`--help` print there), then stdio is claimed for frames, then logging starts, then the server.
pygls is imported only after parsing, so `--version` is quick.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import __version__
from ..transport.allocator import fix_malloc_thresholds
from ..transport.framing import DEFAULT_MAX_FRAME_BYTES
from ..transport.jsondepth import MAX_NESTING
from ..transport.stdio import claim_stdio
from .logs import LEVELS, configure_logging

if TYPE_CHECKING:
    from ..rpc.server import SidecarServer

logger = logging.getLogger("mimo_sidecar")

EXIT_DEADLINE_SECONDS = 0.4  # after the transport stops, the process ends within this time
IMPORT_COMMAND = "mimo-sidecar import"
INSPECT_COMMAND = "mimo-sidecar inspect"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mimo-sidecar",
        description="Context-rebuild sidecar: JSON-RPC 2.0 over stdio (Content-Length framing).",
        epilog=f"Also: '{INSPECT_COMMAND} FILE' shows what a rebuild would do to a transcript; "
        f"'{IMPORT_COMMAND} FILE' prints it as session/open params (each has --help).",
    )
    parser.add_argument("--version", action="version", version=f"mimo-sidecar {__version__}")
    parser.add_argument(
        "--stdio", action="store_true", help="accepted and ignored: stdio is the only transport"
    )
    parser.add_argument(
        "--clientProcessId",
        dest="client_process_id",
        type=process_id,
        metavar="PID",
        help="exit when this process is gone (also taken from initialize.processId)",
    )
    parser.add_argument(
        "--max-frame-bytes",
        dest="max_frame_bytes",
        type=frame_size,
        default=DEFAULT_MAX_FRAME_BYTES,
        metavar="N",
        help=f"refuse frames over N bytes, answered -32600 and skipped (default {DEFAULT_MAX_FRAME_BYTES})",
    )
    parser.add_argument("--log-file", metavar="PATH", help="append logs to this file instead of stderr")
    parser.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=LEVELS,
        metavar="LEVEL",
        help=f"one of {', '.join(LEVELS)} (default INFO)",
    )
    return parser


def process_id(text: str) -> int:
    """A process id the platform can have (argparse turns the error into a usage line, exit 2)."""
    from ..wire.lifecycle import PROCESS_ID_MAX  # here: pydantic is not loaded for --version

    pid = _integer(text, "a process id (an integer)")
    if not 0 <= pid <= PROCESS_ID_MAX:
        raise argparse.ArgumentTypeError(f"{pid} is not a process id of this platform (0..{PROCESS_ID_MAX})")
    return pid


def frame_size(text: str) -> int:
    size = _integer(text, "a number of bytes")
    if size < 1:
        raise argparse.ArgumentTypeError(f"{size}: a frame limit must be at least 1 byte")
    return size


def _integer(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def allow_nesting_of_frames() -> None:
    """Frames may nest `MAX_NESTING` (1024) levels: host data that deep is estimated (a recursive
    JSON.stringify) and written back (the stdlib encoder, when orjson stops at 254 levels) on a
    stack that already holds the event loop's frames, over Python's default limit of 1000."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * MAX_NESTING))


def start_server() -> tuple[SidecarServer, Callable[[int], None]]:
    """Import the server (pygls, lsprotocol's ~600 classes, the wire models) and build it, then
    collect once and freeze what is left. The import makes a few hundred thousand objects that live
    as long as the process: frozen, no later collection (nor the one at exit) walks them again.
    The collector stays on during the import: with it off, the import's cyclic garbage piled up
    among those objects, and the holes it left once freed raised the worst case's peak RSS
    (benchmarks: open, a whole-view build in every format, a rebuild) by 9 MiB at 5,000 messages,
    over its target; the start costs the same either way."""
    from ..rpc.parent_watch import hard_exit
    from ..rpc.server import build_server

    server = build_server()
    gc.collect()  # the import's garbage, before it would be frozen with the rest
    gc.freeze()
    return server, hard_exit


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["import"]:
        from .import_command import main as import_main

        return import_main(argv[1:])
    if argv[:1] == ["inspect"]:
        from .inspect_command import main as inspect_main

        return inspect_main(argv[1:])
    args, unknown = build_parser().parse_known_args(argv)
    allow_nesting_of_frames()
    fix_malloc_thresholds()
    rpc_in, rpc_out = claim_stdio()
    try:
        configure_logging(args.log_level, args.log_file)
    except OSError as exc:
        sys.stderr.write(f"mimo-sidecar: cannot open log file {args.log_file!r}: {exc}\n")
        return 2
    if unknown:
        logger.warning("ignoring unknown arguments: %s", " ".join(unknown))

    server, hard_exit = start_server()
    server.max_frame_bytes = args.max_frame_bytes
    if args.client_process_id:
        server.parent_watcher.watch(args.client_process_id, "--clientProcessId")
    logger.info("mimo-sidecar %s serving on stdio", __version__)
    profile_path = os.environ.get("MIMO_SIDECAR_PROFILE")  # developers: cProfile stats of the run
    profiler = cProfile.Profile() if profile_path else None
    if profiler is not None:
        profiler.enable()
    server.start_io(rpc_in, rpc_out)
    if profiler is not None and profile_path:
        profiler.disable()
        profiler.dump_stats(profile_path)
    code = server.exit_code
    # Always a line on stderr saying why the process ends; a warning unless shutdown completed.
    logger.log(
        logging.INFO if code == 0 else logging.WARNING,
        "exiting with code %d (%s)",
        code,
        server.stop_reason or "stopped",
    )
    # Threads still running a handler (asyncio.to_thread) would delay interpreter exit: bound it.
    deadline = threading.Timer(EXIT_DEADLINE_SECONDS, hard_exit, (code,))
    deadline.daemon = True
    deadline.start()
    return code
