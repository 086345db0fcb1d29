"""`request/build`'s default output (`ai-sdk`) for every real transcript passes the `ai` package's
own ModelMessage schema, before and after two rebuilds, main and writer requests alike.

The provider formats are validated with the official Python SDKs' types
(tests/unit/test_real_session_requests.py); the AI SDK's schema lives in its npm package, so the
requests are checked by examples/node/check-messages.mjs. Skipped when Node/npm are missing or the
example's dependencies cannot be installed (tests/e2e/test_node_client.py's `node` fixture), and
when shared/real-sessions is absent.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from tests.e2e.test_node_client import EXAMPLE, NPM_TIMEOUT_S, node  # noqa: F401 - the fixture
from tests.real_sessions import real_session_files
from tests.unit.test_real_session_requests import NOW, phases

CHECK_TIMEOUT_S = 120
# The first test may be the one whose `node` fixture installs the example (test_node_client.py's
# `npm ci`, when this module's worker gets there first), so its bound covers that as well.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(NPM_TIMEOUT_S + CHECK_TIMEOUT_S + 30)]


@pytest.mark.parametrize("path", real_session_files())
def test_ai_sdk_output_of_a_real_session_passes_the_ai_package_schema(
    path: Path,
    tmp_path: Path,
    node: str,  # noqa: F811
) -> None:
    requests: dict[str, list[dict]] = {}
    for phase, session, memory in phases(path, tmp_path):
        main = engine.build(session, memory, RebuildConfig(), now_ms=NOW)
        requests[f"{phase} main"] = main.request.messages
        requests[f"{phase} writer"] = engine.build_for_writer(session).request.messages
    done = subprocess.run(
        [node, str(EXAMPLE / "check-messages.mjs")],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=CHECK_TIMEOUT_S,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr
    result = json.loads(lines[-1][len("RESULT ") :])
    assert result["errors"] == []
    assert result["checked"] == sum(map(len, requests.values()))
