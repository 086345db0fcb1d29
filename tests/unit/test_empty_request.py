"""A `request/build` that would send no message at all is refused with error 1012, naming why
(no provider accepts an empty request, and an empty `messages` with only a warning was sent as is)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mimo_sidecar.core.formats import FORMATS
from tests.harness import Harness

SID = "ses_empty"


def raw_responses_items(mid: str) -> dict:
    """What a Responses host stores when it keeps the API's `message` items as parts: no format
    carries that part type (`part-not-sent`)."""
    return {
        "info": {"id": mid, "role": "user"},
        "parts": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
    }


@pytest.mark.parametrize("fmt", sorted(FORMATS))
async def test_a_view_with_nothing_to_send_is_an_error_that_names_why(tmp_path: Path, fmt: str) -> None:
    harness = Harness(memory_root=str(tmp_path))
    await harness.call("session/open", {"sessionId": SID, "messages": [raw_responses_items("m1")]})
    error = await harness.error("request/build", {"sessionId": SID, "format": fmt})
    assert error.code == 1012 and error.data["name"] == "EmptyRequest"
    assert error.message.startswith("request/build: no message to send: none of the 1 messages")
    assert error.data["viewMessages"] == 1 and error.data["format"] == fmt
    assert any(w.startswith("part-not-sent") for w in error.data["warnings"]), error.data


async def test_a_session_with_no_message_yet_says_so(tmp_path: Path) -> None:
    harness = Harness(memory_root=str(tmp_path))
    await harness.call("session/open", {"sessionId": SID})
    error = await harness.error("request/build", {"sessionId": SID})
    assert error.code == 1012
    assert "agent 'main' has no message in its view yet" in error.message
    assert error.data == {
        "name": "EmptyRequest",
        "agentId": "main",
        "format": "ai-sdk",
        "viewMessages": 0,
        "warnings": [],
    }
    sub = await harness.error("request/build", {"sessionId": SID, "agentId": "explore"})
    assert sub.data["agentId"] == "explore"


async def test_one_sendable_message_is_enough(tmp_path: Path) -> None:
    harness = Harness(memory_root=str(tmp_path))
    ask = {"info": {"id": "m2", "role": "user"}, "parts": [{"type": "text", "text": "hello"}]}
    await harness.call("session/open", {"sessionId": SID, "messages": [raw_responses_items("m1"), ask]})
    built = await harness.call("request/build", {"sessionId": SID, "format": "openai-responses"})
    assert len(built["messages"]) == 1 and any(w.startswith("part-not-sent") for w in built["warnings"])
