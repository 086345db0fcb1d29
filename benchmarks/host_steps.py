"""Benchmark row: the per-step loop a host runs, on every real transcript of shared/real-sessions.

Each transcript is imported, then replayed into a fresh session of one sidecar, one step at a time
(a step: an assistant message and what follows it up to the next one, the way a host syncs after
each model response): `session/sync` of the step's messages, `rebuild/compute` (no usage given),
and `request/build` of the view. Twice: with the usage records the transcript holds, and with
none (every step then takes the usage fallback, the request-size estimate, as for a provider that
never reports usage; Codex and Cline transcripts have none to begin with). A recorded usage
measured the original run's request, not the rebuilt one, so once it crosses the line every new
step's record does too: the "as recorded" replay of a long transcript rebuilds on most steps,
which a live host would not. When `rebuild/compute` says a rebuild is due, the host's
writer runs (started, `checkpoint.md` written, succeeded) and `rebuild/insert` follows; that
step's time includes it. The model is the transcript's own with a 200,000-token window.

Reported per transcript: steps, rebuilds, the sidecar's time per step (median and 95th percentile
of the three round trips together) and the share of `request/build` in it. The client's garbage
collector is frozen during the loop, so that only the sidecar is timed. Skipped, with the reason,
when the folder is absent.
"""

from __future__ import annotations

import gc
import statistics
from pathlib import Path
from typing import Any

from benchmarks import run
from mimo_sidecar.importers import import_transcript
from tests.real_sessions import absent_reason, main_session_files, real_sessions_root

Json = dict[str, Any]
WINDOW = 200_000
MAX_OUTPUT = 32_000
CHECKPOINT = "# Checkpoint\nTopic: replayed session\n\n## 1 Active intent\n\nContinue the work.\n"


def steps_of(messages: list[Json]) -> list[list[Json]]:
    """The messages cut before each assistant message (the prompt joins the first step)."""
    steps: list[list[Json]] = []
    for m in messages:
        if not steps or (m["info"].get("role") == "assistant" and any(
            s["info"].get("role") == "assistant" for s in steps[-1]
        )):
            steps.append([])
        steps[-1].append(m)
    return steps


def model_of(messages: list[Json]) -> Json:
    newest = next((m["info"] for m in reversed(messages) if m["info"].get("role") == "assistant"), {})
    return {
        "contextWindow": WINDOW,
        "maxOutputTokens": MAX_OUTPUT,
        "providerId": str(newest.get("providerID") or "anthropic"),
        "modelId": str(newest.get("modelID") or "unknown"),
    }


def without_usage(messages: list[Json]) -> list[Json]:
    return [{**m, "info": {k: v for k, v in m["info"].items() if k != "tokens"}} for m in messages]


def replay(client: run.SidecarClient, params: Json, memory: Path, keep_usage: bool) -> Json:
    sid = params["sessionId"]
    (memory / "sessions" / sid).mkdir(parents=True, exist_ok=True)
    messages = params["messages"] if keep_usage else without_usage(params["messages"])
    opened = {k: v for k, v in params.items() if k != "messages"}
    run.rpc(client, "session/open", {**opened, "messages": []})
    model = model_of(messages)
    per_step, build_share, rebuilds = [], [], 0
    for step in steps_of(messages):
        _, sync_ms, _ = run.rpc(client, "session/sync", {"sessionId": sid, "upsertMessages": step})
        computed, compute_ms, _ = run.rpc(
            client, "rebuild/compute", {"sessionId": sid, "model": model, "preview": False}
        )
        total = sync_ms + compute_ms
        if computed["trigger"]["shouldRebuild"] and computed.get("watermark"):
            watermark = computed["watermark"]["messageId"]
            for method, extra in (
                ("checkpoint/writerStarted", {"watermark": watermark}),
                ("checkpoint/writerFinished", {"outcome": "success"}),
            ):
                if method.endswith("Finished"):
                    (memory / "sessions" / sid / "checkpoint.md").write_text(CHECKPOINT, encoding="utf-8")
                total += run.rpc(client, method, {"sessionId": sid, **extra})[1]
            inserted, insert_ms, _ = run.rpc(client, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
            rebuilds += inserted["outcome"] == "rebuilt"
            total += insert_ms
        try:
            _, build_ms, _ = run.rpc(client, "request/build", {"sessionId": sid})
        except run.Unavailable:  # nothing to send yet (a transcript opening with a bare note)
            build_ms = 0.0
        per_step.append(total + build_ms)
        build_share.append(build_ms / (total + build_ms) if total + build_ms else 0.0)
    run.rpc(client, "session/close", {"sessionId": sid})
    return {
        "steps": len(per_step),
        "rebuilds": rebuilds,
        **run.summary(per_step),
        "build_share": round(statistics.median(build_share), 2) if build_share else None,
    }


def measure(log_dir: Path, command: list[str]) -> Json:
    root = real_sessions_root()
    if root is None:
        return {"status": f"skipped: {absent_reason()}"}
    memory = log_dir / "host-steps-memory"
    memory.mkdir(parents=True, exist_ok=True)
    run.SIDECAR_COMMAND[:] = command
    out: Json = {}
    with run.sidecar(log_dir / "sidecar-host-steps.log") as client:
        client.initialize(str(memory), config={})
        for path in main_session_files(root):
            params = import_transcript(path).params
            name = f"{path.parent.name}/{path.name}"
            out[name] = {}
            for variant, keep in (("recorded_usage", True), ("no_usage", False)):
                gc.collect()
                gc.freeze()
                try:
                    out[name][variant] = replay(client, params, memory, keep)
                except run.Unavailable as exc:
                    out[name][variant] = {"status": str(exc)}
                finally:
                    gc.unfreeze()
    return out


def table(result: Json) -> str:
    if "status" in result:
        return f"host steps on real transcripts: {result['status']}"
    lines = [
        "host steps on real transcripts: the sidecar's time per step (sync one step + compute + "
        "build, rebuilds as due), median (p95), rebuilds; usage as recorded | no usage (the estimate)"
    ]
    width = max(len(name) for name in result)
    for name, variants in result.items():
        cells = []
        for entry in variants.values():
            if "status" in entry:
                cells.append(entry["status"])
            else:
                cells.append(
                    f"{entry['median_ms']:5.2f} ms ({entry['p95_ms']:5.2f}), {entry['rebuilds']:>3} rebuilds"
                )
        steps = next((e["steps"] for e in variants.values() if "steps" in e), 0)
        lines.append(f"  {name.ljust(width)} {steps:>4} steps: " + " | ".join(cells))
    return "\n".join(lines)


if __name__ == "__main__":
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="mimo-host-steps-") as tmp:
        figures = measure(Path(tmp), run.SIDECAR_COMMAND)
    sys.stdout.write(table(figures) + "\n")
