"""Frame parsing: large frames go through the streaming parser and must mean exactly the same."""

from __future__ import annotations

import json

import orjson
import pytest

from mimo_sidecar import jsonrpc_codec as protocol


def _large(value: dict) -> bytes:
    """`value` padded with a big string so the frame is over the streaming threshold."""
    body = orjson.dumps({**value, "pad": "p" * (protocol.LARGE_FRAME_BYTES + 10)})
    assert len(body) > protocol.LARGE_FRAME_BYTES
    return body


SAMPLE = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "session/open",
    "params": {
        "sessionId": "s",
        "messages": [
            {
                "info": {"id": "m1", "role": "user", "time": {"created": 1760000000000}},
                "parts": [
                    {
                        "type": "text",
                        "text": "用 Bun 不用 npm 👍 \u2028 \x01",
                        "n": [1, -0.5, 1e-7, 1.5e300, 2**60],
                    },
                    {"type": "tool", "state": {"input": {"nested": {"jsonrpc": "2.0", "id": 1}}, "ok": True}},
                ],
            }
        ],
        "flag": None,
    },
}


def test_streaming_backend_is_the_c_one() -> None:
    assert protocol._STREAMING is not None  # the pure-Python backends would be too slow to use


def test_large_frames_parse_exactly_like_orjson() -> None:
    body = _large(SAMPLE)
    got = protocol.loads(body)
    assert got == orjson.loads(body)
    part = got["params"]["messages"][0]["parts"][0]
    assert [type(x) for x in part["n"]] == [int, float, float, float, int]  # no Decimal


def test_large_frame_with_trailing_bytes_is_rejected() -> None:
    with pytest.raises(ValueError):
        protocol.loads(_large(SAMPLE) + b" {}")


def test_large_invalid_frame_is_rejected() -> None:
    with pytest.raises(ValueError):
        protocol.loads(_large(SAMPLE)[:-2])


def test_lone_surrogate_escape_falls_back_to_the_stdlib() -> None:
    body = _large({"text": "x"}).replace(b'"x"', b'"\\ud800x"', 1)
    assert protocol.loads(body)["text"] == json.loads(body)["text"] == "\ud800x"
    small = b'{"text": "\\udc00"}'
    assert protocol.loads(small) == {"text": "\udc00"}


def test_surrogate_pairs_in_large_frames_stay_pairs() -> None:
    body = _large({"text": "x"}).replace(b'"x"', b'"\\ud83d\\ude00 \\u00e9"', 1)
    assert protocol.loads(body)["text"] == "\U0001f600 \u00e9"


def test_large_frame_with_invalid_utf8_is_rejected() -> None:
    with pytest.raises(ValueError):
        protocol.loads(_large({"text": "x"}).replace(b'"x"', b'"\xff\xfe"', 1))
