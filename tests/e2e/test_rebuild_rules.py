"""Over stdio: D11, D12, D13, the fidelity report, the inflation guard (no-gain),
the usage fallback and boundary IDs in the host's scheme, against a real sidecar process."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from mimo_sidecar.core import texts
from mimo_sidecar.core.session.ids import IdMinter
from tests.unit.builders import write_checkpoint

from .conftest import SERVER
from .test_checkpoint_kit import standin_reply
from .test_rebuild import call

pytestmark = pytest.mark.asyncio(loop_scope="module")

T0 = 1_760_000_000_000
WAIT_MS = 3000
CONFIG: dict[str, Any] = {
    "checkpoint": {"writer_wait_ms": {"with_watermark": WAIT_MS, "without_watermark": WAIT_MS}}
}
NO_GUARD = {"checkpoint": {**CONFIG["checkpoint"], "inflation_guard": False}}
SMALL_MODEL = {"contextWindow": 20_000, "maxOutputTokens": 4_000, "providerId": "openai", "modelId": "gpt"}
V1_ID = re.compile(r"(msg|prt)_[0-9a-f]{12}[0-9A-Za-z]{14}")
CHECKPOINT = "# Session checkpoint\nTopic: parser port\n\n## 1 Active intent\n\nPort the parser.\n"


@pytest_lsp.fixture(scope="module", config=SERVER)
async def rb(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[None]:
    root = tmp_path_factory.mktemp("memory")
    lsp_client.memory_root = root  # type: ignore[attr-defined]
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"memoryRoot": str(root), "config": CONFIG},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def configure(client: LanguageClient, config: dict[str, Any]) -> None:
    await call(client, "sidecar/configure", {"config": config})


# -- host data -------------------------------------------------------------------------------------
class Host:
    """Builds one session's messages as a host would send them."""

    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.parts = 0

    def msg(self, mid: str, role: str, t: int, *parts: dict[str, Any], **info: Any) -> dict[str, Any]:
        out = []
        for p in parts:
            self.parts += 1
            out.append({"id": f"prt_{self.parts:06}", "sessionID": self.sid, "messageID": mid, **p})
        return {
            "info": {"id": mid, "sessionID": self.sid, "role": role, "time": {"created": t}, **info},
            "parts": out,
        }


def txt(t: str, **flags: Any) -> dict[str, Any]:
    return {"type": "text", "text": t, **flags}


def inline_tool(
    call_id: str, name: str, inp: dict[str, Any], output: str = "ok", error: str | None = None
) -> dict:
    state: dict[str, Any] = {
        "status": "error" if error else "completed",
        "input": inp,
        "time": {"start": 0, "end": 0},
    }
    state["error" if error else "output"] = error or output
    return {"type": "tool", "callID": call_id, "tool": name, "state": state}


def pondering(host: Host, mid: str, t: int, words: str = "weighing ") -> dict[str, Any]:
    """An assistant step with long reasoning: what a rebuild with W at this step saves, so that
    the inflation guard lets it through."""
    return host.msg(
        mid, "assistant", t, {"type": "reasoning", "text": words * 3000}, txt("ok"), finish="stop"
    )


async def open_session(client: LanguageClient, sid: str, messages: list[dict], **extra: Any) -> None:
    write_checkpoint(client.memory_root, sid, CHECKPOINT)  # type: ignore[attr-defined]
    await call(client, "session/open", {"sessionId": sid, "messages": messages, **extra})


async def store_watermark(client: LanguageClient, sid: str, watermark: str) -> None:
    await call(client, "checkpoint/writerStarted", {"sessionId": sid, "watermark": watermark})
    await call(client, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})


def recent_user_section(text: str) -> str:
    start = text.index("# Recent user input (verbatim)")
    return text[start : text.index("\n\n", start)]


# -- D11 -------------------------------------------------------------------------------------------
def inline_conversation(host: Host, asks: int = 60) -> list[dict]:
    out = []
    for i in range(asks):
        t = T0 + 1000 * i
        out.append(host.msg(f"u{i:03}", "user", t, txt(f"ask number {i}: handle item {i}")))
        for k in range(3):
            out.append(
                host.msg(
                    f"s{i}_{k}",
                    "assistant",
                    t + 10 * (k + 1),
                    {"type": "reasoning", "text": "thinking"},
                    inline_tool(f"c{i}_{k}_a", "read", {"path": f"f{i}"}, "x" * 40),
                    inline_tool(f"c{i}_{k}_b", "grep", {"q": f"q{k}"}, "y" * 40),
                    finish="tool-calls",
                )
            )
        out.append(host.msg(f"z{i:03}", "assistant", t + 900, txt(f"item {i} handled"), finish="stop"))
    return out


def claude_code_conversation(host: Host, asks: int = 60) -> list[dict]:
    """The same conversation as Claude Code stores it: one response as three entries sharing
    `providerMessageID`, each tool result in its own carrier between them."""
    out = []
    for i in range(asks):
        t = T0 + 1000 * i
        out.append(host.msg(f"u{i:03}", "user", t, txt(f"ask number {i}: handle item {i}")))
        for k in range(3):
            a, b, base = f"c{i}_{k}_a", f"c{i}_{k}_b", t + 10 * (k + 1)
            pid = {"providerMessageID": f"resp{i}_{k}", "finish": "tool-calls"}
            out += [
                host.msg(f"s{i}_{k}_0", "assistant", base, {"type": "reasoning", "text": "thinking"}, **pid),
                host.msg(
                    f"s{i}_{k}_1",
                    "assistant",
                    base + 1,
                    {"type": "tool_use", "id": a, "name": "read", "input": {"path": f"f{i}"}},
                    **pid,
                ),
                host.msg(
                    f"r{i}_{k}_a",
                    "user",
                    base + 2,
                    {"type": "tool_result", "tool_use_id": a, "content": "x" * 40},
                ),
                host.msg(
                    f"s{i}_{k}_2",
                    "assistant",
                    base + 3,
                    {"type": "tool_use", "id": b, "name": "grep", "input": {"q": f"q{k}"}},
                    **pid,
                ),
                host.msg(
                    f"r{i}_{k}_b",
                    "user",
                    base + 4,
                    {"type": "tool_result", "tool_use_id": b, "content": "y" * 40},
                ),
            ]
        out.append(host.msg(f"z{i:03}", "assistant", t + 900, txt(f"item {i} handled"), finish="stop"))
    return out


async def test_d11_split_twin_keeps_the_same_user_asks(rb: LanguageClient):
    sections = {}
    for sid, build in (("d11-inline", inline_conversation), ("d11-claude", claude_code_conversation)):
        await open_session(rb, sid, build(Host(sid)))
        params = {"sessionId": sid, "includeText": True, "preview": "always"}
        computed = await call(rb, "rebuild/compute", params)
        sections[sid] = recent_user_section(computed["preview"]["report"]["text"])
    assert sections["d11-inline"].count("ask number") == 40  # 5 logical messages per ask
    assert sections["d11-claude"] == sections["d11-inline"]


# -- D12 -------------------------------------------------------------------------------------------
def _ids(mode: str, names: list[str], start: int) -> dict[str, str]:
    if mode == "seq":
        return {n: n for n in names}
    minter = IdMinter()
    return {n: minter.ascending("msg", start + i) for i, n in enumerate(names)}


def _d12_history(host: Host, ids: dict[str, str], t0: int) -> list[dict]:
    return [
        host.msg(ids["u1"], "user", t0, txt("port the parser")),
        pondering(host, ids["a1"], t0 + 10),
        host.msg(ids["u2"], "user", t0 + 20, txt("keep the public API")),
        host.msg(
            ids["a2"],
            "assistant",
            t0 + 30,
            inline_tool("c1", "read", {"path": "parser.ts"}, "p" * 4000),
            finish="tool-calls",
        ),
    ]


def _d12_more(host: Host, ids: dict[str, str], t: int) -> list[dict]:
    return [
        host.msg(ids["u3"], "user", t, txt("and add a benchmark")),
        host.msg(
            ids["a3"],
            "assistant",
            t + 10,
            inline_tool("c2", "read", {"path": "bench.ts"}, "b" * 6000),
            finish="tool-calls",
        ),
    ]


@pytest.mark.parametrize("mode", ["id", "seq"])
async def test_d12_insert_twice_in_a_row_keeps_the_live_tail(rb: LanguageClient, mode: str):
    sid = f"d12-row-{mode}"
    now = int(time.time() * 1000)
    t0 = now - 60_000
    names = ["u1", "a1", "u2", "a2", "u3", "a3"]
    ids = _ids(mode, names, t0)
    host = Host(sid)
    await open_session(rb, sid, _d12_history(host, ids, t0))
    await store_watermark(rb, sid, ids["a1"])
    first = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert first["outcome"] == "rebuilt" and first["message"]["info"]["time"]["created"] == t0 + 11
    if mode == "id":  # the host's next IDs come from its clock, after the boundary's
        ids.update(_ids("id", ["u3", "a3"], int(time.time() * 1000) + 5))
    await call(rb, "session/sync", {"sessionId": sid, "upsertMessages": _d12_more(host, ids, t0 + 40)})
    second = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert second["outcome"] == "rebuilt" and second["watermark"] == ids["a1"]
    assert second["message"]["info"]["time"]["created"] == t0 + 11  # W + 1, not now + 1 (D12)
    built = await call(rb, "request/build", {"sessionId": sid, "memoryReminder": False})
    assert built["sources"][0] == second["message"]["info"]["id"]
    assert ids["u2"] in built["sources"] and ids["u3"] in built["sources"]  # the live user asks stay
    assert first["message"]["info"]["id"] not in built["sources"]
    # a2, the step the first boundary left live, is digested now; a3, the newest, stays live (D19)
    assert built["collapsedMessageIds"] == [ids["a2"]] and built["sources"][-2:] == [ids["a3"]] * 2


@pytest.mark.parametrize("mode", ["id", "seq"])
async def test_d12_concurrent_inserts_during_a_writer_wait(rb: LanguageClient, mode: str):
    """Two inserts arrive while a writer runs; it fails, so both use the same stored W. The second
    lands behind the first boundary's W and still keeps the live messages after W in the view.
    (The inflation guard is off: a second rebuild right after the first gains nothing.)"""
    sid = f"d12-wait-{mode}"
    t0 = int(time.time() * 1000) - 60_000
    ids = _ids(mode, ["u1", "a1", "u2", "a2"], t0)
    await open_session(rb, sid, _d12_history(Host(sid), ids, t0))
    await store_watermark(rb, sid, ids["a1"])
    await configure(rb, NO_GUARD)
    try:
        await call(rb, "checkpoint/writerStarted", {"sessionId": sid, "watermark": ids["u2"]})
        inserts = [
            asyncio.ensure_future(call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"}))
            for _ in range(2)
        ]
        await asyncio.sleep(0.3)
        assert not any(f.done() for f in inserts)
        await call(rb, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "failure"})
        first, second = await asyncio.gather(*inserts)
    finally:
        await configure(rb, CONFIG)
    assert first["outcome"] == second["outcome"] == "rebuilt"
    assert first["wait"]["result"] == "failure"
    assert first["watermark"] == second["watermark"] == ids["a1"]
    assert (
        first["message"]["info"]["time"]["created"] == second["message"]["info"]["time"]["created"] == t0 + 11
    )
    built = await call(rb, "request/build", {"sessionId": sid, "memoryReminder": False})
    assert built["sources"][0] == second["message"]["info"]["id"] and ids["u2"] in built["sources"]
    got = await call(rb, "session/get", {"sessionId": sid})
    assert got["messageCount"] == 6


def _tool_step(host: Host, mid: str, t: int, k: int, output_chars: int = 16_000) -> dict:
    return host.msg(
        mid,
        "assistant",
        t,
        inline_tool(f"c{k}", "read", {"filePath": f"src/f{k}.ts"}, "x" * output_chars),
        finish="tool-calls",
        tokens={"input": 185_000, "output": 180, "reasoning": 0, "cache": {"read": 0, "write": 0}},
    )


async def _writer(client: LanguageClient, sid: str) -> str:
    """One checkpoint writer with the kit and the stand-in model; its watermark."""
    prepared = await call(client, "checkpoint/prepare", {"sessionId": sid})
    watermark: str = prepared["watermark"]
    reply = standin_reply(prepared)
    await call(client, "checkpoint/commit", {"sessionId": sid, "content": reply, "watermark": watermark})
    return watermark


@pytest.mark.parametrize("mode", ["id", "seq"])
async def test_watermark_on_the_previous_boundary_does_not_resend_its_digested_steps(
    rb: LanguageClient, mode: str
):
    """The newcomer review's scenario (D12, boundary time): 15 messages, the guard on; a first
    rebuild; one more tool step; the next writer covers the first boundary itself. The second
    rebuild's request is its boundary alone, and `sizes.afterTokens` is what request/build sends."""
    sid = f"w-on-boundary-{mode}"
    t0 = int(time.time() * 1000) - 600_000
    names = ["u1", "a1", *[f"s{k:02}" for k in range(2, 15)]]
    ids = _ids(mode, names, t0)
    host = Host(sid)
    history = [
        host.msg(ids["u1"], "user", t0, txt("Fix the CSV export: ISO 8601 dates.")),
        host.msg(ids["a1"], "assistant", t0 + 1_000, txt("Reading the exporter."), finish="stop"),
        *[_tool_step(host, ids[f"s{k:02}"], t0 + 1_000 * k, k) for k in range(2, 15)],
    ]
    await open_session(rb, sid, history)
    await _writer(rb, sid)
    first = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    # The newest step, s14, stays live (D19): the boundary digests up to s13.
    assert first["outcome"] == "rebuilt" and first["message"]["parts"][0]["digestUpTo"] == ids["s13"]
    b1 = first["message"]["info"]["id"]
    built = await call(rb, "request/build", {"sessionId": sid, "memoryReminder": False})
    digested = set(built["collapsedMessageIds"])
    assert built["sources"] == [b1, ids["s14"], ids["s14"]] and len(digested) >= 3

    new = _ids(mode, ["s15"], int(time.time() * 1000) + 5)["s15"] if mode == "id" else "s15"
    step = _tool_step(host, new, t0 + 15_000, 15, output_chars=2_000)
    await call(rb, "session/sync", {"sessionId": sid, "upsertMessages": [step]})
    computed = await call(rb, "rebuild/compute", {"sessionId": sid, "model": {"contextWindow": 200_000}})
    assert computed["trigger"]["shouldRebuild"] is True and computed["watermark"]["messageId"] == b1
    assert await _writer(rb, sid) == b1
    second = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert second["outcome"] == "rebuilt" and second["watermark"] == b1
    built = await call(rb, "request/build", {"sessionId": sid, "memoryReminder": False})
    # The steps B1 digested stay out. s14, which B1 left live and the model has answered since, stays
    # in view with its result cleared; s15, the newest step, stays live in full (D19).
    assert built["sources"] == [second["message"]["info"]["id"], ids["s14"], ids["s14"], new, new]
    assert not digested & set(built["sources"]) and built["collapsedMessageIds"] == []
    outputs = [c["output"]["value"] for m in built["messages"] if m["role"] == "tool" for c in m["content"]]
    assert outputs == [texts.CLEARED_TOOL_RESULT, "x" * 2_000]
    # The guard's estimate is the request sent, the cleared result's placeholder included (D15).
    assert second["sizes"]["afterTokens"] == built["estimatedTokens"] < second["sizes"]["beforeTokens"]


# -- D13 and the fidelity report -------------------------------------------------------------------
async def test_d13_newest_ask_beyond_the_window_is_in_the_boundary(rb: LanguageClient):
    sid = "d13"
    host = Host(sid)
    msgs = [host.msg("u000", "user", T0, txt("port the whole parser to the new AST"))]
    for k in range(250):  # an autonomous loop of 250 logical steps after the ask
        a, t = f"c{k}", T0 + 10 * (k + 1)
        msgs += [
            host.msg(
                f"s{k}",
                "assistant",
                t,
                {"type": "tool_use", "id": a, "name": "read", "input": {"path": f"f{k}"}},
                finish="tool-calls",
            ),
            host.msg(f"r{k}", "user", t + 1, {"type": "tool_result", "tool_use_id": a, "content": "z" * 200}),
        ]
    await open_session(
        rb, sid, msgs, tasks=[{"id": "T1", "status": "in_progress", "summary": "AST port", "created_at": T0}]
    )
    await store_watermark(rb, sid, "r200")
    preview = await call(rb, "rebuild/compute", {"sessionId": sid, "preview": True})
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert res["outcome"] == "rebuilt"
    ask = res["fidelity"]["newestUserAsk"]
    assert ask == {
        "status": "verbatim",
        "messageId": "u000",
        "appended": True,
        "reason": texts.ASK_OUTSIDE_WINDOW,
    }
    assert preview["preview"]["fidelity"] == res["fidelity"]
    body = res["message"]["parts"][2]["text"]
    assert "# Recent user input (verbatim)\nport the whole parser to the new AST\n" in body
    recent = next(s for s in res["sections"] if s["key"] == "recent_user")
    assert recent["present"] and "D13" in recent["reason"]


async def test_fidelity_report_tasks_and_newest_tool_error(rb: LanguageClient):
    sid = "fidelity"
    host = Host(sid)
    msgs = [
        host.msg("m01", "user", T0, txt("fix the build")),
        pondering(host, "m02", T0 + 10, "planning "),
        host.msg("m03", "user", T0 + 20, txt("the CI is red too")),
        host.msg(
            "m04",
            "assistant",
            T0 + 30,
            inline_tool("k1", "bash", {"command": "make"}, error="make: *** Error 2"),
            finish="tool-calls",
        ),
        host.msg(
            "m05",
            "assistant",
            T0 + 40,
            inline_tool("k2", "bash", {"command": "make ci"}, error="3 failing"),
            finish="tool-calls",
        ),
    ]
    tasks = [
        {"id": "T1", "status": "in_progress", "summary": "build", "created_at": T0},
        {"id": "T1.1", "status": "open", "summary": "deps", "parent_task_id": "T1", "created_at": T0 + 1},
        {"id": "T1.1.1", "status": "open", "summary": "pin", "parent_task_id": "T1.1", "created_at": T0 + 2},
        {
            "id": "T2",
            "status": "done",
            "summary": "old",
            "created_at": T0 + 3,
            "ended_at": int(time.time() * 1000),
        },
    ]
    await open_session(rb, sid, msgs, tasks=tasks)
    await store_watermark(rb, sid, "m02")
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto", "digestUpTo": "m04"})
    assert res["outcome"] == "rebuilt"
    report = res["fidelity"]
    assert report["newestUserAsk"] == {"status": "verbatim", "messageId": "m03", "appended": False}
    assert report["tasks"] == {
        "openHeld": 3,
        "openListed": 2,
        "unlisted": [{"taskId": "T1.1.1", "reason": texts.TASK_NESTED}],
    }
    # m05's error came after digestUpTo: it stays live after the boundary, not in the digest.
    assert report["newestToolError"] == {
        "messageId": "m05",
        "callId": "k2",
        "tool": "bash",
        "inDigest": False,
        "reason": texts.ERROR_AFTER_DIGEST,
    }
    assert report["cutSections"] == [] and report["shedSections"] == []
    again = await call(rb, "rebuild/compute", {"sessionId": sid, "preview": "always"})
    # The preview's D is an automatic rebuild's: m05, the newest step, stays live there too (D19).
    assert again["preview"]["fidelity"]["newestToolError"]["reason"] == texts.ERROR_AFTER_DIGEST


# -- the inflation guard ---------------------------------------------------------------------------
async def test_no_gain_changes_nothing_until_the_guard_is_off(rb: LanguageClient):
    sid = "no-gain"
    host = Host(sid)
    msgs = [
        host.msg("m01", "user", T0, txt("fix the lexer")),
        host.msg("m02", "assistant", T0 + 10, txt("looking"), finish="stop"),
        host.msg("m03", "user", T0 + 20, txt("keep the API")),
        host.msg("m04", "assistant", T0 + 30, txt("done"), finish="stop"),
    ]
    await open_session(rb, sid, msgs)
    await store_watermark(rb, sid, "m02")
    before = await call(rb, "session/get", {"sessionId": sid})
    built_before = await call(rb, "request/build", {"sessionId": sid, "memoryReminder": False})
    preview = await call(rb, "rebuild/compute", {"sessionId": sid, "preview": "always"})
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "manual"})
    assert preview["preview"]["outcome"] == res["outcome"] == "no-gain"
    sizes = res["sizes"]
    assert sizes == preview["preview"]["sizes"] and sizes["afterTokens"] >= sizes["beforeTokens"] > 0
    assert sizes["beforeTokens"] == built_before["estimatedTokens"]
    assert "message" not in res and res["compacted"] == [] and str(sizes["beforeTokens"]) in res["detail"]
    assert res["fidelity"]["newestUserAsk"]["messageId"] == "m03"
    after = await call(rb, "session/get", {"sessionId": sid})
    assert after["revision"] == before["revision"] == res["revision"] and after["messageCount"] == 4
    assert await call(rb, "request/build", {"sessionId": sid, "memoryReminder": False}) == built_before
    await configure(rb, NO_GUARD)
    try:
        forced = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "manual"})
    finally:
        await configure(rb, CONFIG)
    assert forced["outcome"] == "rebuilt" and forced["sizes"] == sizes
    built = await call(rb, "request/build", {"sessionId": sid, "memoryReminder": False})
    assert built["estimatedTokens"] == sizes["afterTokens"]


async def test_inflation_guard_config_is_validated(rb: LanguageClient):
    with pytest.raises(JsonRpcException) as err:
        await configure(rb, {"checkpoint": {"inflation_guard": "no"}})
    assert err.value.code == -32602 and "inflation_guard" in err.value.message


# -- usage fallback --------------------------------------------------------------------------------
def codex_like(host: Host, steps: int, with_usage_at: int | None = None) -> list[dict]:
    out = []
    for i in range(steps):
        info: dict[str, Any] = {"finish": "stop"}
        if i == with_usage_at:
            info["tokens"] = {
                "input": 19_000,
                "output": 100,
                "reasoning": 0,
                "cache": {"read": 0, "write": 0},
            }
        out.append(host.msg(f"u{i:03}", "user", T0 + 10 * i, txt(f"step {i}")))
        out.append(host.msg(f"a{i:03}", "assistant", T0 + 10 * i + 5, txt("w" * 2000), **info))
    return out


async def test_usage_fallback_reports_its_source(rb: LanguageClient):
    await call(rb, "session/open", {"sessionId": "codex", "messages": codex_like(Host("codex"), 40)})
    got = await call(rb, "rebuild/compute", {"sessionId": "codex", "model": SMALL_MODEL, "preview": False})
    trig = got["trigger"]
    assert trig["usageSource"] == "estimate" and trig["count"] > trig["usable"] == 18_000
    assert trig["shouldRebuild"] is True and any("a039" in w for w in trig["warnings"])
    await call(
        rb, "session/open", {"sessionId": "cline", "messages": codex_like(Host("cline"), 3, with_usage_at=1)}
    )
    got = await call(rb, "rebuild/compute", {"sessionId": "cline", "model": SMALL_MODEL, "preview": False})
    assert got["trigger"]["usageSource"] == "earlier-step" and got["trigger"]["count"] == 19_100
    assert got["trigger"]["shouldRebuild"] is True


# -- boundary IDs in the host's scheme -------------------------------------------------------------
async def test_v1_host_ids_get_v1_boundary_ids_and_the_trigger_fires_again(rb: LanguageClient):
    sid = "opencode-v1"
    host, minter = Host(sid), IdMinter()
    now = int(time.time() * 1000)

    def turn(t: int, tokens: int) -> list[dict]:
        usage = {"input": tokens, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
        return [
            host.msg(minter.ascending_v1("msg", t), "user", t, txt(f"ask at {t}")),
            host.msg(
                minter.ascending_v1("msg", t + 5),
                "assistant",
                t + 5,
                txt("v" * 16_000),
                finish="stop",
                tokens=usage,
            ),
        ]

    msgs = [m for i in range(12) for m in turn(now - 600_000 + 1000 * i, 185_000)]
    await open_session(rb, sid, msgs, idsAscending=True)
    await store_watermark(rb, sid, msgs[13]["info"]["id"])
    model = {"contextWindow": 200_000, "providerId": "anthropic", "modelId": "claude"}
    assert (await call(rb, "rebuild/compute", {"sessionId": sid, "model": model}))["trigger"]["shouldRebuild"]
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert res["outcome"] == "rebuilt"
    assert V1_ID.fullmatch(res["message"]["info"]["id"])
    assert all(V1_ID.fullmatch(p["id"]) for p in res["message"]["parts"])
    recovered = await call(rb, "rebuild/compute", {"sessionId": sid, "model": model, "preview": False})
    assert recovered["trigger"]["usageRecovered"] is True
    await asyncio.sleep(0.01)
    newer = turn(int(time.time() * 1000) + 10, 186_000)
    await call(rb, "session/sync", {"sessionId": sid, "upsertMessages": newer})
    assert newer[0]["info"]["id"] > res["message"]["info"]["id"]
    again = await call(rb, "rebuild/compute", {"sessionId": sid, "model": model, "preview": False})
    assert again["trigger"]["usageRecovered"] is False and again["trigger"]["shouldRebuild"] is True


async def test_unknown_ascending_ids_require_boundary_message_id(rb: LanguageClient):
    sid = "uuid-host"
    host = Host(sid)
    msgs = [
        host.msg("0001", "user", T0, txt("port the parser")),
        pondering(host, "0002", T0 + 10),
        host.msg("0003", "user", T0 + 20, txt("go on")),
        host.msg("0004", "assistant", T0 + 30, txt("done"), finish="stop"),
    ]
    await open_session(rb, sid, msgs, idsAscending=True)
    await store_watermark(rb, sid, "0002")
    before = await call(rb, "session/get", {"sessionId": sid})
    with pytest.raises(JsonRpcException) as err:
        await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert err.value.code == 1010 and "rebuild/insert: boundaryMessageId: required" in err.value.message
    assert err.value.data == {**err.value.data, "name": "BoundaryIdRequired", "field": "boundaryMessageId"}
    assert (await call(rb, "session/get", {"sessionId": sid}))["revision"] == before["revision"]
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto", "boundaryMessageId": "0005"})
    assert res["outcome"] == "rebuilt" and res["message"]["info"]["id"] == "0005"
