"""The benchmark/sample session generator: reproducible, well-formed, and the size it promises."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import orjson
import pytest

from benchmarks.generator import (
    DEFAULT_BYTES_PER_MESSAGE,
    DEFAULT_FINAL_INPUT_TOKENS,
    SHAPES,
    generate_memory_root,
    generate_session,
    write_split_json,
)

N = 500
SEED = 11
MSG_ID = re.compile(r"msg_g[0-9a-f]{16}[0-9A-Za-z]{9}")
PRT_ID = re.compile(r"prt_g[0-9a-f]{16}[0-9A-Za-z]{9}")


@cache
def session(shape: str, seed: int = SEED, n: int = N) -> dict:
    return generate_session(n, seed, shape)


def main_assistants(data: dict) -> list[dict]:
    return [m for m in data["messages"] if m["info"]["role"] == "assistant" and "agentID" not in m["info"]]


# -- determinism ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
def test_same_seed_gives_identical_json(shape: str) -> None:
    assert orjson.dumps(generate_session(120, 3, shape)) == orjson.dumps(generate_session(120, 3, shape))


def test_another_seed_gives_another_session() -> None:
    assert orjson.dumps(generate_session(120, 3)) != orjson.dumps(generate_session(120, 4))


def test_memory_root_is_reproducible(tmp_path: Path) -> None:
    a = generate_memory_root(tmp_path / "a", "ses_x", "p1", 5)
    b = generate_memory_root(tmp_path / "b", "ses_x", "p1", 5)
    assert a == b
    for rel in a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


# -- well-formedness -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
def test_exact_count_ids_ascending_and_times_increasing(shape: str) -> None:
    msgs = session(shape)["messages"]
    assert len(msgs) == N
    ids = [m["info"]["id"] for m in msgs]
    assert all(MSG_ID.fullmatch(i) for i in ids)
    assert all(a < b for a, b in zip(ids, ids[1:], strict=False))
    created = [m["info"]["time"]["created"] for m in msgs]
    assert all(a < b for a, b in zip(created, created[1:], strict=False))


@pytest.mark.parametrize("shape", SHAPES)
def test_parts_carry_id_session_message_and_type(shape: str) -> None:
    data = session(shape)
    for m in data["messages"]:
        prt_ids = []
        for p in m["parts"]:
            assert isinstance(p["id"], str) and p["id"]
            assert p["sessionID"] == data["sessionId"]
            assert p["messageID"] == m["info"]["id"]
            assert isinstance(p["type"], str)
            if p["id"].startswith("prt_"):
                assert PRT_ID.fullmatch(p["id"])
                prt_ids.append(p["id"])
        assert prt_ids == sorted(set(prt_ids))


def test_inline_tool_parts_have_mimo_states() -> None:
    statuses = set()
    for m in session("inline")["messages"]:
        for p in m["parts"]:
            if p["type"] == "tool":
                st = p["state"]
                assert {"status", "input", "time"} <= st.keys() and st["time"]["start"] <= st["time"]["end"]
                assert isinstance(p["callID"], str) and isinstance(p["tool"], str)
                assert ("output" in st and "title" in st) if st["status"] == "completed" else "error" in st
                statuses.add(st["status"])
    assert statuses == {"completed", "error"}


def split_calls(data: dict) -> tuple[dict[str, int], dict[str, tuple[int, dict]]]:
    """Call IDs with the index of their issuing message, and results with their carrier index."""
    uses, results = {}, {}
    for i, m in enumerate(data["messages"]):
        info = m["info"]
        for p in m["parts"]:
            if p["type"] in ("tool_use", "function"):
                assert info["role"] == "assistant"
                uses[p["id"]] = i
            if p["type"] == "tool_result":
                assert info["role"] == "user"
                results[p["tool_use_id"]] = (i, p)
        if info["role"] == "tool":
            assert [p["type"] for p in m["parts"]] == ["text"]
            results[info["tool_call_id"]] = (i, {**info, "content": m["parts"][0]["text"]})
    return uses, results


@pytest.mark.parametrize("shape", ["anthropic", "openai"])
def test_split_shapes_pair_every_call_with_a_later_result(shape: str) -> None:
    data = session(shape)
    uses, results = split_calls(data)
    assert uses and set(results) <= set(uses)  # no orphan results
    for call_id, issued_at in uses.items():
        carried_at, result = results[call_id]  # every call has its result (interrupted ones flagged)
        assert carried_at > issued_at
        assert data["messages"][carried_at]["info"].get("agentID") == data["messages"][issued_at]["info"].get(
            "agentID"
        )
        if result.get("interrupted"):
            assert result.get("is_error") is True


def test_openai_arguments_are_json_strings() -> None:
    for m in session("openai")["messages"]:
        for p in m["parts"]:
            if p["type"] == "function":
                assert isinstance(json.loads(p["function"]["arguments"]), dict)


def test_anthropic_shares_provider_message_ids_between_entries() -> None:
    msgs = session("anthropic")["messages"]
    pairs = [
        (a, b)
        for a, b in zip(msgs, msgs[1:], strict=False)
        if a["info"].get("providerMessageID")
        and a["info"].get("providerMessageID") == b["info"].get("providerMessageID")
    ]
    assert pairs
    for first, second in pairs:
        assert "finish" not in first["info"] and second["info"]["finish"] == "tool-calls"


@pytest.mark.parametrize("shape", SHAPES)
def test_ends_inside_a_tool_loop_at_the_usage_target(shape: str) -> None:
    data = session(shape)
    last = main_assistants(data)[-1]["info"]
    assert last["finish"] == "tool-calls"
    assert last["tokens"]["input"] == DEFAULT_FINAL_INPUT_TOKENS
    inputs = [m["info"]["tokens"]["input"] for m in main_assistants(data) if "tokens" in m["info"]]
    assert inputs == sorted(inputs) and inputs[0] < inputs[-1] // 5


def test_sessions_have_sub_agent_slices_errors_and_mixed_user_text() -> None:
    msgs = [m for shape in SHAPES for m in session(shape)["messages"]]
    assert any(m["info"].get("agentID", "").startswith("explore-") for m in msgs)
    texts = [
        p["text"] for m in msgs if m["info"]["role"] == "user" for p in m["parts"] if p["type"] == "text"
    ]
    assert any(re.search(r"[\u4e00-\u9fff]", t) for t in texts)
    assert any(len(t) > 2000 for t in texts)
    finishes = {m["info"].get("finish") for m in msgs if m["info"]["role"] == "assistant"}
    assert {"tool-calls", "stop"} <= finishes


def test_tasks_and_actors() -> None:
    data = session("inline")
    tasks = {t["id"]: t for t in data["tasks"]}
    assert tasks["T1"]["status"] == "in_progress"
    assert (tasks["T1.1"]["status"], tasks["T1.1"]["parent_task_id"]) == ("done", "T1")
    assert (tasks["T1.2"]["status"], tasks["T1.2"]["parent_task_id"]) == ("open", "T1")
    assert tasks["T2"]["status"] == "blocked"
    assert tasks["T3"]["status"] == "done" and tasks["T3"]["cleanup_after"] > tasks["T3"]["ended_at"]
    active = [a for a in data["actors"] if a["background"] and a["status"] in ("pending", "running")]
    assert len(active) == 1 and active[0]["sessionID"] == data["sessionId"]


# -- sizes -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
def test_size_within_25_percent_of_target(shape: str) -> None:
    size = len(orjson.dumps(session(shape)))
    target = N * DEFAULT_BYTES_PER_MESSAGE
    assert 0.75 * target <= size <= 1.25 * target, size


def test_outputs_range_from_small_to_large() -> None:
    sizes = [
        len(p["state"]["output"])
        for m in session("inline", n=1500)["messages"]
        for p in m["parts"]
        if p["type"] == "tool" and p["state"]["status"] == "completed"
    ]
    assert min(sizes) < 500 and max(sizes) > 50_000


# -- files --------------------------------------------------------------------------------------------
def test_memory_root_layout(tmp_path: Path) -> None:
    files = set(map(str, generate_memory_root(tmp_path, "ses_abc", "proj1", 2)))
    for rel in (
        "sessions/ses_abc/checkpoint.md",
        "sessions/ses_abc/notes.md",
        "projects/proj1/MEMORY.md",
        "global/MEMORY.md",
        "sessions/ses_abc/tasks/T1/progress.md",
    ):
        assert rel in files
    checkpoint = (tmp_path / "sessions/ses_abc/checkpoint.md").read_text(encoding="utf-8")
    lines = checkpoint.split("\n")
    assert lines[0] == "# Session checkpoint" and re.search(r"^Topic:\s*\S", checkpoint, re.M)
    assert "## §1 Active intent" in lines
    assert any(line.startswith("_") and line.endswith("_") for line in lines)
    assert any(re.match(r"^- See \S+\.md \(\d+", line) for line in lines)
    assert 5_000 <= len(checkpoint.encode()) <= 40_000


def test_write_split_json_round_trips_one_item_per_line(tmp_path: Path) -> None:
    data = generate_session(60, 2)
    path = tmp_path / "s.json"
    write_split_json(path, data)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == data
    assert sum(1 for line in text.split("\n") if line.startswith('{"info":')) == 60
