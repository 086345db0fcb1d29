"""A file no importer reads gets one line, the same from `import` and from `inspect`: what the file
is, and what each format would have needed; `--format` on a file of another format is an error too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mimo_sidecar.cli import import_command, inspect_command
from mimo_sidecar.importers import FORMATS
from mimo_sidecar.importers.detect import NEEDS
from tests.unit.importers.transcripts import ClaudeLog, stream_event, text, write_jsonl

UNREADABLE = {
    "json-object": (b'{"hello": "world", "n": 1}', "a JSON object with keys hello, n"),
    "json-array": (b"[1, 2, 3]", "a JSON array of int values"),
    "array-of-objects": (b'[{"kind": "note"}]', "a JSON array of objects with keys kind"),
    "params-lookalike": (  # sessionId and messages, but not {info, parts}: no longer taken for params
        b'{"sessionId": "s", "messages": [{"role": "user"}]}',
        "a JSON object with keys messages, sessionId",
    ),
    "jsonl": (b'{"a": 1}\n{"b": 2}\n', "JSONL whose records have no type (keys a)"),
    "jsonl-typed": (b'{"type": "ping"}\n{"type": "ping"}\n', "JSONL whose records have the types ping x2"),
    "text": (b"# Notes\n\nnothing to see\n", "text that is not JSON (first line: '# Notes')"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", "binary data, not text"),
}


def _answer(main: object, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)  # type: ignore[operator]
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize("kind", UNREADABLE)
def test_import_and_inspect_give_the_same_one_line_answer(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content, what = UNREADABLE[kind]
    path = tmp_path / "file.data"
    path.write_bytes(content)
    code_import, said_import = _answer(import_command.main, [str(path)], capsys)
    code_inspect, said_inspect = _answer(inspect_command.main, [str(path)], capsys)
    assert code_import == code_inspect == 2
    assert said_import.startswith("mimo-sidecar import: error: ")
    answer = said_import.removeprefix("mimo-sidecar import: error: ")
    assert said_inspect == f"mimo-sidecar inspect: error: {answer}"
    assert answer.count("\n") == 1 and answer.endswith("\n")
    assert answer.startswith(f"{path}: no importer reads this file: it is {what} (tried ")
    for name, needs in NEEDS:  # every format tried, each with what it needs
        assert f"{name}: {needs}" in answer
    assert {name for name, _ in NEEDS} >= set(FORMATS)


def test_a_forced_format_that_does_not_fit_is_an_error_naming_the_right_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = write_jsonl(
        tmp_path / "out.jsonl",
        [
            stream_event("init", session_id="r1", model="gemini-2.5-pro"),
            stream_event("message", 1, role="user", content="hi"),
            stream_event("result", 2, status="success"),
        ],
    )
    for main, prog in ((import_command.main, "import"), (inspect_command.main, "inspect")):
        code, said = _answer(main, ["--format", "claude-code", str(stream)], capsys)
        assert code == 2
        assert said == (
            f"mimo-sidecar {prog}: error: {stream}: no claude-code message in this file (3 records read, "
            "none imported: init record x1, message record x1, result record x1); it reads as gemini: "
            "drop --format or pass --format gemini\n"
        )


def test_a_session_open_params_file_is_not_imported_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = ClaudeLog()
    log.user("hi")
    log.assistant([text("hello")], mid="msg_1")
    transcript = log.write(tmp_path / "s.jsonl")
    assert import_command.main(["-q", "-o", str(tmp_path / "open.json"), str(transcript)]) == 0
    json.loads((tmp_path / "open.json").read_text())
    code, said = _answer(import_command.main, [str(tmp_path / "open.json")], capsys)
    assert code == 2 and "holds session/open params already: open them as they are" in said
