"""`mimo-sidecar import` on a real transcript of each tool, then the result opened in the real sidecar.

The command runs as a subprocess (as a user would run it); its JSON is sent unchanged to a spawned
sidecar over stdio with `SidecarClient`, which then answers `rebuild/compute` and `request/build`
without an RPC error. One sidecar serves the module (`raw_sidecar`): each test opens its own session and
closes it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.client import SidecarClient
from tests.real_sessions import FORMAT_OF_FOLDER, absent_reason, main_session_files, real_sessions_root

pytestmark = pytest.mark.e2e
IMPORT_TIMEOUT_S = 60


def one_session_per_tool() -> list[Any]:
    root = real_sessions_root()
    if root is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=absent_reason()), id="real-sessions-absent")]
    first: dict[str, Path] = {}
    for path in main_session_files(root):
        first.setdefault(path.parent.name, path)
    return [pytest.param(path, id=folder) for folder, path in sorted(first.items())]


def run_import(path: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mimo_sidecar", "import", str(path), "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=IMPORT_TIMEOUT_S,
    )


@pytest.mark.parametrize("path", one_session_per_tool())
def test_an_imported_real_session_is_served_by_the_sidecar(
    path: Path, tmp_path: Path, raw_sidecar: SidecarClient
) -> None:
    out = tmp_path / "open.json"
    done = run_import(path, out)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # --output: the JSON went to the file
    assert f"imported {FORMAT_OF_FOLDER[path.parent.name]} session" in done.stderr
    params = json.loads(out.read_text(encoding="utf-8"))
    sid = params["sessionId"]
    client = raw_sidecar
    assert client.request("session/open", params) == {"sessionId": sid, "revision": 1}
    try:
        got = client.request("session/get", {"sessionId": sid})
        assert got["messageCount"] == len(params["messages"])
        assert got["idMode"] is False  # host IDs: sequence mode, in the order the importer gave

        computed = client.request(
            "rebuild/compute",
            {"sessionId": sid, "model": {"contextWindow": 200_000}, "includeText": True, "preview": "always"},
        )
        trigger = computed["trigger"]
        assert trigger["usageSource"] in ("last-finished", "earlier-step", "estimate")
        if trigger["usageSource"] != "last-finished":  # the usage fallback says so (Codex, Cline)
            assert trigger["count"] > 0 and trigger["warnings"]
        assert computed["watermark"] is not None  # the importer's stop reasons make steps "finished"
        assert computed["preview"]["report"] is not None

        built = client.request("request/build", {"sessionId": sid})
        ids = {m["info"]["id"] for m in params["messages"]}
        assert built["messages"] and set(built["sources"]) <= ids
        writer = client.request("request/build", {"sessionId": sid, "purpose": "writer"})
        assert writer["messages"]
    finally:
        client.request("session/close", {"sessionId": sid})


def test_codex_limits_recorded_in_the_rollout_reach_the_trigger(
    tmp_path: Path, raw_sidecar: SidecarClient
) -> None:
    root = real_sessions_root()
    if root is None:
        pytest.skip(absent_reason())
    rollout = next(iter(sorted((root / "codex").glob("*.jsonl"))), None)
    if rollout is None:
        pytest.skip("no Codex rollout in the real sessions")
    out = tmp_path / "open.json"
    assert run_import(rollout, out).returncode == 0
    params = json.loads(out.read_text(encoding="utf-8"))
    sid = params["sessionId"]
    raw_sidecar.request("session/open", params)
    try:
        computed = raw_sidecar.request("rebuild/compute", {"sessionId": sid})  # no model given
        assert computed["trigger"]["hard"] > 0
    finally:
        raw_sidecar.request("session/close", {"sessionId": sid})
