"""The bundled sample (examples/sample): current with its sources, and shaped the way the demo needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.core.checkpoint.template import SECTIONS, checkpoint_topic
from mimo_sidecar.core.config import PushCaps, RebuildConfig
from mimo_sidecar.core.memory.budgeted_read import section_aware_read
from mimo_sidecar.core.rebuild.trigger import is_overflow, usable_tokens
from mimo_sidecar.core.request.assembly import build_messages
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.ordering import id_ordering, is_mimo_v2_message_id
from mimo_sidecar.testing.standin_writer import standin_checkpoint

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample"


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    return json.loads((SAMPLE / "session.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def checkpoint(data: dict[str, Any]) -> str:
    return (SAMPLE / "memory" / "sessions" / data["sessionId"] / "checkpoint.md").read_text(encoding="utf-8")


def main_steps(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        m["info"] for m in data["messages"] if m["info"]["role"] == "assistant" and "agentID" not in m["info"]
    ]


def bullets(text: str, number: int) -> list[str]:
    body = text.split(SECTIONS[number - 1].italic + "\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in body.split("\n") if line.startswith("- ")]


def test_committed_sample_matches_its_sources() -> None:
    done = subprocess.run(
        [sys.executable, str(SAMPLE / "make_sample.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_only_the_last_step_crosses_the_trigger_line(data: dict[str, Any]) -> None:
    model, config = data["model"], RebuildConfig()
    line = usable_tokens(model["contextWindow"], 0, model["maxOutputTokens"], config, "xiaomi/mimo-v2-pro")
    steps = main_steps(data)
    crossed = [is_overflow(s["tokens"], line.usable, config, model["contextWindow"]) for s in steps]
    assert crossed[-1] and not any(crossed[:-1])
    assert steps[-1]["finish"] == "tool-calls"  # the session ends inside a tool loop


def test_ids_ascend_and_times_increase(data: dict[str, Any]) -> None:
    infos = [m["info"] for m in data["messages"]]
    ids = [i["id"] for i in infos]
    assert all(is_mimo_v2_message_id(i) for i in ids)
    assert ids == sorted(ids)
    created = [i["time"]["created"] for i in infos]
    assert created == sorted(set(created))


def test_the_stored_watermark_has_the_afternoon_after_it(data: dict[str, Any]) -> None:
    """What the bundled checkpoint.md covers: a main-slice message with user turns after it (the
    afternoon the rebuild keeps in the boundary)."""
    main = [m["info"] for m in data["messages"] if "agentID" not in m["info"]]
    ids = [i["id"] for i in main]
    assert data["watermark"] in ids
    after = main[ids.index(data["watermark"]) + 1 :]
    assert any(i["role"] == "user" for i in after) and after[-1]["role"] == "assistant"


def test_tasks_and_actors_the_readme_promises(data: dict[str, Any]) -> None:
    statuses = {t["id"]: t["status"] for t in data["tasks"]}
    assert {"done", "blocked", "in_progress"} <= set(statuses.values())
    assert any("parent_task_id" in t for t in data["tasks"])
    archived = [t for t in data["tasks"] if "cleanup_after" in t]
    assert [t["status"] for t in archived] == ["done"]
    running = [a for a in data["actors"] if a["status"] == "running"]
    assert len(running) == 1 and running[0]["background"] is True


def test_sample_checkpoint_reads_back_whole_with_its_topic(checkpoint: str) -> None:
    assert checkpoint_topic(checkpoint) is not None
    headings = [line for line in checkpoint.split("\n") if line.startswith("## ")]
    assert headings == [s.heading for s in SECTIONS]
    assert section_aware_read(checkpoint, PushCaps().checkpoint, "/p").truncated is False


def test_standin_writer_updates_the_sample_checkpoint(data: dict[str, Any], checkpoint: str) -> None:
    """The demo's writer: the stand-in over the writer request, from the checkpoint's end to the end."""
    main = [Message(m["info"], m["parts"]) for m in data["messages"] if "agentID" not in m["info"]]
    built = build_messages(main, collapse_tail=False, ordering=id_ordering(), reminder=None)
    since = data["watermark"]  # the sample's stored watermark, which its checkpoint.md covers
    got = standin_checkpoint(built.messages, checkpoint, sources=built.sources, since=since)
    assert checkpoint_topic(got) == checkpoint_topic(checkpoint)  # kept, not rewritten
    for n in (2, 4, 5, 6, 7, 8, 9):  # the list sections keep every bullet of the current file
        assert set(bullets(checkpoint, n)) <= set(bullets(got, n))
    assert "tests/dedupe.test.ts" in "".join(bullets(got, 8))  # a file of the afternoon
    assert "general-1" in got  # the background actor started after it
