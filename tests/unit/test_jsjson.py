"""core.estimate.jsjson: JSON.stringify text and its UTF-16 length (behavior.md#message-estimate)."""

from __future__ import annotations

import json
import math
import random
import shutil
import struct
import subprocess
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mimo_sidecar.core.estimate.jsjson import (
    js_json_length,
    js_json_length_and_plain,
    js_number,
    js_stringify,
)
from mimo_sidecar.core.estimate.jstext import est, len16
from tests.fuzz import examples

# -- an independent reference ------------------------------------------------------------------
# Written from the ECMAScript definitions, sharing no code with the module under test: strings are
# escaped one UTF-16 code unit at a time (QuoteJSONString), numbers are formatted from the
# shortest-digit search done with `decimal` (Number::toString).

_SHORT_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}


def ref_quote(s: str) -> str:
    raw = s.encode("utf-16-le", "surrogatepass")
    cu = [raw[i] | (raw[i + 1] << 8) for i in range(0, len(raw), 2)]
    out = ['"']
    i = 0
    while i < len(cu):
        c = cu[i]
        if c in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[c])
        elif c < 0x20:
            out.append("\\u" + format(c, "04x"))
        elif 0xD800 <= c <= 0xDBFF and i + 1 < len(cu) and 0xDC00 <= cu[i + 1] <= 0xDFFF:
            out.append(chr(0x10000 + ((c - 0xD800) << 10) + (cu[i + 1] - 0xDC00)))
            i += 1
        elif 0xD800 <= c <= 0xDFFF:
            out.append("\\u" + format(c, "04x"))
        else:
            out.append(chr(c))
        i += 1
    out.append('"')
    return "".join(out)


def _shortest_decimal(x: float) -> tuple[int, int]:
    """(s, e): x == float(s × 10^e) with the fewest digits; ties -> closest, then even."""
    exact = Decimal(x)
    for p in range(1, 18):
        ctx_dn = Context(prec=p, rounding=ROUND_FLOOR)
        ctx_up = Context(prec=p, rounding=ROUND_CEILING)
        candidates = {ctx_dn.plus(exact), ctx_up.plus(exact)}
        good = [c for c in candidates if float(c) == x]
        if good:
            best = min(good, key=lambda c: (abs(c - exact), int(c.as_tuple().digits[-1]) % 2))
            _sign, digits, exponent = best.as_tuple()
            assert isinstance(exponent, int)  # finite
            exp = exponent
            s = int("".join(map(str, digits)))
            while s % 10 == 0 and s:
                s //= 10
                exp += 1
            return s, exp
    raise AssertionError(x)


def ref_number(x: float | int) -> str:
    if isinstance(x, int):
        try:
            x = float(x)
        except OverflowError:
            return "null"
    if x != x or x in (math.inf, -math.inf):
        return "null"
    if x == 0:
        return "0"
    if x < 0:
        return "-" + ref_number(-x)
    s, e = _shortest_decimal(x)
    digits = str(s)
    k = len(digits)
    n = k + e  # x = 0.digits × 10^n
    if 21 >= n >= k:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    exponent = n - 1
    mant = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mant}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


def ref_stringify(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return ref_number(v)
    if isinstance(v, str):
        return ref_quote(v)
    if isinstance(v, list):
        return "[" + ",".join(ref_stringify(x) for x in v) + "]"
    return "{" + ",".join(ref_quote(k) + ":" + ref_stringify(x) for k, x in v.items()) + "}"


def ref_len16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def text_of(v: Any) -> str:
    text = js_stringify(v)
    assert text is not None
    return text


def u16(s: str | None) -> bytes | None:
    """A string as JavaScript sees it: its UTF-16 code units. "\ud83d\udc4d" (two Python code
    points) and "\U0001f44d" (one) are the same JavaScript string."""
    return None if s is None else s.encode("utf-16-le", "surrogatepass")


# -- strategies ---------------------------------------------------------------------------------
ANY_CHAR = st.characters(exclude_categories=())  # lone surrogates included
TRICKY_TEXT = st.text(
    st.one_of(
        ANY_CHAR,
        st.sampled_from(
            ['"', "\\", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "\u2028", "\u2029"]
        ),
        st.sampled_from(["\ud83d", "\udc4d", "\U0001f44d", "\U00010000", "\U0010ffff", "\ue000", "用"]),
    )
)
NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**53, 2**53 + 1, -(2**53) - 1, 2**64, 10**21, 10**22, 10**400, -(10**400)]),
    st.sampled_from([1e21, 1e-6, 1e-7, 9.999999999999999e20, 5e-324, 1.7976931348623157e308, -0.0]),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TRICKY_TEXT)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(TRICKY_TEXT, inner, max_size=5)),
    max_leaves=25,
)


# -- behavior.md#tokens-examples ----------------------------------------------------------------
def test_spec_example_8000_x() -> None:
    part = {"type": "text", "text": "x" * 8000}
    # The reference text said 8024 units (behavior.md#spec-errata); the real count is 8025
    # ({"type":"text","text":""} is 25 units). The estimate 2006 is right either way.
    assert len16(text_of(part)) == 8025
    assert js_json_length(part) == 8025
    assert est(text_of(part)) == 2006


def test_spec_example_400_x() -> None:
    part = {"type": "text", "text": "x" * 400}
    # Same off-by-one in the reference text (424; behavior.md#spec-errata): 25 + 400 = 425 units;
    # the estimate 106 is right.
    assert js_json_length(part) == 425
    assert est(text_of(part)) == 106


# -- pitfalls ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0, "0"),
        (math.nan, "null"),
        (math.inf, "null"),
        (-math.inf, "null"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (9.999999999999999e20, "999999999999999900000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (-1.5e-7, "-1.5e-7"),
        (1e16, "10000000000000000"),
        (1e-5, "0.00001"),
        (0.1 + 0.2, "0.30000000000000004"),
        (123.456, "123.456"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),  # the nearest double
        (-(2**64), "-18446744073709552000"),
        (10**21, "1e+21"),
        (10**400, "null"),  # beyond the double range: Infinity
    ],
)
def test_js_number(value: float | int, text: str) -> None:
    assert js_number(value) == text
    assert ref_number(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("\x00\x1f", '"\\u0000\\u001f"'),
        ('\b\f\n\r\t"\\', '"\\b\\f\\n\\r\\t\\"\\\\"'),
        ("\x7f\u2028\u2029é用", '"\x7f\u2028\u2029é用"'),
        ("\ud83d", '"\\ud83d"'),
        ("a\udc4db", '"a\\udc4db"'),
        ("\U0001f44d", '"\U0001f44d"'),
        ("\ud83d\udc4d", '"\ud83d\udc4d"'),  # a pair given as two code points stays raw
        ("\udc4d\ud83d", '"\\udc4d\\ud83d"'),  # reversed halves are both lone
    ],
)
def test_strings(value: str, text: str) -> None:
    assert u16(js_stringify(value)) == u16(text)
    assert u16(ref_quote(value)) == u16(text)
    assert js_json_length(value) == len16(text)


def test_structures_are_compact() -> None:
    v: dict[str, Any] = {"a": [1, 2.5, None, True, False, {}], "b": {"c": ""}}
    assert js_stringify(v) == '{"a":[1,2.5,null,true,false,{}],"b":{"c":""}}'
    assert js_json_length(v) == len(text_of(v))


def test_unserializable_is_undefined() -> None:
    assert js_stringify(object()) is None
    assert js_json_length(object()) is None
    # an undefined member is omitted, an undefined array element becomes null
    assert js_stringify({"a": object(), "b": 1}) == '{"b":1}'
    assert js_stringify([object()]) == "[null]"


# -- properties -----------------------------------------------------------------------------------
@settings(max_examples=examples(150))
@given(JSON_VALUES)
def test_fast_length_equals_text_length(v: Any) -> None:
    assert js_json_length(v) == len16(text_of(v))


@settings(max_examples=examples(150))
@given(JSON_VALUES)
def test_matches_the_independent_reference(v: Any) -> None:
    expected = ref_stringify(v)
    assert u16(js_stringify(v)) == u16(expected)
    assert js_json_length(v) == ref_len16(expected)


@settings(max_examples=examples(150))
@given(JSON_VALUES)
def test_plain_means_orjson_writes_it_as_javascript_does(v: Any) -> None:
    # `plain` lets a tool input inside a part be written by orjson with no check: it must never be
    # claimed for a value orjson would write otherwise, here or anywhere inside it.
    length, plain = js_json_length_and_plain(v)
    assert length == js_json_length(v)
    if plain:
        assert orjson.dumps(v).decode() == js_stringify(v) == ref_stringify(v)
        inner = list(v.values()) if isinstance(v, dict) else list(v) if isinstance(v, list) else []
        for x in inner:
            assert orjson.dumps(x).decode() == ref_stringify(x)


def test_what_is_not_plain() -> None:
    assert js_json_length_and_plain({"a": ["x", 1, True, None, {"b": -(2**53)}]})[1]
    for v in ({"a": [{"x": 3.0}]}, {"a": 2**53 + 1}, ["\ud800"], {"d": {1, 2}}, {1: "x"}):
        assert not js_json_length_and_plain(v)[1], v
    assert js_json_length_and_plain(["\ud800"]) == (js_json_length(["\ud800"]), False)


@settings(max_examples=examples(700))
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_match_the_reference(x: float) -> None:
    assert js_number(x) == ref_number(x)


# -- against real JavaScript ---------------------------------------------------------------------
_NODE = shutil.which("node")
_NODE_SCRIPT = r"""
const chunks = [];
process.stdin.on('data', c => chunks.push(c));
process.stdin.on('end', () => {
  const values = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const out = values.map(v => { const s = JSON.stringify(v); return [s, s.length]; });
  process.stdout.write(JSON.stringify(out));
});
"""


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:  # any finite double, from raw bits
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        return x if math.isfinite(x) else rng.uniform(-1e6, 1e6)
    if kind == 2:
        return rng.choice(
            [rng.randrange(-(2**80), 2**80), rng.randrange(-1000, 1000), 10 ** rng.randrange(0, 400)]
        )
    if kind == 3:
        return rng.choice([1e21, 1e-7, 1e-6, 123e-20, -0.0, 0.5, 2**53 + 1, 1e300 * 10, rng.random()])
    if kind in (4, 5):
        pool = 'ab"\\\b\f\n\r\t\x00\x01\x1f\x7f\u2028\u2029é用\ud83d\udc4d\U0001f44d\U0010ffff\ue000'
        return "".join(rng.choice(pool) for _ in range(rng.randrange(12)))
    if kind in (6, 7):
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    # Keys that are not array indices: JavaScript would put integer-like keys first.
    return {"k" + str(_random_value(rng, 9)): _random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


@pytest.mark.skipif(_NODE is None, reason="node is not on PATH: the real JSON.stringify comparison needs it")
def test_against_node_json_stringify() -> None:
    assert _NODE is not None
    rng = random.Random(20240611)
    values = [_random_value(rng) for _ in range(3000)]
    # json.dumps escapes lone surrogates as \udxxx and prints floats with repr, which JSON.parse
    # reads back exactly; huge integers become the nearest double there, as in behavior.md#js-stringify.
    payload = json.dumps(values)
    done = subprocess.run(
        [_NODE, "-e", _NODE_SCRIPT], input=payload.encode(), capture_output=True, check=True, timeout=60
    )
    results = json.loads(done.stdout)
    assert len(results) == len(values)
    for v, (text, length) in zip(values, results, strict=True):
        assert u16(js_stringify(v)) == u16(text), v
        assert js_json_length(v) == length, v


# -- regressions -----------------------------------------------------------------------------------
def test_tuples_get_the_float_correction_too() -> None:
    # The fast path used to skip floats inside tuples (orjson prints "[1.0]", JavaScript "[1]").
    assert js_stringify((1.0, [2.0])) == "[1,[2]]"
    assert js_json_length((1.0, [2.0])) == 7


def test_nesting_deeper_than_the_python_stack_is_unserializable() -> None:
    v: list[Any] = []
    for _ in range(5000):
        v = [v]
    assert js_json_length(v) is None  # counts 1000 tokens, like a part JavaScript cannot serialize


def test_shared_and_cyclic_containers_take_the_exact_path() -> None:
    shared = [1, "x"]
    assert js_stringify({"a": shared, "b": shared}) == '{"a":[1,"x"],"b":[1,"x"]}'
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(RecursionError):  # as JavaScript's JSON.stringify throws on a cycle
        js_stringify(cyclic)


def test_a_number_in_text_does_not_hide_a_float_elsewhere() -> None:
    # Text that looks like a float (inside a string) is text; a float anywhere, however deep, is
    # written as JavaScript writes it, never as orjson does ("3.0").
    assert js_stringify({"note": "at :1.5", "n": 2}) == '{"note":"at :1.5","n":2}'
    deep = {"note": "at :1.5", "deep": [[{"x": 3.0}]]}
    assert js_stringify(deep) == '{"note":"at :1.5","deep":[[{"x":3}]]}'
    assert js_stringify([1e21, -2.0, 1e-7]) == "[1e+21,-2,1e-7]"
    assert js_json_length({"deep": [[{"x": 3.0}]]}) == len('{"deep":[[{"x":3}]]}')
    assert js_json_length({"big": -(2**60)}) == len('{"big":-1152921504606846976}')
    assert js_json_length([2**53 + 1]) == len(js_number(2**53 + 1)) + 2


def test_integers_around_2_to_the_53_are_written_as_javascript_does() -> None:
    for n in (2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1, 10**15, 10**16 - 1):
        assert js_stringify([n]) == f"[{js_number(n)}]"
        assert js_json_length([n]) == len(js_number(n)) + 2


def test_values_javascript_has_no_such_type_for_take_the_exact_path() -> None:
    import datetime
    import enum

    class Label(str):
        pass

    class Level(enum.IntEnum):
        HIGH = 2

    # orjson would write these (an ISO date, the subclass's value); JavaScript's JSON.stringify of
    # the Python value is what the exact path says: undefined for the date, the value otherwise.
    assert js_stringify({"d": datetime.date(2026, 1, 2), "n": 1}) == '{"n":1}'
    assert js_stringify([Label("x"), Level.HIGH]) == '["x",2]'
