"""The recorder behind the bundled sample: a checkout of the fictional project and a session that
records, in MiMo's inline shape, an agent working on it.

What is hand-written lives elsewhere: the project's files (`tally/`), the story (`script.py`) and
the outputs only a real run could produce (test failures, compiler errors, stack traces), which
the story passes in. What is derived lives here: IDs, timestamps and token usage, and every tool
output that follows from the files as they are at that moment (read, grep, glob, edit diffs, the
list of tests a `bun test` run reports, the line numbers of compiler errors, git status and log).
So the session stays consistent with itself: an edit changes what the next read shows.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from benchmarks.generator import IdMint, add_part, cost_of, new_actor, new_message
from mimo_sidecar.core.estimate.jstext import est
from mimo_sidecar.core.session.message import part_tokens

Json = dict[str, Any]
HOME = "/home/dev"
ROOT = f"{HOME}/tally"
PROVIDER, MODEL_ID = "xiaomi", "mimo-v2-pro"
ARCHIVE_DAYS = 7  # task_archive_days, behavior.md#task-archival


class ToolError(Exception):
    """A tool call that fails: its message becomes the part's `state.error`."""


# =============================================================================================
# The checkout
# =============================================================================================
class Checkout:
    """Files by absolute path. Paths given relative are relative to the project root."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = dict(files)
        self.encodings: dict[str, str] = {}  # files that are not UTF-8 on disk

    @classmethod
    def load(cls, src: Path) -> Checkout:
        files = {}
        for path in sorted(src.rglob("*")):
            if path.is_file():
                with open(path, encoding="utf-8", newline="") as f:  # keep CRLF where a file has it
                    files[f"{ROOT}/{path.relative_to(src).as_posix()}"] = f.read()
        return cls(files)

    @staticmethod
    def abs(path: str) -> str:
        if path.startswith("~/"):
            return HOME + path[1:]
        return path if path.startswith("/") else f"{ROOT}/{path}"

    @staticmethod
    def rel(path: str) -> str:
        return path.removeprefix(ROOT + "/")

    def read(self, path: str) -> str:
        try:
            return self.files[self.abs(path)]
        except KeyError:
            raise ToolError(f"File not found: {self.abs(path)}") from None

    def write(self, path: str, text: str) -> None:
        self.files[self.abs(path)] = text

    def remove(self, path: str) -> None:
        del self.files[self.abs(path)]

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> tuple[str, str]:
        before = self.read(path)
        count = before.count(old)
        if count == 0:
            raise ToolError("oldString not found in content. It must match exactly, including whitespace.")
        if count > 1 and not replace_all:
            raise ToolError(
                "oldString found multiple times and requires more code context to uniquely identify the "
                "intended match"
            )
        after = before.replace(old, new) if replace_all else before.replace(old, new, 1)
        self.files[self.abs(path)] = after
        return before, after

    def under(self, directory: str) -> list[str]:
        prefix = self.abs(directory).rstrip("/") + "/"
        return sorted(p for p in self.files if p.startswith(prefix))


def unified(path: str, before: str, after: str) -> str:
    rel = Checkout.rel(path)
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{rel}", f"b/{rel}", n=3
    )
    return "".join(lines)


def diff_counts(before: str, after: str) -> tuple[int, int]:
    added = removed = 0
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm=""):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


# =============================================================================================
# Tool calls
# =============================================================================================
@dataclass
class Outcome:
    output: str = ""
    title: str = ""
    metadata: Json = field(default_factory=dict)
    error: str | None = None
    interrupted: bool = False
    ms: int | None = None  # how long the call ran; None = a typical duration for the tool


@dataclass
class Call:
    tool: str
    input: Json
    run: Callable[[Story], Outcome]


def read(path: str, offset: int | None = None, limit: int | None = None) -> Call:
    tool_input: Json = {"filePath": Checkout.abs(path)}
    if offset is not None:
        tool_input["offset"] = offset
    if limit is not None:
        tool_input["limit"] = limit

    def run(s: Story) -> Outcome:
        lines = s.fs.read(path).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        start = offset or 0
        end = len(lines) if limit is None else min(len(lines), start + limit)
        body = [f"{i + 1:05d}| {lines[i].removesuffix(chr(13))}" for i in range(start, end)]
        tail = (
            f"(File has more lines. Use 'offset' parameter to read beyond line {end})"
            if end < len(lines)
            else f"(End of file - total {len(lines)} lines)"
        )
        out = "<file>\n" + "\n".join(body) + "\n\n" + tail + "\n</file>"
        preview = "\n".join(lines[start : start + 20])
        return Outcome(
            out, Checkout.rel(Checkout.abs(path)), {"preview": preview, "truncated": end < len(lines)}
        )

    return Call("read", tool_input, run)


def _search_files(s: Story, path: str | None, include: str | None) -> list[str]:
    base = s.fs.abs(path) if path else ROOT
    files = [base] if base in s.fs.files else s.fs.under(base)
    if include:
        files = [f for f in files if PurePosixPath(f).match(include)]
    return files


def grep(pattern: str, path: str | None = None, include: str | None = None) -> Call:
    tool_input: Json = {"pattern": pattern, "path": Checkout.abs(path) if path else ROOT}
    if include:
        tool_input["include"] = include

    def run(s: Story) -> Outcome:
        regex = re.compile(pattern)
        groups = []
        count = 0
        for f in _search_files(s, path, include):
            hits = [(n + 1, line) for n, line in enumerate(s.fs.files[f].split("\n")) if regex.search(line)]
            if hits:
                count += len(hits)
                groups.append(f"{f}:\n" + "\n".join(f"  Line {n}: {line.strip()}" for n, line in hits))
        if not groups:
            return Outcome("No files found", pattern, {"matches": 0, "truncated": False})
        return Outcome(
            f"Found {count} matches\n" + "\n\n".join(groups), pattern, {"matches": count, "truncated": False}
        )

    return Call("grep", tool_input, run)


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + "$")


def glob(pattern: str, path: str | None = None) -> Call:
    base = Checkout.abs(path) if path else ROOT

    def run(s: Story) -> Outcome:
        regex = _glob_regex(pattern)
        found = [f for f in s.fs.under(base) if regex.match(f[len(base) + 1 :])]
        return Outcome(
            "\n".join(found) if found else "No files found",
            pattern,
            {"count": len(found), "truncated": False},
        )

    return Call("glob", {"pattern": pattern, "path": base}, run)


def edit(path: str, old: str, new: str, replace_all: bool = False) -> Call:
    tool_input: Json = {"filePath": Checkout.abs(path), "oldString": old, "newString": new}
    if replace_all:
        tool_input["replaceAll"] = True

    def run(s: Story) -> Outcome:
        before, after = s.fs.edit(path, old, new, replace_all)
        added, removed = diff_counts(before, after)
        meta = {
            "diff": unified(s.fs.abs(path), before, after),
            "filediff": {"file": s.fs.abs(path), "additions": added, "deletions": removed},
        }
        return Outcome("Edit applied successfully.", Checkout.rel(s.fs.abs(path)), meta)

    return Call("edit", tool_input, run)


def write(path: str, content: str) -> Call:
    def run(s: Story) -> Outcome:
        existed = s.fs.abs(path) in s.fs.files
        s.fs.write(path, content)
        return Outcome(
            "Wrote file successfully.",
            Checkout.rel(s.fs.abs(path)),
            {"filepath": s.fs.abs(path), "exists": existed},
        )

    return Call("write", {"filePath": Checkout.abs(path), "content": content}, run)


def bash(
    command: str,
    description: str,
    output: str | Callable[[Story], str] = "",
    *,
    exit: int = 0,
    ms: int | None = None,
    effect: Callable[[Story], None] | None = None,
    interrupted: bool = False,
    timeout: int | None = None,
) -> Call:
    """A shell command. `output` is the combined stdout and stderr (or a function of the story);
    `effect` applies what the command did to the checkout, after the output is taken."""
    tool_input: Json = {"command": command, "description": description}
    if timeout is not None:
        tool_input["timeout"] = timeout

    def run(s: Story) -> Outcome:
        out = output(s) if callable(output) else output
        if effect is not None:
            effect(s)
        if interrupted:
            return Outcome(
                error="Tool execution aborted",
                interrupted=True,
                metadata={"interrupted": True, "output": out},
                ms=ms,
            )
        meta = {"exit": exit, "description": description, "truncated": len(out) > 30_000}
        return Outcome(out, description, meta, ms=ms)

    return Call("bash", tool_input, run)


def webfetch(url: str, output: str = "", *, error: str | None = None) -> Call:
    def run(s: Story) -> Outcome:
        if error is not None:
            return Outcome(error=error)
        return Outcome(output, f"{url} (text/html)", {})

    return Call("webfetch", {"url": url, "format": "markdown"}, run)


def todowrite(*todos: tuple[str, str, str]) -> Call:
    """(content, status, priority) triples."""
    items = [
        {"id": str(i + 1), "content": c, "status": st, "priority": p} for i, (c, st, p) in enumerate(todos)
    ]

    def run(s: Story) -> Outcome:
        left = sum(t["status"] != "completed" for t in items)
        return Outcome(json.dumps(items, indent=2, ensure_ascii=False), f"{left} todos", {"todos": items})

    return Call("todowrite", {"todos": items}, run)


# =============================================================================================
# Tasks and actors
# =============================================================================================
def task_create(title: str, parent: str | None = None) -> Call:
    tool_input: Json = {"operation": "create", "title": title}
    if parent:
        tool_input["parent"] = parent

    def run(s: Story) -> Outcome:
        tid = s.board.create(title, parent, s.now)
        return Outcome(f"Created task {tid}: {title}", f"{tid} created", {"id": tid})

    return Call("task", tool_input, run)


def task_update(tid: str, status: str, note: str, *, ended: bool = False) -> Call:
    """`ended`: record the end time, which starts the task's archive window (behavior.md#task-archival)."""

    def run(s: Story) -> Outcome:
        s.board.update(tid, status, s.now, ended)
        return Outcome(
            f"Task {tid} updated: status {status}. Note appended to progress.md.",
            f"{tid} \u2192 {status}",
            {"id": tid},
        )

    return Call("task", {"operation": "update", "id": tid, "status": status, "note": note}, run)


@dataclass
class Board:
    tasks: list[Json] = field(default_factory=list)

    def create(self, title: str, parent: str | None, now: int) -> str:
        siblings = [t for t in self.tasks if t.get("parent_task_id") == parent]
        tid = f"{parent}.{len(siblings) + 1}" if parent else f"T{len(siblings) + 1}"
        task: Json = {"id": tid, **({"parent_task_id": parent} if parent else {})}
        task.update(status="open", summary=title, created_at=now)
        self.tasks.append(task)
        return tid

    def update(self, tid: str, status: str, now: int, ended: bool) -> None:
        task = next(t for t in self.tasks if t["id"] == tid)
        task["status"] = status
        if ended:
            task["ended_at"] = now
            task["cleanup_after"] = now + ARCHIVE_DAYS * 86_400_000


def actor_spawn(
    agent: str,
    description: str,
    prompt: str,
    slice_: Callable[[Story], str] | None,
    *,
    background: bool = False,
) -> Call:
    """A sub-agent with its own slice of messages, recorded by `slice_`. In the foreground the
    call waits for it and returns its report. In the background the call returns at once; the
    slice records what the actor has done so far, and it is still running when the session ends."""
    tool_input = {
        "operation": "spawn",
        "agent": agent,
        "description": description,
        "prompt": prompt,
        "background": background,
    }

    def run(s: Story) -> Outcome:
        actor_id = f"{agent}-{sum(1 for a in s.actors if a['agent'] == agent) + 1}"
        actor = new_actor(actor_id, s.session_id, agent, description, background, s.now)
        s.actors.append(actor)
        report = ""
        if slice_ is not None:
            with s.sub_slice(actor_id, agent, prompt):
                report = slice_(s)
            actor["lastTurnTime"] = s.now
        if background:
            return Outcome(
                f'Actor {actor_id} started in the background. Check on it with actor(operation="status", '
                f'id="{actor_id}").',
                f"{actor_id} (background)",
                {"actorID": actor_id},
                ms=40,
            )
        actor["status"] = "completed"
        return Outcome(report, f"{actor_id} (foreground)", {"actorID": actor_id})

    return Call("actor", tool_input, run)


def actor_status(actor_id: str, report: str) -> Call:
    return Call(
        "actor", {"operation": "status", "id": actor_id}, lambda s: Outcome(report, f"{actor_id} status", {})
    )


# =============================================================================================
# The session
# =============================================================================================
TYPICAL_MS = {
    "read": (15, 90),
    "grep": (40, 350),
    "glob": (20, 120),
    "edit": (30, 160),
    "write": (20, 90),
    "bash": (600, 4_000),
    "webfetch": (400, 2_500),
    "todowrite": (5, 30),
    "task": (10, 60),
    "actor": (5, 40),
}


class Story:
    def __init__(self, fs: Checkout, *, seed: int, start_ms: int) -> None:
        self.fs = fs
        self.rng = random.Random(seed)
        self.ids = IdMint(random.Random(seed ^ 0x5A17))
        self.now = start_ms
        self.session_id = self.ids.descending("ses", start_ms)
        self.project_id = hashlib.sha1(ROOT.encode()).hexdigest()
        self.messages: list[Json] = []
        self.board = Board()
        self.actors: list[Json] = []
        self.slice = "main"
        self.agent = "build"
        self.parent: dict[str, str] = {}
        self.marks: dict[str, str] = {}  # story labels -> message IDs

    # -- time and ids ----------------------------------------------------------------------
    def tick(self, lo_ms: int, hi_ms: int) -> int:
        self.now += self.rng.randint(lo_ms, hi_ms)
        return self.now

    def _part(self, msg: Json, ptype: str, **fields: Any) -> Json:
        return add_part(self.ids, self.now, msg, ptype, **fields)

    def _message(self, role: str, info: Json) -> Json:
        msg = new_message(self.ids, self.now, self.session_id, role, self.slice, info)
        self.messages.append(msg)
        return msg

    def mark(self, label: str) -> None:
        """Remember the newest message under a label (the story refers to it, the checks too)."""
        self.marks[label] = self.messages[-1]["info"]["id"]

    # -- turns -----------------------------------------------------------------------------
    def user(self, text: str | Callable[[Story], str], *, after_s: tuple[int, int] = (40, 240)) -> None:
        """A user turn, `after_s` seconds (a range) after the previous message. `text` may be a
        function of the story (a pasted log that quotes the files as they are)."""
        if callable(text):
            text = text(self)
        self.tick(after_s[0] * 1000, after_s[1] * 1000)
        msg = self._message(
            "user",
            {
                "agent": self.agent,
                "model": {"providerID": PROVIDER, "modelID": MODEL_ID},
            },
        )
        self._part(msg, "text", text=text)
        self.parent[self.slice] = msg["info"]["id"]

    def step(
        self,
        *calls: Call,
        think: str | None = None,
        say: str | Callable[[Story], str] | None = None,
        finish: str = "tool-calls",
    ) -> None:
        """One assistant message: reasoning, text, then the tool calls in order. `say` may be a
        function of the story, for a text that quotes something only known by then (a hash)."""
        if callable(say):
            say = say(self)
        self.tick(3_000, 14_000)  # the model's time to first token
        msg = self._message(
            "assistant",
            {
                "parentID": self.parent.get(self.slice),
                "modelID": MODEL_ID,
                "providerID": PROVIDER,
                "mode": self.agent,
                "agent": self.agent,
                "path": {"cwd": ROOT, "root": ROOT},
            },
        )
        self._part(msg, "step-start", snapshot=self._snapshot())
        if think:
            start = self.now
            self.tick(len(think) * 8, len(think) * 14)
            self._part(msg, "reasoning", text=think, time={"start": start, "end": self.now})
        if say:
            start = self.now
            self.tick(len(say) * 3, len(say) * 5)
            self._part(msg, "text", text=say, time={"start": start, "end": self.now})
        for call in calls:
            self._call(msg, call)
        self.tick(150, 900)
        msg["info"]["time"]["completed"] = self.now
        msg["info"]["finish"] = finish
        self._part(msg, "step-finish", reason=finish, snapshot=self._snapshot(), tokens={})

    def stop(self, say: str | Callable[[Story], str], *, think: str | None = None) -> None:
        self.step(think=think, say=say, finish="stop")

    def _snapshot(self) -> str:
        return hashlib.sha1(json.dumps(sorted(self.fs.files.items())).encode()).hexdigest()

    def _call(self, msg: Json, call: Call) -> None:
        start = self.tick(20, 250)
        part = self._part(msg, "tool", callID=self.ids.opaque("call_"), tool=call.tool, state={})
        try:
            outcome = call.run(self)
        except ToolError as e:
            outcome = Outcome(error=str(e))
        lo, hi = TYPICAL_MS[call.tool]
        if outcome.ms is not None:
            self.now += outcome.ms
        elif call.tool != "actor":
            self.tick(lo, hi)
        state: Json = {"status": "completed" if outcome.error is None else "error", "input": call.input}
        if outcome.error is None:
            state.update(output=outcome.output, title=outcome.title, metadata=outcome.metadata)
        else:
            state.update(error=outcome.error, metadata=outcome.metadata)
        state["time"] = {"start": start, "end": self.now}
        part["state"] = state

    @contextmanager
    def sub_slice(self, actor_id: str, agent: str, prompt: str) -> Iterator[None]:
        outer = (self.slice, self.agent)
        self.slice, self.agent = actor_id, agent
        try:
            self.user(prompt, after_s=(1, 2))
            yield
        finally:
            self.slice, self.agent = outer

    # -- usage -----------------------------------------------------------------------------
    def settle_usage(self, system_tokens: dict[str, int], jitter_seed: int) -> dict[str, list[int]]:
        """Fill every assistant message's usage: input = the slice's system prompt and tools plus
        the estimate of every earlier message of the slice; output = what the step generated.
        Returns the input counts per slice, in order."""
        rng = random.Random(jitter_seed)
        context: dict[str, int] = {}
        inputs: dict[str, list[int]] = {}
        for msg in self.messages:
            info = msg["info"]
            slice_id = info.get("agentID", "main")
            if info["role"] == "assistant":
                generated = reasoning = 0
                for p in msg["parts"]:
                    if p["type"] in ("text", "reasoning"):
                        generated += est(p["text"])
                        reasoning += est(p["text"]) if p["type"] == "reasoning" else 0
                    elif p["type"] == "tool":
                        generated += est(json.dumps(p["state"]["input"], ensure_ascii=False))
                system = system_tokens["main" if slice_id == "main" else "sub"]
                tokens = {
                    "total": 0,
                    "input": system + context.get(slice_id, 0),
                    "output": generated + rng.randint(6, 60),
                    "reasoning": reasoning,
                    "cache": {"read": 0, "write": 0},
                }
                tokens["total"] = tokens["input"] + tokens["output"]
                info["tokens"] = tokens
                info["cost"] = cost_of(tokens)
                msg["parts"][-1]["tokens"] = dict(tokens, cache=dict(tokens["cache"]))
                inputs.setdefault(slice_id, []).append(tokens["input"])
            context[slice_id] = context.get(slice_id, 0) + sum(part_tokens(p) for p in msg["parts"])
        return inputs
