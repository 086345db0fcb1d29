"""The typed Python clients follow the method registry: one method per protocol method, in both
flavours, taking the registry's params model and returning its result model; one callback per
message of the sidecar's; and the JSON they send is the host's, byte for byte."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest
from pydantic import ValidationError

from mimo_sidecar.client import AsyncSidecar, Notifications, Sidecar, Timeouts, to_wire
from mimo_sidecar.client.methods import client_methods, python_name, sidecar_messages
from mimo_sidecar.client.wire_json import params_json
from mimo_sidecar.wire import rebuild as rb
from mimo_sidecar.wire import session as ss
from mimo_sidecar.wire.registry import REGISTRY, MethodSpec

# What a method sends without a params model: nothing the host chooses.
NO_PARAMS = {"initialized", "shutdown", "exit"}


def test_the_naming_rule() -> None:
    assert [python_name(m) for m in ("session/open", "checkpoint/writerStarted", "$/cancelRequest")] == [
        "session_open",
        "checkpoint_writer_started",
        "cancel_request",
    ]
    assert python_name("window/workDoneProgress/create") == "window_work_done_progress_create"


@pytest.mark.parametrize("flavour", [Sidecar, AsyncSidecar], ids=["sync", "asyncio"])
@pytest.mark.parametrize("spec", client_methods(), ids=lambda s: s.name)
def test_one_typed_method_per_protocol_method(flavour: type[Any], spec: MethodSpec) -> None:
    method = getattr(flavour, python_name(spec.name), None)
    assert method is not None, f"{flavour.__name__} has no {python_name(spec.name)}() for {spec.name}"
    assert inspect.iscoroutinefunction(method) == (flavour is AsyncSidecar)
    hints = typing.get_type_hints(method)
    if spec.params is not None and spec.name not in NO_PARAMS:
        assert spec.params in typing.get_args(hints["params"]), f"{spec.name}: params is not {spec.params}"
    expected = spec.result if spec.kind == "request" else None
    assert hints["return"] is (expected if expected is not None else type(None)), spec.name


def test_the_method_lists_cover_the_registry() -> None:
    both = {spec.name for spec in client_methods()} | set(sidecar_messages())
    assert both == set(REGISTRY)


@pytest.mark.parametrize("method", sorted(sidecar_messages()))
def test_one_callback_per_message_of_the_sidecar(method: str) -> None:
    assert python_name(method) in Notifications.__dataclass_fields__, method


def test_notifications_are_delivered_as_their_models() -> None:
    got: list[Any] = []
    handlers = Notifications(rebuild_status=got.append, unknown=lambda m, p: got.append((m, p)))
    handlers.deliver("rebuild/status", {"sessionId": "s", "state": "busy", "message": "x"})
    handlers.deliver("$/progress", {"token": "t", "value": {"kind": "end"}})  # no callback: nothing
    handlers.deliver("tools/futureThing", {"a": 1})
    handlers.deliver("rebuild/status", {"state": 3})  # not its model: given as it came
    assert got[0] == rb.StatusNotification(sessionId="s", state="busy", message="x")
    assert got[1:] == [("tools/futureThing", {"a": 1}), ("rebuild/status", {"state": 3})]
    assert not handlers.wants_progress and Notifications(progress=print).wants_progress


def test_a_model_is_sent_as_the_json_it_came_from() -> None:
    info = {"id": "m1", "role": "user", "sessionID": "s", "time": {"created": 1}, "agent": "build"}
    part = {"type": "text", "text": "hi", "metadata": {"x": [1]}}
    params = ss.OpenParams.model_validate(
        {"sessionId": "s", "messages": [{"info": info, "parts": [part]}], "createCheckpoint": True}
    )
    assert to_wire(params) == {
        "sessionId": "s",
        "messages": [{"info": info, "parts": [part]}],
        "createCheckpoint": True,
    }
    built = rb.BuildParams(sessionId="s", format="anthropic", target=rb.BuildTarget(thinking=True))
    assert to_wire(built) == {"sessionId": "s", "format": "anthropic", "target": {"thinking": True}}


def test_a_dict_is_checked_before_it_is_sent() -> None:
    sent = {"sessionId": "s", "baseRevision": 2}
    assert params_json(ss.SyncParams, sent) == sent
    with pytest.raises(ValidationError, match="baseRevision"):
        params_json(ss.SyncParams, {"sessionId": "s", "baseRevision": "2"})
    assert params_json(ss.SyncParams, {"sessionId": "s", "nope": 1}, validate=False) == {
        "sessionId": "s",
        "nope": 1,
    }
    with pytest.raises(TypeError):
        params_json(ss.SyncParams, rb.BuildParams(sessionId="s"))  # type: ignore[arg-type]


def test_timeouts_follow_the_writer_waits() -> None:
    default = Timeouts()
    assert default.of("rebuild/insert") == 300 + 30 + 30  # cold start, a promoted writer, a margin
    assert default.of("shutdown") == 10 + 30 and default.of("session/open") == 120
    shorter = default.following(
        {"checkpoint": {"writer_wait_ms": {"without_watermark": 1000, "with_watermark": 0}}}
    )
    assert shorter.of("rebuild/insert") == 1 + 30
    assert shorter.following(None).of("rebuild/insert") == default.of("rebuild/insert")
