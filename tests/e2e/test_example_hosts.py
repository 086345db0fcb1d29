"""The example hosts (examples/hosts/), offline: each runs a long tool loop on its provider's
official SDK against the local fake provider, crosses the trigger line, writes the checkpoint with
the writer kit and rebuilds at least twice, and sends only requests the fake accepts (it answers
400 to any request a provider rule forbids: `mimo_sidecar.rules.check`). The model has the
sidecar's model tools too: after the first rebuild the fake searches the history for a file the
rebuilt context only names, then reads that call's whole result back, both through `tools/call`.

The hosts' loops run here in process over one shared sidecar (one session each), so the four cost
one sidecar start; CI also runs each host's script once, as a user would (`.ci/run`)."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.client import Sidecar

pytestmark = pytest.mark.e2e

HOSTS = Path(__file__).resolve().parents[2] / "examples" / "hosts"
STEPS = 24
PROVIDERS = {
    "anthropic": "AnthropicProvider",
    "openai_responses": "ResponsesProvider",
    "openai_chat": "ChatProvider",
    "gemini": "GeminiProvider",
}


def host_module(name: str) -> Any:
    if str(HOSTS) not in sys.path:
        sys.path.insert(0, str(HOSTS))  # the hosts import their siblings, as when run as scripts
    return importlib.import_module(name)


@pytest.mark.parametrize("host", sorted(PROVIDERS))
def test_the_example_host_rebuilds_twice_with_every_request_accepted(
    host: str, sidecar: Sidecar, memory_root: Path
) -> None:
    module = host_module(f"{host}_host")
    loop = host_module("host_loop")
    session_id = f"ses_{host}"
    with host_module("fake_provider").FakeProvider(steps=STEPS) as fake:
        report = loop.run_host(sidecar, getattr(module, PROVIDERS[host])(fake.url), fake, session_id, STEPS)
    context = f"\n{json.dumps(report)}"
    assert report["rejected"] == [], context
    assert report["accepted"] == report["steps"] + report["writers"], context  # every turn, every writer
    # the whole loop ran, to the closing answer, with the two history calls besides the reads
    assert report["steps"] == STEPS + 1 + 2, context
    assert report["rebuilds"] >= 2 and set(report["outcomes"]) == {"rebuilt"}, context
    assert report["writers"] == report["rebuilds"], context  # each rebuild had its fresh checkpoint
    # The usage is mapped right: the sidecar counted exactly what the provider was sent and answered
    # (a host adding the cached tokens twice would cross the line at half the size).
    assert report["counts"] == report["totals"][: len(report["counts"])], context
    assert len([c for c in report["counts"] if c >= report["usable"]]) == report["rebuilds"], context
    # The model tools: offered (the rebuilt text names only tools the request has), routed, answered.
    assert report["named_missing"] == [], context
    assert report["sidecar_tool_calls"] == ["mimo_history", "mimo_history"], context
    search, result = report["recalled"]
    path = re.search(r'read \{"filePath":"(src/file\d+\.py)"\}', search)
    assert path is not None and search.startswith("1 match(es)"), context
    assert loop.read_file(path.group(1)) in result, context  # the whole result the rebuild cleared
    checkpoint = memory_root / "sessions" / session_id / "checkpoint.md"
    assert "Topic: read the project's source files one by one" in checkpoint.read_text(encoding="utf-8")
