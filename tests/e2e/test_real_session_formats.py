"""One real session per source tool, served by the real sidecar over stdio, in every format, across
two rebuilds (the in-process twin covering all seven sessions is
tests/unit/test_real_session_requests.py).

The transcript is imported, opened with the prefix its host declares, and `request/build` is asked
for the main request and the writer's in each format (Anthropic with thinking unset, on and off,
and cache breakpoints): the provider-rules checker finds nothing and the official SDK types accept
each. Then the host's writer cycle with the kit (`rebuild/compute` → `checkpoint/prepare` in each
format → `checkpoint/commit`) and `rebuild/insert`: rebuilt, with the newest genuine user
ask of the transcript in the boundary (the fidelity report and the boundary's text agree). The
writer's whole request (`checkpoint/prepare`, its instructions last) is checked in every format
too. The same checks; then the host's next steps synced, a second writer cycle and rebuild, the
same checks. One sidecar serves the module (`raw_sidecar`): each test
opens its own session and closes it; each transcript is imported once per run
(`tests.real_sessions.imported`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.client import SidecarClient
from mimo_sidecar.importers import newest_user_ask
from tests.e2e.test_import_real_sessions import one_session_per_tool
from tests.real_sessions import imported
from tests.unit.host_loop import HostSteps, assert_wire_valid, host_prefix
from tests.unit.test_real_session_requests import CHECKPOINT, HOST_STEPS, RUNS

pytestmark = pytest.mark.e2e
Json = dict[str, Any]


def build_every_format(client: SidecarClient, sid: str, phase: str) -> None:
    for fmt, params in requests_of_every_run(sid):
        thinking = params.get("target", {}).get("thinking")
        for purpose in ("turn", "writer"):
            res = client.request("request/build", {**params, "purpose": purpose})
            assert res["messages"], (phase, fmt, purpose)
            assert len(res["sourceGroups"]) == len(res["messages"])
            # The writer's history is open: checkpoint/prepare closes it.
            assert_wire_valid(
                fmt, res, thinking=thinking, open_end=purpose == "writer", where=f"{phase} {purpose}"
            )


def writer_cycle_and_insert(client: SidecarClient, sid: str, phase: str) -> Json:
    """The host's writer with the kit: `checkpoint/prepare` (the writer's whole request, its
    instructions last) in every format, each sendable as is; `checkpoint/commit`; then the insert."""
    computed = client.request("rebuild/compute", {"sessionId": sid, "preview": False})
    watermark = computed["watermark"]["messageId"]
    for fmt, params in requests_of_every_run(sid):
        prepared = client.request("checkpoint/prepare", {**params, "watermark": watermark})
        assert prepared["watermark"] == watermark
        thinking = params.get("target", {}).get("thinking")
        assert_wire_valid(fmt, prepared, thinking=thinking, where=f"{phase} checkpoint/prepare")
    client.request("checkpoint/commit", {"sessionId": sid, "watermark": watermark, "content": CHECKPOINT})
    inserted: Json = client.request("rebuild/insert", {"sessionId": sid, "reason": "auto"})
    return inserted


def requests_of_every_run(sid: str) -> list[tuple[str, Json]]:
    """request/build's params for each run of RUNS (Anthropic with cache breakpoints)."""
    out = []
    for fmt, thinking in RUNS:
        params: Json = {"sessionId": sid, "format": fmt}
        if thinking is not None:
            params["target"] = {"thinking": thinking}
        if fmt == "anthropic":
            params["cache"] = {"ttl": "5m"}
        out.append((fmt, params))
    return out


@pytest.mark.parametrize("path", one_session_per_tool())
def test_a_real_session_over_stdio_in_every_format_across_two_rebuilds(
    path: Path, raw_sidecar: SidecarClient
) -> None:
    params = imported(path).params  # a fresh copy: the prefix is added to it
    params["requestPrefix"] = host_prefix(params)
    sid = params["sessionId"]
    ask = newest_user_ask(params)
    assert ask is not None
    client = raw_sidecar
    client.request("session/open", params)
    try:
        build_every_format(client, sid, "before")

        first = writer_cycle_and_insert(client, sid, "before")
        assert first["outcome"] == "rebuilt", first.get("detail")
        newest = first["fidelity"]["newestUserAsk"]
        assert newest["messageId"] == ask[0]
        assert newest["status"] in ("verbatim", "truncated")
        boundary = json.dumps(first["message"], ensure_ascii=False)
        if newest["status"] == "verbatim":
            assert json.dumps(ask[1].strip(), ensure_ascii=False)[1:-1] in boundary  # shown trimmed
        else:
            assert f"tokens elided from message {ask[0]}" in boundary
        build_every_format(client, sid, "after one rebuild")

        steps = HostSteps(params)
        appended = [m for k in range(HOST_STEPS) for m in steps.step(k, image=k % 5 == 0)]
        client.request("session/sync", {"sessionId": sid, "upsertMessages": appended})
        second = writer_cycle_and_insert(client, sid, "after one rebuild")
        assert second["outcome"] == "rebuilt", second.get("detail")
        build_every_format(client, sid, "after a second rebuild")
    finally:
        client.request("session/close", {"sessionId": sid})
