"""`mimo-sidecar import`: JSON on stdout (or --output), the report on stderr, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mimo_sidecar import __version__
from tests.unit.importers.transcripts import ClaudeLog, open_in_core, text

TIMEOUT_S = 60


def sidecar(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mimo_sidecar", *args], capture_output=True, text=True, timeout=TIMEOUT_S
    )


def session(tmp_path: Path) -> Path:
    log = ClaudeLog()
    log.user("Bump the version")
    log.assistant([text("Bumped.")], mid="msg_1")
    return log.write(tmp_path / "s.jsonl")


def test_prints_the_params_on_stdout_and_the_report_on_stderr(tmp_path: Path) -> None:
    done = sidecar("import", str(session(tmp_path)))
    assert done.returncode == 0, done.stderr
    params = json.loads(done.stdout)
    open_in_core(params)
    assert [m["info"]["role"] for m in params["messages"]] == ["user", "assistant"]
    assert done.stderr.startswith("imported claude-code session 0b5e5510-")
    assert "messages 2 (main 2)" in done.stderr and "'Bump the version'" in done.stderr


def test_output_file_pretty_and_quiet(tmp_path: Path) -> None:
    out = tmp_path / "open.json"
    done = sidecar(
        "import", str(session(tmp_path)), "--format", "claude-code", "-o", str(out), "--pretty", "-q"
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    written = out.read_text(encoding="utf-8")
    assert written.startswith('{\n  "sessionId"') and json.loads(written)["sessionId"]


def test_bad_input_is_one_line_on_stderr_and_exit_code_2(tmp_path: Path) -> None:
    path = session(tmp_path)
    path.write_bytes(path.read_bytes()[:-9])  # a truncated last line
    done = sidecar("import", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"mimo-sidecar import: error: {path}:2: ")
    skipped = sidecar("import", str(path), "--skip-bad-lines")
    assert skipped.returncode == 0 and "unreadable line (skipped on request)" in skipped.stderr
    missing = sidecar("import", str(tmp_path / "absent.jsonl"))
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
    unwritable = sidecar("import", str(session(tmp_path)), "-o", str(tmp_path / "no" / "dir" / "x.json"))
    assert unwritable.returncode == 2 and unwritable.stderr.startswith(
        "mimo-sidecar import: error: cannot write"
    )


def test_the_server_flags_still_work() -> None:
    version = sidecar("--version")
    assert (version.returncode, version.stdout) == (0, f"mimo-sidecar {__version__}\n")
    usage = sidecar("--help")
    assert usage.returncode == 0 and "mimo-sidecar import FILE" in usage.stdout
    bad = sidecar("import", "--format", "roo", "x")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
