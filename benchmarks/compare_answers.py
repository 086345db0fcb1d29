"""Whether a change altered what the sidecar answers: two sidecars replay every real transcript of
shared/real-sessions the same way, and every answer is compared.

    .venv/bin/python -m benchmarks.compare_answers --against HEAD~1 [--steps N] [--window 60000] \
        [--ignore previewComputed]
    make compare AGAINST=<git revision or checkout path> [IGNORE=previewComputed]

`--against` is a git revision (checked out in a temporary worktree, run with this checkout's
virtual environment) or the path of another checkout. For each transcript and each format (and
Anthropic with cache breakpoints), one session per format is replayed a step at a time as a host
does (`benchmarks.host_steps.steps_of`, usage records taken out): `session/sync`, `rebuild/compute`,
`request/build`; when a rebuild is due, the writer's request, `checkpoint.md` and `rebuild/insert`.
The window is small (`--window`, 60 000 tokens) so that most transcripts rebuild, and the requests
after a rebuild are compared too. What depends on the clock or a random draw is blanked first: the
memory root's path (each run has its own), the boundary's minted IDs and integers that are
times within the run; and the answers' top-level fields named by `--ignore` (a field the change
adds, which the other checkout does not send). Prints one line per transcript
and format, and for a difference the first answer that differs and where; exits 1 when any does.
Used to check that `core.request.build_memo` changed nothing the model reads (README, "Performance").
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from benchmarks import run
from benchmarks.host_steps import CHECKPOINT, model_of, steps_of, without_usage
from mimo_sidecar.importers import import_transcript
from tests.real_sessions import absent_reason, main_session_files, real_sessions_root

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]
VARIANTS: list[tuple[str, Json]] = [
    ("ai-sdk", {}),
    ("anthropic", {}),
    ("anthropic", {"cache": {"ttl": "5m"}}),
    ("openai-chat", {}),
    ("openai-responses", {}),
    ("gemini", {}),
]
Answer = tuple[str, int, bytes]  # (what, step, normalised JSON)


class Blanker:
    """Blanks what differs from run to run: the memory root's path, the IDs a rebuild mints, and
    times within the run."""

    def __init__(self, memory: Path, ignored: frozenset[str] = frozenset()) -> None:
        self.minted: dict[bytes, bytes] = {str(memory).encode(): b"<memory root>"}
        self.ignored = ignored
        self.since = int(time.time() * 1000) - 600_000

    def learn(self, inserted: Json) -> None:
        message = inserted.get("message") or {}
        ids = [message.get("info", {}).get("id")] + [p.get("id") for p in message.get("parts", [])]
        for value in ids:
            if isinstance(value, str) and value.encode() not in self.minted:
                self.minted[value.encode()] = b"<minted-%d>" % len(self.minted)

    def __call__(self, value: Any) -> bytes:
        if isinstance(value, dict) and self.ignored:
            value = {k: v for k, v in value.items() if k not in self.ignored}
        raw = orjson.dumps(self._times(value))
        for real, blank in self.minted.items():
            raw = raw.replace(real, blank)
        return raw

    def _times(self, value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and self.since <= value <= int(time.time() * 1000) + 600_000:
            return "<time>"
        if isinstance(value, dict):
            return {k: self._times(v) for k, v in value.items() if k != "durationMs"}
        if isinstance(value, list):
            return [self._times(v) for v in value]
        return value


def replay(
    client: run.SidecarClient,
    params: Json,
    fmt: str,
    extra: Json,
    memory: Path,
    window: int,
    steps: int,
    ignored: frozenset[str] = frozenset(),
) -> list[Answer]:
    messages = without_usage(params["messages"])
    model = {**model_of(messages), "contextWindow": window, "maxOutputTokens": min(8_000, window // 4)}
    sid = f"{params['sessionId']}-{fmt}-{len(extra)}"
    (memory / "sessions" / sid).mkdir(parents=True, exist_ok=True)
    opened = {k: v for k, v in params.items() if k not in ("messages", "sessionId")}
    run.rpc(client, "session/open", {**opened, "sessionId": sid, "messages": []})
    blank, answers = Blanker(memory, ignored), []

    def ask(what: str, step: int, method: str, body: Json) -> Any:
        try:
            result, _, _ = run.rpc(client, method, {"sessionId": sid, **body})
        except run.Unavailable as exc:
            answers.append((what, step, str(exc).encode()))
            return None
        if what == "insert":
            blank.learn(result)
        answers.append((what, step, blank(result)))
        return result

    for i, step in enumerate(steps_of(messages)[:steps]):
        ask("sync", i, "session/sync", {"upsertMessages": step})
        computed = ask("compute", i, "rebuild/compute", {"model": model, "preview": False})
        if computed is not None and computed["trigger"]["shouldRebuild"] and computed.get("watermark"):
            watermark = computed["watermark"]["messageId"]
            ask("writerStarted", i, "checkpoint/writerStarted", {"watermark": watermark})
            ask("writer's request", i, "request/build", {"purpose": "writer", "format": fmt, **extra})
            (memory / "sessions" / sid / "checkpoint.md").write_text(CHECKPOINT, encoding="utf-8")
            ask("writerFinished", i, "checkpoint/writerFinished", {"outcome": "success"})
            ask("insert", i, "rebuild/insert", {"reason": "auto"})
        ask("request", i, "request/build", {"format": fmt, **extra})
    run.rpc(client, "session/close", {"sessionId": sid})
    return answers


def answers_of(
    checkout: Path, window: int, steps: int, ignored: frozenset[str] = frozenset()
) -> dict[str, list[Answer]]:
    root = real_sessions_root()
    assert root is not None
    memory = Path(tempfile.mkdtemp(prefix="mimo-compare-"))
    command = [sys.executable, "-m", "mimo_sidecar"]
    out: dict[str, list[Answer]] = {}
    try:
        with open(memory / "sidecar.log", "ab") as log:
            client = run.SidecarClient.spawn(stderr=log, cwd=checkout, command=command)
            try:
                client.initialize(str(memory), config={})
                for path in main_session_files(root):
                    params = import_transcript(path).params
                    for fmt, extra in VARIANTS:
                        name = f"{path.parent.name}/{path.name} {fmt}{' +cache' if extra else ''}"
                        out[name] = replay(client, params, fmt, extra, memory, window, steps, ignored)
            finally:
                client.shutdown(timeout=10)
    finally:
        shutil.rmtree(memory, ignore_errors=True)
    return out


@contextmanager
def checkout_of(against: str) -> Iterator[Path]:
    """A path as given, or a git revision checked out in a temporary worktree."""
    if Path(against).is_dir():
        yield Path(against)
        return
    where = Path(tempfile.mkdtemp(prefix="mimo-against-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), against], check=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], check=False)


def first_difference(a: list[Answer], b: list[Answer]) -> str | None:
    for (what, step, x), (_, _, y) in zip(a, b, strict=False):
        if x != y:
            return f"step {step}, {what}: {_where(orjson.loads(x), orjson.loads(y))}"
    if len(a) != len(b):
        return f"{len(a)} answers against {len(b)}"
    return None


def _where(x: Any, y: Any, path: str = "") -> str:
    if isinstance(x, dict) and isinstance(y, dict):
        for key in [*x, *(k for k in y if k not in x)]:
            if key not in x or key not in y:
                return f"{path}.{key} only on one side"
            if x[key] != y[key]:
                return _where(x[key], y[key], f"{path}.{key}")
    if isinstance(x, list) and isinstance(y, list):
        for i, (u, v) in enumerate(zip(x, y, strict=False)):
            if u != v:
                return _where(u, v, f"{path}[{i}]")
        return f"{path}: {len(x)} items against {len(y)}"
    return f"{path or 'the answer'}: {str(x)[:80]!r} against {str(y)[:80]!r}"


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", required=True, help="a git revision or the path of another checkout")
    ap.add_argument("--steps", type=int, default=10**9, help="steps replayed per transcript (default: all)")
    ap.add_argument("--window", type=int, default=60_000, help="the model's context window in tokens")
    ap.add_argument(
        "--ignore", action="append", default=[], help="a top-level answer field left out (repeatable)"
    )
    args = ap.parse_args(argv)
    ignored = frozenset(args.ignore)
    if real_sessions_root() is None:
        say(f"skipped: {absent_reason()}")
        return 0
    mine = answers_of(ROOT, args.window, args.steps, ignored)
    with checkout_of(args.against) as other:
        theirs = answers_of(other, args.window, args.steps, ignored)
    differ = 0
    for name, answers in mine.items():
        found = first_difference(theirs.get(name, []), answers)
        digest = hashlib.sha256(b"".join(a[2] for a in answers)).hexdigest()[:12]
        verdict = "same" if found is None else f"DIFFERENT: {found}"
        say(f"{name}: {len(answers)} answers, {verdict} ({digest})")
        differ += found is not None
    total = sum(len(a) for a in mine.values())
    say(f"\n{len(mine) - differ} of {len(mine)} replays answered the same ({total:,} answers)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
