"""The fidelity report over every real transcript of shared/real-sessions (behavior.md#d13).

Each transcript is imported, opened in a core session with a template `checkpoint.md`, and rebuilt
at the watermark a writer starting now would cover. Whatever the outcome (`rebuilt`, or `no-gain`
when the boundary would not shrink the request), the report must say that the newest genuine user
ask is in the boundary: before D11 and D13 it was missing in 4 of 5 long Claude Code sessions.
The files are read in place and never copied (tests/real_sessions.py); absent, the tests skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mimo_sidecar.importers import newest_user_ask
from tests.real_sessions import imported, real_session_files
from tests.unit.builders import checkpoint_memory
from tests.unit.host_loop import rebuild_as_host
from tests.unit.importers.transcripts import open_in_core

NOW = 1_800_000_000_000
TEMPLATE = "Topic: (none yet)\n\n## 1 Active intent\n\n## 2 Decisions\n\n## 3 Work in flight\n"


@pytest.mark.parametrize("path", real_session_files())
@pytest.mark.parametrize("reason", ["auto", "manual"])
def test_the_newest_user_ask_is_never_missing_from_the_boundary(
    path: Path, reason: str, tmp_path: Path
) -> None:
    params = imported(path).params
    session = open_in_core(params)
    expected = newest_user_ask(params)
    assert expected is not None, "every real transcript holds a user ask"
    memory = checkpoint_memory(tmp_path, session.session_id, TEMPLATE)
    res = rebuild_as_host(session, memory, NOW, reason)
    assert res.outcome in ("rebuilt", "no-gain"), res.detail
    assert res.fidelity is not None and res.render is not None
    ask = res.fidelity.newest_user_ask
    assert ask.message_id == expected[0]
    assert ask.status in ("verbatim", "truncated"), ask.reason
    text = res.render.text
    if ask.status == "verbatim":
        assert expected[1].strip() in text  # an entry is shown trimmed
    else:
        assert f"tokens elided from message {expected[0]}" in text
