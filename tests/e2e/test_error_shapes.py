"""Errors are shaped as protocol.md documents them, over stdio.

- -32601: message `"<method>: method not found"`, `data: {name, method}`;
- every -32602 carries `data.errors` (`[{field, message, type}]`) and field paths in the documented
  form (wire names and indexes joined by dots: no `$.params`, no `[0]`), `initialize` included;
- `initialize` validates `processId` (integer or null) and `capabilities` (an object) without
  coercion, naming the field;
- a frame nested deeper than 1024 levels gets -32600 with its request's id;
- `window/logMessage` carries the warnings as documented, nothing before them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .jshost import JsHostClient, nested
from .rawclient import RawClient

pytestmark = pytest.mark.e2e


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def fresh() -> Iterator[JsHostClient]:
    """A sidecar of its own, not initialized yet (the initialize and config tests need one)."""
    with JsHostClient() as client:
        yield client
        assert client.violations == []


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JsHostClient]:
    with JsHostClient() as client:
        assert "result" in client.initialize(tmp_path_factory.mktemp("memory"))
        yield client


@pytest.fixture
def initialized(shared: JsHostClient) -> Iterator[JsHostClient]:
    """The module's one initialized sidecar, for the tests that only send requests after
    `initialize`; its stdout is checked after each of them."""
    yield shared
    assert shared.violations == []


def error_of(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" in reply, reply
    return reply["error"]


def test_method_not_found_names_the_method(initialized: JsHostClient) -> None:
    err = error_of(initialized.call("no/such-method", {}))
    assert err == {
        "code": -32601,
        "message": "no/such-method: method not found",
        "data": {"name": "MethodNotFound", "method": "no/such-method"},
    }


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"processId": None}, "capabilities", "Field required"),
        ({"processId": None, "capabilities": "x"}, "capabilities", "Input should be a valid dictionary"),
        ({"processId": None, "capabilities": []}, "capabilities", "Input should be a valid dictionary"),
        ({"processId": "123", "capabilities": {}}, "processId", "Input should be a valid integer"),
        ({"processId": 1.5, "capabilities": {}}, "processId", "Input should be a valid integer"),
        ({"processId": True, "capabilities": {}}, "processId", "Input should be a valid integer"),
    ],
)
def test_initialize_validates_process_id_and_capabilities(
    fresh: JsHostClient, root: Path, params: dict[str, Any], field: str, message: str
) -> None:
    params = {**params, "initializationOptions": {"memoryRoot": str(root)}}
    err = error_of(fresh.call("initialize", params))
    assert err["code"] == -32602
    assert err["message"] == f"initialize: invalid params: {field}: {message}"
    assert err["data"] == {
        "name": "InvalidParams",
        "errors": [{"field": field, "message": message, "type": err["data"]["errors"][0]["type"]}],
    }
    assert error_of(fresh.call("session/get", {"sessionId": "s"}))["code"] == -32002  # still uninitialized
    assert "result" in fresh.initialize(root)


def test_lsp_params_problems_are_listed_in_the_documented_path_form(fresh: JsHostClient, root: Path) -> None:
    """Standard LSP members are checked by lsprotocol; its errors take the same shape."""
    params = {
        "processId": None,
        "capabilities": {},
        "trace": "loud",
        "workspaceFolders": [{"name": "w"}],
        "initializationOptions": {"memoryRoot": str(root)},
    }
    err = error_of(fresh.call("initialize", params))
    assert err["code"] == -32602 and err["data"]["name"] == "InvalidParams"
    fields = sorted(e["field"] for e in err["data"]["errors"])
    assert fields == ["trace", "workspaceFolders.0.uri"]
    assert err["message"].startswith("initialize: invalid params: ")
    assert "$" not in err["message"]


def test_every_invalid_params_error_lists_its_errors(initialized: JsHostClient) -> None:
    for method, params in [
        ("session/get", {}),
        ("session/sync", {"sessionId": "s", "upsertParts": [{"part": {"type": "text"}}]}),
        ("rebuild/insert", {"sessionId": "s", "reason": "later"}),
        ("sidecar/configure", {"config": {"checkpoint": {"push_caps": {"memory": "8000"}}}}),
    ]:
        err = error_of(initialized.call(method, params))
        assert err["code"] == -32602 and err["message"].startswith(f"{method}: invalid params: ")
        assert err["data"]["errors"], err
        for item in err["data"]["errors"]:
            assert set(item) == {"field", "message", "type"}
            assert not item["field"].startswith("$") and "[" not in item["field"]


def test_a_frame_nested_too_deep_is_answered_with_its_id(initialized: JsHostClient) -> None:
    for depth, kind in [(1025, "list"), (5000, "dict"), (200_000, "list")]:
        reply = initialized.response(
            initialized.request("session/open", {"sessionId": "d", "tasks": [nested(depth, kind)]})
        )
        err = error_of(reply)
        assert err["code"] == -32600
        assert err["message"] == "session/open: invalid request: nested deeper than 1024 levels"
    # id after the params, and a lone surrogate forcing the stdlib parser
    initialized.send_raw(
        b"Content-Length: %d\r\n\r\n%s"
        % (
            len(
                body := b'{"jsonrpc":"2.0","method":"session/get","params":'
                + b"[" * 3000
                + b"]" * 3000
                + b',"id":"late\\ud800"}'
            ),
            body,
        )
    )
    reply = initialized.response("late\ud800")
    assert error_of(reply)["code"] == -32600
    at_limit = initialized.call(
        "session/open",
        {
            "sessionId": "ok",
            "tasks": [{"id": "T1", "status": "open", "deep": nested(1000, "list")}],
            "messages": [{"info": {"id": "m1", "role": "user"}, "parts": [{"type": "text", "text": "hi"}]}],
        },
    )
    assert at_limit["result"] == {"sessionId": "ok", "revision": 1}
    assert "result" in initialized.call("request/build", {"sessionId": "ok"})


def test_a_large_deep_frame_is_refused_quickly(root: Path) -> None:
    """Frames above 8 MiB take the streaming parser; 9 MB of `[` once took gigabytes there."""
    with RawClient(["--log-level", "WARNING"], max_memory=2 << 30) as client:
        client.initialize(root)
        body = (
            b'{"jsonrpc":"2.0","id":"big","method":"session/sync","params":'
            + b"[" * 4_700_000
            + b"]" * 4_700_000
            + b"}"
        )
        started = time.monotonic()
        client.send_raw(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        assert error_of(client.response("big", timeout=30))["code"] == -32600
        assert time.monotonic() - started < 10
        assert "result" in client.call("session/open", {"sessionId": "after"})


def test_log_message_carries_the_warnings_only(fresh: JsHostClient, root: Path) -> None:
    fresh.initialize(root, {"memory": {"mystery": 1}})
    logged = [n["params"] for n in fresh.notifications if n.get("method") == "window/logMessage"]
    assert logged == [{"type": 2, "message": "config.memory.mystery: unknown key, ignored"}]
