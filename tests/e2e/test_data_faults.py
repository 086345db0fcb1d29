"""Data faults over stdio: what a hostile or buggy host's data can do to the real process.

One sidecar serves the module (its client answers work-done progress requests, as an editor does).

- Wrongly typed host data (the fields an attack found, and a sample of every mutation of `tests.wrong_types`)
  is refused with -32602 at its path and changes nothing; what is accepted never makes a later
  request answer -32603.
- A number beyond the double range (`1e400`) is refused wherever a wire model takes a number.
- A chain of 3,000 forked sessions is read to its root.
- Config globs that made the old regex backtrack are matched at once; numbers in config are bounded.
- Closing sessions releases everything the process held for them (`test/retained`).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.rpc import errors
from tests.json_paths import replaced
from tests.wrong_types import FOUND_CASES, MODEL, dotted, later_calls, mutations, sessions

from .jshost import JsHostClient, Raw

pytestmark = pytest.mark.e2e

DOCUMENTED = {spec.code for spec in errors.ERRORS} - {errors.INTERNAL_ERROR.code}
CONFIG = {
    "checkpoint": {"writer_wait_ms": {"with_watermark": 0, "without_watermark": 0}, "inflation_guard": False}
}
SHAPES = sessions()
INLINE = SHAPES["inline"]


class EditorClient(JsHostClient):
    """A host that advertises work-done progress and answers every request the sidecar sends."""

    baseline: dict[str, int]  # `test/retained` right after initialize
    root: Path  # its memory root
    decline = False  # answer the sidecar's requests with an error, as vscode-jsonrpc does without a handler

    def on_request(self, message: dict[str, Any]) -> None:  # window/workDoneProgress/create
        answer = {"error": {"code": -32601, "message": "no"}} if self.decline else {"result": None}
        self.send({"jsonrpc": "2.0", "id": message["id"], **answer})


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EditorClient]:
    root = tmp_path_factory.mktemp("memory")
    with EditorClient() as client:
        options = {"memoryRoot": str(root), "config": CONFIG}
        capabilities = {"window": {"workDoneProgress": True}}
        reply = client.call(
            "initialize", {"processId": None, "capabilities": capabilities, "initializationOptions": options}
        )
        assert "result" in reply, reply
        client.notify("initialized", {})
        client.baseline = client.call("test/retained", {})["result"]
        client.root = root
        yield client
        assert not client.violations, client.violations


def on_wire(value: Any) -> Any:
    """`value` as a host writes it: an infinity as `1e400`, which the sidecar reads back as one."""
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return Raw("1e400" if value > 0 else "-1e400")
    if isinstance(value, dict):
        return {k: on_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [on_wire(v) for v in value]
    return value


def error_of(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" in reply, reply
    return dict(reply["error"])


def fields_of(reply: dict[str, Any]) -> list[str]:
    err = error_of(reply)
    assert err["code"] == -32602, err
    return [item["field"] for item in err["data"]["errors"]]


def assert_documented(method: str, reply: dict[str, Any]) -> None:
    if "error" in reply:
        assert reply["error"]["code"] in DOCUMENTED, (method, reply["error"])


# -- wrongly typed host data ------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "value"), FOUND_CASES, ids=[dotted(p) for p, _ in FOUND_CASES])
def test_the_wrong_types_an_attack_found_are_refused_at_their_path(
    wire: EditorClient, path: Any, value: Any
) -> None:
    sid = "typed-" + dotted(path)
    params = on_wire(replaced(INLINE, path, value))
    assert fields_of(wire.call("session/open", {"sessionId": sid, **params})) == [dotted(path)]
    assert error_of(wire.call("session/get", {"sessionId": sid}))["code"] == 1001
    for method, call in later_calls(sid):  # nothing was kept: each says so, in its documented way
        assert error_of(wire.call(method, call))["code"] == 1001


def test_a_sample_of_every_mutation_never_makes_a_request_fail(wire: EditorClient) -> None:
    """Every 9th mutation of every shape (the in-process test runs them all): refused at its path,
    or accepted and then answered by every later request with a result or a documented error."""
    accepted = 0
    for shape, params in sorted(SHAPES.items()):
        for n, (path, _new, mutated) in enumerate(mutations(params)):
            if n % 9:
                continue
            sid = f"sample-{shape}-{n}"
            reply = wire.call("session/open", {"sessionId": sid, **on_wire(mutated)})
            if "error" in reply:
                assert all(f == dotted(path) or f.startswith(dotted(path) + ".") for f in fields_of(reply))
                continue
            accepted += 1
            for method, call in later_calls(sid):
                assert_documented(method, wire.call(method, call))
            wire.call("session/close", {"sessionId": sid})
    assert accepted


def test_a_refused_sync_changes_nothing(wire: EditorClient) -> None:
    wire.call("session/open", {"sessionId": "sync-typed", **INLINE})
    before = wire.call("session/get", {"sessionId": "sync-typed"})["result"]
    bad_text = {"messageId": "m3", "part": {"id": "px", "type": "text", "text": ["not", "a", "string"]}}
    fresh = {"info": {"id": "m5", "role": "user"}, "parts": [{"type": "text", "text": "fine"}]}
    reply = wire.call(
        "session/sync",
        {"sessionId": "sync-typed", "baseRevision": 1, "upsertMessages": [fresh], "upsertParts": [bad_text]},
    )
    assert fields_of(reply) == ["upsertParts.0.part.text"]
    assert wire.call("session/get", {"sessionId": "sync-typed"})["result"] == before  # m5 not added either


INFINITY = Raw("1e400")
NON_FINITE = [
    ("session/open", {"sessionId": "inf-parent", "parent": INFINITY}, "parent"),
    ("session/sync", {"sessionId": "inf", "baseRevision": INFINITY, "tasks": []}, "baseRevision"),
    (
        "checkpoint/writerFinished",
        {"sessionId": "inf", "outcome": "failure", "retryable": INFINITY},
        "retryable",
    ),
    ("request/build", {"sessionId": "inf", "format": "anthropic", "target": INFINITY}, "target"),
    ("request/build", {"sessionId": "inf", "format": "anthropic", "cache": INFINITY}, "cache"),
    ("rebuild/compute", {"sessionId": "inf", "usage": INFINITY}, "usage"),
    ("rebuild/compute", {"sessionId": "inf", "usage": {"input": INFINITY}}, "usage.input"),
    ("rebuild/compute", {"sessionId": "inf", "model": {"contextWindow": INFINITY}}, "model.contextWindow"),
]


@pytest.mark.parametrize(("method", "params", "field"), NON_FINITE, ids=[f for *_, f in NON_FINITE])
def test_a_number_beyond_the_double_range_is_refused_where_a_number_is_taken(
    wire: EditorClient, method: str, params: dict[str, Any], field: str
) -> None:
    """`1e400` was read as null, so `baseRevision: 1e400` applied a batch unconditionally
    and `retryable`, `target`, `cache`, `usage`, `parent` were taken as absent."""
    wire.call("session/open", {"sessionId": "inf", **INLINE})  # once for the module (then: already open)
    before = wire.call("session/get", {"sessionId": "inf"})["result"]
    assert fields_of(wire.call(method, params)) == [field]
    assert wire.call("session/get", {"sessionId": "inf"})["result"] == before


def test_infinities_in_host_data_are_refused_where_declared_and_written_back_as_null_elsewhere(
    wire: EditorClient,
) -> None:
    declared = replaced(INLINE, ("messages", 1, "info", "tokens", "input"), INFINITY)
    reply = wire.call("session/open", {"sessionId": "inf-data", **declared})
    assert fields_of(reply) == ["messages.1.info.tokens.input"]
    free = replaced(INLINE, ("messages", 1, "parts", 1, "state", "input", "limit"), INFINITY)
    assert "result" in wire.call("session/open", {"sessionId": "inf-data", **free})
    built = wire.call("request/build", {"sessionId": "inf-data"})["result"]
    calls = [
        p
        for m in built["messages"]
        for p in m["content"]
        if isinstance(p, dict) and p.get("toolCallId") == "c1"
    ]
    assert calls and calls[0]["input"] == {"filePath": "a.ts", "limit": None}


# -- deep parent chains -----------------------------------------------------------------------------


def texts_of(value: Any) -> list[str]:
    if isinstance(value, dict):
        own = [value["text"]] if isinstance(value.get("text"), str) else []
        return own + [t for k, v in value.items() if k != "text" for t in texts_of(v)]
    if isinstance(value, list):
        return [t for v in value for t in texts_of(v)]
    return []


def test_a_chain_of_3000_forks_is_read_to_its_root(wire: EditorClient) -> None:
    """Found attacking the sidecar: compute, build and prepare answered -32603 past a few hundred forks."""
    ids = []
    for n in range(3000):  # pipelined: every open sent before any answer is read
        message = {
            "info": {"id": f"f{n}", "role": "user", "time": {"created": n}},
            "parts": [{"type": "text", "text": f"fork {n}"}],
        }
        params: dict[str, Any] = {"sessionId": f"fork{n}", "messages": [message]}
        if n:
            params["parent"] = {"sessionId": f"fork{n - 1}", "watermark": f"f{n - 1}"}
        ids.append(wire.request("session/open", params))
    for msg_id in ids:
        assert "result" in wire.response(msg_id, timeout=60)
    last = "fork2999"
    built = wire.call("request/build", {"sessionId": last}, timeout=30)["result"]
    said = [t for t in texts_of(built["messages"]) if t.startswith("fork ")]
    assert said == [f"fork {n}" for n in range(3000)]  # every fork's message, root first
    assert "result" in wire.call("rebuild/compute", {"sessionId": last, "model": MODEL}, timeout=30)
    assert "result" in wire.call("checkpoint/prepare", {"sessionId": last}, timeout=30)


# -- config -----------------------------------------------------------------------------------------


def test_config_globs_are_matched_without_backtracking_and_numbers_are_bounded(wire: EditorClient) -> None:
    """`"********/gpt*"` cost seconds per trigger and 5,000 `*` stopped every answer for
    over a minute; `max_context: "1" × 5000` answered -32603."""
    globs = {"********/gpt*": "150K", "*" * 5000 + "/gpt*x": 1000, "anthropic/*": "100K"}
    assert "result" in wire.call("sidecar/configure", {"config": {"compaction": {"max_context": globs}}})
    wire.call("session/open", {"sessionId": "globs", **INLINE})
    model = {**MODEL, "providerId": "openai", "modelId": "gpt-" + "5" * 300}
    for _ in range(20):
        assert "result" in wire.call("rebuild/compute", {"sessionId": "globs", "model": model}, timeout=5)
    for bad, field in [
        ("1" * 5000, "config.compaction.max_context"),
        ({"x/*": 2**60}, "config.compaction.max_context.x/*"),
    ]:
        reply = wire.call("sidecar/configure", {"config": {"compaction": {"max_context": bad}}})
        assert fields_of(reply) == [field]
    assert "result" in wire.call("sidecar/configure", {"config": CONFIG})


# -- confinement ------------------------------------------------------------------------------------

SECRET = "outside the memory root: never read, never written"


def renameat2() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn


@pytest.mark.skipif(renameat2() is None, reason="no renameat2 in this C library (Linux only)")
def test_a_session_directory_exchanged_with_a_link_to_outside_never_leads_out(
    wire: EditorClient, tmp_path: Path
) -> None:
    """Before the walk, this race overwrote `outside/checkpoint.md` within a second, put outside
    content in previews, left temporary files outside and answered -32603 (a `realpath` EINVAL)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("checkpoint.md", "notes.md"):
        (outside / name).write_text(SECRET)
    sid = "swapped"
    assert "result" in wire.call("session/open", {"sessionId": sid, **INLINE, "createCheckpoint": True})
    sessions = wire.root / "sessions"
    (sessions / "swapped-link").symlink_to(outside, target_is_directory=True)
    a, b = bytes(sessions / sid), bytes(sessions / "swapped-link")
    exchange, stop, swaps = renameat2(), threading.Event(), [0]

    def swap() -> None:
        while not stop.is_set():
            swaps[0] += exchange(-100, a, -100, b, 2) == 0  # AT_FDCWD, RENAME_EXCHANGE

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        for n in range(60):
            wire.call("checkpoint/writerStarted", {"sessionId": sid})
            commit = {"sessionId": sid, "content": f"# Session checkpoint\n\nTopic: commit {n}\n"}
            assert_documented("checkpoint/commit", reply := wire.call("checkpoint/commit", commit))
            preview = wire.call(
                "rebuild/compute", {"sessionId": sid, "model": MODEL, "preview": True, "includeText": True}
            )
            assert "result" in preview and SECRET not in str(preview["result"])
            inserted = wire.call("rebuild/insert", {"sessionId": sid, "reason": "manual"})
            assert_documented("rebuild/insert", inserted)
            assert SECRET not in str(inserted) and SECRET not in str(reply)
    finally:
        stop.set()
        swapper.join()
    if os.path.islink(a):
        exchange(-100, a, -100, b, 2)
    assert swaps[0] > 50, swaps
    assert sorted(os.listdir(outside)) == ["checkpoint.md", "notes.md"]  # no temporary file either
    assert all((outside / name).read_text() == SECRET for name in ("checkpoint.md", "notes.md"))
    wire.call("session/close", {"sessionId": sid})


# -- closing releases everything ---------------------------------------------------------------------


def test_closed_sessions_leave_nothing_behind(wire: EditorClient) -> None:
    """RSS once grew 1.8 KB per closed session. Sessions opened, written (commit), rebuilt with
    progress shown, built and closed; then nothing of them is held (the benchmark's RSS row runs
    10,000 such cycles)."""
    for n in range(40):
        sid = f"cycle{n}"
        wire.decline = bool(n % 2)  # every other client refuses to show progress
        wire.call("session/open", {"sessionId": sid, **INLINE, "createCheckpoint": True})
        wire.call("checkpoint/writerStarted", {"sessionId": sid})
        wire.call("checkpoint/commit", {"sessionId": sid, "content": "# Session checkpoint\n\nTopic: x\n"})
        for reason in ("auto", "manual"):
            assert_documented(
                "rebuild/insert", wire.call("rebuild/insert", {"sessionId": sid, "reason": reason})
            )
        wire.call("request/build", {"sessionId": sid, "format": "anthropic"})
        assert "result" in wire.call("session/close", {"sessionId": sid})
    wire.decline = False
    # Close what the module's other tests left open, then nothing may remain.
    closes = {
        sid: wire.request("session/close", {"sessionId": sid})
        for sid in ("sync-typed", "inf", "inf-data", "globs", *(f"fork{n}" for n in range(3000)))
    }
    for sid, msg_id in closes.items():
        answer = wire.response(msg_id, timeout=60)
        assert "result" in answer or answer["error"]["data"]["name"] == "SessionNotFound", (sid, answer)
    retained = wire.call("test/retained", {})["result"]
    assert retained == wire.baseline, retained  # no session, object, token or future of theirs
    assert all(n == 0 for key, n in retained.items() if key != "pendingFutures"), retained
