"""protocol.md stays the contract of the code: generated blocks, method sections, error table,
and examples that are true (they are replayed against the real handlers)."""

from __future__ import annotations

import copy
import re

import pytest
from pydantic import BaseModel

from mimo_sidecar.rpc import errors
from mimo_sidecar.rpc.server import build_server
from mimo_sidecar.wire import protocol_doc
from mimo_sidecar.wire.registry import NO_PARAMS, REGISTRY
from tests.harness import Harness

DOC = protocol_doc.DEFAULT_PATH


@pytest.fixture(scope="module")
def text() -> str:
    return DOC.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def prose(text: str) -> str:
    return protocol_doc.prose(text)


def test_generated_blocks_are_up_to_date(text: str) -> None:
    problems = protocol_doc.check(text)
    assert problems == [], (
        "protocol.md differs from the wire models; run `.venv/bin/python -m mimo_sidecar.wire.protocol_doc`: "
        + "; ".join(problems)
    )


def test_check_detects_drift(text: str) -> None:
    drifted = text.replace('"sessionId"', '"sessionID"', 1)
    assert protocol_doc.check(drifted)
    missing = re.sub(
        r"<!-- BEGIN GENERATED: example session/get -->.*?<!-- END GENERATED -->", "", text, flags=re.S
    )
    assert any("missing generated block 'example session/get'" in p for p in protocol_doc.check(missing))


def test_every_registered_method_has_a_prose_section(prose: str) -> None:
    headings = set(re.findall(r"^### `([^`]+)`", prose, flags=re.M))
    missing = [name for name in REGISTRY if name not in headings]
    assert missing == [], f"protocol.md has no '### `name`' section for {missing}"


def test_every_error_code_is_in_the_error_table(prose: str) -> None:
    rows = {int(code): name for code, name in re.findall(r"^\| (-?\d+) \| (\w+) \|", prose, flags=re.M)}
    for spec in errors.ERRORS:
        assert rows.get(spec.code) == spec.name, (
            f"error {spec.code} {spec.name} is not documented in protocol.md"
        )
    assert set(rows) == {spec.code for spec in errors.ERRORS}, (
        "protocol.md documents codes the code does not use"
    )


def test_every_served_method_is_registered_and_every_request_is_served() -> None:
    server = build_server()
    custom = set(server.handlers)
    assert custom <= set(REGISTRY)
    lifecycle = {"initialize", "initialized", "shutdown", "exit"}  # pygls's LSP lifecycle, plus our hooks
    for spec in REGISTRY.values():
        if spec.direction == "client → sidecar":
            assert spec.name in custom or spec.name in lifecycle or spec.name.startswith("$/"), spec.name


def _validate(model: type[BaseModel] | None, value: object, tmp_path) -> None:
    if model is None:
        return
    value = copy.deepcopy(value)
    if isinstance(value, dict) and "memoryRoot" in value.get("initializationOptions", {}):
        value["initializationOptions"]["memoryRoot"] = str(tmp_path)
    model.model_validate(value)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_examples_match_their_models(name: str, tmp_path) -> None:
    spec = REGISTRY[name]
    params = spec.params_example
    if spec.params_member and params is not NO_PARAMS:
        params = params[spec.params_member]
    if params is not NO_PARAMS:
        _validate(spec.params, params, tmp_path)
    if spec.kind == "request":
        _validate(spec.result, spec.result_example, tmp_path)


async def test_session_examples_are_what_the_handlers_answer() -> None:
    """Replay the examples in order against the real handlers (in process)."""
    harness = Harness()
    sequence = [
        "session/open",
        "session/sync",
        "checkpoint/writerStarted",
        "checkpoint/writerFinished",
        "session/get",
        "session/close",
    ]
    for name in sequence:
        spec = REGISTRY[name]
        got = await harness.call(name, spec.params_example)
        assert got == spec.result_example, (
            f"{name}: the example result in the registry is not what the sidecar answers"
        )


async def test_sidecar_configure_example_is_what_the_handler_answers() -> None:
    harness = Harness()
    spec = REGISTRY["sidecar/configure"]
    got = await harness.call(spec.name, spec.params_example)
    assert got == spec.result_example
    assert harness.service.config.push_caps.recent_user == 0
