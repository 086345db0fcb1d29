"""Wrongly typed host data never gets into a session, and what gets in never makes a request fail.

Every value of small sessions in every host shape is replaced, one at a time, by a value of another
JSON type (and every number by an infinity): `session/open` either refuses the session with -32602
naming that value's path (and keeps nothing), or accepts it, and then compute, prepare, commit,
insert and `request/build` in every format, before and after the rebuild, answer with a result or a
documented error, never -32603 (an attack found 216 of 308 such calls answered -32603). That attack's
own list of fields is checked by name, in open and in sync.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol.types import ClientCapabilities

from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.rpc import errors
from tests.harness import Harness, RpcFailure
from tests.json_paths import replaced
from tests.wrong_types import FOUND_CASES, dotted, later_calls, mutations, sessions

DOCUMENTED = {spec.code for spec in errors.ERRORS} - {errors.INTERNAL_ERROR.code}
CONFIG = RebuildConfig(
    writer_wait_with_watermark_ms=0, writer_wait_without_watermark_ms=0, inflation_guard=False
)
SHAPES = sessions()


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Harness:
    h = Harness(memory_root=str(tmp_path_factory.mktemp("memory")), config=CONFIG)
    h.server.protocol.client_capabilities = ClientCapabilities()  # a manual insert reports progress
    return h


async def answer(harness: Harness, method: str, params: Any) -> int | None:
    """None for a result, else the error code (which must be documented and not -32603)."""
    try:
        await harness.call(method, params)
    except RpcFailure as failure:
        assert failure.code in DOCUMENTED, f"{method}: {failure.code} {failure.message}"
        return failure.code
    return None


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_every_wrong_type_is_refused_at_its_path_or_harmless(harness: Harness, shape: str) -> None:
    refused = accepted = 0
    for n, (path, new, params) in enumerate(mutations(SHAPES[shape])):
        sid = f"{shape}-{n}"
        try:
            await harness.call("session/open", {"sessionId": sid, **params})
        except RpcFailure as failure:
            where = dotted(path)
            assert failure.code == -32602, (where, new, failure.message)
            fields = [e["field"] for e in failure.data["errors"]]
            assert all(f == where or f.startswith(where + ".") for f in fields), (where, new, fields)
            assert (await harness.error("session/get", {"sessionId": sid})).code == 1001
            refused += 1
            continue
        accepted += 1
        for method, call in later_calls(sid):
            assert await answer(harness, method, call) != -32603, (dotted(path), new, method)
        await harness.call("session/close", {"sessionId": sid})
    assert refused and accepted  # both sides of the rule are exercised


@pytest.mark.parametrize(("path", "value"), FOUND_CASES, ids=[dotted(p) for p, _ in FOUND_CASES])
async def test_the_fields_an_attack_found_are_refused_in_open_and_in_sync(
    harness: Harness, tmp_path: Path, path: tuple[Any, ...], value: Any
) -> None:
    params = replaced(SHAPES["inline"], path, value)
    sid = "found-" + dotted(path)
    err = await harness.error("session/open", {"sessionId": sid, **params})
    assert err.code == -32602 and [e["field"] for e in err.data["errors"]] == [dotted(path)], err.message
    assert (await harness.error("session/get", {"sessionId": sid})).code == 1001
    await harness.call("session/open", {"sessionId": sid, **SHAPES["inline"]})
    before = await harness.call("session/get", {"sessionId": sid})
    top = path[0]
    sync: dict[str, Any] = (
        {"upsertMessages": [params["messages"][path[1]]]} if top == "messages" else {top: params[top]}
    )
    if top == "requestPrefix":  # no sync key: the prefix is frozen at open
        return
    err = await harness.error("session/sync", {"sessionId": sid, "baseRevision": 1, **sync})
    where = dotted(("upsertMessages", 0, *path[2:]) if top == "messages" else path)
    assert err.code == -32602 and [e["field"] for e in err.data["errors"]] == [where], err.message
    assert await harness.call("session/get", {"sessionId": sid}) == before
    await harness.call("session/close", {"sessionId": sid})
