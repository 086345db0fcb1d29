"""Every code snippet of README.md, protocol.md and docs/ is run, or at least checked.

- Python snippets run, in the order of their document, in one namespace per document, against the
  real sidecar and the example hosts' fake provider (the official SDKs find it through their
  `*_BASE_URL` variables, so `anthropic.Anthropic()` works offline). The namespace holds what the
  snippets assume a host has: `sidecar` (the typed client, initialized), `sid` (an open session over
  the trigger line, Anthropic-shaped, with tools), `MODEL`, `memory_root`, and the SDK modules.
  docs/hosts.md's functions are then called on SDK objects and the real sidecar.
- Shell snippets: every `make` target exists, every repository path named exists, every
  `mimo-sidecar` subcommand is one.
- JSON snippets parse (a whole document, or one value per line).
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from mimo_sidecar.client import Sidecar

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "protocol.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```", re.S | re.M)
MODEL = "claude-sonnet-5-5"
SUBCOMMANDS = {"import", "inspect", "--version", "--stdio"}


def snippets(path: Path, *langs: str) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    return [
        (text[: m.start()].count("\n") + 1, m.group("body"))
        for m in FENCE.finditer(text)
        if m.group("lang") in langs
    ]


def test_the_documents_hold_python_snippets() -> None:
    counts = {p.name: len(snippets(p, "python")) for p in DOCUMENTS}
    assert counts["hosts.md"] >= 3 and counts["client.md"] >= 10 and counts["README.md"] >= 2, counts


# -- Python: run ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fake(monkeypatch_module: pytest.MonkeyPatch) -> Iterator[Any]:
    sys.path.insert(0, str(ROOT / "examples" / "hosts"))
    provider = importlib.import_module("fake_provider").FakeProvider(steps=1000)
    with provider:
        monkeypatch_module.setenv("ANTHROPIC_BASE_URL", provider.url)
        monkeypatch_module.setenv("ANTHROPIC_API_KEY", "not-needed-offline")
        monkeypatch_module.setenv("OPENAI_BASE_URL", f"{provider.url}/v1")
        monkeypatch_module.setenv("OPENAI_API_KEY", "not-needed-offline")
        yield provider


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def anthropic_session(sid: str) -> dict[str, Any]:
    """A user ask, then tool steps in Anthropic's shape whose last usage is over the line."""
    t0 = 1_760_000_000_000
    messages: list[dict[str, Any]] = [
        {
            "info": {"id": f"{sid}-u", "role": "user", "time": {"created": t0}},
            "parts": [{"type": "text", "text": "Read the sources."}],
        }
    ]
    for k in range(6):
        tokens = {"input": 150_000 + k * 8_000, "output": 100, "cache": {"read": 0, "write": 0}}
        info = {"role": "assistant", "providerID": "anthropic", "modelID": MODEL, "finish": "tool-calls"}
        messages.append(
            {
                "info": {"id": f"{sid}-a{k}", **info, "tokens": tokens, "time": {"created": t0 + 2 * k + 1}},
                "parts": [
                    {"type": "tool_use", "id": f"toolu_{k}", "name": "read", "input": {"filePath": f"f{k}"}}
                ],
            }
        )
        result = {"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": f"line {k}\n" * 600}
        messages.append(
            {
                "info": {"id": f"{sid}-r{k}", "role": "user", "time": {"created": t0 + 2 * k + 2}},
                "parts": [result],
            }
        )
    tools = [{"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}]
    return {
        "sessionId": sid,
        "messages": messages,
        "createCheckpoint": True,
        "requestPrefix": {"system": ["You are a coding agent."], "tools": tools},
    }


def namespace(sidecar: Sidecar, memory_root: Path, sid: str) -> dict[str, Any]:
    sidecar.session_open(anthropic_session(sid))
    return {
        "__name__": f"snippets_{sid}",
        "sidecar": sidecar,
        "sid": sid,
        "MODEL": MODEL,
        "memory_root": str(memory_root),
        "anthropic": anthropic,
        "openai": openai,
    }


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if snippets(p, "python")], ids=lambda p: p.name)
def test_every_python_snippet_runs(path: Path, fake: Any, sidecar: Sidecar, memory_root: Path) -> None:
    scope = namespace(sidecar, memory_root, f"ses_snippets_{path.stem}")
    before = len(fake.accepted)
    for line, code in snippets(path, "python"):
        try:
            exec(compile(code, f"{path.name}:{line}", "exec"), scope)  # noqa: S102 - the point of the test
        except Exception as error:  # pragma: no cover - the failure message names the snippet
            raise AssertionError(f"{path.name}, the snippet at line {line} fails: {error!r}") from error
    assert fake.rejected == [], [s.problems for s in fake.rejected]
    if path.name in ("README.md", "protocol.md"):
        assert len(fake.accepted) > before  # the provider calls really went out
    if path.name == "hosts.md":
        hosts_functions_work(scope, sidecar, fake)


def hosts_functions_work(scope: dict[str, Any], sidecar: Sidecar, fake: Any) -> None:
    """docs/hosts.md's functions, used as a host uses them."""
    from anthropic.types import Usage
    from google.genai.types import GenerateContentResponseUsageMetadata
    from openai.types.completion_usage import CompletionUsage, PromptTokensDetails
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails, ResponseUsage

    def count(usage: dict[str, Any]) -> int:
        return int(usage["input"] + usage["output"] + usage["cache"]["read"] + usage["cache"]["write"])

    # 1,000 prompt tokens of which 600 were cached, and 50 out: a count of 1,050 for every provider.
    assert (
        count(
            scope["anthropic_usage"](
                Usage(
                    input_tokens=300,
                    cache_read_input_tokens=600,
                    cache_creation_input_tokens=100,
                    output_tokens=50,
                )
            )
        )
        == 1050
    )
    details = InputTokensDetails(cached_tokens=600, cache_write_tokens=100)
    responses = ResponseUsage(
        input_tokens=1000,
        input_tokens_details=details,
        output_tokens=50,
        output_tokens_details=OutputTokensDetails(reasoning_tokens=20),
        total_tokens=1050,
    )
    assert count(scope["responses_usage"](responses)) == 1050
    chat = CompletionUsage(
        prompt_tokens=1000,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=600, cache_write_tokens=100),
        completion_tokens=50,
        total_tokens=1050,
    )
    assert count(scope["chat_usage"](chat)) == 1050
    gemini = GenerateContentResponseUsageMetadata(
        prompt_token_count=1000,
        cached_content_token_count=600,
        candidates_token_count=50,
        thoughts_token_count=7,
    )
    assert count(scope["gemini_usage"](gemini)) == 1050

    storage = [m for m in anthropic_session(scope["sid"])["messages"]]
    client = anthropic.Anthropic()

    def call_model(request: Any) -> str:
        kwargs = {"model": MODEL, "max_tokens": 4096, **request.prefix.request, "messages": request.messages}
        kwargs.update(request.overrides)
        reply = client.messages.create(**kwargs)
        return "".join(b.text for b in reply.content if b.type == "text")

    model = {"contextWindow": 200_000, "providerId": "anthropic", "modelId": MODEL}
    usage = {"input": 190_000, "output": 100, "cache": {"read": 0, "write": 0}}
    sid = scope["sid"]
    scope["sidecar"].session_close({"sessionId": sid})  # a fresh copy of the session for the loop
    sidecar.session_open(anthropic_session(sid))
    outcome = scope["rebuild_if_due"](
        sidecar, sid, usage, model, call_model, lambda i: scope["persist"](storage, i)
    )
    assert outcome == "rebuilt"
    assert storage[-1]["parts"][0]["type"] == "checkpoint"  # the boundary, stored as the newest message
    marked = [p for m in storage for p in m["parts"] if "time" in p and "compacted" in p["time"]]
    assert marked, "the compaction marks were written into the host's storage"

    # The model tools, declared and routed as the guide says (the first step's result is digested).
    from anthropic.types import ToolUseBlock

    sidecar.session_sync({"sessionId": sid, "toolPointers": {"sidecarTools": {"prefix": "mimo_"}}})
    names = {t["name"] for t in sidecar.tools_list({"sessionId": sid}).tools}
    assert names == {"mimo_history", "mimo_memory", "mimo_task"}

    def block(name: str, arguments: dict[str, Any]) -> ToolUseBlock:
        return ToolUseBlock(type="tool_use", id="toolu_doc", name=name, input=arguments)

    recalled = scope["sidecar_tool_result"](
        sidecar, sid, block("mimo_history", {"operation": "result", "callID": "toolu_0"}), names
    )
    assert recalled["tool_use_id"] == "toolu_doc" and "line 0\n" * 600 in recalled["content"]
    assert "is_error" not in recalled
    mistaken = scope["sidecar_tool_result"](sidecar, sid, block("mimo_task", {"operation": "get"}), names)
    assert mistaken["is_error"] is True
    assert scope["sidecar_tool_result"](sidecar, sid, block("read", {"filePath": "f0"}), names) is None

    # The writer beside the insert: the insert waits for it and follows its watermark (D21).
    sidecar.session_close({"sessionId": sid})
    sidecar.session_open(anthropic_session(sid))
    inserted = scope["rebuild_while_writing"](sidecar, sid, call_model, lambda i: None)
    assert inserted.outcome == "rebuilt" and inserted.wait is not None and inserted.wait.result == "success"
    assert inserted.watermark == sidecar.session_get({"sessionId": sid}).watermark is not None


# -- shell and JSON: checked -------------------------------------------------------------------------
MAKE_TARGETS = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))
REPO_PATH = re.compile(
    r"(?<![\w~/.<-])((?:examples|docs|tests|clients|mimo_sidecar|schemas|benchmarks)/[\w./-]*\w)"
)


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if snippets(p, "sh")], ids=lambda p: p.name)
def test_every_shell_snippet_names_what_exists(path: Path) -> None:
    for line, code in snippets(path, "sh"):
        for command in code.splitlines():
            command = command.split("  #")[0].split(" # ")[0].strip()
            where = f"{path.name}:{line}: {command}"
            for target in re.findall(r"(?:^|&& |; )make (\w[\w-]*)", command):
                assert target in MAKE_TARGETS, f"{where}: no make target {target!r}"
            for named in REPO_PATH.findall(command):
                assert (ROOT / named).exists() or (ROOT / named.split("…")[0]).exists(), (
                    f"{where}: no {named}"
                )
            for sub in re.findall(r"mimo-sidecar (\S+)", command):
                assert sub in SUBCOMMANDS or sub.startswith("/") or "install" in command, f"{where}: {sub}?"


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if snippets(p, "json")], ids=lambda p: p.name)
def test_every_json_snippet_parses(path: Path) -> None:
    for line, code in snippets(path, "json"):
        try:
            json.loads(code)
        except json.JSONDecodeError:
            for n, value in enumerate(v for v in code.splitlines() if v.strip()):
                try:
                    json.loads(value)
                except json.JSONDecodeError as error:
                    raise AssertionError(f"{path.name}:{line}, value {n}: {error}") from error
