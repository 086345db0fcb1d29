"""Seeded, reproducible generator of realistic MiMo-style sessions and memory roots.

    generate_session(n_messages, seed, shape="inline"|"anthropic"|"openai", ...) -> dict
    generate_memory_root(root_dir, session_id, project_id, seed, size="realistic"|"large")
    write_split_json(path, data)

A session is `{"sessionId", "projectId", "model", "messages": [{"info", "parts"}], "tasks", "actors"}`
(behavior.md#data-model): user turns (short, long pasted logs, CJK, emoji), assistant steps with reasoning,
text and tool calls (read/grep/glob/bash/edit/write/webfetch/actor/task/todowrite) whose outputs range from a
few hundred bytes to ~200 KB, errors, interrupted calls, sub-agent slices (`info.agentID = "explore-N"`) and
token usage that grows towards `final_input_tokens`. IDs are MiMo v2 ascending IDs (behavior.md#id-v2) minted
on one clock, so they ascend in list order, and `time.created` strictly increases. The session always ends
inside a tool loop: the last assistant message finished with "tool-calls".

Sizes: the output sizes are steered by a feedback loop towards `bytes_per_message` of compact
JSON per message (default 10 000: 5 000 messages ≈ 50 MB), whatever the shape.

Shapes (behavior.md#shapes): "inline" is MiMo's `tool` part; "anthropic" puts `tool_use` parts on the
assistant message and `tool_result` parts on a following user-role carrier (some steps are stored
as two entries sharing `providerMessageID`); "openai" puts `function` parts on the assistant
message and one `role: "tool"` message per call (`info.tool_call_id`, a text part).

CLI: `python benchmarks/generator.py --messages 5000 --seed 7 --shape inline --out s.json
[--memory-root DIR --memory-size large]`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import corpus  # noqa: E402
from benchmarks.corpus import PROJECT_ROOT, lognormal_bytes, pools, prose, take  # noqa: E402

Json = dict[str, Any]
SHAPES = ("inline", "anthropic", "openai")
DEFAULT_START_MS = 1_777_885_920_000  # 2026-05-04T09:12:00Z
DEFAULT_BYTES_PER_MESSAGE = 10_000
DEFAULT_FINAL_INPUT_TOKENS = 185_000
MODEL = {
    "providerId": "xiaomi",
    "modelId": "mimo-v2-pro",
    "contextWindow": 200_000,
    "maxOutputTokens": 32_000,
}
SYSTEM_TOKENS = 9_000
MAX_OUTPUT_BYTES = 200_000
END_RESERVE = 8  # messages kept for the closing tool loop
MAX_STEP_MESSAGES = 4  # openai: an assistant message and up to three tool messages
DAY_MS = 86_400_000

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
TOOL_WEIGHTS = {
    "read": 30,
    "grep": 14,
    "glob": 6,
    "bash": 22,
    "edit": 12,
    "write": 4,
    "webfetch": 3,
    "todowrite": 4,
    "task": 3,
    "actor": 1,
}
SUBAGENT_TOOLS = ("read", "grep", "glob", "read", "grep")


# -- IDs (behavior.md#id-v2) -------------------------------------------------------------------------
class IdMint:
    """MiMo v2 IDs from a seeded source: `n = ts_ms * 4096 + counter`, one counter for all prefixes."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.last_ts = -1
        self.counter = 0
        self.last_n = -1

    def _n(self, ts_ms: int) -> int:
        if ts_ms != self.last_ts:
            self.last_ts, self.counter = ts_ms, 0
        self.counter += 1
        n = max(ts_ms * 4096 + self.counter, self.last_n + 1)
        self.last_n = n
        return n

    def _suffix(self, k: int) -> str:
        return "".join(BASE62[self.rng.getrandbits(8) % 62] for _ in range(k))

    def ascending(self, prefix: str, ts_ms: int) -> str:
        return f"{prefix}_g{self._n(ts_ms):016x}{self._suffix(9)}"

    def descending(self, prefix: str, ts_ms: int) -> str:
        return f"{prefix}_-{~self._n(ts_ms) & ((1 << 64) - 1):016x}{self._suffix(9)}"

    def opaque(self, prefix: str, k: int = 24) -> str:
        """Provider-style call IDs (`toolu_…`, `call_…`)."""
        return f"{prefix}{self._suffix(k)}"


# -- messages and parts (behavior.md#messages, behavior.md#parts) ---------------------------------------
def new_message(ids: IdMint, now: int, session_id: str, role: str, slice_id: str, info: Json) -> Json:
    """A message created at `now` in `slice_id` ("main" or an actor ID), with no parts yet."""
    msg_info = {
        "id": ids.ascending("msg", now),
        "sessionID": session_id,
        "role": role,
        "time": {"created": now},
        **info,
    }
    if slice_id != "main":
        msg_info["agentID"] = slice_id
    return {"info": msg_info, "parts": []}


def new_actor(
    actor_id: str, session_id: str, agent: str, description: str, background: bool, now: int
) -> Json:
    """A registered actor (behavior.md#session-state), running since `now`."""
    return {
        "actorID": actor_id,
        "sessionID": session_id,
        "status": "running",
        "background": background,
        "description": description,
        "agent": agent,
        "lastTurnTime": now,
    }


def add_part(ids: IdMint, now: int, msg: Json, ptype: str, **fields: Any) -> Json:
    """Append a part of type `ptype` to `msg`, its ID minted at `now`."""
    p = {
        "id": ids.ascending("prt", now),
        "sessionID": msg["info"]["sessionID"],
        "messageID": msg["info"]["id"],
        "type": ptype,
        **fields,
    }
    msg["parts"].append(p)
    return p


# -- the session builder -------------------------------------------------------------------------------
class _Builder:
    def __init__(
        self,
        n: int,
        seed: int,
        shape: str,
        session_id: str | None,
        project_id: str | None,
        start_ms: int,
        bytes_per_message: int,
    ) -> None:
        if shape not in SHAPES:
            raise ValueError(f"shape must be one of {SHAPES}, not {shape!r}")
        self.n, self.shape, self.target = n, shape, bytes_per_message
        self.rng = random.Random(seed)
        self.ids = IdMint(random.Random(seed ^ 0x1D5))
        self.files = corpus.FileCorpus(seed)
        self.now = start_ms
        self.session_id = session_id or self.ids.descending("ses", start_ms)
        self.project_id = project_id or f"{self.rng.getrandbits(160):040x}"
        self.messages: list[Json] = []
        self.bytes = 0
        self.scale = 1.0
        self.ctx_bytes: dict[str, int] = {}
        self.parents: dict[str, str] = {}  # agent -> its current user message (assistant parentID)
        self.turn_open = False  # main slice: a user turn is waiting for its tool loop to end
        self.spawn_background = False  # the next actor call spawns a background actor
        self.actors: list[Json] = []
        self.task_ids = ["T1", "T1.1", "T1.2", "T2"]

    # time, ids, bookkeeping
    def tick(self, lo_ms: int, hi_ms: int) -> int:
        self.now += self.rng.randint(lo_ms, hi_ms)
        return self.now

    def remaining(self) -> int:
        return self.n - len(self.messages)

    def room(self, cost: int) -> bool:
        return self.remaining() - cost >= END_RESERVE

    def part(self, msg: Json, ptype: str, **fields: Any) -> Json:
        return add_part(self.ids, self.now, msg, ptype, **fields)

    def open(self, role: str, slice_id: str, info: Json | None = None) -> Json:
        self.tick(1, 400)
        msg = new_message(self.ids, self.now, self.session_id, role, slice_id, info or {})
        self.messages.append(msg)
        return msg

    def close(self, msg: Json, agent: str) -> None:
        size = len(orjson.dumps(msg))
        self.bytes += size
        self.ctx_bytes[agent] = self.ctx_bytes.get(agent, 0) + size
        # Feedback towards `target` bytes per message: the error is counted in messages' worth of
        # bytes; being 25 messages behind multiplies the next output sizes by e.
        behind = (self.target * len(self.messages) - self.bytes) / self.target
        self.scale = 1.3 * math.exp(max(-3.0, min(3.0, behind / 25)))

    def sized(self, median: float, sigma: float) -> int:
        return lognormal_bytes(self.rng, median * self.scale, sigma, MAX_OUTPUT_BYTES)

    # user and assistant messages
    def user_turn(self, agent: str = "main", text: str | None = None) -> Json:
        if agent == "main":
            self.tick(20_000, 900_000 if self.rng.random() < 0.9 else 10_800_000)
        msg = self.open(
            "user",
            agent,
            {
                "agent": "build" if agent == "main" else "explore",
                "model": {"providerID": MODEL["providerId"], "modelID": MODEL["modelId"]},
            },
        )
        self.part(msg, "text", text=text if text is not None else corpus.user_text(self.rng))
        if agent == "main" and self.rng.random() < 0.06:
            path = self.rng.choice(pools().paths)
            self.part(
                msg,
                "text",
                synthetic=True,
                text="Called the Read tool with the following input: "
                f'{{"filePath":"{path}"}}\n' + take(self.rng, pools().code_lines, 1200),
            )
            self.part(msg, "file", mime="text/plain", filename=path.rsplit("/", 1)[1], url=f"file://{path}")
        self.close(msg, agent)
        self.parents[agent] = msg["info"]["id"]
        if agent == "main":
            self.turn_open = True
        return msg

    def assistant(self, agent: str, provider_msg: str | None = None) -> Json:
        self.tick(800, 6_000)
        info: Json = {
            "parentID": self.parents.get(agent),
            "modelID": MODEL["modelId"],
            "providerID": MODEL["providerId"],
            "mode": "build",
            "agent": "build",
            "path": {"cwd": PROJECT_ROOT, "root": PROJECT_ROOT},
        }
        if provider_msg:
            info["providerMessageID"] = provider_msg
        msg = self.open("assistant", agent, info)
        if self.shape == "inline":
            self.part(msg, "step-start", snapshot=f"{self.rng.getrandbits(160):040x}")
        return msg

    def finish(self, msg: Json, agent: str, reason: str | None) -> None:
        """Complete an assistant message; `reason` None leaves an intermediate entry unfinished."""
        info = msg["info"]
        info["time"]["completed"] = self.tick(200, 4_000)
        if reason is not None:
            info["tokens"] = tokens = self.usage(msg, agent)
            info["cost"] = cost_of(tokens)
            info["finish"] = reason
            if self.shape == "inline":
                self.part(
                    msg,
                    "step-finish",
                    reason=reason,
                    snapshot=f"{self.rng.getrandbits(160):040x}",
                    tokens=tokens,
                )
        self.close(msg, agent)

    def usage(self, msg: Json, agent: str) -> Json:
        """This step's provider usage: input = the context so far, output = what it generated."""
        generated = reasoning = 0
        for p in msg["parts"]:
            if p["type"] in ("text", "reasoning"):
                generated += len(p["text"])
                reasoning += len(p["text"]) if p["type"] == "reasoning" else 0
            elif p["type"] in ("tool", "tool_use", "function"):
                generated += len(
                    orjson.dumps(p.get("state", {}).get("input") or p.get("input") or p.get("function"))
                )
        ctx = SYSTEM_TOKENS + self.ctx_bytes.get(agent, 0) // 4
        output = generated // 4 + self.rng.randint(8, 120)
        return {
            "total": ctx + output,
            "input": ctx,
            "output": output,
            "reasoning": reasoning // 4,
            "cache": {"read": 0, "write": 0},
        }

    def prose_parts(self, msg: Json, p_reasoning: float, p_text: float) -> None:
        if self.rng.random() < p_reasoning:
            self.part(
                msg,
                "reasoning",
                text=prose(self.rng, corpus.REASONING_PROSE, 1, 6),
                time={"start": self.now, "end": self.now + self.rng.randint(300, 9_000)},
            )
        if self.rng.random() < p_text:
            self.part(
                msg,
                "text",
                text=prose(self.rng, corpus.ASSISTANT_PROSE, 1, 3),
                time={"start": self.now, "end": self.now + 50},
            )

    def stop_step(self, agent: str, text: str | None = None) -> None:
        msg = self.assistant(agent)
        self.prose_parts(msg, 0.5, 0.0)
        self.part(
            msg,
            "text",
            text=text or corpus.assistant_summary(self.rng),
            time={"start": self.now, "end": self.now + 90},
        )
        self.finish(msg, agent, "stop")
        if agent == "main":
            self.turn_open = False

    # one step: an assistant message with tool calls, then its carriers in split shapes
    def tool_step(
        self, agent: str, tools: list[str], *, interrupt: bool = False, entries: bool | None = None
    ) -> bool:
        """Returns True when a call was interrupted. `entries` (anthropic): store the step as a
        thinking entry and a tool-use entry sharing `providerMessageID`; None: at random."""
        if entries is None:
            entries = self.shape == "anthropic" and self.rng.random() < 0.15
        provider_msg = None
        if entries:
            provider_msg = self.ids.opaque("msg_01", 22)
            thinking = self.assistant(agent, provider_msg)
            self.prose_parts(thinking, 1.0, 0.0)
            self.finish(thinking, agent, None)
        msg = self.assistant(agent, provider_msg)
        self.prose_parts(msg, 0.0 if entries else 0.6, 0.45)
        calls = [
            self.call(msg, agent, tool, interrupt and i == len(tools) - 1) for i, tool in enumerate(tools)
        ]
        self.finish(msg, agent, "tool-calls")
        self.carriers(agent, calls)
        interrupted = any(c["interrupted"] for c in calls)
        if interrupted and agent == "main":
            self.turn_open = False
        return interrupted

    def call(self, msg: Json, agent: str, tool: str, interrupt: bool) -> Json:
        """Run one tool call and record it on the assistant message (a `tool` part or a use part)."""
        start = self.tick(5, 300)
        call_id = self.ids.opaque("toolu_01" if self.shape == "anthropic" else "call_")
        use = self.use_part(msg, call_id, tool)
        c = TOOLS[tool](self, agent)
        if interrupt:
            c.update(
                status="error",
                interrupted=True,
                error="Tool execution aborted",
                metadata={"interrupted": True, "output": c["output"][:2000]},
            )
        elif self.rng.random() < 0.06 and tool in ERRORS:
            c.update(status="error", error=ERRORS[tool](c["input"]), metadata={})
        c.setdefault("interrupted", False)
        c.update(call_id=call_id, start=start, end=self.tick(40, 30_000 if tool == "bash" else 3_000))
        self.fill_use(use, c)
        return c

    def use_part(self, msg: Json, call_id: str, tool: str) -> Json:
        if self.shape == "inline":
            return self.part(msg, "tool", callID=call_id, tool=tool)
        base = {"id": call_id, "sessionID": self.session_id, "messageID": msg["info"]["id"]}
        if self.shape == "anthropic":
            use = {**base, "type": "tool_use", "name": tool, "input": {}}
        else:
            use = {**base, "type": "function", "function": {"name": tool, "arguments": "{}"}}
        msg["parts"].append(use)
        return use

    def fill_use(self, use: Json, c: Json) -> None:
        if self.shape == "anthropic":
            use["input"] = c["input"]
        elif self.shape == "openai":
            use["function"]["arguments"] = orjson.dumps(c["input"]).decode()
        else:
            state: Json = {"status": c["status"], "input": c["input"]}
            if c["status"] == "completed":
                state.update(output=c["output"], title=c["title"], metadata=c["metadata"])
            else:
                state.update(error=c["error"], metadata=c["metadata"])
            state["time"] = {"start": c["start"], "end": c["end"]}
            use["state"] = state

    def carriers(self, agent: str, calls: list[Json]) -> None:
        """Split shapes: the results of one step (one user carrier, or one tool message per call)."""
        if self.shape == "anthropic":
            carrier = self.open("user", agent)
            for c in calls:
                self.part(
                    carrier, "tool_result", tool_use_id=c["call_id"], content=result_text(c), **flags(c)
                )
            self.close(carrier, agent)
        elif self.shape == "openai":
            for c in calls:
                carrier = self.open("tool", agent, {"tool_call_id": c["call_id"], **flags(c)})
                self.part(carrier, "text", text=result_text(c))
                self.close(carrier, agent)

    # planning
    def step_cost(self, tools: list[str]) -> int:
        return {"inline": 1, "anthropic": 3, "openai": 1 + len(tools)}[self.shape]

    def pick_tools(self, allowed: tuple[str, ...] | None = None) -> list[str]:
        k = self.rng.choices((1, 2, 3), (70, 20, 10))[0]
        if allowed:
            return [self.rng.choice(allowed) for _ in range(k)]
        names, weights = zip(*TOOL_WEIGHTS.items(), strict=True)
        return self.rng.choices(names, weights, k=k)

    def turn(self) -> bool:
        """One user turn and its tool loop; False once only the closing reserve is left."""
        if not self.room(1 + MAX_STEP_MESSAGES):
            return False
        self.user_turn()
        for _ in range(min(40, int(self.rng.expovariate(1 / 6)) + 1)):
            tools = self.pick_tools()
            if not self.room(self.step_cost(tools) + MAX_STEP_MESSAGES):
                return False
            if self.tool_step("main", tools, interrupt=self.rng.random() < 0.01):
                return True  # interrupted: the user speaks next
        if not self.room(1 + MAX_STEP_MESSAGES):
            return False
        self.stop_step("main")
        return True

    def closing_loop(self) -> None:
        """Spend exactly the remaining messages so the session ends inside a tool loop, its first
        step spawning a background actor."""
        if not self.turn_open and self.remaining() > 0:
            self.user_turn()
        self.spawn_background = True
        while (r := self.remaining()) > 0:
            if r == 1 and self.shape != "inline":
                self.user_turn()  # a split step needs two messages; only reachable for tiny sessions
                continue
            tools = ["actor"] if self.spawn_background else self.pick_tools(("read", "grep", "bash", "edit"))
            if self.shape == "openai":
                k = min(len(tools), r - 1)
                if r - 1 - k == 1:  # never leave a single message over
                    k = k + 1 if k < 3 else k - 1
                tools = (tools + ["read"] * 3)[:k]
            self.tool_step("main", tools, entries=self.shape == "anthropic" and r % 2 == 1)

    # sub-agents
    def subagent(self, description: str, prompt: str, background: bool) -> tuple[str, str]:
        """Register an actor; a foreground one runs its own slice now and returns its report."""
        actor_id = f"explore-{len(self.actors) + 1}"
        actor = new_actor(actor_id, self.session_id, "explore", description, background, self.now)
        self.actors.append(actor)
        reserve = END_RESERVE + 2 * MAX_STEP_MESSAGES
        if background or self.remaining() < reserve + 8:
            return actor_id, ""
        self.user_turn(actor_id, prompt)
        for _ in range(self.rng.randint(1, 5)):
            tools = self.pick_tools(SUBAGENT_TOOLS)
            if self.remaining() - self.step_cost(tools) < reserve + 1:
                break
            self.tool_step(actor_id, tools)
        report = corpus.assistant_summary(self.rng)
        self.stop_step(actor_id, report)
        actor.update(status="completed", lastTurnTime=self.now)
        return actor_id, report

    # closing up
    def rescale_usage(self, final_input: int | None) -> None:
        """Scale the main slice's input tokens linearly so that the last one is `final_input`."""
        infos = [
            m["info"]
            for m in self.messages
            if m["info"]["role"] == "assistant" and "agentID" not in m["info"] and "tokens" in m["info"]
        ]
        if final_input is None or not infos:
            return
        first, last = SYSTEM_TOKENS, infos[-1]["tokens"]["input"]
        span = max(1, last - first)
        for info in infos:
            t = info["tokens"]
            t["input"] = int(first + (t["input"] - first) * (final_input - first) / span)
            t["total"] = t["input"] + t["output"]
            info["cost"] = cost_of(t)

    def tasks(self) -> list[Json]:
        """T1 in progress (T1.1 done, T1.2 open), T2 blocked, T3 done and archived.

        T1.1 has no `ended_at`, so it stays listed whatever the clock says: archival
        (behavior.md#task-archival, D5) is evaluated against the sidecar's clock, and a committed sample would
        otherwise lose its done child a week after it was generated. T3's `cleanup_after` is in the past.
        """
        t0 = self.messages[0]["info"]["time"]["created"] if self.messages else self.now
        at = [t0 + k * (self.now - t0) // 10 for k in range(10)]
        return [
            {
                "id": "T1",
                "status": "in_progress",
                "summary": "Keep the last token at end of input; fix positions",
                "created_at": at[0],
            },
            {
                "id": "T1.1",
                "parent_task_id": "T1",
                "status": "done",
                "summary": "Reproduce the dropped-token bug with a failing test",
                "created_at": at[1],
            },
            {
                "id": "T1.2",
                "parent_task_id": "T1",
                "status": "open",
                "summary": "Switch Position to UTF-16 offsets and update the source map",
                "created_at": at[3],
            },
            {
                "id": "T2",
                "status": "blocked",
                "summary": "Move the precedence table into its own module (waiting on the parser API review)",
                "created_at": at[6],
            },
            {
                "id": "T3",
                "status": "done",
                "summary": "Set up the Bun test runner and the CI cache",
                "created_at": at[7],
                "ended_at": at[8],
                "cleanup_after": at[8] + 7 * DAY_MS,
            },
        ]


def cost_of(tokens: Json) -> float:
    return round(tokens["input"] * 1.1e-6 + tokens["output"] * 4.4e-6, 6)


def flags(c: Json) -> Json:
    out = {"is_error": True} if c["status"] == "error" else {}
    if c["interrupted"]:
        out["interrupted"] = True
    return out


def result_text(c: Json) -> str:
    return c["output"] if c["status"] == "completed" else c["error"]


# -- tools: each returns {"input", "status", "output", "title", "metadata"} ----------------------------
def _rel(path: str) -> str:
    return path.removeprefix(PROJECT_ROOT + "/")


def _done(tool_input: Json, output: str, title: str, metadata: Json) -> Json:
    return {
        "input": tool_input,
        "status": "completed",
        "output": output,
        "title": title,
        "metadata": metadata,
    }


def _read(b: _Builder, agent: str) -> Json:
    path = b.rng.choice(pools().paths)
    text, offset, limit, truncated = b.files.read(b.rng, path, b.sized(4_500, 1.0))
    tool_input: Json = {"filePath": path}
    if offset:
        tool_input.update(offset=offset, limit=limit)
    preview = text[7 : 7 + 400]
    return _done(tool_input, text, _rel(path), {"preview": preview, "truncated": truncated})


def _grep(b: _Builder, agent: str) -> Json:
    pattern = b.rng.choice(
        [
            "TokenKind\\.",
            "createDiagnostic",
            "function scan\\w+",
            "Position",
            "TODO",
            "charCodeAt",
            "export (class|function)",
            "sourcemap",
            "\\bpeek\\(",
            "扫描",
        ]
    )
    size = b.sized(1_300, 1.1)
    lines = take(b.rng, pools().code_lines, size).split("\n")
    rows, paths = [], pools().paths
    for i, line in enumerate(lines):
        if i % 6 == 0:
            rows.append(f"{b.rng.choice(paths)}:")
        rows.append(f"  Line {b.rng.randint(1, 900)}: {line}")
    tool_input: Json = {"pattern": pattern, "path": PROJECT_ROOT}
    if b.rng.random() < 0.4:
        tool_input["include"] = "*.ts"
    out = f"Found {len(lines)} matches\n" + "\n".join(rows)
    return _done(tool_input, out, pattern, {"matches": len(lines), "truncated": len(lines) > 100})


def _glob(b: _Builder, agent: str) -> Json:
    pattern = b.rng.choice(["**/*.ts", "src/**/*.ts", "tests/**/*.test.ts", "docs/*.md", "src/lexer/*"])
    found = b.rng.sample(pools().paths, b.rng.randint(1, min(40, len(pools().paths))))
    return _done(
        {"pattern": pattern, "path": PROJECT_ROOT},
        "\n".join(found),
        pattern,
        {"count": len(found), "truncated": False},
    )


BASH_COMMANDS = {
    "bun test": "test",
    "bun test tests/lexer": "test",
    "bun run build": "build",
    "npx tsc --noEmit": "tsc",
    "git log --oneline -30": "git",
    "git status": "git",
    "git diff --stat": "git",
    "node scripts/bench.js --file big.tiny": "trace",
    "bun run lint": "tsc",
    "make -j2 dist": "build",
}
BASH_DESCRIPTIONS = {
    "test": "Run the test suite",
    "build": "Build the project",
    "tsc": "Type-check the project",
    "git": "Inspect the git history",
    "trace": "Run the benchmark script",
}


def _bash(b: _Builder, agent: str) -> Json:
    command, flavor = b.rng.choice(list(BASH_COMMANDS.items()))
    out = take(b.rng, pools().logs[flavor], b.sized(1_800, 1.5))
    exit_code = 1 if flavor in ("tsc", "trace") and b.rng.random() < 0.5 else 0
    desc = BASH_DESCRIPTIONS[flavor]
    return _done(
        {"command": command, "description": desc, "timeout": 120_000},
        out,
        desc,
        {"exit": exit_code, "description": desc, "truncated": len(out) > 30_000},
    )


def _edit(b: _Builder, agent: str) -> Json:
    path = b.rng.choice(pools().paths)
    old = take(b.rng, pools().code_lines, b.rng.randint(60, 900))
    new = take(b.rng, pools().code_lines, b.rng.randint(60, 1_200))
    diff = "\n".join(
        [
            f"Index: {path}",
            "=" * 67,
            f"--- {path}",
            f"+++ {path}",
            f"@@ -{b.rng.randint(1, 400)},7 +{b.rng.randint(1, 400)},9 @@",
        ]
        + ["-" + x for x in old.split("\n")]
        + ["+" + x for x in new.split("\n")]
    )
    tool_input = {"filePath": path, "oldString": old, "newString": new}
    return _done(
        tool_input, "Edit applied successfully.", _rel(path), {"diff": diff, "filediff": {"file": path}}
    )


def _write(b: _Builder, agent: str) -> Json:
    path = b.rng.choice(pools().paths)
    blocks = pools().code_blocks
    content = "\n".join(b.rng.choice(blocks) for _ in range(max(1, b.sized(2_500, 0.8) // 380)))
    return _done(
        {"filePath": path, "content": content},
        "Wrote file successfully.",
        _rel(path),
        {"filepath": path, "exists": b.rng.random() < 0.7},
    )


def _webfetch(b: _Builder, agent: str) -> Json:
    topic = b.rng.choice(
        ["lexical-grammar", "source-maps", "unicode-identifiers", "pratt-parsing", "bun-test"]
    )
    url = f"https://tinyscript.dev/docs/{topic}"
    return _done(
        {"url": url, "format": "markdown"},
        take(b.rng, pools().markdown, b.sized(9_000, 0.6)),
        f"{url} (text/html)",
        {},
    )


def _todowrite(b: _Builder, agent: str) -> Json:
    todos = [
        {
            "id": str(i + 1),
            "content": b.rng.choice(corpus.ASSISTANT_PROSE),
            "status": b.rng.choice(["pending", "in_progress", "completed"]),
            "priority": b.rng.choice(["high", "medium", "low"]),
        }
        for i in range(b.rng.randint(2, 8))
    ]
    out = json.dumps(todos, indent=2, ensure_ascii=False)
    left = sum(t["status"] != "completed" for t in todos)
    return _done({"todos": todos}, out, f"{left} todos", {"todos": todos})


def _task(b: _Builder, agent: str) -> Json:
    tid = b.rng.choice(b.task_ids)
    status = b.rng.choice(["in_progress", "open", "done", "blocked"])
    note = b.rng.choice(corpus.ASSISTANT_PROSE)
    tool_input = {"action": "update", "id": tid, "status": status, "note": note}
    return _done(tool_input, f"Task {tid} updated: status {status}.", f"{tid} → {status}", {"id": tid})


ACTOR_PROMPTS = [
    (
        "Find hand-built Positions",
        "Find every place that constructs a Position by hand and list the files with line numbers.",
    ),
    (
        "Survey parser error recovery",
        "Survey how the parser recovers from errors and summarise the strategy in ten lines.",
    ),
    ("Source-map test coverage", "Check which tests cover the source map and which cases are missing."),
    ("找出手工拼接的 Token", "找出所有直接拼接 Token 的地方，列出文件和行号。"),
]


def _actor(b: _Builder, agent: str) -> Json:
    background = b.spawn_background or b.rng.random() < 0.15
    b.spawn_background = False
    description, prompt = b.rng.choice(ACTOR_PROMPTS)
    tool_input = {
        "action": "spawn",
        "agent": "explore",
        "description": description,
        "prompt": prompt,
        "background": background,
    }
    actor_id, report = b.subagent(description, prompt, background) if agent == "main" else ("explore-x", "")
    if not report:
        report = (
            (
                f'Actor {actor_id} started in the background. Use actor(action="status", '
                f'id="{actor_id}") to check on it.'
            )
            if background
            else f"Actor {actor_id} finished: nothing found."
        )
    return _done(
        tool_input,
        report,
        f"{actor_id} ({'background' if background else 'foreground'})",
        {"actorID": actor_id},
    )


TOOLS = {
    "read": _read,
    "grep": _grep,
    "glob": _glob,
    "bash": _bash,
    "edit": _edit,
    "write": _write,
    "webfetch": _webfetch,
    "todowrite": _todowrite,
    "task": _task,
    "actor": _actor,
}
ERRORS = {
    "read": lambda i: f"File not found: {i['filePath']}",
    "edit": lambda i: "oldString not found in content. It must match exactly, including whitespace.",
    "grep": lambda i: f"ripgrep failed: regex parse error near {i['pattern'][:8]!r}",
    "bash": lambda i: "Command timed out after 120000 ms",
    "webfetch": lambda i: "Request failed with status code: 404",
    "write": lambda i: f"EACCES: permission denied, open '{i['filePath']}'",
}


def generate_session(
    n_messages: int,
    seed: int,
    shape: str = "inline",
    session_id: str | None = None,
    project_id: str | None = None,
    start_ms: int = DEFAULT_START_MS,
    *,
    bytes_per_message: int = DEFAULT_BYTES_PER_MESSAGE,
    final_input_tokens: int | None = DEFAULT_FINAL_INPUT_TOKENS,
) -> Json:
    """A reproducible session of exactly `n_messages` messages (see the module docstring)."""
    b = _Builder(n_messages, seed, shape, session_id, project_id, start_ms, bytes_per_message)
    while b.turn():
        pass
    b.closing_loop()
    b.rescale_usage(final_input_tokens)
    for actor in b.actors[:-1]:  # earlier background actors have finished by now
        if actor["status"] == "running":
            actor["status"] = "completed"
    return {
        "sessionId": b.session_id,
        "projectId": b.project_id,
        "model": dict(MODEL),
        "messages": b.messages,
        "tasks": b.tasks(),
        "actors": b.actors,
    }


# -- memory root (behavior.md#memory-layout) ----------------------------------------------------------
CHECKPOINT_SECTIONS = [
    ("§1 Active intent", "_What the user wants right now, in their words; update on every turn._"),
    ("§2 Decisions", "_Decisions taken and why; never delete, mark superseded ones._"),
    ("§3 Work in flight", "_Files being edited, commands running, the next concrete step._"),
    ("§4 Constraints and preferences", "_What the user asked to do or not to do._"),
    ("§5 Open questions", "_Unresolved questions and who has to answer them._"),
    ("§6 Errors seen", "_Errors and their status; keep the exact message._"),
    ("§7 Discovered knowledge", "_Facts about the code base that took effort to find._"),
    ("§8 Files touched", "_Paths changed in this session, with one line each._"),
    ("§9 Live resources", "_Processes, ports, branches and actors still alive._"),
]
SPILL_FILES = [
    ("checkpoint-lexer.md", "Position type, Token shape"),
    ("checkpoint-parser.md", "recovery strategy, precedence table"),
    ("checkpoint-tests.md", "failing cases and their causes"),
]


def _section_body(rng: random.Random, size: int) -> str:
    lines = []
    while sum(len(x) for x in lines) < size:
        r = rng.random()
        if r < 0.55:
            lines.append(f"- {rng.choice(corpus.ASSISTANT_PROSE)} {rng.choice(corpus.COMMENTS)}")
        elif r < 0.7:
            lines.append(f"- {rng.choice(corpus.CJK_PROSE)}")
        elif r < 0.85:
            lines.append(f"- `{_rel(rng.choice(pools().paths))}`: {rng.choice(corpus.COMMENTS)}")
        else:
            lines.append(f"  - {rng.choice(corpus.REASONING_PROSE)}")
    return "\n".join(lines)


def checkpoint_text(rng: random.Random, target_bytes: int) -> str:
    out = [
        "# Session checkpoint",
        "",
        "Topic: tinyscript lexer — keep the last token at end of input and move positions to UTF-16",
        "",
    ]
    per = target_bytes // len(CHECKPOINT_SECTIONS)
    for i, (title, italic) in enumerate(CHECKPOINT_SECTIONS):
        out += [f"## {title}", italic, "", _section_body(rng, int(per * rng.uniform(0.5, 1.5)))]
        if i in (6, 7):  # index lines at the end of the body; the section-aware read hoists them
            out += [
                f"- See {name} ({rng.randint(4, 30)} items) — {what}"
                for name, what in SPILL_FILES[i - 6 :: 2]
            ]
        out.append("")
    return "\n".join(out)


def memory_text(rng: random.Random, title: str, sections: list[str], target_bytes: int) -> str:
    out = [f"# {title}", ""]
    for s in sections:
        out += [f"## {s}", "", _section_body(rng, target_bytes // len(sections)), ""]
    return "\n".join(out)


def generate_memory_root(
    root_dir: str | os.PathLike[str], session_id: str, project_id: str, seed: int, size: str = "realistic"
) -> list[Path]:
    """Write a MiMo memory root; returns the files written (relative to `root_dir`)."""
    if size not in ("realistic", "large"):
        raise ValueError("size must be 'realistic' or 'large'")
    k = 1 if size == "realistic" else 6
    rng = random.Random(seed ^ 0xC0FFEE)
    root = Path(root_dir)
    sdir = Path("sessions") / session_id
    files = {
        sdir / "checkpoint.md": checkpoint_text(rng, 16_000 * k),
        sdir / "notes.md": memory_text(rng, "Notes", ["Scratch", "Ideas", "Commands that worked"], 5_000 * k),
        Path("projects") / project_id / "MEMORY.md": memory_text(
            rng, "tinyscript", ["Build and test", "Conventions", "Architecture", "Gotchas"], 7_000 * k
        ),
        Path("global") / "MEMORY.md": memory_text(rng, "Global memory", ["Preferences", "Tools"], 2_500 * k),
        Path("global") / "editor-setup.md": memory_text(rng, "Editor setup", ["Keybindings"], 800),
        Path("projects") / project_id / "release-process.md": memory_text(rng, "Releases", ["Steps"], 1_500),
    }
    for name, what in SPILL_FILES:
        files[sdir / name] = memory_text(rng, what.capitalize(), ["Items"], 2_000 * k)
    for tid in ("T1", "T1.1", "T1.2", "T2"):
        files[sdir / "tasks" / tid / "progress.md"] = memory_text(
            rng, f"{tid} progress", ["Done", "Next"], rng.randint(400, 2_500) * k
        )
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text + "\n", encoding="utf-8")
    return sorted(files)


# -- output -------------------------------------------------------------------------------------------
def write_split_json(path: str | os.PathLike[str], data: Json) -> int:
    """Write `data` as valid JSON with one list item (message, task, actor) per line.

    Line-per-item keeps diffs of a committed sample readable and lets tools stream it; the text
    parses to exactly `data`. Returns the number of bytes written.
    """
    out = ["{"]
    items = list(data.items())
    for i, (key, value) in enumerate(items):
        sep = "," if i < len(items) - 1 else ""
        if isinstance(value, list) and value:
            out.append(f"{json.dumps(key)}: [")
            rows = [orjson.dumps(v).decode() for v in value]
            out += [r + ("," if j < len(rows) - 1 else "") for j, r in enumerate(rows)]
            out.append("]" + sep)
        else:
            out.append(f"{json.dumps(key)}: {orjson.dumps(value).decode()}{sep}")
    out.append("}")
    text = "\n".join(out) + "\n"
    Path(path).write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shape", choices=SHAPES, default="inline")
    ap.add_argument("--bytes-per-message", type=int, default=DEFAULT_BYTES_PER_MESSAGE)
    ap.add_argument("--out", required=True, help="session JSON file to write")
    ap.add_argument("--split", action="store_true", help="one message per line (write_split_json)")
    ap.add_argument("--memory-root", help="also write a memory root there")
    ap.add_argument("--memory-size", choices=("realistic", "large"), default="realistic")
    args = ap.parse_args(argv)
    data = generate_session(args.messages, args.seed, args.shape, bytes_per_message=args.bytes_per_message)
    if args.split:
        size = write_split_json(args.out, data)
    else:
        blob = orjson.dumps(data)
        Path(args.out).write_bytes(blob)
        size = len(blob)
    if args.memory_root:
        generate_memory_root(
            args.memory_root, data["sessionId"], data["projectId"], args.seed, args.memory_size
        )
    sys.stdout.write(f"{args.out}: {len(data['messages'])} messages, {size / 1e6:.1f} MB\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
