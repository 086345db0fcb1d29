"""Frame parsing: large frames are parsed slice by slice and must mean exactly the same."""

from __future__ import annotations

import json

import orjson
import pytest

from mimo_sidecar.transport import jsonrpc_codec as protocol


def _large(value: dict) -> bytes:
    """`value` padded with a big string so the frame is over the slicing threshold."""
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


def test_large_frames_take_the_sliced_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real = protocol.loads_sliced
    monkeypatch.setattr(protocol, "loads_sliced", lambda text, *a: seen.append(len(text)) or real(text, *a))
    body = _large(SAMPLE)
    assert protocol.loads(body) == orjson.loads(body) and seen == [len(body)]
    assert protocol.loads(orjson.dumps(SAMPLE)) == SAMPLE and seen == [len(body)]  # small: orjson


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


@pytest.mark.parametrize("large", [False, True])
def test_numbers_read_the_same_whichever_parser_the_frame_takes(large: bool) -> None:
    """orjson's reading (integers within i64/u64, doubles beyond) also on the stdlib path that a
    lone surrogate escape forces, and past the double range an infinity, as `JSON.parse` reads it.
    Found by the wire property test: a tool input's -9223372036854775809 came back as an integer or
    as a double depending on the path."""
    numbers = (
        b"[-9223372036854775808, -9223372036854775809, 18446744073709551615, 18446744073709551616, "
        + b"1e400, -1e400, "
        + b"7" * 5000
        + b"]"
    )
    inf = float("inf")
    expected = [-(2**63), -9.223372036854776e18, 2**64 - 1, 1.8446744073709552e19, inf, -inf, inf]
    for text in (b"", b'"\\ud800", '):
        body = b'{"n": [' + text + numbers + b"]}"
        value = protocol.loads(_large_raw(body) if large else body)
        assert value["n"][-1] == expected


def _large_raw(body: bytes) -> bytes:
    return body[:-1] + b', "pad": "' + b"p" * (protocol.LARGE_FRAME_BYTES + 10) + b'"}'


def test_lone_surrogates_are_written_back_as_escapes() -> None:
    out = protocol.dumps({"t": "a\ud800b", "\udc00": ["\U0001f600", "\ud83d"], "n": 2**70})
    assert out == b'{"t":"a\\ud800b","\\udc00":["\xf0\x9f\x98\x80","\\ud83d"],"n":1180591620717411303424}'
    assert protocol.loads(out) == {"t": "a\ud800b", "\udc00": ["\U0001f600", "\ud83d"], "n": 2**70}
    assert protocol.dumps({"ok": "plain"}) == orjson.dumps({"ok": "plain"})  # orjson stays the path


@pytest.mark.parametrize("large", [False, True])
def test_frames_deeper_than_1024_levels_are_refused_unparsed(large: bool) -> None:
    for depth, ok in ((1023, True), (1024, False), (200_000, False)):  # the object is one more level
        body = b'{"a": ' + b"[" * depth + b"]" * depth + b"}"
        body = _large_raw(body) if large else body
        if ok:
            assert isinstance(protocol.loads(body), dict)
        else:
            with pytest.raises(protocol.FrameTooDeep):
                protocol.loads(body)
    with pytest.raises(protocol.FrameTooDeep):  # the stdlib path too
        protocol.loads(b'["\\ud800", ' + b"{" * 3000 + b"}" * 3000 + b"]")
