"""Nesting depth of JSON text without parsing it, and the top-level members of a frame too deep to
parse (mimo_sidecar.transport.jsondepth)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mimo_sidecar.transport import jsondepth
from mimo_sidecar.transport.jsondepth import nests_deeper_than, top_level_scalars
from tests.fuzz import examples


def depth_of(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


# Brackets, quotes and backslashes inside strings, and the letters of escapes (\n, \t, \u0001, \/).
tricky_text = st.text(alphabet=st.sampled_from('[]{}"\\\\/:,abentu \n\t\x01\u00e9\U0001f600'), max_size=12)
values = st.recursive(
    st.none() | st.integers() | tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky_text, inner, max_size=3),
    max_leaves=30,
)


@settings(max_examples=examples(300))
@given(value=values, ascii_only=st.booleans())
def test_depth_matches_the_parsed_value(value: object, ascii_only: bool) -> None:
    """Brackets and escapes inside strings never count; every real container does."""
    body = json.dumps(value, ensure_ascii=ascii_only).encode()
    depth = depth_of(value)
    assert not nests_deeper_than(body, depth)
    if depth:
        assert nests_deeper_than(body, depth - 1)


def test_escapes_and_strings_split_across_chunk_boundaries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsondepth, "_CHUNK", 3)
    for value in (["\\", ['\\\\"[[[']], {'a"]': [[["\\]"]]]}, ["]]]", [[[]]], "{{{"]):
        body = json.dumps(value).encode()
        assert not nests_deeper_than(body, depth_of(value))
        assert nests_deeper_than(body, depth_of(value) - 1)


def test_every_escape_letter_keeps_its_backslash_away_from_the_quotes() -> None:
    body = b'["\\/[", "\\b\\f\\n\\r\\t\\u005b[[[", "\\\\", "\\"[\\""]'
    assert json.loads(body) == ["/[", "\b\f\n\r\t[[[[", "\\", '"["']
    assert not nests_deeper_than(body, 1) and nests_deeper_than(body, 0)


def test_deep_frames() -> None:
    assert not nests_deeper_than(b"[" * 1024 + b"]" * 1024)
    assert nests_deeper_than(b"[" * 1025 + b"]" * 1025)
    assert nests_deeper_than(b'{"a":' * 5000 + b"0" + b"}" * 5000)
    assert nests_deeper_than(b"[" * 2_000_000)  # unbalanced: still too deep, found quickly


def test_top_level_scalars_skip_nested_members() -> None:
    body = (
        b'{"jsonrpc":"2.0","params":{"id":"nested","method":"no"},"method":"session/get",'
        b'"x":[1,{"id":2}],"id":"late\\ud800"}'
    )
    assert top_level_scalars(body) == {"jsonrpc": "2.0", "method": "session/get", "id": "late\ud800"}
    deep = b'{"id":7,"params":' + b"[" * 100_000 + b"]" * 100_000 + b',"method":"m"}'
    assert top_level_scalars(deep) == {"id": 7, "method": "m"}


@pytest.mark.parametrize("body", [b"", b"[1,2]", b"nonsense", b'{"id":', b'{"id" 5}', b"{" * 10])
def test_top_level_scalars_of_broken_text_is_best_effort(body: bytes) -> None:
    assert isinstance(top_level_scalars(body), dict)
