"""Reliability over stdio: no sequence of bytes a host writes makes the sidecar stop answering the
well-formed requests that follow, and nothing waits without a bound or keeps memory for good.

One sidecar serves the module (test hooks on, a 16 MiB frame limit so that an oversized frame is
cheap to send); the tests that end a process spawn their own.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .rawclient import RawClient, encode, hook_env, sidecar_command

pytestmark = pytest.mark.e2e

MAX_FRAME = 16 * 1024 * 1024
BODY = b'{"jsonrpc":"2.0","id":"bad","method":"session/get","params":{"sessionId":"s"}}'
# Each kind of malformed frame a host can write, followed in the tests by three good requests.
BAD_FRAMES = {
    "non-numeric length": b"Content-Length: abc\r\n\r\n" + BODY,
    "negative length": b"Content-Length: -1\r\n\r\n" + BODY,
    "signed length": b"Content-Length: +2\r\n\r\n" + BODY,
    "fractional length": b"Content-Length: 1.5\r\n\r\n" + BODY,
    "missing length": b"Content-Type: application/json\r\n\r\n" + BODY,
    "duplicated length": b"Content-Length: %d\r\nContent-Length: 9\r\n\r\n%s" % (len(BODY), BODY),
    "short body": b"Content-Length: 10\r\n\r\n" + BODY,
    "long body": b"Content-Length: %d\r\n\r\n%s" % (len(BODY) + 60, BODY),
    "raw JSON, no header": BODY,
    "raw JSON and a newline": BODY + b"\r\n",
    "garbage line": b"\x00\xff hello\r\n\r\n",
    "header glued to garbage": b"leftover-bytes",
    "body not JSON": b"Content-Length: 5\r\n\r\nhello",
}
WHAT_IS_SAID = {  # the words of the -32700 message for each kind (the host is told what was wrong)
    "non-numeric length": "Content-Length 'abc' is not a non-negative decimal integer",
    "negative length": "Content-Length '-1' is not a non-negative decimal integer",
    "signed length": "Content-Length '+2' is not a non-negative decimal integer",
    "fractional length": "Content-Length '1.5' is not a non-negative decimal integer",
    "missing length": "a header block without Content-Length",
    "duplicated length": "Content-Length given more than once, with different values",
    "raw JSON, no header": "JSON without a Content-Length header before it",
    "raw JSON and a newline": "JSON without a Content-Length header before it",
    "garbage line": "not a header line",
}


@pytest.fixture(scope="module")
def memory_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("memory")


@pytest.fixture(scope="module")
def raw(memory_root: Path) -> Iterator[RawClient]:
    with RawClient(["--max-frame-bytes", str(MAX_FRAME)]) as client:
        capabilities = {"window": {"workDoneProgress": True}}
        assert "result" in client.initialize(memory_root, capabilities=capabilities)
        yield client
        assert client.violations == [], client.violations


def message(mid: str, sid: str = "s") -> dict[str, Any]:
    return {
        "info": {"id": mid, "sessionID": sid, "role": "user", "time": {"created": 1000}},
        "parts": [{"id": f"{mid}-p", "type": "text", "messageID": mid, "text": "hello"}],
    }


def good_requests(raw: RawClient, tag: str) -> list[Any]:
    """Three well-formed requests (written in one go, as a host would) and their ids."""
    ids = [f"{tag}-{n}" for n in range(3)]
    raw.send_raw(
        b"".join(
            encode({"jsonrpc": "2.0", "id": i, "method": "session/get", "params": {"sessionId": "nope"}})
            for i in ids
        )
    )
    return ids


def answered(raw: RawClient, ids: list[Any]) -> None:
    for i in ids:
        reply = raw.response(i, timeout=10)
        assert reply["error"]["code"] == 1001, reply  # session/get of an unknown session: answered


def logged(raw: RawClient, text: str, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while text not in raw.stderr_text():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# -- framing -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(BAD_FRAMES))
def test_a_malformed_frame_is_answered_and_the_next_three_are_served(raw: RawClient, kind: str) -> None:
    before = len(raw.null_id_errors)
    raw.send_raw(BAD_FRAMES[kind])
    answered(raw, good_requests(raw, kind))
    errors = raw.null_id_errors[before:]
    assert errors, f"{kind}: no error answered for the bad frame"
    assert all(e["code"] == -32700 and e["data"]["name"] == "ParseError" for e in errors), errors
    if kind in WHAT_IS_SAID:
        assert errors == [errors[0]] and WHAT_IS_SAID[kind] in errors[0]["message"], errors


def test_several_bad_frames_in_a_row_then_good_ones(raw: RawClient) -> None:
    raw.send_raw(b"".join(BAD_FRAMES.values()))
    answered(raw, good_requests(raw, "after-all"))


def test_a_frame_swallowed_by_a_too_long_length_is_still_served(raw: RawClient) -> None:
    """The declared length covers the next frame's header: the body fails to parse, and the reader
    finds that frame inside it."""
    swallowed = encode(
        {"jsonrpc": "2.0", "id": "inside", "method": "session/get", "params": {"sessionId": "x"}}
    )
    raw.send_raw(b"Content-Length: %d\r\n\r\n%s" % (len(BODY) + 30, BODY) + swallowed)
    assert raw.response("inside")["error"]["code"] == 1001


def test_an_oversized_frame_is_refused_and_skipped_in_bounded_memory(raw: RawClient) -> None:
    size = 4 * MAX_FRAME
    peak_before = peak_rss(raw.proc.pid)
    before = len(raw.null_id_errors)
    head = b'{"jsonrpc":"2.0","id":"huge","method":"session/get","params":{"sessionId":"'
    raw.send_raw(b"Content-Length: %d\r\n\r\n" % size + head)
    chunk = b"x" * (1 << 20)
    for _ in range(size // len(chunk) - 1):
        raw.send_raw(chunk)
    raw.send_raw(b"x" * (len(chunk) - len(head)))
    answered(raw, good_requests(raw, "after-huge"))
    (error,) = raw.null_id_errors[before:]
    assert error["code"] == -32600 and str(MAX_FRAME) in error["message"], error
    assert error["data"] == {"name": "InvalidRequest", "contentLength": size, "maxFrameBytes": MAX_FRAME}
    assert "huge" not in str(raw._pending)  # the frame was never read as a request
    # The body was dropped a chunk at a time: the process never held it (4 x the limit, 64 MiB).
    assert peak_rss(raw.proc.pid) - peak_before < MAX_FRAME, "the skipped body was held in memory"


def test_a_large_frame_does_not_hold_up_the_requests_behind_it(raw: RawClient) -> None:
    """A frame over 8 MiB is parsed off the event loop: a small request written right after it is
    answered first (the big one is refused for its unknown key once parsed)."""
    pad = [{"type": "text", "text": "x" * 200, "n": n} for n in range(50_000)]
    big = {"jsonrpc": "2.0", "id": "big", "method": "session/get", "params": {"sessionId": "s", "pad": pad}}
    small = {"jsonrpc": "2.0", "id": "small", "method": "session/get", "params": {"sessionId": "s"}}
    body = encode(big)
    assert len(body) > 8 * 1024 * 1024
    raw.send_raw(body + encode(small))
    order = []
    deadline = time.monotonic() + 20
    while len(order) < 2 and time.monotonic() < deadline:
        message = raw.messages.get(timeout=20)
        if message.get("id") in ("big", "small"):
            order.append(message["id"])
            raw._pending[message["id"]] = message
    assert order == ["small", "big"]
    assert raw.response("big")["error"]["message"].startswith("session/get: invalid params: pad")


# -- lifecycle edges -------------------------------------------------------------------------------
def test_request_methods_sent_as_notifications_change_nothing_and_keep_nothing(raw: RawClient) -> None:
    assert (
        raw.call("session/open", {"sessionId": "s", "messages": [message("m1")]})["result"]["revision"] == 1
    )
    before = raw.call("session/get", {"sessionId": "s"})["result"]
    raw.notify("session/sync", {"sessionId": "s", "upsertMessages": [message("m2")]})
    raw.notify("session/open", {"sessionId": "ghost"})
    raw.notify("checkpoint/writerStarted", {"sessionId": "s", "watermark": "m1"})
    raw.notify("session/close", {"sessionId": "s"})
    raw.send_raw(
        b"".join(
            encode({"jsonrpc": "2.0", "method": "request/build", "params": {"sessionId": "s"}})
            for _ in range(3000)
        )
    )
    assert raw.call("session/get", {"sessionId": "s"})["result"] == before
    assert raw.call("session/get", {"sessionId": "ghost"})["error"]["code"] == 1001
    assert raw.call("test/pending", {})["result"]["futures"] == 0
    assert logged(raw, "ignoring session/sync sent without an id: it is a request, it needs one")


def test_async_notifications_keep_no_future(raw: RawClient) -> None:
    """pygls kept the future of every async notification handler for good."""
    raw.send_raw(
        b"".join(encode({"jsonrpc": "2.0", "method": "test/fail", "params": {}}) for _ in range(200))
    )
    assert raw.call("session/get", {"sessionId": "nope"})["error"]["code"] == 1001
    deadline = time.monotonic() + 5
    while raw.call("test/pending", {})["result"]["futures"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert raw.call("test/pending", {})["result"] == {"futures": 0, "resultTypes": 0}


@pytest.mark.parametrize(
    "msg_id", [True, False, 7.0, 2**63, -(2**63) - 1, 1e300, None, [1], {"n": 1}], ids=repr
)
def test_ids_that_are_not_strings_or_64_bit_integers_are_refused(raw: RawClient, msg_id: Any) -> None:
    before = len(raw.null_id_errors)
    raw.send({"jsonrpc": "2.0", "id": msg_id, "method": "session/get", "params": {"sessionId": "nope"}})
    answered(raw, good_requests(raw, f"id-{msg_id!r}"))
    (error,) = raw.null_id_errors[before:]
    assert error["code"] == -32600
    assert error["message"] == "invalid request: id must be a string or an integer within 64 bits"


@pytest.mark.parametrize("msg_id", [1, -(2**63), 2**63 - 1, "1", ""])
def test_ids_within_the_rules_are_answered_as_sent(raw: RawClient, msg_id: Any) -> None:
    raw.send({"jsonrpc": "2.0", "id": msg_id, "method": "session/get", "params": {"sessionId": "nope"}})
    reply = raw.response(msg_id)
    assert reply["error"]["code"] == 1001 and type(reply["id"]) is type(msg_id)


def test_an_unanswered_progress_request_does_not_hold_the_insert(raw: RawClient) -> None:
    """The client advertised workDoneProgress and never answers window/workDoneProgress/create:
    the inserts answer at once, and the request is forgotten after its bound."""
    raw.call("test/progressBound", {"seconds": 0.5})
    raw.call("session/open", {"sessionId": "p", "messages": [message("p1", "p")]})
    for _ in range(2):  # the second insert must not queue behind the first
        reply = raw.call("rebuild/insert", {"sessionId": "p", "reason": "manual"}, timeout=5)
        assert reply["result"]["outcome"] == "no-checkpoint", reply
    creates = [n for n in raw.notifications if n.get("method") == "window/workDoneProgress/create"]
    assert len(creates) >= 1 and all("id" in n for n in creates)
    assert logged(raw, "did not answer window/workDoneProgress/create within 0.5 s")
    assert raw.call("test/pending", {})["result"] == {"futures": 0, "resultTypes": 0}
    raw.call("rebuild/insert", {"sessionId": "p", "reason": "manual"})  # no longer asked
    assert len([n for n in raw.notifications if n.get("method") == "window/workDoneProgress/create"]) == len(
        creates
    )


def test_process_ids_outside_the_platform_are_refused_and_every_exit_says_why(memory_root: Path) -> None:
    """One fresh process (spawning costs seconds): bad process ids at initialize, then a 1 GiB
    header, which once ended the process without a word, then end of input."""
    options = {"memoryRoot": str(memory_root)}
    with RawClient() as c:
        for pid in (2**31, -1, 2**64):
            reply = c.call(
                "initialize", {"processId": pid, "capabilities": {}, "initializationOptions": options}
            )
            error = reply.get("error", {})
            assert error.get("code") == -32602, reply
            assert error["message"].startswith("initialize: invalid params: processId"), reply
        assert "result" in c.initialize(memory_root)  # a retry with a good one works
        c.send_raw(b"Content-Length: 1073741824\r\n\r\n{")
        assert c.response(None)["error"]["code"] == -32600
        c.close_stdin()
        assert c.wait(10) == 1
        assert logged_in(c, "exiting with code 1 (end of input)")


def test_process_ids_outside_the_platform_are_refused_on_the_command_line() -> None:
    for pid in ("2147483648", "-5", "abc"):
        done = subprocess.run(
            sidecar_command(f"--clientProcessId={pid}"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=hook_env(),
            timeout=30,
        )
        assert done.returncode == 2 and done.stdout == b""
        assert b"--clientProcessId" in done.stderr and b"process id" in done.stderr, done.stderr


def test_a_closed_stdout_ends_the_process_like_a_closed_stdin(memory_root: Path) -> None:
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        sidecar_command(), stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE, env=hook_env()
    )
    os.close(write_end)
    try:
        assert proc.stdin is not None
        init = {
            "processId": None,
            "capabilities": {},
            "initializationOptions": {"memoryRoot": str(memory_root)},
        }
        proc.stdin.write(encode({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        proc.stdin.flush()
        assert b'"id":1' in os.read(read_end, 65536)  # it serves...
        os.close(read_end)  # ...until nobody reads its answers; stdin stays open
        assert proc.wait(10) == 1
        assert proc.stderr is not None
        assert b"exiting with code 1 (stdout closed)" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def logged_in(c: RawClient, text: str) -> bool:
    deadline = time.monotonic() + 5
    while text not in c.stderr_text() and time.monotonic() < deadline:
        time.sleep(0.02)
    return text in c.stderr_text()


def peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")
