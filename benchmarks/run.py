"""Benchmark runner: the core in process and the real sidecar over stdio, on generated sessions.

    .venv/bin/python -m benchmarks.run [--sizes 500,5000,20000] [--quick] [--reps N]
                                        [--out benchmarks/results/latest.json]

For each size it generates an inline session of that many messages (about 10 KB of JSON per
message) and a memory root, then measures:

- the JSON floor: orjson and stdlib json parse/serialize of the `session/open` payload;
- the core in process: ingest (`Session.apply(batch_from_messages(...))`), one streamed part
  (`session.apply` of one part upsert) followed by the watermark computation;
- a fresh sidecar process over stdio: spawn + `initialize`, `session/open` of the whole session,
  `session/sync` of one part followed by `rebuild/compute`, `rebuild/compute` with preview,
  `rebuild/insert` (writer already settled), `request/build` after the rebuild (also in every
  output format, as a ratio of `ai-sdk`) and over the whole un-rebuilt view, and the process's
  peak RSS;
- then, once, `request/build` in every format on the largest real session of shared/real-sessions
  after a rebuild (`benchmarks/real_session.py`; skipped, with the reason printed, when absent);
- and, per real session, the request-size estimate against the provider's usage
  (`benchmarks/estimate_accuracy.py`, the ratio `rebuild/compute` reports as `estimateAccuracy`).

Round trips are timed from the first byte written to the parsed response (the client's own
encoding is done beforehand). Methods the sidecar does not implement yet (-32601) are reported
as "n/a (method missing)". Timings are medians and 95th percentiles over the repetitions.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import random
import re
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from benchmarks.generator import IdMint, generate_memory_root, generate_session
from mimo_sidecar.client import Prepared, RpcError, RpcTimeout, SidecarClient
from mimo_sidecar.client import SidecarClosed as RpcClosed
from mimo_sidecar.core.formats import FORMATS
from mimo_sidecar.core.rebuild.watermark import watermark_for
from mimo_sidecar.core.request.assembly import build_messages
from mimo_sidecar.core.request.build_memo import BuildMemo
from mimo_sidecar.core.session.session import PartUpsert, Session, SyncBatch, batch_from_messages

ROOT = Path(__file__).resolve().parent.parent

Json = dict[str, Any]
MB = 1_000_000
MISSING = "n/a (method missing)"
SEED = 20260504
# Round trips of a millisecond or less are noisy on a shared 2-core machine: the compute rows (whose
# target is a ratio between sizes) take at least this many samples.
COMPUTE_REPS = 120
SYNC_BATCH = 500  # messages per session/sync in the bulk-sync measurement
# Whole-view builds in every format (and the worst-case RSS) up to this size; beyond, ai-sdk alone
# (a 20,000-message view is a 160 MB response per build).
WHOLE_VIEW_FORMATS_UP_TO = 5000
FIRST_BUILD_OPENS = 5  # the first build after an open: the median of this many opens


# -- timing ------------------------------------------------------------------------------------------
class Timer:
    """`with Timer() as t: ...` then `t.ms`; `Timer.repeat(fn, reps, budget_s)` collects samples."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.ms = (time.perf_counter() - self.start) * 1000

    @staticmethod
    def repeat(fn: Callable[[], Any], reps: int, budget_s: float = 20.0, min_reps: int = 1) -> list[float]:
        """Run `fn` up to `reps` times, stopping early once `budget_s` is spent (after `min_reps`)."""
        samples: list[float] = []
        deadline = time.monotonic() + budget_s
        while len(samples) < reps and (len(samples) < min_reps or time.monotonic() < deadline):
            with Timer() as t:
                fn()
            samples.append(t.ms)
        return samples


def summary(samples: list[float], **extra: Any) -> Json:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(p95, 3),
        "min_ms": round(ordered[0], 3),
        "n": len(ordered),
        **extra,
    }


def throughput(s: Json, nbytes: int, messages: int | None = None) -> Json:
    seconds = s["median_ms"] / 1000
    s["mb_per_s"] = round(nbytes / MB / seconds, 1) if seconds else None
    if messages is not None:
        s["messages_per_s"] = round(messages / seconds) if seconds else None
    return s


# -- workload ----------------------------------------------------------------------------------------
class Workload:
    """One generated session, its memory root and the payloads sent for it."""

    def __init__(self, n: int, tmp: Path) -> None:
        with Timer() as t:
            self.data = generate_session(n, SEED)
        self.generate_ms = t.ms
        self.n = n
        self.sid = self.data["sessionId"]
        self.memory_root = tmp / f"memory-{n}"
        generate_memory_root(self.memory_root, self.sid, self.data["projectId"], SEED)
        self.open_params = {
            "sessionId": self.sid,
            "projectId": self.data["projectId"],
            "messages": self.data["messages"],
            "tasks": self.data["tasks"],
            "actors": self.data["actors"],
        }
        self.open_json = orjson.dumps(self.open_params)
        self.stream = PartStream(self.data)
        self.batches = [
            orjson.dumps({"sessionId": self.sid, "upsertMessages": self.data["messages"][i : i + SYNC_BATCH]})
            for i in range(0, n, SYNC_BATCH)
        ]

    def release_history(self) -> None:
        """Drop the client's parsed copy of the history once the sidecar has it (the encoded
        payloads stay). A million dicts in the *client* made every round trip pay the client's
        garbage collector, which is not the sidecar's cost (README: Performance)."""
        _ = self.usage  # computed from the history: keep it
        _ = self.open_json_without_usage
        self.data["messages"] = self.data["messages"][-1:]
        self.open_params["messages"] = []
        gc.collect()

    @functools.cached_property
    def open_json_without_usage(self) -> bytes:
        """The `session/open` payload with every usage record taken out (made before the history is
        released): each step then takes the usage fallback, as Codex and Cline transcripts do."""
        messages = [
            {**m, "info": {k: v for k, v in m["info"].items() if k != "tokens"}}
            for m in self.data["messages"]
        ]
        return orjson.dumps({**self.open_params, "messages": messages})

    @property
    def model(self) -> Json:
        m = self.data["model"]
        return {
            "contextWindow": m["contextWindow"],
            "maxOutputTokens": m["maxOutputTokens"],
            "providerId": m["providerId"],
            "modelId": m["modelId"],
        }

    @functools.cached_property
    def usage(self) -> Json:
        last = [
            m
            for m in self.data["messages"]
            if m["info"]["role"] == "assistant" and "agentID" not in m["info"] and "tokens" in m["info"]
        ]
        t = last[-1]["info"]["tokens"]
        return {k: t[k] for k in ("total", "input", "output", "reasoning", "cache")}

    def compute_params(self, preview: bool | str = False) -> Json:
        """`rebuild/compute` with the last step's usage and the model (which crosses the line)."""
        return {"sessionId": self.sid, "usage": self.usage, "model": self.model, "preview": preview}

    def documented_compute_params(self) -> Json:
        """`rebuild/compute` as README and docs/hosts.md show it, `preview` left at its default
        (`when-due`), on a step whose usage is a quarter of the last one's: below the line, as almost
        every step of a host's loop is."""
        usage = {k: v // 4 if isinstance(v, int) else v for k, v in self.usage.items()}
        usage["cache"] = {k: v // 4 for k, v in self.usage["cache"].items()}
        return {"sessionId": self.sid, "usage": usage, "model": self.model}

    def describe(self) -> Json:
        return {
            "messages": self.n,
            "json_bytes": len(self.open_json),
            "generate_ms": round(self.generate_ms, 1),
            "shape": "inline",
            "seed": SEED,
        }


class PartStream:
    """A text part streaming into the newest main-slice assistant message: each `next()` is the
    same part (same ID) with a little more text, as a host sends it token by token."""

    def __init__(self, data: Json) -> None:
        msg = [
            m for m in data["messages"] if m["info"]["role"] == "assistant" and "agentID" not in m["info"]
        ][-1]
        self.message_id = msg["info"]["id"]
        ts = data["messages"][-1]["info"]["time"]["created"] + 1
        self.part = {
            "id": IdMint(random.Random(1)).ascending("prt", ts),
            "sessionID": data["sessionId"],
            "messageID": self.message_id,
            "type": "text",
            "text": "",
        }
        self.words = "The failing case is the empty file, so I will add a guard before slicing. ".split()
        self.k = 0

    def next(self) -> Json:
        self.k += 1
        text = " ".join(self.words[i % len(self.words)] for i in range(self.k * 6))
        return {**self.part, "text": text}


# -- in process ----------------------------------------------------------------------------------------
def json_floor(w: Workload, reps: int) -> Json:
    blob, obj, size = w.open_json, w.open_params, len(w.open_json)
    cases = {
        "orjson_parse": lambda: orjson.loads(blob),
        "orjson_serialize": lambda: orjson.dumps(obj),
        "stdlib_parse": lambda: json.loads(blob),
        "stdlib_serialize": lambda: json.dumps(obj).encode(),  # as pygls: ensure_ascii escaping
    }
    return {
        name: throughput(summary(Timer.repeat(fn, reps, budget_s=15)), size) for name, fn in cases.items()
    }


def ingest(messages: list[Json], w: Workload) -> Session:
    session = Session(w.sid, w.data["projectId"])
    session.apply(batch_from_messages(messages))
    return session


def in_process(w: Workload, reps: int) -> Json:
    size, n = len(w.open_json), w.n
    out: Json = {
        "ingest": throughput(summary(Timer.repeat(lambda: ingest(w.data["messages"], w), reps, 20)), size, n),
        "parse_and_ingest": throughput(
            summary(Timer.repeat(lambda: ingest(orjson.loads(w.open_json)["messages"], w), reps, 20)), size, n
        ),
    }
    session = ingest(w.data["messages"], w)
    stream = PartStream(w.data)
    update_ms, watermark_ms, both_ms = [], [], []
    for _ in range(max(reps, 20)):
        batch = SyncBatch(upsert_parts=[PartUpsert(stream.message_id, stream.next())])
        with Timer() as t1:
            session.apply(batch)
        with Timer() as t2:
            watermark_for(session.view())
        update_ms.append(t1.ms)
        watermark_ms.append(t2.ms)
        both_ms.append(t1.ms + t2.ms)
    out["part_update"] = summary(update_ms)
    out["watermark"] = summary(watermark_ms)
    out["part_update_then_watermark"] = summary(both_ms)
    out["build_formats"] = build_formats_in_process(session, max(3, reps // 3))
    out["build_after_step"] = build_after_new_step(session, w, max(3, reps // 3))
    return out


def build_after_new_step(session: Session, w: Workload, reps: int) -> Json:
    """The conversion of the whole view (ai-sdk, no JSON) right after one new step is synced, built
    as the engine builds it: through the session's `BuildMemo`, so that what is converted is what
    is new. Compared with the same on a 100-message view (target: within 2x)."""
    out = summary(_steps_built(session, w.data, reps))
    small = generate_session(100, SEED)
    base = ingest(small["messages"], w)
    out["view_100_ms"] = statistics.median(_steps_built(base, small, reps))
    out["ratio_to_100_view"] = round(out["median_ms"] / out["view_100_ms"], 2) if out["view_100_ms"] else None
    return out


def _steps_built(session: Session, data: Json, reps: int) -> list[float]:
    template = next(m for m in reversed(data["messages"]) if m["info"]["role"] == "assistant")
    created = data["messages"][-1]["info"]["time"]["created"]
    mint = IdMint(random.Random(7))
    memo = BuildMemo()
    samples = []
    for rep in range(reps + 1):
        created += 1000
        info = {**template["info"], "id": mint.ascending("msg", created), "time": {"created": created}}
        session.apply(batch_from_messages([{"info": info, "parts": template["parts"]}]))
        view = list(session.view())
        with collector_paused(), Timer() as t:
            build_messages(view, collapse_tail=False, ordering=session.ordering(), reminder=None, memo=memo)
        if rep:  # the first builds the memo: the conversion of the whole view (the row above)
            samples.append(t.ms)
    return samples


def build_formats_in_process(session: Session, reps: int) -> Json:
    """The conversion alone, over the whole un-rebuilt view (every message), in every format."""
    view = list(session.view())
    out: Json = {}
    for fmt in FORMATS:
        with collector_paused():
            samples = Timer.repeat(
                lambda fmt=fmt: build_messages(  # type: ignore[misc]
                    view, collapse_tail=False, ordering=session.ordering(), reminder=None, fmt=fmt
                ),
                reps,
                30,
            )
        out[fmt] = summary(samples)
    base = out["ai-sdk"]["median_ms"]
    for entry in out.values():
        entry["ratio_to_ai_sdk"] = round(entry["median_ms"] / base, 2) if base else None
    return out


# -- over stdio ----------------------------------------------------------------------------------------
class Unavailable(Exception):
    """A step that cannot be measured; its text goes into the results."""


SIDECAR_COMMAND = [sys.executable, "-m", "mimo_sidecar"]
RPC_TIMEOUT_S = 600


LOGS: dict[int, Path] = {}  # a timing sidecar's pid -> its log


@contextmanager
def sidecar(log_path: Path, timing: bool = False) -> Iterator[SidecarClient]:
    """A sidecar logging to `log_path`; with `timing`, at DEBUG, which logs each handler's time
    (`handler_ms`)."""
    command = [*SIDECAR_COMMAND, "--log-level", "DEBUG"] if timing else SIDECAR_COMMAND
    with open(log_path, "ab") as log:
        client = SidecarClient.spawn(stderr=log, cwd=ROOT, command=command)
        LOGS[client.pid] = log_path
        try:
            yield client
        finally:
            client.shutdown(timeout=5)
            LOGS.pop(client.pid, None)


def handler_ms(client: SidecarClient, method: str) -> list[float]:
    """Every time the sidecar's own timing log gave for `method`, in order (the handler: validation,
    the work, the result encoded; not the pipe nor the client's parse)."""
    path = LOGS.get(client.pid)
    if path is None:
        return []
    pattern = rf"mimo_sidecar\.timing: {re.escape(method)} ([0-9.]+) ms"
    found = re.findall(pattern, path.read_text(errors="replace"))
    return [float(x) for x in found]


def handler_encode_ms(client: SidecarClient, method: str) -> list[float]:
    """The part of each `handler_ms` time that encoded the result (the timing log's `encode` line)."""
    path = LOGS.get(client.pid)
    if path is None:
        return []
    pattern = rf"mimo_sidecar\.timing: {re.escape(method)} encode ([0-9.]+) ms"
    return [float(x) for x in re.findall(pattern, path.read_text(errors="replace"))]


def peak_rss_bytes(pid: int) -> dict[str, int]:
    """VmHWM (peak) and VmRSS (current) of a live process, from /proc (Linux), in bytes."""
    out: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            out[key] = int(value.split()[0]) * 1024
    return out


def rpc(
    client: SidecarClient, method: str, params: Any = None, *, params_json: bytes | None = None
) -> tuple[Any, float, int]:
    """One timed round trip: (result, milliseconds, response bytes)."""
    prepared: Prepared = client.prepare(method, params, params_json=params_json)
    try:
        with Timer() as t:
            response = client.send(prepared, timeout=RPC_TIMEOUT_S)
    except RpcError as exc:
        raise Unavailable(
            MISSING if exc.method_missing else f"error {exc.code}: {exc.message[:160]}"
        ) from exc
    return response.result, t.ms, response.size


def step(results: Json, name: str, fn: Callable[[], Json]) -> None:
    """Run one measurement; a missing method or a failure becomes a status string, not a crash."""
    try:
        results[name] = fn()
    except Unavailable as exc:
        results[name] = {"status": str(exc)}
    except (RpcTimeout, RpcClosed) as exc:
        results[name] = {"status": f"failed: {exc}"}
        raise


def repeat_rpc(client: SidecarClient, method: str, params: Json, reps: int, budget_s: float = 20) -> Json:
    samples, sizes = [], []
    deadline = time.monotonic() + budget_s
    while len(samples) < reps and (not samples or time.monotonic() < deadline):
        _, ms, size = rpc(client, method, params)
        samples.append(ms)
        sizes.append(size)
    return summary(samples, response_bytes=int(statistics.median(sizes)))


def stdio(w: Workload, reps: int, log_dir: Path) -> Json:
    res: Json = {}
    started = time.perf_counter()
    with sidecar(log_dir / f"sidecar-{w.n}.log", timing=True) as client:
        client.initialize(str(w.memory_root), config={})
        res["spawn_initialize"] = summary([(time.perf_counter() - started) * 1000])
        marks: dict[str, int | None] = {}
        try:
            run_stdio_steps(client, w, reps, res, marks)
        except (RpcTimeout, RpcClosed):
            pass
        finally:
            res["rss"] = rss_figures(client.pid, len(w.open_json), marks)
    res["rss_batched"] = batched_ingest_rss(w, log_dir)
    res["compute_without_usage"] = compute_without_usage(w, reps, log_dir)
    if w.n <= WHOLE_VIEW_FORMATS_UP_TO:
        res["worst_case"] = worst_case(w, log_dir)
    return res


def run_stdio_steps(
    client: SidecarClient, w: Workload, reps: int, res: Json, marks: dict[str, int | None]
) -> None:
    """The host's cycle on one session, then the whole-view build on a freshly reopened copy.

    `marks` records VmHWM after the open and after the cycle: the cycle's peak is the RSS figure;
    the whole-view build (a response as large as the session) only shows in the overall peak.
    """
    sid = w.sid
    build = {"sessionId": sid, "collapseTail": True}
    step(res, "session_open", lambda: open_session(client, w, max(1, reps // 10)))
    step(res, "session_sync_bulk", lambda: sync_bulk(client, w))
    marks["after_open"] = peak_rss_bytes(client.pid).get("VmHWM")
    w.release_history()
    step(res, "sync_part", lambda: sync_only(client, w, reps))
    step(res, "sync_part_then_compute", lambda: sync_then_compute(client, w, reps))
    step(res, "compute_documented", lambda: documented_compute(client, w, reps))
    step(
        res,
        "compute_preview",
        lambda: repeat_rpc(client, "rebuild/compute", w.compute_params(preview="always"), reps),
    )
    step(res, "insert", lambda: insert_cycles(client, w, max(3, reps // 5)))
    step(res, "build_after_rebuild", lambda: build_after_rebuild(client, build, reps))
    step(res, "build_formats", lambda: build_formats(client, build, reps))
    marks["after_cycle"] = peak_rss_bytes(client.pid).get("VmHWM")
    step(res, "build_full_view", lambda: build_full_view(client, w, build, max(7, reps // 4)))
    step(res, "get_during_open", lambda: get_during_open(client, w, max(3, reps // 10)))


def open_session(client: SidecarClient, w: Workload, reps: int) -> Json:
    """`session/open` of the whole session; re-opens go through `session/close` first."""
    samples = []
    for i in range(reps):
        if i:
            rpc(client, "session/close", {"sessionId": w.sid})
        _, ms, _ = rpc(client, "session/open", params_json=w.open_json)
        samples.append(ms)
    return throughput(summary(samples), len(w.open_json), w.n)


def get_during_open(client: SidecarClient, w: Workload, reps: int) -> Json:
    """Another session's `session/get`, sent right after the whole history's `session/open`: how
    long it waits while the big frame is parsed (off the event loop, slice by slice), and whether
    it is answered before the open."""
    bystander = {"sessionId": "bystander"}
    rpc(client, "session/open", bystander)
    samples, first = [], 0
    for _ in range(reps):
        rpc(client, "session/close", {"sessionId": w.sid})
        opened = client.send_async(client.prepare("session/open", params_json=w.open_json))
        get = client.prepare("session/get", bystander)
        with Timer() as t:
            got = client.send(get, timeout=RPC_TIMEOUT_S)
        samples.append(t.ms)
        first += not opened.done()
        opened.result(RPC_TIMEOUT_S)
        del got
    rpc(client, "session/close", bystander)
    return summary(samples, answered_before_the_open=f"{first}/{reps}")


def sync_bulk(client: SidecarClient, w: Workload, reopen: bool = True) -> Json:
    """(Re)open the session empty, then send its history with `session/sync` in batches."""
    bodies = w.batches
    if reopen:
        rpc(client, "session/close", {"sessionId": w.sid})
    rpc(client, "session/open", {k: v for k, v in w.open_params.items() if k != "messages"})
    total = sum(rpc(client, "session/sync", params_json=body)[1] for body in bodies)
    return throughput(summary([total], batches=len(bodies)), sum(map(len, bodies)), w.n)


def sync_part(client: SidecarClient, w: Workload) -> float:
    part = w.stream.next()
    _, ms, _ = rpc(
        client,
        "session/sync",
        {"sessionId": w.sid, "upsertParts": [{"messageId": w.stream.message_id, "part": part}]},
    )
    return ms


def sync_only(client: SidecarClient, w: Workload, reps: int) -> Json:
    return summary([sync_part(client, w) for _ in range(reps)])


def sync_then_compute(client: SidecarClient, w: Workload, reps: int) -> Json:
    """One streamed part, then `rebuild/compute` (no preview): the per-step cost for a host."""
    compute_ms, total_ms = [], []
    with collector_paused():
        for _ in range(max(reps, COMPUTE_REPS)):
            t1 = sync_part(client, w)
            _, t2, _ = rpc(client, "rebuild/compute", w.compute_params())
            compute_ms.append(t2)
            total_ms.append(t1 + t2)
    return {**summary(total_ms), "compute": summary(compute_ms)}


def documented_compute(client: SidecarClient, w: Workload, reps: int) -> Json:
    """One streamed part, then `rebuild/compute` as documented (`preview` at its default, usage
    below the line): timed is the compute. Target: at 20,000 messages within 1.5x of 500."""
    samples, computed = [], set()
    with collector_paused():
        for _ in range(max(reps, COMPUTE_REPS)):
            sync_part(client, w)
            result, ms, _ = rpc(client, "rebuild/compute", w.documented_compute_params())
            samples.append(ms)
            computed.add(bool((result or {}).get("previewComputed")))
    return summary(samples, preview_computed=sorted(computed))


def insert_cycles(client: SidecarClient, w: Workload, reps: int) -> Json:
    """Each cycle: compute the watermark, a writer starts and succeeds, then the timed insert."""
    samples, outcomes = [], []
    for _ in range(reps):
        result, _, _ = rpc(client, "rebuild/compute", w.compute_params())
        watermark = (result or {}).get("watermark") or {}
        if not watermark.get("messageId"):
            break
        rpc(client, "checkpoint/writerStarted", {"sessionId": w.sid, "watermark": watermark["messageId"]})
        rpc(client, "checkpoint/writerFinished", {"sessionId": w.sid, "outcome": "success"})
        result, ms, _ = rpc(client, "rebuild/insert", {"sessionId": w.sid, "reason": "auto"})
        samples.append(ms)
        outcomes.append((result or {}).get("outcome"))
    if not samples:
        raise Unavailable("no watermark from rebuild/compute")
    return {**summary(samples), "first_ms": round(samples[0], 3), "outcomes": sorted(set(map(str, outcomes)))}


def build_after_rebuild(client: SidecarClient, build: Json, reps: int) -> Json:
    s = repeat_rpc(client, "request/build", build, reps)
    result, _, _ = rpc(client, "request/build", build)
    s["messages"] = len((result or {}).get("messages") or [])
    s["estimated_tokens"] = (result or {}).get("estimatedTokens")
    # The JSON layer alone for this response: serialize once and parse once with orjson.
    s["json_floor_ms"] = round(min(Timer.repeat(lambda: orjson.loads(orjson.dumps(result)), 5)), 3)
    s["beyond_json_ms"] = round(s["median_ms"] - s["json_floor_ms"], 3)
    return s


def build_formats(client: SidecarClient, build: Json, reps: int) -> Json:
    """`request/build` after the rebuild in every output format; each format's median as a ratio of
    `ai-sdk`'s (target: within 2x). Anthropic also with cache breakpoints."""
    out: Json = {}
    for fmt in FORMATS:
        out[fmt] = repeat_rpc(client, "request/build", {**build, "format": fmt}, reps)
    out["anthropic+cache"] = repeat_rpc(
        client, "request/build", {**build, "format": "anthropic", "cache": {"ttl": "1h"}}, reps
    )
    base = out["ai-sdk"]["median_ms"]
    for entry in out.values():
        entry["ratio_to_ai_sdk"] = round(entry["median_ms"] / base, 2) if base else None
    return out


def build_full_view(client: SidecarClient, w: Workload, build: Json, reps: int) -> Json:
    """`request/build` before any rebuild: the whole session goes out, in every format up to
    `WHOLE_VIEW_FORMATS_UP_TO` messages (`ai-sdk` alone beyond), each as a ratio to the orjson floor
    of its own output: one serialise and one parse, as many times as the round trips, medians of
    both (target: within 2x).

    The first build after a `session/open` (issue 25's row: at most 1.5x the floor) is one event
    per open, so it is measured `FIRST_BUILD_OPENS` times, each after a `session/close` and a fresh
    `session/open`, and the median given: the first of a format right after another format's
    builds would be the first after those builds (it frees their memo), not the first after the
    open."""
    formats = FORMATS if w.n <= WHOLE_VIEW_FORMATS_UP_TO else ("ai-sdk",)
    out: Json = {}
    for fmt in formats:
        params = {**build, "format": fmt}
        firsts, handled_firsts, paired = [], [], []
        with collector_paused():
            for _ in range(FIRST_BUILD_OPENS):
                rpc(client, "session/close", {"sessionId": w.sid})
                rpc(client, "session/open", params_json=w.open_json)
                before = len(handler_ms(client, "request/build"))
                first, first_ms, _ = rpc(client, "request/build", params)  # the first after the open
                firsts.append(first_ms)
                handled = handler_ms(client, "request/build")[before:]
                handled_firsts += handled
                # Its own floor, timed right after it: this VM's speed drifts by a third from one
                # minute to the next, and a first build set against a floor timed later is a ratio
                # of two moments. The median of these per-open ratios is the figure.
                own = statistics.median(Timer.repeat(lambda r=first: orjson.loads(orjson.dumps(r)), 3))
                if handled and own:
                    paired.append(handled[-1] / own)
                del first
            before = len(handler_ms(client, "request/build"))
            entry = repeat_rpc(client, "request/build", params, reps, budget_s=15)
            handled = handler_ms(client, "request/build")[before:]
            result, _, _ = rpc(client, "request/build", params)
            floors = Timer.repeat(lambda result=result: orjson.loads(orjson.dumps(result)), reps)
            floor = statistics.median(floors)  # the same statistic as the round trips
            del result
        first_ms = statistics.median(firsts)
        entry["json_floor_ms"] = round(floor, 3)
        entry["ratio_to_floor"] = round(entry["median_ms"] / floor, 2) if floor else None
        entry["first_ms"] = round(first_ms, 3)
        entry["first_ratio_to_floor"] = round(first_ms / floor, 2) if floor else None
        if handled_firsts and handled and floor:  # the sidecar's own time, as the issue measured it
            first, warm = statistics.median(handled_firsts), statistics.median(handled)
            entry["handler_first_ms"], entry["handler_warm_ms"] = round(first, 3), round(warm, 3)
            entry["handler_first_to_floor"] = round(first / floor, 2)
        if paired:
            entry["handler_first_to_own_floor"] = round(statistics.median(paired), 2)
            entry["handler_warm_to_floor"] = round(warm / floor, 2)
        out[fmt] = entry
    return out


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off. Over stdio, in the client while a 40 MB response is parsed, for the
    round trips and the floor alike: a collection in the client, set off by the million objects it
    parses, is not the sidecar's cost. In process, around the core's builds: the sidecar pauses it
    while it serves a request (`rpc/collector.py`), so that is how the core runs there."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def compute_without_usage(w: Workload, reps: int, log_dir: Path) -> Json:
    """`rebuild/compute` after one streamed part, on the session with every usage record taken
    out (a fresh sidecar): the usage fallback on every call. Target: flat in the session's length
    (at 20,000 messages within 1.5x of 500), as with usage (`sync_part_then_compute`)."""
    with sidecar(log_dir / f"sidecar-{w.n}-no-usage.log") as client:
        client.initialize(str(w.memory_root), config={})
        try:
            rpc(client, "session/open", params_json=w.open_json_without_usage)
            params = {"sessionId": w.sid, "model": w.model, "preview": False}
            rpc(client, "rebuild/compute", params)  # the first count walks the view once
            compute_ms, sources = [], set()
            with collector_paused():  # a sub-millisecond call: only the sidecar is timed
                for _ in range(max(reps, COMPUTE_REPS)):
                    sync_part(client, w)
                    result, ms, _ = rpc(client, "rebuild/compute", params)
                    compute_ms.append(ms)
                    sources.add(str(((result or {}).get("trigger") or {}).get("usageSource")))
        except (Unavailable, RpcTimeout, RpcClosed) as exc:
            return {"status": f"failed: {exc}"}
    return summary(compute_ms, usage_sources=sorted(sources))


def worst_case(w: Workload, log_dir: Path) -> Json:
    """Peak RSS of the worst case: a fresh sidecar, one-shot `session/open` of the whole history, a
    whole-view `request/build` in every format, then a rebuild (compute, writer, insert).
    Target: within 3 x JSON + 80 MiB."""
    with sidecar(log_dir / f"sidecar-{w.n}-worst.log") as client:
        client.initialize(str(w.memory_root), config={})
        try:
            rpc(client, "session/open", params_json=w.open_json)
            for fmt in FORMATS:
                rpc(client, "request/build", {"sessionId": w.sid, "format": fmt})
            insert_cycles(client, w, 1)
        except (Unavailable, RpcTimeout, RpcClosed) as exc:
            return {"status": f"failed: {exc}"}
        return rss_figures(client.pid, len(w.open_json), {})


def batched_ingest_rss(w: Workload, log_dir: Path) -> Json:
    """Peak RSS of a fresh sidecar fed the history in 500-message `session/sync` batches (the way
    protocol.md recommends for long histories), then one host cycle: compute, insert, build."""
    with sidecar(log_dir / f"sidecar-{w.n}-batched.log") as client:
        client.initialize(str(w.memory_root), config={})
        try:
            sync_bulk(client, w, reopen=False)
            insert_cycles(client, w, 1)
            rpc(client, "request/build", {"sessionId": w.sid})
        except (Unavailable, RpcTimeout, RpcClosed) as exc:
            return {"status": f"failed: {exc}"}
        return rss_figures(client.pid, len(w.open_json), {})


def rss_figures(pid: int, json_bytes: int, marks: dict[str, int | None]) -> Json:
    overall = peak_rss_bytes(pid).get("VmHWM")
    peak = marks.get("after_cycle") or overall
    limit = 3 * json_bytes + 80 * 2**20
    return {
        "peak_bytes": peak,  # open + sync + compute + insert + build after the rebuild
        "after_open_bytes": marks.get("after_open"),
        "overall_peak_bytes": overall,  # also the whole-view request/build
        "json_bytes": json_bytes,
        "ratio_to_json": round(peak / json_bytes, 2) if peak else None,
        "target_bytes": limit,
        "within_target": peak <= limit if peak else None,
    }


# -- report ------------------------------------------------------------------------------------------
def machine() -> Json:
    info: Json = {
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "orjson": orjson.__version__,
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        mem = Path("/proc/meminfo").read_text().split("\n", 1)[0]
        info["mem_total_bytes"] = int(mem.split()[1]) * 1024
    except OSError:
        pass
    try:
        from importlib.metadata import version

        info["pygls"] = version("pygls")
    except Exception:  # noqa: BLE001 - informational only
        pass
    return info


def ms(value: float) -> str:
    return f"{value:.3g} ms" if value < 10 else f"{value:.0f} ms"


def cell(entry: Any, kind: str) -> str:
    if isinstance(entry, int) and kind == "mib":
        return f"{entry / 2**20:.0f} MiB"
    if isinstance(entry, (int, float)) and kind == "num_ms":
        return ms(entry)
    if not isinstance(entry, dict):
        return "—"
    if "status" in entry:
        return entry["status"]
    if kind == "ms":
        out = f"{ms(entry['median_ms'])} (p95 {ms(entry['p95_ms'])})"
        size = entry.get("response_bytes", 0)
        if "answered_before_the_open" in entry:
            out += f", answered first {entry['answered_before_the_open']}"
        if "preview_computed" in entry:
            out += f", preview computed: {'/'.join(map(str, entry['preview_computed']))}"
        return out + (f", {size / MB:.2f} MB out" if size > 10_000 else "")
    if kind == "fmt":
        return f"{ms(entry['median_ms'])} ({entry['ratio_to_ai_sdk']}x ai-sdk)"
    if kind == "floor":
        out = f"{ms(entry['median_ms'])} ({entry['ratio_to_floor']}x its JSON floor)"
        if "first_ms" in entry:
            out += f"; first after open {ms(entry['first_ms'])} ({entry['first_ratio_to_floor']}x)"
        if "handler_first_ms" in entry:
            out += f"; handler: first {entry['handler_first_to_floor']}x"
            if "handler_first_to_own_floor" in entry:
                out += f" ({entry['handler_first_to_own_floor']}x its own floor)"
            out += f", after it {entry['handler_warm_to_floor']}x"
        return out
    if kind == "step":
        return (
            f"{ms(entry['median_ms'])} (p95 {ms(entry['p95_ms'])}; "
            f"{entry['ratio_to_100_view']}x a 100-message view's {ms(entry['view_100_ms'])})"
        )
    if kind == "mbs":
        out = f"{ms(entry['median_ms'])}, {entry['mb_per_s']} MB/s"
        return out + (f", {entry['messages_per_s']:,} msg/s" if entry.get("messages_per_s") else "")
    if kind == "rss":
        if not entry.get("peak_bytes"):
            return "—"
        return (
            f"{entry['peak_bytes'] / 2**20:.0f} MiB = {entry['ratio_to_json']}x JSON "
            f"(target {entry['target_bytes'] / 2**20:.0f} MiB)"
        )
    return str(entry)


ROWS = [
    ("session JSON", ("session", "json_bytes"), "bytes"),
    ("JSON floor: orjson parse", ("inprocess", "json_floor", "orjson_parse"), "mbs"),
    ("JSON floor: orjson serialize", ("inprocess", "json_floor", "orjson_serialize"), "mbs"),
    ("JSON floor: stdlib parse", ("inprocess", "json_floor", "stdlib_parse"), "mbs"),
    ("JSON floor: stdlib serialize", ("inprocess", "json_floor", "stdlib_serialize"), "mbs"),
    ("core: ingest (apply)", ("inprocess", "core", "ingest"), "mbs"),
    ("core: parse + ingest", ("inprocess", "core", "parse_and_ingest"), "mbs"),
    ("core: 1 part update", ("inprocess", "core", "part_update"), "ms"),
    ("core: watermark after update", ("inprocess", "core", "watermark"), "ms"),
    ("core: update + watermark", ("inprocess", "core", "part_update_then_watermark"), "ms"),
    *[
        (f"core: build whole view, nothing kept, {fmt}", ("inprocess", "core", "build_formats", fmt), "fmt")
        for fmt in FORMATS
    ],
    ("core: build whole view after 1 new step", ("inprocess", "core", "build_after_step"), "step"),
    ("stdio: spawn + initialize", ("stdio", "spawn_initialize"), "ms"),
    ("stdio: session/open", ("stdio", "session_open"), "mbs"),
    ("stdio: session/sync, 500-message batches", ("stdio", "session_sync_bulk"), "mbs"),
    ("stdio: session/sync 1 part", ("stdio", "sync_part"), "ms"),
    ("stdio: sync 1 part + compute", ("stdio", "sync_part_then_compute"), "ms"),
    ("  … rebuild/compute, with usage", ("stdio", "sync_part_then_compute", "compute"), "ms"),
    ("  … rebuild/compute, no usage (estimate)", ("stdio", "compute_without_usage"), "ms"),
    ("stdio: rebuild/compute as documented (below the line)", ("stdio", "compute_documented"), "ms"),
    ("stdio: rebuild/compute, preview always", ("stdio", "compute_preview"), "ms"),
    ("stdio: rebuild/insert", ("stdio", "insert"), "ms"),
    ("stdio: request/build after rebuild", ("stdio", "build_after_rebuild"), "ms"),
    ("  … beyond its JSON floor", ("stdio", "build_after_rebuild", "beyond_json_ms"), "num_ms"),
    *[
        (f"stdio: request/build after rebuild, {fmt}", ("stdio", "build_formats", fmt), "fmt")
        for fmt in (*FORMATS, "anthropic+cache")
    ],
    *[
        (f"stdio: request/build, whole session, {fmt}", ("stdio", "build_full_view", fmt), "floor")
        for fmt in FORMATS
    ],
    ("stdio: another session/get during the open", ("stdio", "get_during_open"), "ms"),
    ("stdio: RSS after open", ("stdio", "rss", "after_open_bytes"), "mib"),
    ("stdio: peak RSS (host cycle)", ("stdio", "rss"), "rss"),
    ("stdio: peak RSS incl. whole-session build", ("stdio", "rss", "overall_peak_bytes"), "mib"),
    ("stdio: peak RSS, batched ingest + cycle", ("stdio", "rss_batched"), "rss"),
    ("stdio: peak RSS, worst case", ("stdio", "worst_case"), "rss"),
]


def lookup(entry: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        entry = entry.get(key) if isinstance(entry, dict) else None
    return entry


def table(results: Json) -> str:
    sizes = list(results["sizes"])
    rows = [["", *[f"{int(s):,} messages" for s in sizes]]]
    for label, path, kind in ROWS:
        values = []
        for s in sizes:
            entry = lookup(results["sizes"][s], path)
            values.append(f"{entry / MB:.1f} MB" if kind == "bytes" and entry else cell(entry, kind))
        rows.append([label, *values])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(c.ljust(wd) for c, wd in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "-+-".join("-" * wd for wd in widths))
    return "\n".join(lines)


def log(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def run_size(n: int, reps: int, tmp: Path, skip_stdio: bool) -> Json:
    log(f"[{n}] generating…")
    w = Workload(n, tmp)
    entry: Json = {"session": w.describe()}
    log(f"[{n}] {len(w.open_json) / MB:.1f} MB; JSON floor and core in process…")
    entry["inprocess"] = {
        "json_floor": json_floor(w, max(3, reps // 5)),
        "core": in_process(w, max(3, reps // 5)),
    }
    if not skip_stdio:
        log(f"[{n}] over stdio…")
        entry["stdio"] = stdio(w, reps, tmp)
    return entry


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark the sidecar (see benchmarks/run.py's docstring).")
    ap.add_argument("--sizes", default=None, help="comma-separated message counts (default 500,5000,20000)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions; default sizes 500,5000")
    ap.add_argument(
        "--reps", type=int, default=None, help="repetitions of the cheap calls (default 30, quick 8)"
    )
    ap.add_argument("--no-stdio", action="store_true", help="in-process figures only")
    ap.add_argument("--no-real", action="store_true", help="skip the largest real session's row")
    ap.add_argument(
        "--cycles",
        type=int,
        default=None,
        help="open/insert/build/close cycles of the RSS row (default 10000, quick 2000; 0 skips it)",
    )
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "latest.json"))
    ap.add_argument(
        "--sidecar", help="command that starts the sidecar (default: this Python -m mimo_sidecar)"
    )
    args = ap.parse_args(argv)
    if args.sidecar:
        SIDECAR_COMMAND[:] = shlex.split(args.sidecar)
    sizes = [int(s) for s in (args.sizes or ("500,5000" if args.quick else "500,5000,20000")).split(",")]
    reps = args.reps or (8 if args.quick else 30)
    tmp = Path(tempfile.mkdtemp(prefix="mimo-bench-"))
    results: Json = {
        "machine": machine(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "args": {"sizes": sizes, "reps": reps, "quick": args.quick},
        "sizes": {},
    }
    try:
        for n in sizes:
            results["sizes"][str(n)] = run_size(n, reps, tmp, args.no_stdio)
        if not (args.no_stdio or args.no_real):
            from benchmarks import real_session  # imports this module as benchmarks.run

            log("[real] the largest real session…")
            results["real_session"] = real_session.measure(reps, tmp, SIDECAR_COMMAND)
        from benchmarks import long_turn

        log("[turn] a build after one step of a long turn…")
        results["long_turn"] = long_turn.measure(
            reps, None if args.no_stdio else tmp, None if args.no_stdio else SIDECAR_COMMAND
        )
        if not (args.no_stdio or args.no_real):
            from benchmarks import host_steps

            log("[real] the host's per-step loop on every real transcript…")
            results["host_steps"] = host_steps.measure(tmp, SIDECAR_COMMAND)
        if not args.no_real:
            from benchmarks import estimate_accuracy

            log("[real] the estimate against usage, per real session…")
            results["estimate_accuracy"] = estimate_accuracy.measure()
        cycles = args.cycles if args.cycles is not None else (2000 if args.quick else 10000)
        if cycles and not args.no_stdio:
            from benchmarks import session_cycles

            log(f"[cycles] RSS over {cycles:,} session cycles…")
            results["session_cycles"] = session_cycles.measure(cycles, tmp, SIDECAR_COMMAND)
    finally:
        logs = {p.name: p.read_text(errors="replace")[-4000:] for p in tmp.glob("sidecar-*.log")}
        shutil.rmtree(tmp, ignore_errors=True)
    results["sidecar_log_tails"] = logs
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2) + b"\n")
    m = results["machine"]
    sys.stdout.write(
        f"mimo-sidecar benchmarks — {m['cpu_count']} CPUs, Python {m['python']}, {m.get('cpu', '')}\n\n"
    )
    sys.stdout.write(table(results) + "\n")
    if "real_session" in results:
        from benchmarks import real_session

        sys.stdout.write("\n" + real_session.table(results["real_session"]) + "\n")
    if "long_turn" in results:
        from benchmarks import long_turn

        sys.stdout.write("\n" + long_turn.table(results["long_turn"]) + "\n")
    if "host_steps" in results:
        from benchmarks import host_steps

        sys.stdout.write("\n" + host_steps.table(results["host_steps"]) + "\n")
    if "estimate_accuracy" in results:
        from benchmarks import estimate_accuracy

        sys.stdout.write("\n" + estimate_accuracy.table(results["estimate_accuracy"]) + "\n")
    if "session_cycles" in results:
        from benchmarks import session_cycles

        sys.stdout.write("\n" + session_cycles.table(results["session_cycles"]) + "\n")
    sys.stdout.write(f"\nfigures: {out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
