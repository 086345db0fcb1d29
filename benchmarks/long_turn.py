"""Benchmark row: a build after one new step of a long autonomous turn, at turn lengths 100, 1,000
and 5,000 steps under one user prompt.

An agent runs hundreds of tool steps on one prompt, and the per-turn memory reminder goes into that
prompt: the request memo (`core/request/build_memo.py`) keeps a second prefix cut inside the turn,
the reminder in its output, so that a build after one step converts that step. Measured in process
as the engine builds (`build_messages` through one `BuildMemo`, `ai-sdk`, the reminder on, no
JSON): a generated 200-message history, one prompt, then the turn's steps (inline MiMo steps: text
and a completed tool call with a few KB of output each); each sample is the build right after one
more step is synced. The first build, which converts the whole view, is not timed. Target: at 5,000
steps within 2x of 100 (`ratio_to_100`).

Over stdio, the figure is the sidecar's own time for the request (its timing log: validation, the
build and the encode of the response), `handler_ratio_to_100`. The response repeats the whole
request (16 MB at 5,000 steps); its encode takes again the slices of the previous response whose
messages did not change (`transport.jsonrpc_codec.ListCache`), so it too costs the step. The
round trip besides includes the pipe and the client's parse of those bytes, per byte by nature.
"""

from __future__ import annotations

import gc
import random
import statistics
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks.generator import IdMint, generate_memory_root, generate_session
from mimo_sidecar.core.request.assembly import build_messages
from mimo_sidecar.core.request.build_memo import BuildMemo
from mimo_sidecar.core.session.session import Session, batch_from_messages

Json = dict[str, Any]
TURN_LENGTHS = (100, 1_000, 5_000)
HISTORY = 200
SEED = 20260504
REMINDER = "<system-reminder>Session memory: read it with the memory tool.</system-reminder>"
OUTPUT = "".join(f"src/module_{i}.py:{i}: def handler_{i}(req): return respond(req)\n" for i in range(40))


class Turn:
    """A session whose newest prompt is followed by `steps` tool steps; `step()` adds one more."""

    def __init__(self, steps: int) -> None:
        data = generate_session(HISTORY, SEED)
        self.project_id = data["projectId"]
        self.history = data["messages"]
        self.sid = data["sessionId"]
        self.session = Session(self.sid, data["projectId"])
        self.session.apply(batch_from_messages(data["messages"]))
        self.created = data["messages"][-1]["info"]["time"]["created"]
        self.mint = IdMint(random.Random(11))
        self.template = next(
            m["info"] for m in reversed(data["messages"]) if m["info"]["role"] == "assistant"
        )
        self.n = 0
        prompt = self.message("user", [{"type": "text", "text": "Migrate every handler to the new API."}])
        self.turn = [prompt, *(self.step_message() for _ in range(steps))]
        self.add(self.turn)

    def message(self, role: str, parts: list[Json], **extra: Any) -> Json:
        self.created += 1000
        mid = self.mint.ascending("msg", self.created)
        info = {"id": mid, "sessionID": self.sid, "role": role, "time": {"created": self.created}, **extra}
        parts = [{**p, "id": f"prt{k}", "messageID": mid} for k, p in enumerate(parts)]
        return {"info": info, "parts": parts}

    def step_message(self) -> Json:
        self.n += 1
        call = {
            "type": "tool",
            "callID": f"call-{self.n}",
            "tool": "bash",
            "state": {
                "status": "completed",
                "input": {"command": f"grep -rn handler_{self.n} src"},
                "output": OUTPUT,
                "title": "grep",
                "time": {"start": self.created, "end": self.created + 200},
            },
        }
        extra = {k: self.template[k] for k in ("providerID", "modelID") if k in self.template}
        return self.message(
            "assistant", [{"type": "text", "text": f"Step {self.n}: checking the next handler."}, call],
            finish="tool-calls", **extra,
        )

    def add(self, messages: list[Json]) -> None:
        self.session.apply(batch_from_messages(messages))

    def build(self, memo: BuildMemo) -> None:
        view = list(self.session.context_view())  # the one copy `engine.build` makes
        ordering = self.session.ordering()
        build_messages(view, collapse_tail=False, ordering=ordering, reminder=REMINDER, memo=memo)


def after_one_step(steps: int, reps: int) -> Json:
    turn = Turn(steps)
    memo = BuildMemo()
    samples = []
    gc.disable()
    try:
        turn.build(memo)  # converts the whole view: not timed
        for _ in range(reps):
            turn.add([turn.step_message()])
            started = time.perf_counter()
            turn.build(memo)
            samples.append((time.perf_counter() - started) * 1000)
    finally:
        gc.enable()
    ordered = sorted(samples)
    return {
        "steps": steps,
        "messages": len(turn.session),
        "median_ms": round(statistics.median(samples), 3),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 3),
        "reused": memo.reused,
    }


def over_stdio(steps: int, reps: int, tmp: Path, command: list[str]) -> Json:
    from benchmarks import run

    turn = Turn(steps)
    memory = tmp / f"memory-turn-{steps}"
    generate_memory_root(memory, turn.sid, turn.project_id, SEED)
    build = {"sessionId": turn.sid, "collapseTail": True}
    samples, floors, encodes = [], [], []
    saved = list(run.SIDECAR_COMMAND)
    run.SIDECAR_COMMAND[:] = command
    try:
        with run.sidecar(tmp / f"sidecar-turn-{steps}.log", timing=True) as client:
            client.initialize(str(memory), config={})
            opened = {"sessionId": turn.sid, "projectId": turn.project_id}
            history = orjson.dumps({**opened, "messages": turn.history + turn.turn})
            run.rpc(client, "session/open", params_json=history)
            result, _, _ = run.rpc(client, "request/build", build)  # converts the whole view: not timed
            reminded = bool(result.get("reminderAdded"))
            before = len(run.handler_ms(client, "request/build"))
            with run.collector_paused():
                for _ in range(reps):
                    step = {"sessionId": turn.sid, "upsertMessages": [turn.step_message()]}
                    run.rpc(client, "session/sync", step)
                    result, ms, _ = run.rpc(client, "request/build", build)
                    samples.append(ms)
                    trip = run.Timer.repeat(lambda got=result: orjson.loads(orjson.dumps(got)), 3)
                    floors.append(min(trip))
                    encodes.append(min(run.Timer.repeat(lambda got=result: orjson.dumps(got), 3)))
            handled = run.handler_ms(client, "request/build")[before:]
            own_encodes = run.handler_encode_ms(client, "request/build")[before:]
    finally:
        run.SIDECAR_COMMAND[:] = saved
    handler = statistics.median(handled) if handled else None
    encode = statistics.median(encodes)
    # The handler's own work: its time less its own encode of the response, build by build
    paired = len(own_encodes) == len(handled)
    work = [h - e for h, e in zip(handled, own_encodes, strict=True)] if paired else []
    return {
        "steps": steps,
        "median_ms": round(statistics.median(samples), 3),
        "json_floor_ms": round(statistics.median(floors), 3),
        "beyond_json_ms": round(statistics.median(samples) - statistics.median(floors), 3),
        "handler_ms": round(handler, 3) if handler is not None else None,
        "encode_ms": round(encode, 3),
        "handler_beyond_encode_ms": round(handler - encode, 3) if handler is not None else None,
        "own_encode_ms": round(statistics.median(own_encodes), 3) if own_encodes else None,
        "handler_work_ms": round(statistics.median(work), 3) if work else None,
        "reminder_added": reminded,
    }


def measure(reps: int = 30, tmp: Path | None = None, command: list[str] | None = None) -> Json:
    rows: Json = {"in_process": {str(n): after_one_step(n, reps) for n in TURN_LENGTHS}}
    if tmp is not None and command is not None:
        rows["stdio"] = {str(n): over_stdio(n, reps, tmp, command) for n in TURN_LENGTHS}
    ratios = (
        ("in_process", "median_ms", "ratio_to_100"),
        ("stdio", "handler_ms", "handler_ratio_to_100"),
        ("stdio", "handler_work_ms", "work_ratio_to_100"),
    )
    for kind, key, name in ratios:
        if kind in rows:
            base = rows[kind][str(TURN_LENGTHS[0])][key]
            for row in rows[kind].values():
                row[name] = round(row[key] / base, 2) if base and row[key] is not None else None
    return rows


def table(rows: Json) -> str:
    lines = ["core: build after one new step of a long turn (ai-sdk, reminder on, in process)"]
    for row in rows["in_process"].values():
        lines.append(
            f"  {row['steps']:>5,} steps ({row['messages']:,} messages): {row['median_ms']:.3g} ms "
            f"(p95 {row['p95_ms']:.3g}), {row['ratio_to_100']}x the 100-step turn's"
        )
    if "stdio" in rows:
        lines.append("stdio: sync of one step, then request/build (ai-sdk): the sidecar's own time for it")
        for row in rows["stdio"].values():
            lines.append(
                f"  {row['steps']:>5,} steps: handler {row['handler_ms']} ms "
                f"({row['handler_ratio_to_100']}x the 100-step turn's), of which the encode of the "
                f"response {row['own_encode_ms']} ms and the rest {row['handler_work_ms']} ms "
                f"({row['work_ratio_to_100']}x); reminder added: {row['reminder_added']}"
            )
            lines.append(
                f"         round trip {row['median_ms']:.3g} ms, {row['beyond_json_ms']:.3g} ms beyond the "
                f"client's own serialise and parse of the response ({row['json_floor_ms']:.3g} ms)"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys
    import tempfile

    from benchmarks.run import SIDECAR_COMMAND

    with tempfile.TemporaryDirectory(prefix="mimo-turn-") as where:
        sys.stdout.write(table(measure(tmp=Path(where), command=list(SIDECAR_COMMAND))) + "\n")
