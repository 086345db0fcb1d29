"""Benchmark row: the sidecar's RSS over thousands of short sessions.

A sidecar lives as long as an editor window and opens a session for every subagent and task, so
what a closed session leaves behind adds up. One fresh sidecar (advertising work-done progress,
so that every manual rebuild creates and ends a progress token) runs `cycles` times: `session/open`
of a small session (every part kind, tasks, actors, a request prefix; checkpoint.md created),
`rebuild/insert` (manual), `request/build` and `session/close`. VmRSS is read after 1,000 cycles
and at the end: the target is growth within 5 MiB between the two (before the fix: 58 MB
after 1,000 cycles, 74 MB after 10,000).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks import run  # the runner's helpers
from mimo_sidecar.client import SidecarClient
from tests.wrong_types import sessions

Json = dict[str, Any]
FIRST_MARK = 1000
FLAT_BYTES = 5 * 2**20
CONFIG = {
    "checkpoint": {"writer_wait_ms": {"with_watermark": 0, "without_watermark": 0}, "inflation_guard": False}
}


def measure(cycles: int, log_dir: Path, command: list[str]) -> Json:
    session = sessions()["inline"]
    memory = log_dir / "cycles-memory"
    memory.mkdir(parents=True, exist_ok=True)
    marks: dict[int, int] = {}
    started = time.perf_counter()
    with open(log_dir / "sidecar-cycles.log", "ab") as log:
        client = SidecarClient.spawn(stderr=log, cwd=run.ROOT, command=command)
        try:
            client.initialize(str(memory), CONFIG, window={"workDoneProgress": True})
            for n in range(1, cycles + 1):
                sid = f"cycle-{n}"
                client.request("session/open", {"sessionId": sid, **session, "createCheckpoint": True})
                client.request("rebuild/insert", {"sessionId": sid, "reason": "manual"})
                client.request("request/build", {"sessionId": sid, "format": "anthropic"})
                client.request("session/close", {"sessionId": sid})
                if n in (FIRST_MARK, cycles):
                    marks[n] = run.peak_rss_bytes(client.pid).get("VmRSS", 0)
        finally:
            client.shutdown(timeout=5)
    out: Json = {"cycles": cycles, "seconds": round(time.perf_counter() - started, 1)}
    out["rss_bytes"] = {str(n): rss for n, rss in marks.items()}
    if FIRST_MARK in marks and cycles in marks and cycles > FIRST_MARK:
        growth = marks[cycles] - marks[FIRST_MARK]
        out["growth_bytes"] = growth
        out["flat"] = growth <= FLAT_BYTES
    return out


def table(result: Json) -> str:
    rss = result["rss_bytes"]
    marks = ", ".join(f"{int(n):,} cycles {value / 2**20:.1f} MiB" for n, value in rss.items())
    line = f"stdio: RSS over {result['cycles']:,} open/insert/build/close cycles ({result['seconds']} s)"
    line += f": {marks}"
    if "growth_bytes" in result:
        verdict = "flat" if result["flat"] else "NOT flat"
        line += f"; growth {result['growth_bytes'] / 2**20:.1f} MiB ({verdict}, target within 5 MiB)"
    return line
