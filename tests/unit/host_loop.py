"""A host driving a session turn after turn: what it declares, what it appends, how it checks a request.

Used by the real-session tests (in process and over stdio) and the host-loop test. Nothing here is
real-session content: the steps a host appends are generated, in the shape of the session they
continue.

- `host_prefix(params)`: the `requestPrefix` a host declares: the imported system prompt (or a
  stand-in) and one tool per tool name its history calls. Transcripts record no tool definitions,
  and Anthropic rejects a history with calls and no `tools`.
- `shape_of(params)` and `HostSteps`: the next model step (a response with parallel calls, signed
  thinking or encrypted reasoning, an image in a result now and then) and its results, written the
  way the session's tool writes them: Claude Code entries sharing `providerMessageID` with a
  carrier per call in between, Codex items with a `tool`-role carrier, OpenCode inline tool parts.
- `assert_valid(fmt, result, ...)`: the provider-rules checker finds nothing and the official SDK
  types accept the request (`tests/unit/test_sdk_types.py`).
- `rebuild_as_host(session, memory, now_ms)`: what a host does to rebuild: the writer's watermark
  stored (its checkpoint already on disk), then `engine.insert`.
- `cache_prefixes_kept(turn_n, turn_n1)`: every Anthropic cache entry turn n writes (the bytes up to
  each breakpoint) is repeated byte for byte by turn n+1.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.formats.rules import check
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.session import Session
from mimo_sidecar.core.words import InsertReason
from tests.unit.test_sdk_types import validate

Json = dict[str, Any]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
STAND_IN_SYSTEM = "You are a coding agent working in the user's repository."
REMINDER_OPENING = "<system-reminder>\n"
CALL_PART_NAMES = {"tool_use": "name", "function_call": "name", "custom_tool_call": "name", "tool": "tool"}


# =================================================================================================
# What a host declares
# =================================================================================================
def host_prefix(params: Json) -> Json:
    """The imported prefix plus the tools the history calls, as the host that continues it declares them."""
    names: dict[str, bool] = {}  # name → freeform (custom) tool
    for message in params["messages"]:
        for part in message["parts"]:
            key = CALL_PART_NAMES.get(part.get("type", ""))
            if key is not None and isinstance(part.get(key), str) and part[key]:
                names.setdefault(part[key], part["type"] == "custom_tool_call")
    names.setdefault("read", False)  # the tool the generated steps call
    names.setdefault("bash", False)
    imported = params.get("requestPrefix") or {}
    tools: list[Json] = [
        {"type": "custom", "name": name, "description": f"The host's {name} tool."}
        if custom
        else {"name": name, "description": f"The host's {name} tool.", "input_schema": {"type": "object"}}
        for name, custom in names.items()
    ]
    return {"system": list(imported.get("system") or [STAND_IN_SYSTEM]), "tools": tools}


def shape_of(params: Json) -> str:
    """`anthropic` (Claude Code, Cline), `responses` (Codex) or `inline` (OpenCode)."""
    for message in params["messages"]:
        for part in message["parts"]:
            if part.get("type") == "tool_use":
                return "anthropic"
            if part.get("type") in ("function_call", "custom_tool_call"):
                return "responses"
    return "inline"


# =================================================================================================
# What a host appends
# =================================================================================================
class HostSteps:
    """The next steps of a session, in its shape, by the model that wrote its newest response."""

    def __init__(self, params: Json, *, payload_chars: int = 2_000) -> None:
        self.shape = shape_of(params)
        self.session_id = params["sessionId"]
        last = next((m["info"] for m in reversed(params["messages"]) if m["info"]["role"] == "assistant"), {})
        self.model = {"providerID": last.get("providerID", "p"), "modelID": last.get("modelID", "m")}
        self.time = max(int((m["info"].get("time") or {}).get("created") or 0) for m in params["messages"])
        self.payload_chars = payload_chars
        self.counter = itertools.count(1)

    # -- messages ---------------------------------------------------------------------------------
    def _message(self, role: str, parts: list[Json], **info: Any) -> Json:
        n = next(self.counter)
        self.time += 1_000
        mid = f"host-{n:05d}"
        return {
            "info": {
                "id": mid,
                "sessionID": self.session_id,
                "role": role,
                "time": {"created": self.time},
                **info,
            },
            "parts": [{"id": f"{mid}.{i}", **p} for i, p in enumerate(parts)],
        }

    def user_ask(self, words: str) -> list[Json]:
        return [self._message("user", [{"type": "text", "text": words}])]

    def step(self, k: int, *, calls: int = 2, image: bool = False) -> list[Json]:
        """Response k: thinking/reasoning, a sentence, `calls` parallel calls; then their results."""
        ids = [f"call_host_{k}_{c}" for c in range(calls)]
        outputs = [
            f"output {k}.{c}\n" + ("line of tool output " * (self.payload_chars // 20)) for c in range(calls)
        ]
        if self.shape == "anthropic":
            return self._anthropic(k, ids, outputs, image)
        if self.shape == "responses":
            return self._responses(k, ids, outputs, image)
        return self._inline(k, ids, outputs, image)

    def _usage(self) -> Json:
        return {"input": 20_000, "output": 300, "reasoning": 0, "cache": {"read": 0, "write": 0}}

    def _anthropic(self, k: int, ids: list[str], outputs: list[str], image: bool) -> list[Json]:
        """Claude Code's records: one entry per block, sharing the response's message ID, and the
        carrier of each parallel call written right after its entry (sibling branches)."""
        response = {**self.model, "providerMessageID": f"msg_host_{k}"}
        out = [
            self._message(
                "assistant",
                [{"type": "thinking", "thinking": f"Step {k}.", "signature": f"sig-{k}"}],
                **response,
            ),
            self._message(
                "assistant", [{"type": "text", "text": f"Reading the files for step {k}."}], **response
            ),
        ]
        for c, (cid, output) in enumerate(zip(ids, outputs, strict=True)):
            last = c == len(ids) - 1
            finish: Json = {"finish": "tool-calls", "tokens": self._usage()} if last else {}
            use = {"type": "tool_use", "id": cid, "name": "read", "input": {"path": f"src/f{k}_{c}.ts"}}
            out.append(self._message("assistant", [use], **response, **finish))
            content: Any = output
            if image and c == 0:
                content = [
                    {"type": "text", "text": output},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                ]
            out.append(
                self._message("user", [{"type": "tool_result", "tool_use_id": cid, "content": content}])
            )
        return out

    def _responses(self, k: int, ids: list[str], outputs: list[str], image: bool) -> list[Json]:
        """Codex items: encrypted reasoning, the calls, then one `tool`-role carrier of outputs."""
        items: list[Json] = [
            {
                "type": "reasoning",
                "id": f"rs_host_{k}",
                "summary": [{"type": "summary_text", "text": f"Step {k}."}],
                "encrypted_content": f"gAAAAB-host-{k}",
            },
            {"type": "text", "text": f"Reading the files for step {k}.", "phase": "commentary"},
        ]
        items += [
            {
                "type": "function_call",
                "call_id": cid,
                "name": "read",
                "arguments": json.dumps({"path": f"f{k}_{c}"}),
            }
            for c, cid in enumerate(ids)
        ]
        results: list[Json] = []
        for c, (cid, output) in enumerate(zip(ids, outputs, strict=True)):
            value: Any = output
            if image and c == 0:
                value = [
                    {"type": "input_text", "text": output},
                    {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
                ]
            results.append({"type": "function_call_output", "call_id": cid, "output": value})
        assistant = self._message(
            "assistant",
            items,
            **self.model,
            providerMessageID=f"resp_host_{k}",
            finish="tool-calls",
            tokens=self._usage(),
        )
        return [assistant, self._message("tool", results)]

    def _inline(self, k: int, ids: list[str], outputs: list[str], image: bool) -> list[Json]:
        """OpenCode's inline message: the step's parts, each tool part holding its result."""
        parts: list[Json] = [{"type": "step-start"}, {"type": "reasoning", "text": f"Step {k}."}]
        parts.append({"type": "text", "text": f"Reading the files for step {k}."})
        for c, (cid, output) in enumerate(zip(ids, outputs, strict=True)):
            state: Json = {
                "status": "completed",
                "input": {"filePath": f"src/f{k}_{c}.ts"},
                "output": output,
                "title": "read",
                "metadata": {},
                "time": {"start": self.time, "end": self.time + 1},
            }
            if image and c == 0:
                state["attachments"] = [
                    {"type": "file", "mime": "image/png", "url": f"data:image/png;base64,{PNG}"}
                ]
            parts.append({"type": "tool", "callID": cid, "tool": "read", "state": state})
        parts.append({"type": "step-finish", "reason": "tool-calls"})
        return [self._message("assistant", parts, **self.model, finish="tool-calls", tokens=self._usage())]


# =================================================================================================
# How a host checks a request
# =================================================================================================
def ends_on_model(messages: list[Json]) -> bool:
    return bool(messages) and messages[-1].get("role") in ("assistant", "model")


def assert_valid(
    fmt: str,
    messages: list[Json],
    prefix: Json | None,
    overrides: Json,
    *,
    thinking: bool | None = None,
    open_end: bool = False,
    where: str = "",
) -> None:
    """No provider rule broken; the official SDK types accept the request (not `ai-sdk`, whose
    schema is checked by the Node example's test)."""
    found = check(
        fmt,
        messages,
        prefix=prefix if prefix is not None else {},
        overrides=overrides,
        thinking=thinking,
        open_end=open_end or ends_on_model(messages),
    )
    assert found == [], (where, fmt, thinking, found[:5])
    if fmt != "ai-sdk":
        validate(fmt, messages, prefix, overrides)


def assert_built_valid(fmt: str, built: Any, **kw: Any) -> None:
    """`assert_valid` over a core `BuildResult` (engine.build, engine.build_for_writer)."""
    assert_valid(fmt, built.request.messages, built.prefix.request, built.request.overrides, **kw)


def assert_wire_valid(fmt: str, result: Json, **kw: Any) -> None:
    """`assert_valid` over a `request/build` or `checkpoint/prepare` result as received."""
    assert_valid(fmt, result["messages"], result["prefix"].get("request"), result["overrides"], **kw)


def cache_blocks(prefix: Json, messages: list[Json]) -> list[str]:
    """An Anthropic request as the prompt cache reads it: tools, system, then message blocks, each
    with its role, without `cache_control`."""

    def plain(role: str, block: Json) -> str:
        return json.dumps([role, {k: v for k, v in block.items() if k != "cache_control"}], sort_keys=True)

    out = [plain("tool", t) for t in prefix.get("tools", [])] + [
        plain("system", b) for b in prefix.get("system", [])
    ]
    return out + [plain(m["role"], b) for m in messages for b in m["content"]]


def breakpoint_positions(prefix: Json, messages: list[Json]) -> list[int]:
    blocks = [
        *prefix.get("tools", []),
        *prefix.get("system", []),
        *(b for m in messages for b in m["content"]),
    ]
    return [i for i, b in enumerate(blocks) if "cache_control" in b]


def reminder_position(prefix: Json, messages: list[Json]) -> int | None:
    """Where the per-turn memory reminder sits among the request's cache blocks (None: absent)."""
    blocks = [
        *prefix.get("tools", []),
        *prefix.get("system", []),
        *(b for m in messages for b in m["content"]),
    ]
    marker = REMINDER_OPENING
    return next((i for i, b in enumerate(blocks) if str(b.get("text", "")).startswith(marker)), None)


def cache_prefixes_kept(turn_n: tuple[Json, list[Json]], turn_n1: tuple[Json, list[Json]]) -> list[int]:
    """The breakpoints of turn n whose bytes (up to and including the marked block) turn n+1 does
    not repeat: empty when every cache entry turn n writes can be read by turn n+1."""
    before, after = cache_blocks(*turn_n), cache_blocks(*turn_n1)
    return [p for p in breakpoint_positions(*turn_n) if before[: p + 1] != after[: p + 1]]


def rebuild_as_host(
    session: Session, memory: MemoryRoot, now_ms: int, reason: InsertReason = "auto"
) -> engine.InsertResult:
    """What a host does: the writer's watermark stored, its checkpoint on disk, then insert."""
    watermark = engine.writer_watermark(session)
    assert watermark is not None
    session.watermark = watermark.id
    config = RebuildConfig()
    return engine.insert(
        session, memory, config, watermark=watermark.id, reason=reason, now_ms=now_ms, minter=IdMinter()
    )
