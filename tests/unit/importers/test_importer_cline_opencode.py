"""Cline histories (tool output as user text) and OpenCode exports and storage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mimo_sidecar.importers import TranscriptError, import_transcript, newest_user_ask
from tests.unit.importers.transcripts import (
    SIGNATURE,
    T0,
    by_id,
    cline_message,
    cline_metrics,
    image,
    open_in_core,
    opencode_export,
    text,
    thinking,
    tool_use,
)


def cline_task(tmp_path: Path, history: list[dict], task_id: str = "1760000000000") -> Path:
    task = tmp_path / "tasks" / task_id
    task.mkdir(parents=True)
    path = task / "api_conversation_history.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    return path


def run(path: Path):
    result = import_transcript(path)
    open_in_core(result.params)
    assert result.report.consistent, result.report.as_dict()
    return result


ENV = "<environment_details>\n# Current Time\n10/9/2025\n</environment_details>"


def test_cline_tool_output_text_is_paired_with_its_call(tmp_path: Path) -> None:
    history = [
        cline_message("user", [text("<task>\nAdd a health endpoint\n</task>"), text(ENV)], T0),
        cline_message(
            "assistant",
            [
                text("Reading both files."),
                tool_use("toolu_1", "read_file", path="a.ts"),
                tool_use("toolu_2", "list_files", path="."),
            ],
            T0 + 1000,
            **cline_metrics(1500, 60, cached=500),
        ),
        cline_message(
            "user",
            [
                text("[list_files for '.'] Result:\na.ts\nb.ts"),
                text("[read_file for 'a.ts'] Result:\nexport {}"),
                text("# TODO LIST UPDATE REQUIRED - include task_progress"),
                text(ENV),
            ],
            T0 + 2000,
        ),
        cline_message(
            "assistant", [thinking("Now the endpoint."), tool_use("toolu_3", "attempt_completion")], T0 + 3000
        ),
        cline_message(
            "user",
            [
                text("[attempt_completion] Result: Done"),
                text("The user has provided feedback on the results. Consider their input."),
                text("<feedback>\nAlso return the version\n</feedback>"),
                text(ENV),
            ],
            T0 + 4000,
        ),
    ]
    result = run(cline_task(tmp_path, history))
    params = result.params
    assert params["sessionId"] == "1760000000000"
    found = by_id(params)
    carrier = found["1760000000000.2"]
    assert [(p["type"], p.get("tool_use_id")) for p in carrier["parts"][:2]] == [
        ("tool_result", "toolu_2"),  # matched by tool name, not position
        ("tool_result", "toolu_1"),
    ]
    assert carrier["parts"][1]["content"].startswith("[read_file for 'a.ts'] Result:")
    assert all(p.get("synthetic") for p in carrier["parts"][2:])  # notices only: they stay on the carrier
    assert "1760000000000.2#text" not in found
    # Feedback typed by the user next to a result becomes a user message of its own.
    assert [p["type"] for p in found["1760000000000.4"]["parts"]] == ["tool_result"]
    feedback = found["1760000000000.4#text"]["parts"]
    assert [p.get("synthetic", False) for p in feedback] == [True, False, True]
    assert newest_user_ask(params)[1] == "<feedback>\nAlso return the version\n</feedback>"
    first = found["1760000000000.1"]["info"]
    assert (first["providerID"], first["modelID"], first["mode"], first["finish"]) == (
        "anthropic",
        "claude-test-1",
        "act",
        "tool-calls",
    )
    assert first["tokens"] == {
        "input": 1000,
        "output": 60,
        "reasoning": 0,
        "cache": {"read": 500, "write": 0},
    }
    assert "tokens" not in found["1760000000000.3"]["info"]  # no metrics recorded
    assert found["1760000000000.3"]["parts"][0]["signature"] == SIGNATURE
    assert found["1760000000000.0"]["parts"][0].get("synthetic") is None  # the <task> is the user's
    assert found["1760000000000.0"]["parts"][1]["synthetic"] is True


def test_cline_interrupted_call_and_images(tmp_path: Path) -> None:
    history = [
        cline_message("user", [text("<task>\nFix the layout\n</task>"), image("QUJD")], T0),
        cline_message(
            "assistant", [tool_use("toolu_9", "execute_command", command="npm run dev")], T0 + 1000
        ),
        cline_message(
            "user",
            [
                text("[TASK RESUMPTION] This task was interrupted 3 minutes ago."),
                text(
                    "New instructions for task continuation:\n<user_message>\nuse port 3001\n</user_message>"
                ),
            ],
            T0 + 2000,
        ),
    ]
    result = run(cline_task(tmp_path, history))
    messages = result.params["messages"]
    assert messages[0]["parts"][1]["source"]["data"] == "QUJD"
    assert not any(p["type"] == "tool_result" for m in messages for p in m["parts"])  # left unanswered
    assert "use port 3001" in newest_user_ask(result.params)[1]


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"not": "a list"}, None),
        ([1], "[0]"),
        ([{"role": "system", "content": "x"}], "[0]"),
        ([{"role": "user", "content": 5}], "[0]"),
        ([{"role": "assistant", "content": [{"type": "tool_use", "name": "x"}]}], "[0]"),
    ],
)
def test_cline_shape_errors_name_the_place(tmp_path: Path, document: object, where: str | None) -> None:
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(document))
    with pytest.raises(TranscriptError) as err:
        import_transcript(path, "cline")
    assert err.value.where == where
    assert str(err.value).startswith(str(path))


def test_opencode_export_is_kept_as_the_host_wrote_it(tmp_path: Path) -> None:
    export = opencode_export()
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    result = run(path)
    params = result.params
    assert (params["sessionId"], params["projectId"]) == ("ses_demo01", "prj_demo")
    for got, sent in zip(params["messages"], export["messages"], strict=True):
        assert got["parts"] == sent["parts"]
        assert got["info"] == sent["info"]  # finish and tokens as OpenCode recorded them
    assert result.report.not_imported == {"todo list (not imported: no task ledger equivalent)": 1}
    assert not result.report.adjusted
    assert newest_user_ask(params) == ("msg_a001", "Tidy up the config loader")


def storage(root: Path, session_id: str, project: str = "prj_demo") -> None:
    export = opencode_export(session_id)
    (root / "session" / project).mkdir(parents=True, exist_ok=True)
    (root / "session" / project / f"{session_id}.json").write_text(
        json.dumps({**export["info"], "id": session_id})
    )
    for message in reversed(export["messages"]):  # file order must not matter
        mid = message["info"]["id"] + session_id[-1]
        (root / "message" / session_id).mkdir(parents=True, exist_ok=True)
        (root / "message" / session_id / f"{mid}.json").write_text(json.dumps(message["info"]))
        for part in message["parts"]:
            (root / "part" / mid).mkdir(parents=True, exist_ok=True)
            (root / "part" / mid / f"{part['id']}.json").write_text(json.dumps(part))


def test_opencode_storage_layout(tmp_path: Path) -> None:
    root = tmp_path / "opencode" / "storage"
    storage(root, "ses_one1")
    result = run(tmp_path / "opencode")
    params = result.params
    assert params["sessionId"] == "ses_one1"
    assert [m["info"]["id"] for m in params["messages"]] == ["msg_a0011", "msg_a0021"]  # time order
    assert [p["id"] for p in params["messages"][0]["parts"]] == ["prt_a001", "prt_a002"]
    assert result.report.records_read == 2 + 4
    assert run(root / "session" / "prj_demo" / "ses_one1.json").params == params


def test_opencode_storage_with_several_sessions_needs_a_choice(tmp_path: Path) -> None:
    root = tmp_path / "storage"
    storage(root, "ses_one1")
    storage(root, "ses_two2")
    with pytest.raises(TranscriptError, match="2 sessions in this storage.*--session"):
        import_transcript(tmp_path)
    assert import_transcript(tmp_path, session="ses_two2").params["sessionId"] == "ses_two2"
    with pytest.raises(TranscriptError, match="no session 'ses_x'"):
        import_transcript(tmp_path, session="ses_x")


@pytest.mark.parametrize(
    ("mangle", "where"),
    [
        (lambda e: e.pop("messages"), "messages"),
        (lambda e: e["messages"].append(3), "messages[2]"),
        (lambda e: e["messages"][0]["info"].pop("id"), "messages[0].info.id"),
        (lambda e: e["messages"][0]["info"].update(role="system"), "messages[0].info.role"),
        (lambda e: e["messages"][1].update(parts={}), "messages[1].parts"),
        (lambda e: e["messages"][1]["parts"].append("x"), "messages[1].parts[2]"),
    ],
)
def test_opencode_export_shape_errors_name_the_json_path(tmp_path: Path, mangle, where: str) -> None:
    export = opencode_export()
    mangle(export)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    with pytest.raises(TranscriptError) as err:
        import_transcript(path, "opencode")
    assert err.value.where == where
