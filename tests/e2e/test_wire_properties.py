"""Wire-level property test: whatever a host sends, over any method, every request is answered.

This drives the real sidecar process over stdio, not the in-process harness: the failures it hunts
live between the handler and the pipe (a result that cannot be serialized, a frame that cannot be
parsed, an error message that echoes host input, the process's own settings such as its recursion
limit), which an in-process call never reaches: the harness hands handlers Python values and takes
Python values back, so no byte of the wire is exercised. One process serves every example (each on
its own session); it is respawned if it dies, and a death fails the module. Frames
are written as a JavaScript host writes them (`jshost.js_frame`: lone surrogates as `\\udxxx`
escapes), plus raw JSON text no encoder produces (100 000 levels of nesting, `1e400`).

Each example opens a session made of generated host data (arbitrary Unicode in every string: part
text, tool names, call IDs, tool input keys and values, tool output, task summaries), syncs more of
it, runs a rebuild, then sends a few generated requests to every documented method: the session's
valid params with one value replaced by anything (wrong type, deep nesting, huge number), keys
dropped or added, arbitrary params, unknown method names, notifications (request methods among
them, which must change nothing), and bytes that are not a frame (malformed headers, bodies
shorter or longer than their length, raw JSON, garbage). It asserts:

- every request is answered in time, with a result or a documented error (never -32603), in the
  documented error shape;
- stdout carries frames only, valid UTF-8 JSON (`RawClient.violations`);
- a rejected request leaves `session/get` unchanged;
- a declared host field of the wrong type (core/session/data_model.py: a text that is a number, a tool
  state that is a string, a timestamp beyond the double range...) is refused with -32602 naming
  exactly its path, in `session/open` and `session/sync` alike;
- accepted host strings come back through `request/build` as the same UTF-16 code units (numbers
  as protocol.md says they are read), and the boundary of a rebuild lists every task summary.

Profiles (tests/fuzz.py): `make test` and CI run `WIRE_EXAMPLES` examples (seconds); `make fuzz`
runs thousands (`MIMO_FUZZ_EXAMPLES`; `MIMO_FUZZ_NO_SHRINK=1` reports failures unshrunk, to explore
quickly).
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mimo_sidecar.core.estimate.jstext import is_blank
from mimo_sidecar.core.session import data_model as dm
from mimo_sidecar.rpc import errors
from mimo_sidecar.wire.registry import REGISTRY
from tests.fuzz import LONG_EXAMPLES, examples
from tests.json_paths import positions, replaced
from tests.unit.builders import write_checkpoint

from .jshost import (
    JsHostClient,
    Raw,
    in_units,
    js_json,
    js_text,
    json_values,
    nasty_values,
    strings_of,
    units,
)
from .rawclient import MISSING

pytestmark = pytest.mark.e2e

WIRE_EXAMPLES = examples(40, long=LONG_EXAMPLES)
ANSWER_SECONDS = 5.0
T0 = 1_760_000_000_000
WAIT_MS = 200  # short writer-wait bounds: a generated writerStarted must not stall later inserts
CONFIG = {  # no inflation guard: the generated sessions are small, and their rebuilds must happen
    "checkpoint": {
        "writer_wait_ms": {"with_watermark": WAIT_MS, "without_watermark": WAIT_MS},
        "inflation_guard": False,
    }
}
BY_CODE = {spec.code: spec for spec in errors.ERRORS}
METHODS = [
    name
    for name, spec in REGISTRY.items()
    if spec.kind == "request" and spec.direction == "client → sidecar" and name != "shutdown"
]
NOTIFICATIONS = ["initialized", "$/cancelRequest", *METHODS]  # a request method without an id: ignored


# ---------------------------------------------------------------------------------------------
# The process
# ---------------------------------------------------------------------------------------------


class Wire:
    """One initialized sidecar for the module, respawned if it dies (so shrinking still works)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._client: JsHostClient | None = None
        self._next_id = 0
        self.deaths: list[str] = []

    @property
    def client(self) -> JsHostClient:
        if self._client is not None and self._client.proc.poll() is not None:
            self.deaths.append(self._client.stderr_text()[-4000:])
            self._client.kill()
            self._client = None
        if self._client is None:
            self._client = JsHostClient()
            reply = self._client.initialize(self.root, CONFIG)
            assert "result" in reply, reply
        return self._client

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def call(self, method: str, params: Any, msg_id: Any = None) -> dict[str, Any]:
        """Send a request (params omitted when `...`) and return its response."""
        msg_id = self.new_id() if msg_id is None else msg_id
        self.client.request(method, MISSING if params is ... else params, msg_id)
        try:
            return self.client.response(msg_id, timeout=ANSWER_SECONDS)
        except TimeoutError:
            pytest.fail(f"{method}: no answer within {ANSWER_SECONDS} s\n{self.client.stderr_text()[-4000:]}")

    def notify(self, method: str, params: Any) -> None:
        self.client.notify(method, params)

    def close(self) -> None:
        if self._client is not None:
            self._client.__exit__()


_current: list[Wire] = []


def sidecar_log() -> str:
    """The end of the running sidecar's stderr (its log), for failure messages."""
    return _current[0].client.stderr_text()[-6000:] if _current else ""


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wire]:
    w = Wire(tmp_path_factory.mktemp("memory"))
    _current[:] = [w]
    yield w
    violations = w.client.violations
    w.close()
    assert violations == []
    assert w.deaths == [], "the sidecar died:\n" + "\n---\n".join(w.deaths)


# ---------------------------------------------------------------------------------------------
# Answers
# ---------------------------------------------------------------------------------------------


def documented(method: str, reply: dict[str, Any]) -> dict[str, Any] | None:
    """The error of a reply (None for a result), after checking it is documented and well-formed."""
    assert ("result" in reply) != ("error" in reply), reply
    if "result" in reply:
        return None
    err = reply["error"]
    spec = BY_CODE.get(err.get("code"))
    assert spec is not None, f"{method}: undocumented error code: {err}"
    assert spec is not errors.INTERNAL_ERROR, f"{method}: internal error: {err}\n{sidecar_log()}"
    assert isinstance(err.get("message"), str) and err["message"], err
    data = err.get("data")
    assert isinstance(data, dict) and data.get("name") == spec.name, (
        f"{method}: error without data.name: {err}"
    )
    if spec is errors.INVALID_PARAMS:
        assert isinstance(data.get("errors"), list) and data["errors"], (
            f"{method}: -32602 without errors: {err}"
        )
        for item in data["errors"]:
            assert set(item) >= {"field", "message", "type"}, item
            assert documented_path(item["field"]), item
    if isinstance(data.get("field"), str):
        assert documented_path(data["field"]), err
    return err


def documented_path(path: str) -> bool:
    """The documented field path form: wire names and list indexes joined by dots (no `$.params`,
    no `[0]`)."""
    return not path.startswith("$.params") and re.search(r"\[\d+\]", path) is None


def result_of(method: str, reply: dict[str, Any]) -> Any:
    assert documented(method, reply) is None, f"{method} was refused: {reply}"
    return reply["result"]


def contains_units(haystack: bytes, needle: bytes) -> bool:
    """`needle` occurs in `haystack` at a code-unit boundary."""
    start = haystack.find(needle)
    while start >= 0:
        if start % 2 == 0:
            return True
        start = haystack.find(needle, start + 1)
    return False


# ---------------------------------------------------------------------------------------------
# Generated host data
# ---------------------------------------------------------------------------------------------


@dataclass
class HostData:
    """A session's generated history and the host strings it must get back."""

    sid: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # each must come back as a whole string
    # Whitespace-only text parts: never sent (providers reject them), always reported.
    blank_texts: list[str] = field(default_factory=list)
    tool_inputs: dict[str, Any] = field(default_factory=dict)  # callID -> input, compared whole

    def message_ids(self) -> list[str]:
        return [m["info"]["id"] for m in self.messages]

    def add_text(self, text: str) -> None:
        """A text part's text: expected back whole, or reported as dropped when whitespace-only."""
        (self.blank_texts if is_blank(text) else self.texts).append(text)


def _part(sid: str, mid: str, n: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"prt_{mid}_{n}", "sessionID": sid, "messageID": mid, **body}


# Keys the sidecar reads (core/session/data_model.py): the extra keys of a host are any others.
_KNOWN_KEYS = frozenset(
    {"sessionID", "summary", *dm.MESSAGE_INFO.kind.common.fields, *dm.PART.kind.common.fields}
    | set(dm.PART_VARIANTS["text"].kind.fields)
)
host_extras = st.dictionaries(
    js_text(min_size=1, max_size=6).filter(lambda k: k not in _KNOWN_KEYS), json_values, max_size=2
)


@st.composite
def turns(draw: st.DrawFn, sid: str, first: int, data: HostData) -> list[dict[str, Any]]:
    """A user message and an assistant message with a text part and a tool call; info objects and
    parts carry extra keys of any name, which the sidecar keeps as they are."""
    out = []
    user_text = draw(js_text(min_size=1))
    mid = f"m{first:03d}"
    out.append(
        {
            "info": {
                **draw(host_extras),
                "id": mid,
                "sessionID": sid,
                "role": "user",
                "time": {"created": T0 + first},
                "agent": "build",
            },
            "parts": [_part(sid, mid, 0, {**draw(host_extras), "type": "text", "text": user_text})],
        }
    )
    data.add_text(user_text)
    mid = f"m{first + 1:03d}"
    said = draw(js_text(min_size=1))
    call_id = f"c{first}-" + draw(js_text(max_size=4))
    tool = draw(js_text(min_size=1, max_size=8))
    tool_input = draw(st.dictionaries(js_text(max_size=8), json_values, max_size=4))
    output = draw(js_text(min_size=1))
    state = {
        "status": "completed",
        "input": tool_input,
        "output": output,
        "title": draw(js_text()),
        "metadata": {},
        "time": {"start": T0, "end": T0},
    }
    out.append(
        {
            "info": {
                "id": mid,
                "sessionID": sid,
                "role": "assistant",
                "time": {"created": T0 + first + 1, "completed": T0 + first + 1},
                "finish": "tool-calls",
            },
            "parts": [
                _part(sid, mid, 0, {"type": "text", "text": said}),
                _part(sid, mid, 1, {"type": "tool", "callID": call_id, "tool": tool, "state": state}),
            ],
        }
    )
    data.add_text(said)
    data.texts += [call_id, tool, output]
    data.tool_inputs[call_id] = tool_input
    return out


@st.composite
def host_session(draw: st.DrawFn, sid: str) -> HostData:
    data = HostData(sid)
    for n in range(draw(st.integers(1, 2))):
        data.messages += draw(turns(sid, 10 * n, data))
    # Summaries end in "." because the section they are listed in is JS-trimmed as a whole
    # (behavior.md#assembly).
    data.tasks = [
        {"id": f"T{n}", "status": "in_progress", "summary": draw(js_text(min_size=1)) + ".", "created_at": T0}
        for n in range(draw(st.integers(0, 2)))
    ]
    return data


# ---------------------------------------------------------------------------------------------
# Generated requests
# ---------------------------------------------------------------------------------------------


def templates(wire: Wire, host: HostData, fresh_sid: str) -> dict[str, Any]:
    """Valid params of every documented request, aimed at the example's session."""
    sid, ids = host.sid, host.message_ids()
    return {
        "initialize": {
            "processId": None,
            "capabilities": {},
            "initializationOptions": {"memoryRoot": str(wire.root)},
        },
        "sidecar/configure": {
            "config": {"checkpoint": {"push_caps": {"memory": 8000}}, "memory": {"disable_write": False}}
        },
        "session/open": {
            "sessionId": fresh_sid,
            "messages": copy.deepcopy(host.messages[:2]),
            "tasks": host.tasks,
            "toolPointers": {"read": "Read", "sidecarTools": {"prefix": "m_"}},
        },
        "session/sync": {
            "sessionId": sid,
            "upsertMessages": [copy.deepcopy(host.messages[-1])],
            "upsertParts": [
                {"messageId": ids[0], "part": _part(sid, ids[0], 9, {"type": "text", "text": "x"})}
            ],
            "removeParts": [{"messageId": ids[0], "partId": f"prt_{ids[0]}_0"}],
            "tasks": host.tasks,
        },
        "session/get": {"sessionId": sid},
        "session/close": {"sessionId": sid},
        "checkpoint/writerStarted": {"sessionId": sid, "watermark": ids[0]},
        "checkpoint/writerFinished": {"sessionId": sid, "outcome": "success", "retryable": False},
        "checkpoint/prepare": {"sessionId": sid, "watermark": ids[0], "format": "anthropic"},
        "checkpoint/commit": {
            "sessionId": sid,
            "watermark": ids[0],
            "content": "# Session checkpoint\nTopic: t\n",
        },
        "rebuild/compute": {
            "sessionId": sid,
            "usage": {"input": 150_000, "output": 10, "cache": {"read": 1, "write": 2}},
            "model": {"contextWindow": 200_000, "providerId": "anthropic", "modelId": "claude"},
            "includeText": True,
        },
        "rebuild/insert": {"sessionId": sid, "reason": "manual", "digestUpTo": ids[-1], "agent": "build"},
        "request/build": {
            "sessionId": sid,
            "purpose": "writer",
            "upTo": ids[0],
            "sidecarTools": {"prefix": "m_"},
        },
        "tools/list": {"sessionId": sid, "format": "gemini", "prefix": "m_"},
        "tools/call": {
            "sessionId": sid,
            "name": "m_history",
            "arguments": {"operation": "search", "query": "x", "regex": True, "offset": 0},
            "prefix": "m_",
        },
    }


@st.composite
def mutated(draw: st.DrawFn, params: dict[str, Any]) -> Any:
    """Valid params with one thing wrong: a value replaced by anything, a key dropped or added,
    or the params replaced whole."""
    how = draw(st.sampled_from(["replace", "replace", "replace", "drop", "add", "whole", "absent"]))
    if how == "replace":
        return replaced(params, draw(st.sampled_from(positions(params))), draw(nasty_values))
    if how == "drop":
        key = draw(st.sampled_from(sorted(params)))
        return {k: v for k, v in params.items() if k != key}
    if how == "add":
        return {**params, draw(js_text(min_size=1, max_size=6)): draw(nasty_values)}
    if how == "whole":
        return draw(nasty_values)
    return ...


@dataclass
class Attack:
    method: str
    params: Any
    msg_id: Any
    notification: bool = False
    raw: bytes | None = None  # bytes written as they are, where a frame should be
    refused: bool = False  # whether `raw` must be answered with an id-null error
    refused_at: str | None = None  # a wrongly typed host field: -32602 naming exactly this path


@st.composite
def malformed_frames(draw: st.DrawFn) -> tuple[bytes, bool]:
    """Bytes that are not a usable frame, of every kind the reader must resynchronise after. A
    body's declared length may overshoot by less than the next frame (the `session/get` that
    follows): more would rightly make the reader wait for the bytes it was promised. Returns the
    bytes and whether they must be refused (garbage may happen to read as an extra header line)."""
    body = js_json(
        {"jsonrpc": "2.0", "id": draw(st.integers(1, 9)), "method": draw(st.sampled_from(METHODS))}
    )
    value = draw(
        st.sampled_from([b"abc", b"-1", b"+2", b"1.5", b"", b"0x10", b"1e3"])
        | st.binary(max_size=8).filter(lambda v: not v.strip(b" \t").isdigit())
    )
    kind = draw(st.sampled_from(["value", "missing", "duplicated", "short", "long", "raw", "garbage"]))
    if kind == "value":
        return (b"Content-Length: " + value + b"\r\n\r\n" + body, True)
    if kind == "missing":
        return (b"Content-Type: application/json\r\n\r\n" + body, True)
    if kind == "duplicated":
        return (
            b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n%s" % (len(body), len(body) + 1, body),
            True,
        )
    if kind == "short":
        return (b"Content-Length: %d\r\n\r\n%s" % (draw(st.integers(0, len(body) - 1)), body), True)
    if kind == "long":
        return (b"Content-Length: %d\r\n\r\n%s" % (len(body) + draw(st.integers(1, 40)), body), True)
    if kind == "raw":
        return (body + draw(st.sampled_from([b"", b"\n", b"\r\n"])), True)
    return draw(
        st.binary(min_size=1, max_size=64).filter(lambda b: b"content-length" not in b.lower())
    ), False


# Declared fields of the generated messages (core/session/data_model.py), by message: the user's, then the
# assistant's with its text part and its tool call.
DECLARED = {
    0: [
        ("info", "role"),
        ("info", "time", "created"),
        ("info", "agent"),
        ("parts", 0, "type"),
        ("parts", 0, "text"),
    ],
    1: [
        ("info", "finish"),
        ("info", "time", "created"),
        ("parts", 0, "text"),
        ("parts", 1, "callID"),
        ("parts", 1, "tool"),
        ("parts", 1, "state"),
        ("parts", 1, "state", "status"),
        ("parts", 1, "state", "input"),
        ("parts", 1, "state", "output"),
    ],
}
DECLARED_TASK = [("status",), ("summary",), ("created_at",), ("id",)]
# A task's `id` is a string or an integer (data_model.TASK_ID): an integer is not wrongly typed there.
TASK_INTEGER_TOO = {("id",)}


def wrongly_typed(value: Any) -> st.SearchStrategy[Any]:
    """Values of another JSON type than `value`; a number beyond the double range for a number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return st.sampled_from([Raw("1e400"), Raw("-1e400"), str(value), True])
    if isinstance(value, str):
        return st.sampled_from([5, 1.5, True, [value], {"text": value}])
    return st.sampled_from([[value], "x", 0, False])


@st.composite
def typed_attacks(draw: st.DrawFn, host: HostData, fresh_sid: str) -> Attack:
    """A wrongly typed declared field in the history of a `session/open`, a `session/sync` or the
    tasks: refused at its path, and the session unchanged."""
    msg_id = draw(st.integers(10**9, 2**53))
    if host.tasks and draw(st.booleans()):
        where = draw(st.sampled_from(DECLARED_TASK))
        tasks = copy.deepcopy(host.tasks)
        value = draw(
            wrongly_typed(tasks[0][where[0]]).filter(
                lambda v: where not in TASK_INTEGER_TOO or not isinstance(v, int) or isinstance(v, bool)
            )
        )
        params = {"sessionId": host.sid, "tasks": replaced(tasks, (0, *where), value)}
        return Attack("session/sync", params, msg_id, refused_at=".".join(map(str, ("tasks", 0, *where))))
    index = draw(st.sampled_from([0, 1]))
    where = draw(st.sampled_from(DECLARED[index]))
    message = copy.deepcopy(host.messages[index])
    holder: Any = message
    for key in where:
        holder = holder[key]
    bad = replaced(message, where, draw(wrongly_typed(holder)))
    if draw(st.booleans()):
        messages = copy.deepcopy(host.messages[:2])
        messages[index] = bad
        params = {"sessionId": fresh_sid, "messages": messages}
        return Attack(
            "session/open", params, msg_id, refused_at=".".join(map(str, ("messages", index, *where)))
        )
    params = {"sessionId": host.sid, "upsertMessages": [bad]}
    return Attack(
        "session/sync", params, msg_id, refused_at=".".join(map(str, ("upsertMessages", 0, *where)))
    )


@st.composite
def attacks(draw: st.DrawFn, wire: Wire, host: HostData, fresh_sid: str) -> Attack:
    kind = draw(
        st.sampled_from(["method"] * 6 + ["unknown", "notification", "config", "frame", "typed", "typed"])
    )
    msg_id = draw(st.integers(10**9, 2**53) | js_text(min_size=1, max_size=6).map(lambda s: "id:" + s))
    if kind == "unknown":
        name = draw(
            js_text(min_size=1, max_size=12).filter(lambda s: s not in REGISTRY and not s.startswith("$/"))
        )
        return Attack(name, draw(nasty_values), msg_id)
    if kind == "frame":
        raw, refused = draw(malformed_frames())
        return Attack("", None, None, raw=raw, refused=refused)
    if kind == "notification":
        name = draw(st.sampled_from(NOTIFICATIONS) | js_text(min_size=1, max_size=12))
        return Attack(name, draw(nasty_values), None, notification=True)
    if kind == "typed":
        return draw(typed_attacks(host, fresh_sid))
    if kind == "config":  # unknown keys come back in warnings and window/logMessage
        section = draw(st.sampled_from([None, "checkpoint", "memory", "compaction"]))
        keys = draw(st.dictionaries(js_text(min_size=1, max_size=8), json_values, min_size=1, max_size=3))
        return Attack("sidecar/configure", {"config": keys if section is None else {section: keys}}, msg_id)
    method = draw(st.sampled_from(METHODS))
    return Attack(method, draw(mutated(templates(wire, host, fresh_sid)[method])), msg_id)


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------


def check_round_trip(wire: Wire, host: HostData) -> None:
    """Every host string comes back through request/build as the same code units."""
    built = result_of("request/build", wire.call("request/build", {"sessionId": host.sid}))
    out = {units(s) for s in strings_of(built["messages"])}
    for text in host.texts:
        assert units(text) in out, f"request/build lost or changed {text!r}"
    if host.blank_texts:
        assert any(w.startswith("blank-text-dropped") for w in built["warnings"]), built["warnings"]
    calls = {
        block["toolCallId"]: block["input"]
        for message in built["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool-call"
    }
    for call_id, tool_input in host.tool_inputs.items():
        assert call_id in calls, f"request/build lost the tool call {call_id!r}"
        assert in_units(calls[call_id]) == in_units(tool_input), f"tool input of {call_id!r} changed"


def check_summaries(inserted: dict[str, Any], host: HostData) -> None:
    """A rebuilt boundary lists every task summary, code unit for code unit."""
    text = units("\n".join(strings_of(inserted["message"])))
    for task in host.tasks:
        assert contains_units(text, units(task["summary"])), f"the boundary lost {task['summary']!r}"


def get(wire: Wire, sid: str) -> dict[str, Any]:
    """`session/get` without the response's id: a result or an error, comparable over time."""
    reply = wire.call("session/get", {"sessionId": sid})
    return {k: v for k, v in reply.items() if k != "id"}


def send_attack(wire: Wire, host: HostData, attack: Attack) -> None:
    before = get(wire, host.sid)
    if attack.raw is not None:
        errors_before = len(wire.client.null_id_errors)
        wire.client.send_raw(attack.raw)
        assert get(wire, host.sid) == before  # answered: the reader found the next frame
        if attack.refused:
            new = wire.client.null_id_errors[errors_before:]
            assert new and all(e["code"] in (-32700, -32600) for e in new), new
        return
    if attack.notification:
        wire.notify(attack.method, attack.params)
        reply = get(wire, host.sid)  # the connection still answers, and nothing changed
        assert reply == before
        return
    reply = wire.call(attack.method, attack.params, attack.msg_id)
    assert reply["id"] == attack.msg_id
    err = documented(attack.method, reply)
    if attack.method not in REGISTRY:  # -32600 when the params are too deep to read at all
        assert err is not None and err["code"] in (errors.METHOD_NOT_FOUND.code, errors.INVALID_REQUEST.code)
        assert err["message"].startswith(f"{attack.method}: "), err
    if attack.refused_at is not None:
        assert err is not None and err["code"] == errors.INVALID_PARAMS.code, (attack, reply)
        assert [e["field"] for e in err["data"]["errors"]] == [attack.refused_at], err
    if err is not None:
        assert get(wire, host.sid) == before, f"{attack.method} was refused but changed the session"
    if attack.method == "sidecar/configure" and err is None:
        warnings = reply["result"]["warnings"]
        if warnings:
            logged = [
                n["params"] for n in wire.client.notifications if n.get("method") == "window/logMessage"
            ]
            assert logged and logged[-1] == {"type": 2, "message": "; ".join(warnings)}, logged[-1:]
        result_of("sidecar/configure", wire.call("sidecar/configure", {"config": CONFIG}))
    if "result" in get(wire, host.sid):  # the session still serves whatever was accepted
        result_of("request/build", wire.call("request/build", {"sessionId": host.sid}))
        result_of("rebuild/compute", wire.call("rebuild/compute", {"sessionId": host.sid}))


# ---------------------------------------------------------------------------------------------
# The property
# ---------------------------------------------------------------------------------------------

_counter = iter(range(1, 10**9))

PROFILE = settings(
    max_examples=WIRE_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    print_blob=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate]
    + ([] if os.environ.get("MIMO_FUZZ_NO_SHRINK") else [Phase.shrink]),
)


@PROFILE
@given(data=st.data())
def test_every_request_is_answered_and_state_changes_only_when_it_says_so(
    wire: Wire, data: st.DataObject
) -> None:
    n = next(_counter)
    sid, fresh_sid = f"fz{n}", f"fz{n}-new"
    host = data.draw(host_session(sid), "host")
    write_checkpoint(wire.root, sid, "# Session checkpoint\nTopic: fuzzing\n\nKeep going.\n")
    ids = host.message_ids()

    opened = wire.call(
        "session/open",
        {"sessionId": sid, "messages": host.messages, "tasks": host.tasks, "watermark": ids[0]},
    )
    assert result_of("session/open", opened) == {"sessionId": sid, "revision": 1}
    result_of("session/get", get(wire, sid))
    check_round_trip(wire, host)
    result_of("rebuild/compute", wire.call("rebuild/compute", {"sessionId": sid, "includeText": True}))

    extra = data.draw(turns(sid, 100, host), "sync")
    synced = wire.call("session/sync", {"sessionId": sid, "baseRevision": 1, "upsertMessages": extra})
    assert result_of("session/sync", synced) == {"revision": 2}
    host.messages += extra
    check_round_trip(wire, host)

    inserted = result_of("rebuild/insert", wire.call("rebuild/insert", {"sessionId": sid, "reason": "auto"}))
    assert inserted["outcome"] == "rebuilt", inserted
    check_summaries(inserted, host)
    built = result_of("request/build", wire.call("request/build", {"sessionId": sid}))
    check_summaries({"message": built["messages"][0]}, host)

    for attack in data.draw(st.lists(attacks(wire, host, fresh_sid), max_size=4), "attacks"):
        send_attack(wire, host, attack)

    for s in (sid, fresh_sid):
        wire.call("session/close", {"sessionId": s})
    assert wire.client.violations == []
