"""Each format's output validates against the official SDKs' request types (pinned test extra).

The whole request body a host would send is validated with a pydantic `TypeAdapter` over the SDK's
own request-parameter type: `anthropic.types.MessageCreateParams`, `openai`'s Chat
`CompletionCreateParamsNonStreaming` and Responses `ResponseCreateParamsNonStreaming`, and for
Gemini `google.genai.types.Content` (each content) plus `GenerateContentConfig` (system instruction
and tools). The SDKs type lists as lazily validated iterables, so the result is walked to force
their validation.

One place where the SDK's type is stricter than the API: the OpenAI SDK's
`ResponseReasoningItemParam` declares `id` required, while the API takes a reasoning item without
one in a `store: false` request, which is how Codex, OpenAI's own client, sends every reasoning item
(`codex-rs/protocol/src/models.rs`: `#[serde(default, skip_serializing)] id`; behavior.md#d16).
`validate` lets exactly that through: a `reasoning` item without `id` is validated with a stand-in
ID, everything else in it as the SDK types it; no other item is touched.
"""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from google.genai import types as genai
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter, ValidationError

from benchmarks.generator import generate_session
from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.formats import FORMATS, Target
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.session import Session, batch_from_messages
from tests.unit.builders import session_of
from tests.unit.split_sessions import claude_code, codex, inline_signed
from tests.unit.test_format_properties import MEMORY, SID, rebuild

Json = dict[str, Any]
PREFIX = {
    "system": ["You are a coding agent.", {"type": "text", "text": "Be brief."}],
    "tools": [
        {
            "name": "read",
            "description": "Read a file",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
        {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}},
        {"type": "custom", "name": "apply_patch", "description": "Patch files"},
    ],
}
ANTHROPIC = TypeAdapter(MessageCreateParamsNonStreaming)
CHAT = TypeAdapter(CompletionCreateParamsNonStreaming)
RESPONSES = TypeAdapter(ResponseCreateParamsNonStreaming)
SDK_ONLY_REASONING_ID = "rs_sdk_type_requires_an_id"


def force(value: Any) -> Any:
    """Walk a validated value, consuming pydantic's lazy iterators (which validates their items)."""
    if type(value).__name__ == "ValidatorIterator":
        return [force(v) for v in value]
    if isinstance(value, dict):
        return {k: force(v) for k, v in value.items()}
    if isinstance(value, list):
        return [force(v) for v in value]
    return value


def validate(fmt: str, messages: list[Json], prefix: Json | None, overrides: Json) -> None:
    prefix = prefix or {}
    if fmt == "anthropic":
        force(
            ANTHROPIC.validate_python(
                {
                    "model": "claude-sonnet-4-6",
                    "max_tokens": 1024,
                    **prefix,
                    "messages": messages,
                    **overrides,
                }
            )
        )
    elif fmt == "openai-chat":
        body = {"model": "gpt-5.3", "messages": [*prefix.get("messages", []), *messages]}
        force(CHAT.validate_python({**body, **({"tools": prefix["tools"]} if "tools" in prefix else {})}))
    elif fmt == "openai-responses":
        items = [with_sdk_reasoning_id(item) for item in messages]
        force(RESPONSES.validate_python({"model": "gpt-5.3-codex", **prefix, "input": items, "store": False}))
    elif fmt == "gemini":
        for content in messages:
            genai.Content.model_validate(content)
        genai.GenerateContentConfig.model_validate({k: v for k, v in prefix.items()})


def with_sdk_reasoning_id(item: Json) -> Json:
    """A Responses reasoning item sent without `id` gets a stand-in one, which only the SDK's type
    requires (see the module docstring); any other item is returned as it is."""
    if item.get("type") == "reasoning" and "id" not in item:
        return {**item, "id": SDK_ONLY_REASONING_ID}
    return item


def prefixed_session(messages: list[Message]) -> Session:
    return session_of(messages, SID, "p", request_prefix=PREFIX)


def build_and_validate(session: Session, target: Target | None = None) -> int:
    checked = 0
    for fmt in FORMATS:
        if fmt == "ai-sdk":
            continue  # validated against the `ai` package's schema in the Node example's test
        res = engine.build(
            session,
            MemoryRoot(str(MEMORY)),
            RebuildConfig(),
            now_ms=10**13,
            fmt=fmt,
            target=target,
            cache_ttl="5m",
        )
        validate(fmt, res.request.messages, res.prefix.request, res.request.overrides)
        checked += len(res.request.messages)
    return checked


@pytest.mark.parametrize("make", [claude_code, codex, inline_signed])
@pytest.mark.parametrize("target", [None, Target(thinking=True, tool_result_media=True, given=True)])
def test_split_sessions_validate_against_the_sdk_types(make: Any, target: Target | None) -> None:
    assert build_and_validate(prefixed_session(make()), target) > 0


@pytest.mark.parametrize("shape", ["inline", "anthropic", "openai"])
def test_generated_sessions_validate_before_and_after_a_rebuild(shape: str) -> None:
    data = generate_session(200, 5, shape, session_id=SID, bytes_per_message=400)
    session = Session(SID, "p", request_prefix=PREFIX)
    session.apply(batch_from_messages(data["messages"]))
    assert build_and_validate(session) > 0
    assert rebuild(session)
    assert build_and_validate(session) > 0


@pytest.mark.parametrize(
    ("fmt", "bad"),
    [
        ("anthropic", [{"role": "user", "content": [{"type": "tool_result"}]}]),
        ("openai-chat", [{"role": "tool", "content": "x"}]),
        ("openai-responses", [{"type": "function_call_output", "output": 3}]),
        ("gemini", [{"role": "user", "parts": [{"functionCall": {"args": "not an object"}}]}]),
    ],
)
def test_the_validation_can_fail(fmt: str, bad: list[Json]) -> None:
    with pytest.raises(ValidationError):
        validate(fmt, bad, None, {})


def test_the_sdk_type_alone_requires_a_reasoning_item_id() -> None:
    """The stand-in ID is what makes an ID-less reasoning item pass, and only for reasoning: the
    same item is refused by the bare SDK type, and a malformed one still fails."""
    item: Json = {"type": "reasoning", "summary": [], "encrypted_content": "ENC"}
    body: Json = {"model": "gpt-5.3-codex", "input": [item], "store": False}
    with pytest.raises(ValidationError):
        force(RESPONSES.validate_python(body))
    validate("openai-responses", [item], None, {})
    with pytest.raises(ValidationError):
        validate("openai-responses", [{**item, "summary": "not a list"}], None, {})
    call: Json = {"type": "function_call", "name": "f", "arguments": "{}"}  # no call_id
    assert with_sdk_reasoning_id(call) is call
    with pytest.raises(ValidationError):
        validate("openai-responses", [call], None, {})
