"""Benchmark row: `request/build` in every format on the largest real session, after a rebuild.

The transcripts of shared/real-sessions are third-party data read in place (located as the tests
locate them, `tests/real_sessions.py`); when the folder is absent the row is skipped and the reason
printed. The largest one (by the size of its imported `session/open` params) is imported, opened in
a fresh sidecar over stdio, rebuilt the way a host does it (`rebuild/compute` → writer started and
succeeded → `checkpoint.md` written → `rebuild/insert`), then `request/build` is timed in each
format (and Anthropic with cache breakpoints), each median as a ratio of `ai-sdk` (target: within
2×). The in-process conversion of the same view (`build_messages`, no JSON) is given alongside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from benchmarks import run  # the runner's timing and RPC helpers
from mimo_sidecar.core.formats import FORMATS
from mimo_sidecar.core.request.assembly import build_messages
from mimo_sidecar.core.session.session import Session, batch_from_messages
from mimo_sidecar.importers import import_transcript
from tests.real_sessions import absent_reason, main_session_files, real_sessions_root

Json = dict[str, Any]
CHECKPOINT = (
    "# Checkpoint\nTopic: continuing the imported session\n\n## 1 Active intent\n\nFinish the work.\n"
)


def largest(root: Path) -> tuple[Path, Json]:
    imported = [(path, import_transcript(path).params) for path in main_session_files(root)]
    return max(imported, key=lambda item: len(orjson.dumps(item[1])))


def measure(reps: int, log_dir: Path, command: list[str]) -> Json:
    """The row's figures; `command` starts the sidecar."""
    root = real_sessions_root()
    if root is None:
        return {"status": f"skipped: {absent_reason()}"}
    path, params = largest(root)
    sid = params["sessionId"]
    out: Json = {
        "session": f"{path.parent.name}/{path.name}",
        "messages": len(params["messages"]),
        "json_bytes": len(orjson.dumps(params)),
    }
    memory = log_dir / "real-memory"
    (memory / "sessions" / sid).mkdir(parents=True, exist_ok=True)
    run.SIDECAR_COMMAND[:] = command
    with run.sidecar(log_dir / "sidecar-real.log") as client:
        client.initialize(str(memory), config={})
        run.rpc(client, "session/open", params)
        computed, _, _ = run.rpc(client, "rebuild/compute", {"sessionId": sid, "preview": False})
        watermark = computed["watermark"]["messageId"]
        run.rpc(client, "checkpoint/writerStarted", {"sessionId": sid, "watermark": watermark})
        (memory / "sessions" / sid / "checkpoint.md").write_text(CHECKPOINT, encoding="utf-8")
        run.rpc(client, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})
        inserted, insert_ms, _ = run.rpc(client, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
        out["insert"] = {"outcome": inserted["outcome"], "ms": round(insert_ms, 3)}
        out["build_formats"] = run.build_formats(client, {"sessionId": sid, "collapseTail": True}, reps)
    out["core_build_formats"] = core_formats(params, reps)
    return out


def core_formats(params: Json, reps: int) -> Json:
    """The conversion alone over the imported session's whole view (no rebuild, no JSON)."""
    session = Session(
        params["sessionId"], params.get("projectId"), request_prefix=params.get("requestPrefix")
    )
    session.apply(batch_from_messages(params["messages"]))
    view = list(session.view())
    out: Json = {}
    for fmt in FORMATS:
        samples = run.Timer.repeat(
            lambda fmt=fmt: build_messages(  # type: ignore[misc]
                view, collapse_tail=False, ordering=session.ordering(), reminder=None, fmt=fmt
            ),
            reps,
            20,
        )
        out[fmt] = run.summary(samples)
    base = out["ai-sdk"]["median_ms"]
    for entry in out.values():
        entry["ratio_to_ai_sdk"] = round(entry["median_ms"] / base, 2) if base else None
    return out


def table(result: Json) -> str:
    """The row's figures as text (or the reason it was skipped)."""
    if "status" in result:
        return f"real session: {result['status']}"
    lines = [
        f"real session {result['session']}: {result['messages']:,} messages, "
        f"{result['json_bytes'] / 1_000_000:.1f} MB; rebuild/insert {result['insert']['outcome']} "
        f"in {result['insert']['ms']:.0f} ms"
    ]
    for fmt, entry in result["build_formats"].items():
        lines.append(
            f"  stdio: request/build after rebuild, {fmt}: {entry['median_ms']:.2f} ms "
            f"(p95 {entry['p95_ms']:.2f}, {entry['ratio_to_ai_sdk']}x ai-sdk)"
        )
    for fmt, entry in result["core_build_formats"].items():
        ratio = entry["ratio_to_ai_sdk"]
        lines.append(f"  core: build whole view, {fmt}: {entry['median_ms']:.2f} ms ({ratio}x ai-sdk)")
    return "\n".join(lines)
