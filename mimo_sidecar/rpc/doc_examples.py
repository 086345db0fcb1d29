"""protocol.md's examples, recorded from a real run of the sidecar.

The run: a server with every real handler (`build_server`) serving its real transport (`start_io`:
framing, codec, protocol) over in-memory pipes, driven by a client that sends the registry's
example params (`wire.registry`) in the order of `play_story`, and answers the sidecar's own requests as
a client must. Every answer and every message the sidecar sends is recorded; nothing of it is
written by hand.

What would vary from run to run is fixed at its source: the service's clock is a constant, the ID
minter draws its random characters from a seeded generator, progress tokens count from 1. What
depends on the machine is normalised in the transcript: the temporary memory root is shown as
`DOC_MEMORY_ROOT` (a path of the same length, so every token estimate is the one that path gives),
the recorder's process ID as 4242, the UUIDs pygls gives its own requests as fixed UUIDs, and
the measured length of a writer wait (`wait.waitedMs`, real elapsed time) as `DOC_WAITED_MS`.

    python -m mimo_sidecar.rpc.doc_examples [PATH]           # `make docs`: record, rewrite protocol.md
                                                             # and write schemas/ beside it
    python -m mimo_sidecar.rpc.doc_examples --check [PATH]   # report differences, change nothing

tests/unit/test_protocol_doc.py records again and fails when protocol.md shows anything else.
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import shutil
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ..core.session.ids import IdMinter
from ..transport.framing import FrameReader, frame
from ..transport.jsonrpc_codec import dumps, loads
from ..wire import protocol_doc
from ..wire.protocol_doc import Examples, Exchange
from ..wire.registry import NO_PARAMS, REGISTRY
from .server import SidecarServer, build_server

DOC_MEMORY_ROOT = "/home/dev/.local/share/mimocode/memory"
DOC_PROCESS_ID = 4242
DOC_WAITED_MS = 3  # a writer that settles a few milliseconds into the wait
CLOCK_MS = 1_760_000_009_000  # the service's "now" in the recording
SEED = 20_251_201

SID = REGISTRY["session/open"].params_example["sessionId"]
LATEST = REGISTRY["session/sync"].params_example["upsertMessages"][0]["info"]["id"]

# The session's memory files (the host writes them; the checkpoint writer keeps checkpoint.md).
MEMORY_FILES = {
    f"sessions/{SID}/checkpoint.md": (
        "# Session checkpoint\nTopic: failing build\n\n## §1 Active intent\n\n"
        "Make `npm run build` pass again without changing the public API.\n\n"
        "## §2 State\n\n- The build fails in src/app.ts (type error).\n"
    ),
    "projects/prj_web/MEMORY.md": "# Project memory\n\n- Builds run with `npm run build`.\n",
}

# Error answers shown in protocol.md's Errors section: (method, params) sent after initialize.
ERROR_EXAMPLES: list[tuple[str, Any]] = [
    ("no/such-method", {}),
    (
        "session/sync",
        {"sessionId": SID, "upsertParts": [{"messageId": LATEST, "part": {"type": "text", "text": "x"}}]},
    ),
    ("session/get", {"sessionId": "ses_unknown"}),
]


class _Client:
    """The recording client: writes frames to the server, reads what it sends back, logs both."""

    def __init__(self, to_server: IO[bytes], from_server: IO[bytes]) -> None:
        self._out = to_server
        self._reader = FrameReader(from_server)
        self._next_id = 0
        self.log: list[tuple[str, Any]] = []  # ("sent" | "received", message), in wire order

    def send(self, message: dict[str, Any]) -> None:
        self.log.append(("sent", message))
        self._out.write(frame(dumps(message)))
        self._out.flush()

    def notify(self, method: str, params: Any = NO_PARAMS) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not NO_PARAMS:
            message["params"] = params
        self.send(message)

    def request(self, method: str, params: Any = NO_PARAMS) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not NO_PARAMS:
            message["params"] = params
        self.send(message)
        return self._next_id

    def call(self, method: str, params: Any = NO_PARAMS) -> None:
        self.answers(self.request(method, params))

    def answers(self, *ids: int) -> None:
        """Read until every request in `ids` is answered."""
        waiting = set(ids)

        def answered(message: dict[str, Any]) -> bool:
            if "method" not in message:
                waiting.discard(message.get("id"))
            return not waiting

        self.read_until(answered)

    def read_until(self, done: Callable[[dict[str, Any]], bool]) -> None:
        """Read (answering the sidecar's requests with null) until a message satisfies `done`."""
        while True:
            body = self._reader.read()
            if body is None:
                raise RuntimeError("the sidecar closed its output during the recording")
            message: dict[str, Any] = loads(body)
            self.log.append(("received", message))
            if "method" in message and "id" in message:  # the sidecar's request: a client answers it
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            if done(message):
                return


@contextmanager
def _memory_root() -> Iterator[str]:
    """A temporary memory root whose path is exactly as long as `DOC_MEMORY_ROOT`."""
    base = tempfile.mkdtemp(prefix="mimo-doc-", dir="/tmp" if os.path.isdir("/tmp") else None)
    try:
        pad = len(DOC_MEMORY_ROOT) - len(base) - 1
        if pad < 1:
            raise RuntimeError(f"temporary directory {base!r} is too long to stand for {DOC_MEMORY_ROOT!r}")
        root = os.path.join(base, "m" * pad)
        for name, text in MEMORY_FILES.items():
            path = Path(root, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        yield root
    finally:
        shutil.rmtree(base, ignore_errors=True)


@contextmanager
def _serving(server: SidecarServer) -> Iterator[_Client]:
    c2s_read, c2s_write = os.pipe()
    s2c_read, s2c_write = os.pipe()
    with (
        os.fdopen(c2s_read, "rb") as server_in,
        os.fdopen(s2c_write, "wb") as server_out,
        os.fdopen(c2s_write, "wb") as client_out,
        os.fdopen(s2c_read, "rb") as client_in,
    ):
        thread = threading.Thread(target=server.start_io, args=(server_in, server_out), daemon=True)
        thread.start()
        try:
            yield _Client(client_out, client_in)
        finally:
            client_out.close()  # end of input: the server stops (if `exit` did not stop it already)
            thread.join(10)


def play_story(client: _Client, root: str) -> None:
    """The recorded run: one small session through its life, touching every method of the registry."""
    example = {  # copies (the sentinel NO_PARAMS stays itself)
        name: copy.deepcopy(spec.params_example, {id(NO_PARAMS): NO_PARAMS})
        for name, spec in REGISTRY.items()
    }
    init = example["initialize"]
    init["processId"] = os.getpid()  # never watched: it is the server's own process
    init["initializationOptions"]["memoryRoot"] = root
    client.call("initialize", init)  # + window/logMessage: the unused push cap warns (D6)
    client.notify("initialized", example["initialized"])
    for name in ("session/open", "session/sync", "checkpoint/writerStarted", "checkpoint/writerFinished"):
        client.call(name, example[name])
    for name in ("checkpoint/prepare", "checkpoint/commit"):  # the writer kit: a writer covering A1
        client.call(name, example[name])
    for name in ("session/get", "rebuild/compute", "rebuild/insert", "request/build"):
        client.call(name, example[name])
    for name in ("tools/list", "tools/call"):  # the cleared result of call_1, in full
        client.call(name, example[name])
    for method, params in ERROR_EXAMPLES:
        client.call(method, params)
    # A rebuild that waits for a writer: rebuild/status, window/workDoneProgress/create, $/progress.
    client.call("checkpoint/writerStarted", {"sessionId": SID, "watermark": LATEST})
    insert_id = client.request("rebuild/insert", {"sessionId": SID, "reason": "overflow"})
    client.read_until(lambda m: m.get("method") == "$/progress")  # the wait has begun
    finished_id = client.request("checkpoint/writerFinished", {"sessionId": SID, "outcome": "success"})
    client.answers(insert_id, finished_id)
    client.notify("$/cancelRequest", example["$/cancelRequest"])  # nothing to cancel: no answer
    client.call("session/close", example["session/close"])
    client.call("sidecar/configure", example["sidecar/configure"])
    client.call("shutdown", example["shutdown"])
    client.notify("exit", example["exit"])


def record() -> list[tuple[str, Any]]:
    """Run `play_story` against a fresh sidecar; the transcript, normalised."""
    rng = random.Random(SEED)
    server = build_server(clock=lambda: CLOCK_MS, minter=IdMinter(random_bytes=rng.randbytes))
    with _memory_root() as root, _serving(server) as client:
        play_story(client, root)
    return _normalised(client.log, root)


def _normalised(log: list[tuple[str, Any]], root: str) -> list[tuple[str, Any]]:
    server_ids: dict[str, str] = {}

    def fix(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(root, DOC_MEMORY_ROOT)
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            fixed = {k: fix(v) for k, v in value.items()}
            if "waitedMs" in fixed and "boundMs" in fixed:  # a WaitInfo: elapsed time is the machine's
                fixed["waitedMs"] = DOC_WAITED_MS
            return fixed
        return value

    out = []
    for direction, message in log:
        message = fix(message)
        if message.get("method") == "initialize":
            message["params"]["processId"] = DOC_PROCESS_ID
        sidecar_request = direction == "received" and "method" in message and "id" in message
        client_answer = direction == "sent" and "method" not in message
        if sidecar_request or client_answer:  # pygls's uuid4 request IDs
            key = message["id"]
            message["id"] = server_ids.setdefault(key, str(uuid.UUID(int=len(server_ids) + 1)))
        out.append((direction, message))
    return out


def examples(transcript: list[tuple[str, Any]]) -> Examples:
    """The example of every registered method (its first occurrence) and the error examples."""
    found: dict[str, list[Exchange]] = {}
    answers = {m["id"]: m for _, m in transcript if "method" not in m}
    for direction, message in transcript:
        method = message.get("method")
        if method not in REGISTRY or f"example {method}" in found:
            continue
        if "id" not in message:
            found[f"example {method}"] = [("Notification", message)]
        elif direction == "sent":
            found[f"example {method}"] = [("Request", message), ("Response", answers[message["id"]])]
        else:
            found[f"example {method}"] = [
                ("Request (sidecar → client)", message),
                ("Response (client → sidecar)", answers[message["id"]]),
            ]
    errors: list[Exchange] = []
    for method, params in ERROR_EXAMPLES:
        request = next(
            m
            for d, m in transcript
            if d == "sent" and m.get("method") == method and m.get("params") == params
        )
        errors += [("Request", request), ("Response", answers[request["id"]])]
    found["error examples"] = errors
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("path", nargs="?", type=Path, default=protocol_doc.DEFAULT_PATH)
    parser.add_argument("--check", action="store_true", help="report differences, change nothing")
    args = parser.parse_args(argv)
    recorded = examples(record())
    text = args.path.read_text(encoding="utf-8")
    schemas = args.path.parent / protocol_doc.SCHEMA_DIR.name
    if args.check:
        problems = protocol_doc.check(text, recorded) + protocol_doc.check_schema_files(schemas)
    else:
        new, problems = protocol_doc.render(text, recorded)
        if new != text:
            args.path.write_text(new, encoding="utf-8")
            sys.stderr.write(f"updated {args.path}\n")
        for name in protocol_doc.write_schema_files(schemas):
            sys.stderr.write(f"updated {schemas / name}\n")
    for p in problems:
        sys.stderr.write(f"protocol.md: {p}\n")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
