"""`mimo-sidecar inspect`'s picture: rendered to a fixed-width console, its key lines carry the
numbers of the inspection they draw; and every bad input is one line on stderr with exit code 2."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from mimo_sidecar.cli import inspect_command
from mimo_sidecar.core import texts
from mimo_sidecar.core.rebuild.fidelity import (
    FidelityReport,
    TasksFidelity,
    ToolErrorFidelity,
    UnlistedTask,
    UserAskFidelity,
)
from mimo_sidecar.inspection import run as inspection_run
from mimo_sidecar.inspection.picture import SECTION_LABELS, WARNINGS_SHOWN, render_picture
from mimo_sidecar.inspection.run import Inspection, inspect_source
from mimo_sidecar.inspection.source import read_source

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "sample" / "session.json"
NOW_MS = 1_790_000_000_000
ERROR_PREFIX = "mimo-sidecar inspect: error: "


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inspection_run, "wall_clock_ms", lambda: NOW_MS)


@pytest.fixture(scope="module")
def sample() -> Inspection:
    return inspect_source(read_source(SAMPLE))


def picture(ins: Inspection, width: int, **console: bool) -> str:
    out = Console(width=width, file=io.StringIO(), record=True, **console)
    render_picture(ins, out)
    return out.export_text()


def line_with(text: str, *pieces: str, start: bool = False) -> str:
    """The one line holding `pieces` in this order, separated by anything (`start`: the first piece
    begins the line, after the one-cell indent)."""
    pattern = re.compile(("^ " if start else "") + ".*".join(re.escape(p) for p in pieces))
    found = [line for line in text.splitlines() if pattern.search(line)]
    assert len(found) == 1, (pieces, found)
    return found[0]


# -- the picture -----------------------------------------------------------------------------------
def test_the_key_lines_carry_the_inspections_numbers(sample: Inspection) -> None:
    text = picture(sample, 100, no_color=True)
    t = sample.computed.trigger
    line_with(text, "Model window", f"{sample.model.limits.context_window:,} tokens", "from the file's model")
    line_with(text, "Trigger line", f"{t.usable:,} tokens", "90% of the window")
    line_with(text, "Last step", f"{t.count:,} tokens")
    line_with(text, "Verdict", "a rebuild is due" if t.should_rebuild else "not due")
    assert sample.watermark.message_id is not None and sample.watermark.position is not None
    line_with(text, "W ", sample.watermark.message_id)
    line_with(text, f"stored message {sample.watermark.position + 1:,} of {sample.main_view:,} in the view")
    before, after = sample.before, sample.after
    assert after is not None
    line_with(text, "before", f"{before.messages:,}", f"{before.estimated_tokens:,}")
    line_with(text, "up to W", f"{sample.covered_tokens:,}", "█")
    line_with(text, "after ", f"{after.messages:,}", f"{after.estimated_tokens:,}")
    line_with(text, "boundary", f"{sample.boundary_tokens:,}")
    assert sample.insertion is not None and sample.insertion.render is not None
    for s in sample.insertion.render.sections:
        cap = f"{s.cap:,}" + ("" if s.unit == "tokens" else f" {s.unit}")
        line_with(
            text, f"{SECTION_LABELS[s.key]} ", f" {s.tokens:,} ", cap, s.reason or "in full", start=True
        )
    line_with(text, "rebuild text", f"{sample.insertion.render.total_tokens:,}")
    line_with(text, "Outcome rebuilt")
    flat = " ".join(text.split())  # the outcome sentence wraps
    assert f"from {before.messages:,} messages to {after.messages:,} messages" in flat
    assert f"{len(sample.insertion.compacted)} old tool results cleared" in flat
    f = sample.fidelity
    assert f is not None and f.newest_user_ask.status == "verbatim"
    line_with(text, "✓", "Newest user ask", "verbatim in Recent user input")
    line_with(text, "“" + " ".join(sample.newest_user_ask_text.split())[:30])
    line_with(text, "Open tasks", f"{f.tasks.open_listed} of {f.tasks.open_held} listed")
    line_with(text, "Newest tool error")
    line_with(text, "Sections cut", "none" if not f.cut_sections else SECTION_LABELS[f.cut_sections[0]])
    assert text.rstrip().endswith("none")  # no warnings
    assert max(len(line) for line in text.splitlines()) <= 100


@pytest.mark.parametrize("width", [60, 80, 160])
def test_the_picture_fits_the_width_and_keeps_its_blocks(sample: Inspection, width: int) -> None:
    text = picture(sample, width, no_color=True)
    assert max(len(line) for line in text.splitlines()) <= width
    for title in ("Where the session stands", "Checkpoint watermark", "before and after", "Warnings"):
        assert title in text
    for label in SECTION_LABELS.values():
        line_with(text, f"{label} ", start=True)


def test_colour_only_on_a_terminal(sample: Inspection) -> None:
    coloured = Console(width=100, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    render_picture(sample, coloured)
    assert "\x1b[" in coloured.file.getvalue()  # type: ignore[attr-defined]
    plain = Console(width=100, file=io.StringIO(), force_terminal=True, no_color=True)
    render_picture(sample, plain)
    assert "\x1b[38;" not in plain.file.getvalue()  # type: ignore[attr-defined]


def test_the_command_prints_the_picture_and_text_from_the_file_is_not_markup(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    odd = tmp_path / "[bold]session[red].json"
    shutil.copyfile(SAMPLE, odd)
    assert inspect_command.main([str(odd), "--no-color", "--text"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "\x1b[" not in out
    assert str(odd) in out.replace("\n", "")  # brackets printed as they are, not read as styles
    assert "Where the session stands" in out and "The rebuild text" in out
    assert "# Recent user input (verbatim)" in out  # the whole rebuild text follows the picture


# -- bad input: one line on stderr, exit code 2, never a traceback ------------------------------------
def params_file(tmp_path: Path, params: object) -> Path:
    path = tmp_path / "open.json"
    path.write_text(json.dumps(params), encoding="utf-8")
    return path


def one_message(**info: object) -> dict[str, object]:
    return {"info": {"id": "m1", "role": "user", "time": {"created": 1}, **info}, "parts": []}


@pytest.mark.parametrize(
    ("make", "args", "says"),
    [
        (lambda d: d / "absent.jsonl", [], "no such file or directory"),
        (lambda d: _write(d / "empty.jsonl", ""), [], "empty file"),
        (lambda d: _write(d / "x.json", "{not json"), [], "x.json"),
        (lambda d: _write(d / "claude.jsonl", '{"type": "user", "uuid": "u1"}\n{"type": "us'), [], ":2"),
        (lambda d: d, [], "no session found in this directory"),
        (
            lambda d: params_file(d, {"sessionId": "s", "messages": [{"info": {"role": "user"}}]}),
            [],
            "not valid session/open params: messages.0.info.id",
        ),
        (
            lambda d: params_file(d, {"sessionId": "s", "messages": [one_message()], "model": {"x": 1}}),
            [],
            "model: contextWindow: Field required (and 1 more)",
        ),
        (lambda d: params_file(d, {"sessionId": "..", "messages": [one_message()]}), [], "'..'"),
        (lambda d: _write(d / "log.jsonl", '{"a": 1}\n'), ["--format", "session-open"], "log.jsonl"),
        (lambda d: SAMPLE, ["--watermark", "msg_nope"], "--watermark: "),
        (lambda d: SAMPLE, ["--memory-root", "/nonexistent/root"], "--memory-root: /nonexistent/root"),
    ],
    ids=[
        "missing", "empty", "broken-json", "truncated-jsonl", "directory", "params-missing-id",
        "bad-model", "unsafe-session-id", "forced-format", "unknown-watermark", "no-memory-root",
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_code_2(
    make: object, args: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    code = inspect_command.main([str(path), *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(ERROR_PREFIX) and err.count("\n") == 1, err
    assert says in err and "Traceback" not in err


@pytest.mark.parametrize("window", ["0", "-5", "lots"])
def test_a_bad_window_is_a_usage_error(window: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        inspect_command.main([str(SAMPLE), "--window", window])
    assert exit_.value.code == 2
    assert "--window" in capsys.readouterr().err


def test_the_installed_command_routes_inspect(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mimo_sidecar", "inspect", str(tmp_path / "absent.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(ERROR_PREFIX) and done.stderr.count("\n") == 1


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_many_warnings_are_counted_not_all_shown(sample: Inspection) -> None:
    noisy = dataclasses.replace(sample, warnings=[f"warning number {i}" for i in range(10)])
    text = picture(noisy, 100, no_color=True)
    shown = [i for i in range(10) if f"warning number {i}" in text]
    assert shown == list(range(WARNINGS_SHOWN))
    line_with(text, f"… and {10 - WARNINGS_SHOWN} more warnings (--json lists them all)")


def test_each_fidelity_state_is_drawn(sample: Inspection) -> None:
    report = FidelityReport(
        UserAskFidelity("missing", "m9", False, texts.ASK_SECTION_CAP_TOO_SMALL),
        TasksFidelity(3, 2, (UnlistedTask("T7", texts.TASK_CUT_BY_CAP),)),
        ToolErrorFidelity("m8", "call_1", "bash", False, texts.ERROR_LINE_CAP),
        ("checkpoint",),
        ("notes",),
    )
    text = picture(dataclasses.replace(sample, fidelity=report), 120, no_color=True)
    line_with(text, "✗", "Newest user ask", "missing from the boundary: " + texts.ASK_SECTION_CAP_TOO_SMALL)
    line_with(text, "✗", "Open tasks", "2 of 3 listed", "not listed: T7: " + texts.TASK_CUT_BY_CAP)
    line_with(
        text, "!", "Newest tool error", "bash (call call_1): not in Recent activity", texts.ERROR_LINE_CAP
    )
    line_with(
        text, "!", "Sections cut", "cut to their caps: Checkpoint; shed by the total cap: Session notes"
    )
    appended = dataclasses.replace(report, newest_user_ask=UserAskFidelity("truncated", "m9", True, "why"))
    text = picture(dataclasses.replace(sample, fidelity=appended), 120, no_color=True)
    line_with(text, "!", "Newest user ask", "its middle elided", "D13 appended it: why")


def test_a_refused_rebuild_shows_the_dry_runs_sections(tmp_path: Path) -> None:
    ins = inspect_source(read_source(SAMPLE), memory_root=str(tmp_path))
    assert ins.outcome == "no-checkpoint" and ins.after is None
    text = picture(ins, 100, no_color=True)
    line_with(text, "Outcome no-checkpoint", "the session has no checkpoint.md under the memory root")
    line_with(text, "Checkpoint ", "file missing", start=True)
    line_with(text, "From the dry run of rebuild/compute: the insert itself stopped at no-checkpoint.")
    assert " after  " not in text and "kept tail" not in text
