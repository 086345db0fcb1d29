"""Framing and JSON-RPC robustness with raw frames: missing params, bad input, stray output."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .rawclient import RawClient

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def raw(memory_root: Path) -> Iterator[RawClient]:
    """One initialized process shared by the tests that leave it usable."""
    with RawClient() as client:
        assert "result" in client.initialize(memory_root)
        yield client
        assert client.violations == [], client.violations


def logged(raw: RawClient, *texts: str, timeout: float = 5.0) -> bool:
    """Whether every text reaches the sidecar's stderr (read by a thread: it may lag a response)."""
    deadline = time.monotonic() + timeout
    while not all(t in raw.stderr_text() for t in texts):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def error_of(reply: dict) -> dict:
    assert "error" in reply, reply
    return reply["error"]


def test_request_before_initialize_and_bad_lsp_params(memory_root: Path) -> None:
    with RawClient() as c:
        err = error_of(c.call("session/open", {"sessionId": "s"}))
        assert err["code"] == -32002
        c.notify("session/open", {"sessionId": "dropped"})  # a notification before initialize: dropped
        err = error_of(c.call("initialize", {"processId": None, "capabilities": 5}))
        assert err["code"] == -32602 and err["message"].startswith("initialize: invalid params")
        assert "result" in c.initialize(memory_root)
        err = error_of(c.call("initialize", {"processId": None, "capabilities": {}}))
        assert err["code"] == -32600
        assert c.call("session/open", {"sessionId": "s"})["result"] == {"sessionId": "s", "revision": 1}
        c.close_stdin()
        assert c.wait(5) == 1
        assert c.violations == []


def test_request_without_params(raw: RawClient) -> None:
    err = error_of(raw.call("session/get"))
    assert err["code"] == -32602
    assert err["message"] == "session/get: invalid params: sessionId: Field required"
    assert error_of(raw.call("session/open", None))["message"].endswith("sessionId: Field required")


def test_unparsable_body_then_next_frame_is_served(raw: RawClient) -> None:
    raw.send_raw(b'Content-Length: 9\r\n\r\n{"broken"')
    reply = raw.response(None)
    assert reply["error"]["code"] == -32700
    assert "error" in raw.call("session/get", {"sessionId": "nope"})


def test_invalid_requests(raw: RawClient) -> None:
    raw.send([{"jsonrpc": "2.0", "id": 90, "method": "session/get", "params": {"sessionId": "x"}}])
    assert raw.response(None)["error"]["code"] == -32600
    raw.send({"jsonrpc": "1.0", "id": 91, "method": "session/get"})
    assert raw.response(91)["error"]["code"] == -32600
    assert error_of(raw.call("no/such-method", {}))["code"] == -32601


def test_lowercase_header_and_extra_headers(raw: RawClient) -> None:
    body = b'{"jsonrpc":"2.0","id":"low","method":"session/get","params":{"sessionId":"x"}}'
    raw.send_raw(
        b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n%s"
        % (len(body), body)
    )
    assert raw.response("low")["error"]["code"] == 1001


def test_non_ascii_is_sent_raw_with_a_byte_length(raw: RawClient) -> None:
    sid = "会话-👍"
    err = error_of(raw.call("session/get", {"sessionId": sid}))
    assert sid in err["message"]  # the strict reader checked the frame's byte length


def test_handler_that_prints_does_not_corrupt_stdout(raw: RawClient) -> None:
    assert raw.call("test/print", {})["result"] == {"printed": True}
    assert raw.call("session/open", {"sessionId": "after-print"})["result"]["revision"] == 1
    assert raw.violations == []
    err = raw.stderr_text()
    for stray in ("stray print from a handler", "stray write to fd 1", "stray output of a child process"):
        assert stray in err


def test_unexpected_exception_is_32603_without_traceback(raw: RawClient) -> None:
    err = error_of(raw.call("test/fail", {}))
    assert err["code"] == -32603
    assert err["data"] == {"name": "InternalError"}
    assert "deliberate" not in err["message"] and "Traceback" not in str(err)
    assert logged(raw, "Traceback", "deliberate failure")


def test_cancel_request(raw: RawClient) -> None:
    msg_id = raw.request("test/sleep", {"ms": 10_000})
    raw.notify("$/cancelRequest", {"id": msg_id})
    err = error_of(raw.response(msg_id, timeout=5))
    assert err["code"] == -32800


def test_requests_after_shutdown_are_refused(memory_root: Path) -> None:
    with RawClient() as c:
        c.initialize(memory_root)
        assert c.call("shutdown")["result"] is None
        err = error_of(c.call("session/get", {"sessionId": "s"}))
        assert err["code"] == -32600 and "shutting down" in err["message"]
        c.notify("exit")
        assert c.wait(5) == 0
        assert c.violations == []


def test_failing_notification_pops_no_message_window(raw: RawClient) -> None:
    """A handler that fails for a notification is logged only (pygls would show the client a
    `window/showMessage`; `SidecarServer.report_server_error` keeps it in the log)."""
    raw.notify("test/fail", {})
    assert raw.call("session/get", {"sessionId": "after-failed-notification"})["error"]["code"] == 1001
    assert [n for n in raw.notifications if n.get("method") == "window/showMessage"] == []
    assert logged(raw, "server error (FeatureNotificationError)")


def test_an_unknown_method_is_not_logged_as_a_server_error(raw: RawClient) -> None:
    """A host's typo is answered -32601 and logged below ERROR (`report_server_error`)."""
    assert error_of(raw.call("session/opne", {"sessionId": "s"}))["code"] == -32601
    assert logged(raw, "unknown method, answered -32601: session/opne: method not found")
    lines = [line for line in raw.stderr_text().splitlines() if "session/opne" in line]
    assert lines and not [line for line in lines if " ERROR " in line], lines
