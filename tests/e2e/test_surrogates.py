"""Lone UTF-16 surrogates from a JavaScript host, over stdio: every request is answered, and the
host's text comes back as the same code units.

A lone surrogate (`"\\udc00"`, valid JSON) sits in a part's text, a task summary, a tool input (key
and value), a tool output, an `info` key, a request id and a method name. open, sync, compute,
insert, build and get are each answered; request/build returns exactly the code units the host
sent; the boundary lists the summary.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.builders import write_checkpoint

from .jshost import JsHostClient, in_units, strings_of, units

pytestmark = pytest.mark.e2e

T0 = 1_760_000_000_000
CONFIG = {"checkpoint": {"inflation_guard": False}}
LONE = ["\ud800", "\udfff", "x\ud83d", "\ude00y", "\ud83d\ud83d", "\udc00\x00\ud800"]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("memory")


@pytest.fixture(scope="module")
def host(root: Path) -> Iterator[JsHostClient]:
    with JsHostClient() as client:
        # Small sessions: without the inflation guard their rebuild is `rebuilt`, not `no-gain`.
        assert "result" in client.initialize(root, CONFIG)
        yield client
        assert client.violations == []


def answer(host: JsHostClient, method: str, params: Any, msg_id: Any = None) -> dict[str, Any]:
    reply = host.response(host.request(method, params, msg_id), timeout=10)
    assert "error" not in reply, reply
    return reply["result"]


def session(sid: str, s: str) -> dict[str, Any]:
    """A session holding `s` in every kind of host string."""
    user = {
        "info": {"id": "m1", "sessionID": sid, "role": "user", "time": {"created": T0}, f"note{s}": s},
        "parts": [{"id": "p1", "sessionID": sid, "messageID": "m1", "type": "text", "text": f"fix {s} now"}],
    }
    tool = {
        "id": "p2",
        "sessionID": sid,
        "messageID": "m2",
        "type": "tool",
        "callID": "call_1",
        "tool": "read",
        "state": {
            "status": "completed",
            "input": {"filePath": f"src/{s}.ts", s: [s, {s: s}]},
            "output": f"line {s}",
            "title": "read",
            "metadata": {},
            "time": {"start": T0, "end": T0},
        },
    }
    assistant = {
        "info": {
            "id": "m2",
            "sessionID": sid,
            "role": "assistant",
            "time": {"created": T0 + 1},
            "finish": "stop",
        },
        "parts": [tool],
    }
    return {
        "sessionId": sid,
        "messages": [user, assistant],
        "tasks": [{"id": "T1", "status": "in_progress", "summary": f"task {s}.", "created_at": T0}],
        "watermark": "m1",
    }


def contains_units(haystack: str, needle: str) -> bool:
    h, n = units(haystack), units(needle)
    return any(i % 2 == 0 for i in range(len(h)) if h.startswith(n, i))


@pytest.mark.parametrize("s", LONE, ids=[repr(s) for s in LONE])
def test_every_method_answers_and_build_returns_the_same_code_units(
    host: JsHostClient, root: Path, s: str
) -> None:
    sid = f"sur{LONE.index(s)}"
    write_checkpoint(root, sid, "# Session checkpoint\nTopic: t\n\nBody.\n")
    params = session(sid, s)

    assert answer(host, "session/open", params) == {"sessionId": sid, "revision": 1}
    built = answer(host, "request/build", {"sessionId": sid})
    texts = {units(t) for t in strings_of(built["messages"])}
    assert units(f"fix {s} now") in texts and units(f"line {s}") in texts
    call = next(b for m in built["messages"] for b in m["content"] if b.get("type") == "tool-call")
    assert in_units(call["input"]) == in_units(params["messages"][1]["parts"][0]["state"]["input"])

    part = {"id": "p3", "sessionID": sid, "messageID": "m2", "type": "text", "text": f"more {s}"}
    assert answer(host, "session/sync", {"sessionId": sid, "upsertParts": [{"part": part}]}) == {
        "revision": 2
    }
    built = answer(host, "request/build", {"sessionId": sid})
    assert units(f"more {s}") in {units(t) for t in strings_of(built["messages"])}

    computed = answer(host, "rebuild/compute", {"sessionId": sid, "includeText": True, "preview": "always"})
    assert contains_units(computed["preview"]["report"]["text"], f"task {s}.")

    inserted = answer(host, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert inserted["outcome"] == "rebuilt" and inserted["revision"] == 3
    assert any(contains_units(t, f"task {s}.") for t in strings_of(inserted["message"]))
    built = answer(host, "request/build", {"sessionId": sid})
    assert any(contains_units(t, f"task {s}.") for t in strings_of(built["messages"][0]))

    got = answer(host, "session/get", {"sessionId": sid})
    assert got["revision"] == 3 and got["messageCount"] == 3


@pytest.mark.parametrize("s", LONE, ids=[repr(s) for s in LONE])
def test_unknown_method_and_request_id_with_a_lone_surrogate(host: JsHostClient, s: str) -> None:
    method = f"x/{s}"
    reply = host.response(host.request(method, {}, msg_id=f"id-{s}"), timeout=10)
    assert units(reply["id"]) == units(f"id-{s}")
    err = reply["error"]
    assert err["code"] == -32601
    assert units(err["message"]) == units(f"{method}: method not found")
    assert err["data"] == {"name": "MethodNotFound", "method": method}


def test_config_key_with_a_lone_surrogate_is_reported_in_warnings_and_log_message(host: JsHostClient) -> None:
    result = answer(host, "sidecar/configure", {"config": {"memory": {"odd\udc00": 1}}})
    assert [units(w) for w in result["warnings"]] == [units("config.memory.odd\udc00: unknown key, ignored")]
    logged = [n["params"] for n in host.notifications if n.get("method") == "window/logMessage"]
    assert units(logged[-1]["message"]) == units(result["warnings"][0])
    assert answer(host, "sidecar/configure", {"config": CONFIG}) == {"warnings": []}


def test_a_lone_surrogate_in_an_identifier_is_refused_naming_the_field(host: JsHostClient) -> None:
    reply = host.response(host.request("session/open", {"sessionId": "s\ud800"}), timeout=10)
    err = reply["error"]
    assert err["code"] == -32602 and err["data"]["errors"][0]["field"] == "sessionId"
