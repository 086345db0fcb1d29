"""protocol.md stays the contract of the code: generated blocks, method sections, error table,
and examples that are true: recorded from a real run of the sidecar (`rpc.doc_examples`), recorded
again here, and compared."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from mimo_sidecar.rpc import doc_examples, errors
from mimo_sidecar.rpc.server import build_server
from mimo_sidecar.wire import protocol_doc
from mimo_sidecar.wire.registry import REGISTRY

DOC = protocol_doc.DEFAULT_PATH


@pytest.fixture(scope="module")
def text() -> str:
    return DOC.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def prose(text: str) -> str:
    return protocol_doc.prose(text)


@pytest.fixture(scope="module")
def transcript() -> list[tuple[str, Any]]:
    return doc_examples.record()


@pytest.fixture(scope="module")
def recorded(transcript: list[tuple[str, Any]]) -> protocol_doc.Examples:
    return doc_examples.examples(transcript)


def test_generated_blocks_are_up_to_date(text: str, recorded: protocol_doc.Examples) -> None:
    """The examples are what the sidecar answers today, the schemas what the models say."""
    problems = protocol_doc.check(text, recorded)
    assert problems == [], "protocol.md differs from the sidecar; run `make docs`: " + "; ".join(problems)


def test_the_recording_is_deterministic(transcript: list[tuple[str, Any]]) -> None:
    """Nothing volatile (a time, a minted ID, a token, a path) leaks into the examples."""
    assert doc_examples.record() == transcript


def test_check_detects_drift(text: str, recorded: protocol_doc.Examples) -> None:
    drifted = text.replace('"sessionId"', '"sessionID"', 1)
    assert protocol_doc.check(drifted, recorded)
    answer = re.search(r'"estimatedTokens": (\d+)', text)
    assert answer is not None
    wrong = text.replace(answer.group(0), f'"estimatedTokens": {int(answer.group(1)) + 1}', 1)
    assert protocol_doc.check(wrong, recorded)
    missing = re.sub(
        r"<!-- BEGIN GENERATED: example session/get -->.*?<!-- END GENERATED -->", "", text, flags=re.S
    )
    problems = protocol_doc.check(missing, recorded)
    assert any("missing generated block 'example session/get'" in p for p in problems)
    unrecorded = {k: v for k, v in recorded.items() if k != "example rebuild/status"}
    assert "no recorded example of rebuild/status" in protocol_doc.check(text, unrecorded)


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


def test_recorded_messages_match_their_models(recorded: protocol_doc.Examples) -> None:
    """Every recorded params and result validates against the model protocol.md shows for it."""
    for name, spec in REGISTRY.items():
        for label, message in recorded[f"example {name}"]:
            if label.startswith(("Request", "Notification")) and spec.params is not None:
                params = copy.deepcopy(message["params"])
                if name == "initialize":  # the path is shown as DOC_MEMORY_ROOT, not a real directory
                    params["initializationOptions"]["memoryRoot"] = "/"
                spec.params.model_validate(params)
            elif label == "Response" and spec.result is not None:
                spec.result.model_validate(message["result"])


# -- the schemas live in files of their own; protocol.md stays a readable reference ----------------


def test_schema_files_are_the_models() -> None:
    problems = protocol_doc.check_schema_files()
    assert problems == [], "schemas/ differs from the wire models; run `make docs`: " + "; ".join(problems)


def test_schema_files_check_detects_drift(tmp_path: Any) -> None:
    protocol_doc.write_schema_files(tmp_path)
    assert protocol_doc.check_schema_files(tmp_path) == []
    (tmp_path / "OpenParams.json").write_text("{}", encoding="utf-8")
    (tmp_path / "Gone.json").write_text("{}", encoding="utf-8")
    (tmp_path / "SyncParams.json").unlink()
    assert protocol_doc.check_schema_files(tmp_path) == [
        "schemas/SyncParams.json: missing",
        "schemas/Gone.json: no such model",
        "schemas/OpenParams.json: stale",
    ]


def test_every_schema_reference_names_a_schema_file() -> None:
    files = protocol_doc.schema_files()
    schemas = [text for name, text in files.items() if name.endswith(".json")]
    refs = {ref for text in schemas for ref in re.findall(r'"\$ref": "([^"]+)"', text)}
    assert refs and refs <= set(files), sorted(refs - set(files))
    listed = {m["params"] for m in json.loads(files["methods.json"])} | {
        m["result"] for m in json.loads(files["methods.json"])
    }
    assert listed - {None} <= {name.removesuffix(".json") for name in files}


def test_protocol_md_stays_short(text: str) -> None:
    """The reference without its schemas: at most 2,500 lines (the guide is docs/hosts.md; the data
    model, the formats and the command line have pages of their own in docs/)."""
    assert len(text.splitlines()) <= 2500


def _repeated(value: Any, seen: set[str]) -> str | None:
    """A large value of `value` that `seen` (or `value` itself) already holds, else None."""
    dumped = json.dumps(value, sort_keys=True)
    if len(dumped) >= protocol_doc.REPEAT_SHOWN_ONCE:
        if dumped in seen:
            return dumped
        seen.add(dumped)
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return next((r for child in children if (r := _repeated(child, seen)) is not None), None)


def test_no_example_shows_a_value_twice(text: str) -> None:
    """A large value (the writer's instructions, the section list) is printed once per example."""
    for block in re.findall(r"```json\n(.*?)\n```", text, flags=re.S):
        try:
            message = json.loads(block)
        except json.JSONDecodeError:
            continue  # a fragment of several JSON lines (the Formats examples)
        repeated = _repeated(message, set())
        assert repeated is None, f"shown twice in one example: {repeated[:120]}…"


def test_shown_once_names_the_first_place() -> None:
    long = "x" * protocol_doc.REPEAT_SHOWN_ONCE
    message = {"result": {"messages": [{"text": long}], "instructions": long, "short": "a", "again": "a"}}
    assert protocol_doc.shown_once(message) == {
        "result": {
            "messages": [{"text": long}],
            "instructions": "(the same as result.messages[0].text)",
            "short": "a",
            "again": "a",
        }
    }
