"""The slice-by-slice parser of large frames (`transport/sliced_json.py`): whatever the text, the
same value as parsing it whole, or a refusal where the whole parse refuses too.

Slices are shrunk to a few bytes here, so that small generated documents exercise every path a
50 MB history takes: runs cut by a guess, guesses that fail, elements walked one window at a
time, values split a level down, and what orjson refuses going to the exact parser."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mimo_sidecar.cli.main import allow_nesting_of_frames
from mimo_sidecar.transport import jsonrpc_codec as codec
from mimo_sidecar.transport import sliced_json
from mimo_sidecar.transport.jsondepth import FrameTooDeep
from tests.fuzz import LONG_EXAMPLES, examples

EXAMPLES = examples(60, long=LONG_EXAMPLES)  # `make fuzz`: MIMO_FUZZ_EXAMPLES
SIZES = [(16, 8, 4), (64, 32, 8), (200, 64, 16), (1000, 128, 32)]  # slice, first window, min window


@contextlib.contextmanager
def slices_of(sizes: tuple[int, int, int]) -> Iterator[None]:
    names = ("SLICE_BYTES", "_FIRST_WINDOW", "_MIN_WINDOW")
    saved = [getattr(sliced_json, name) for name in names]
    for name, size in zip(names, sizes, strict=True):
        setattr(sliced_json, name, size)
    try:
        yield
    finally:
        for name, size in zip(names, saved, strict=True):
            setattr(sliced_json, name, size)


@pytest.fixture
def tiny_slices() -> Iterator[None]:
    with slices_of(SIZES[0]):
        yield


def sliced(text: bytes) -> object:
    return sliced_json.loads_sliced(text, codec._loads_exact, codec._EXACT)


def whole(text: bytes) -> object:
    return codec._loads_exact(text)


def same(a: object, b: object) -> bool:
    """Equal values with the same key order and types (1 is not 1.0 or True)."""
    return json.dumps(a) == json.dumps(b) and repr(a) == repr(b)


leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["\udc00", 'a,"b', '{"info":', "\\", "],[", "é👍"])
)
documents = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=5), inner, max_size=8),
    max_leaves=30,
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(value=documents, indent=st.sampled_from([None, 1]), sizes=st.sampled_from(SIZES))
def test_the_same_value_as_a_whole_parse(
    value: object, indent: int | None, sizes: tuple[int, int, int]
) -> None:
    # json.dumps writes a lone surrogate as an escape, as a JavaScript host does.
    text = json.dumps(value, indent=indent).encode()
    with slices_of(sizes):
        assert same(sliced(text), whole(text))


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    value=documents,
    cut=st.integers(0, 10_000),
    insert=st.sampled_from([b"", b",", b"]", b"}", b'"', b"x", b"\xff"]),
    sizes=st.sampled_from(SIZES),
)
def test_a_broken_text_is_refused_like_a_whole_parse(
    value: object, cut: int, insert: bytes, sizes: tuple[int, int, int]
) -> None:
    text = json.dumps(value).encode()
    cut %= len(text) + 1
    broken = text[:cut] + insert + text[cut:]
    with slices_of(sizes):
        try:
            expected = whole(broken)
        except ValueError:
            with pytest.raises(ValueError):
                sliced(broken)
            return
        assert same(sliced(broken), expected)


def test_a_guessed_cut_inside_a_nested_array_is_refused(tiny_slices: None) -> None:
    """Found while writing it: a cut in the second inner array parsed, its array closed by the
    bracket of a wrapper, and the parse lost an element."""
    text = b"[[null, null, null], [null, null]]"
    assert sliced(text) == [[None, None, None], [None, None]]


def test_duplicate_keys_keep_the_last_value_in_the_first_place(tiny_slices: None) -> None:
    text = b'{"a": 1, "b": [' + b"0," * 40 + b'0], "a": {"x": [1, 2, 3, 4, 5, 6, 7, 8]}}'
    assert same(sliced(text), orjson.loads(text))
    assert list(sliced(text)) == ["a", "b"]  # type: ignore[call-overload]


@pytest.mark.parametrize("depth", [1023, 1024, 5000])
def test_the_depth_limit_counts_from_the_top(tiny_slices: None, depth: int) -> None:
    allow_nesting_of_frames()  # as the sidecar does: each level split costs a few Python frames
    text = b'{"pad": [' + b"1," * 50 + b'1], "a": ' + b"[" * depth + b"]" * depth + b"}"
    if depth < 1024:
        assert sliced(text) == orjson.loads(text)
    else:
        with pytest.raises(FrameTooDeep):
            sliced(text)


def test_long_strings_are_found_at_memchr_speed_and_parsed_by_orjson() -> None:
    """ijson took 42 s for 20 MB of "é" (quadratic in a string's length); escapes and quotes
    inside the string must not end it early."""
    text = orjson.dumps({"jsonrpc": "2.0", "messages": [{"t": "é" * 300_000 + '\\"' + "\\" * 7}], "n": 1})
    assert sliced(text) == orjson.loads(text)
