"""Where the shared real transcripts are (`shared/real-sessions/`), for any test that uses them.

They are third-party data and live outside the repository: tests read them in place and skip, with
the reason, when the folder is absent. Looked up in this order:

1. the environment variable `MIMO_REAL_SESSIONS` (a path to the folder);
2. `shared/real-sessions` in the repository root or any directory above it (a checkout at
   `/work/main` finds `/work/shared/real-sessions`; so does a worktree at `/work/wt/<name>`);
3. `/work/shared/real-sessions`.

Use:

    from tests.real_sessions import real_sessions_dir, real_session_files   # fixture, parametrize

    def test_x(real_sessions_dir: Path) -> None: ...          # skipped when absent

    @pytest.mark.parametrize("path", real_session_files())   # one case per main session file
    def test_y(path: Path) -> None: ...

    result = imported(path)   # imported once per test run; each call gets its own copy of the params
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from mimo_sidecar.importers import ImportResult, import_transcript

ENV_VAR = "MIMO_REAL_SESSIONS"
RELATIVE = Path("shared") / "real-sessions"
FALLBACK = Path("/work/shared/real-sessions")
REPO_ROOT = Path(__file__).resolve().parents[1]
SUBAGENT_MARK = "__subagents__"
FORMAT_OF_FOLDER = {
    "claude": "claude-code",
    "claude-json": "claude-code",  # Claude Code records saved as one JSON array (hook scripts)
    "codex": "codex",
    "opencode": "opencode",
    "cline": "cline",
    "gemini": "gemini",
    "aider": "aider",
}
SESSION_SUFFIXES = (".json", ".jsonl", ".md")


def real_sessions_root() -> Path | None:
    """The folder of real sessions, or None when it cannot be found."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        path = Path(configured).expanduser()
        return path if path.is_dir() else None
    for base in (REPO_ROOT, *REPO_ROOT.parents):
        if (base / RELATIVE).is_dir():
            return base / RELATIVE
    return FALLBACK if FALLBACK.is_dir() else None


def absent_reason() -> str:
    return (
        f"real sessions not found (set {ENV_VAR}, or put shared/real-sessions next to or above "
        f"the repository, or at {FALLBACK})"
    )


@pytest.fixture
def real_sessions_dir() -> Path:
    root = real_sessions_root()
    if root is None:
        pytest.skip(absent_reason())
    return root


def main_session_files(root: Path) -> list[Path]:
    """Every session file of the folder, subagent files excluded (they belong to their session)."""
    files = []
    for folder in sorted(FORMAT_OF_FOLDER):
        for path in sorted((root / folder).iterdir()):
            if path.suffix in SESSION_SUFFIXES and SUBAGENT_MARK not in path.name:
                files.append(path)
    return files


def real_session_files() -> list[Any]:
    """pytest params, one per main session file (id `folder/name`); a single skipped param when the
    folder is absent, so that the reason shows in the test report."""
    root = real_sessions_root()
    if root is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=absent_reason()), id="real-sessions-absent")]
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in main_session_files(root)]


def subagent_session_files() -> list[Any]:
    """pytest params, one per Claude Code subagent file (`<session>__subagents__agent-<id>.jsonl`),
    or a single skipped param when the folder is absent."""
    root = real_sessions_root()
    if root is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=absent_reason()), id="real-sessions-absent")]
    files = sorted((root / "claude").glob(f"*{SUBAGENT_MARK}*.jsonl"))
    return [pytest.param(p, id=p.name.split(SUBAGENT_MARK)[-1]) for p in files]


def expected_format(path: Path) -> str:
    return FORMAT_OF_FOLDER[path.parent.name]


def imported(path: Path, *, shared: bool = False) -> ImportResult:
    """`import_transcript(path)`, run once per test session. The params are a fresh copy on every
    call (tests change them, and the core session keeps the dicts it is given); `shared=True`
    returns the one cached result, for callers that only read it. The report is always shared and
    must be read only."""
    result = _import_once(path)
    return result if shared else ImportResult(orjson.loads(orjson.dumps(result.params)), result.report)


@functools.cache
def _import_once(path: Path) -> ImportResult:
    return import_transcript(path)


def claude_records(path: Path) -> list[dict[str, Any]]:
    """The records of a Claude Code transcript as written: JSONL lines, or a JSON array's elements."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        records: list[dict[str, Any]] = orjson.loads(text)
        return records
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


RESULT_PARTS = frozenset({"tool_result", "function_call_output", "custom_tool_call_output", "tool"})


def results_stamped_after(params: dict[str, Any], message_id: str) -> bool:
    """Whether a message stamped later than `message_id` holds a tool result: what a rebuild at that
    watermark can clear (behavior.md#microcompaction-rule). A hook script's `chat.json` stamps
    nearly every record with one millisecond, and has none."""
    at = next(m["info"]["time"]["created"] for m in params["messages"] if m["info"]["id"] == message_id)
    return any(
        m["info"]["time"]["created"] > at and any(p["type"] in RESULT_PARTS for p in m["parts"])
        for m in params["messages"]
    )
