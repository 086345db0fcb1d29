"""The Node example client (examples/node/client.mjs) against the real sidecar.

Runs the example exactly as an extension author would (`node client.mjs <memoryRoot>`, with
`MIMO_SIDECAR_PYTHON` pointing at this interpreter) and asserts the facts it reports on its last
stdout line, `RESULT {json}`. Skipped when Node/npm are missing, or when its dependencies (the
typed client of clients/typescript; `ai` and `zod` for the AI SDK's own ModelMessage schema) are
not installed and the npm registry cannot be reached.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.core.checkpoint.template import CHECKPOINT_TITLE, SECTIONS

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "node"
TYPED_CLIENT = REPO / "clients" / "typescript"
NPM_TIMEOUT_S = 180
CLIENT_TIMEOUT_S = 60

# Phrases npm prints when it cannot reach the registry (offline CI, blocked network).
_NETWORK_ERRORS = (
    "ENOTFOUND",
    "EAI_AGAIN",
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "ENETUNREACH",
    "EHOSTUNREACH",
    "network",
    "socket hang up",
    "request to https://",
)


def _npm_ci(where: Path) -> None:
    npm = shutil.which("npm")
    assert npm is not None
    try:
        proc = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"`npm ci` in {where} did not finish in {NPM_TIMEOUT_S} s (registry unreachable?)")
    if proc.returncode != 0:
        output = proc.stdout + proc.stderr
        network = [line for line in output.splitlines() if any(m in line for m in _NETWORK_ERRORS)]
        if network:
            pytest.skip(f"`npm ci` could not reach the npm registry: {network[0].strip()}")
        pytest.fail(f"`npm ci` failed in {where} (exit {proc.returncode}):\n{output}")


# One `npm ci` at a time in this checkout: the modules needing the example's dependencies (this one,
# test_real_session_ai_sdk_schema.py) can run on two xdist workers at once, and two `npm ci` in one
# folder delete each other's node_modules. The lock lives outside the repository.
NPM_LOCK = Path(tempfile.gettempdir()) / f"mimo-sidecar-npm-{hashlib.sha256(bytes(REPO)).hexdigest()[:16]}"


@contextlib.contextmanager
def _npm_lock() -> Iterator[None]:
    with open(NPM_LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed
        yield


def _ensure_node_modules() -> None:
    """The typed client first (its `npm ci` builds it: npm runs no install script of a linked
    package), then the example, which links it; checked again once the lock is held, so a worker
    that waited finds the other's install done."""
    with _npm_lock():
        if not (TYPED_CLIENT / "dist" / "src" / "index.js").exists():
            _npm_ci(TYPED_CLIENT)
        deps = ("mimo-sidecar-client", "ai", "zod")
        if not all((EXAMPLE / "node_modules" / dep / "package.json").exists() for dep in deps):
            _npm_ci(EXAMPLE)


@pytest.fixture(scope="module")
def node() -> str:
    node_bin = shutil.which("node")
    if node_bin is None or shutil.which("npm") is None:
        pytest.skip("node and npm must be on PATH to run the Node example client")
    _ensure_node_modules()
    return node_bin


def _run_client(node: str, memory_root: Path) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    env = dict(os.environ, MIMO_SIDECAR_PYTHON=sys.executable)
    env.pop("MIMO_MEMORY_ROOT", None)
    proc = subprocess.run(
        [node, str(EXAMPLE / "client.mjs"), str(memory_root)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=CLIENT_TIMEOUT_S,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"no RESULT line (exit {proc.returncode})\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return json.loads(lines[-1][len("RESULT ") :]), proc


@pytest.mark.timeout(NPM_TIMEOUT_S + CLIENT_TIMEOUT_S + 30)
def test_node_example_client_full_cycle(node: str, tmp_path: Path) -> None:
    memory_root = tmp_path / "memory"
    result, proc = _run_client(node, memory_root)
    context = (
        f"\nRESULT: {json.dumps(result, ensure_ascii=False)}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    )

    assert proc.returncode == 0, context
    assert result["ok"] is True, context

    # The writer kit: session/open created checkpoint.md from the template, checkpoint/prepare
    # registered the writer with its instructions last, the JS stand-in filled the template and
    # checkpoint/commit wrote it, in the root the demo was given; the boundary carries its topic.
    checkpoint = memory_root / "sessions" / "ses_nodeExampleDemo01" / "checkpoint.md"
    text = checkpoint.read_text(encoding="utf-8")
    assert result["checkpointCreated"] is True and result["prepareStarted"] is True, context
    assert result["instructionsLast"] is True and result["commitWatermark"], context
    assert text.startswith(CHECKPOINT_TITLE) and f"Topic: {result['checkpointTopic']}\n" in text, context
    assert all(section.heading in text for section in SECTIONS), context
    assert "- Latest ask: \u201c" in text, context  # a section the stand-in filled
    assert result["boundaryTopic"] == result["checkpointTopic"] and "CSV export" in text, context

    # The rebuild waited for the writer: busy "Preparing conversation context…", then idle.
    statuses = result["statuses"]
    assert statuses[0] == {"state": "busy", "message": "Preparing conversation context\u2026"}, context
    assert statuses[1]["state"] == "idle", context
    # The cancellation demo's manual rebuild also ends idle.
    assert statuses[-1]["state"] == "idle", context

    # Work-done progress, advertised in initialize: begin ... end for each waiting rebuild.
    kinds = result["progressKinds"]
    assert kinds[:2] == ["begin", "end"], context
    assert kinds[-1] == "end", context
    assert set(kinds) <= {"begin", "report", "end"}, context

    assert result["invalidParamsCode"] == -32602, context
    assert result["shouldRebuild"] is True, context
    assert result["insertOutcome"] == "rebuilt", context
    assert result["waitResult"] == "success", context
    assert result["boundaryRole"] == "user", context
    assert result["boundaryFirstPartType"] == "checkpoint", context

    before, after = result["buildBefore"], result["buildAfter"]
    # request/build's default output passes the `ai` package's own ModelMessage schema, as is.
    assert before["schemaErrors"] == [] and after["schemaErrors"] == [], context
    split = result["buildSplit"]  # thinking, a user image and an image inside a tool result
    assert split["roles"] == ["user", "assistant", "tool"] and split["schemaErrors"] == [], context
    assert after["messages"] < before["messages"], context
    assert after["estimatedTokens"] < before["estimatedTokens"], context

    assert result["cancelCode"] == -32800, context
    assert result["cancelKeptRevision"] is True, context
    assert result["logMessages"] == [], context  # the demo config has no unknown keys
    assert result["exitCode"] == 0, context
