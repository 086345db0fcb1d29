"""Bad input never crashes a handler or corrupts a session (property tests over the real handlers).

Every request method of the registry is fed arbitrary JSON params, and mutations of its documented
example: each answer is a result or an error from the documented table, never -32603, and a
rejected `session/sync` leaves the session exactly as it was.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mimo_sidecar.rpc import errors
from mimo_sidecar.wire.registry import REGISTRY
from tests.fuzz import examples
from tests.harness import Harness, RpcFailure
from tests.json_paths import positions, replaced

SERVED = [
    name
    for name, spec in REGISTRY.items()
    if spec.kind == "request"
    and spec.direction == "client → sidecar"
    and name not in ("initialize", "shutdown")
]
DOCUMENTED = {spec.code for spec in errors.ERRORS}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=20,
)


def _mutations(example: Any) -> st.SearchStrategy[Any]:
    """The example with one key dropped or renamed, or any nested value replaced."""
    if not isinstance(example, dict) or not example:
        return json_values
    keys = sorted(example)
    paths = positions(example)
    return st.one_of(
        st.tuples(st.sampled_from(paths), json_values).map(lambda pv: replaced(example, pv[0], pv[1])),
        st.sampled_from(keys).map(lambda k: {x: v for x, v in example.items() if x != k}),
        st.tuples(st.sampled_from(keys), json_values).map(lambda kv: {**example, kv[0]: kv[1]}),
        st.tuples(st.sampled_from(keys), st.text(min_size=1, max_size=8)).map(
            lambda kv: {**{x: v for x, v in example.items() if x != kv[0]}, kv[1]: example[kv[0]]}
        ),
    )


def _server() -> Harness:
    return Harness(memory_root="/nonexistent-memory-root")  # reads fail cleanly, never outside


async def _call(server: Harness, method: str, params: Any) -> Any:
    return await server.call(method, params)


async def _answer(server: Harness, method: str, params: Any) -> int | None:
    """None for a result, else the error code."""
    try:
        await _call(server, method, params)
    except RpcFailure as exc:
        return exc.code
    return None


async def _opened(server: Harness) -> None:
    await _call(server, "session/open", REGISTRY["session/open"].params_example)


def _assert_documented_answer(method: str, params: Any) -> None:
    async def run() -> int | None:
        server = _server()
        await _opened(server)
        return await _answer(server, method, params)

    code = asyncio.run(run())
    assert code is None or (code in DOCUMENTED and code != errors.INTERNAL_ERROR.code), (method, params, code)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(method=st.sampled_from(SERVED), params=json_values)
def test_arbitrary_params_get_a_documented_answer(method: str, params: Any) -> None:
    _assert_documented_answer(method, params)


@settings(max_examples=examples(70), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), method=st.sampled_from(SERVED))
def test_mutated_examples_get_a_documented_answer(data: st.DataObject, method: str) -> None:
    _assert_documented_answer(method, data.draw(_mutations(REGISTRY[method].params_example)))


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=_mutations(REGISTRY["session/sync"].params_example))
def test_rejected_sync_leaves_the_session_untouched(params: Any) -> None:
    async def run() -> None:
        server = _server()
        await _opened(server)
        sid = REGISTRY["session/open"].params_example["sessionId"]
        before = await _call(server, "session/get", {"sessionId": sid})
        snapshot = [
            (m.info, copy.deepcopy(m.parts)) for m in server.service.sessions.require(sid).session.messages()
        ]
        code = await _answer(server, "session/sync", params)
        if code is not None:
            assert code in DOCUMENTED and code != errors.INTERNAL_ERROR.code
            after = await _call(server, "session/get", {"sessionId": sid})
            assert after == before
            assert [
                (m.info, m.parts) for m in server.service.sessions.require(sid).session.messages()
            ] == snapshot

    asyncio.run(run())
