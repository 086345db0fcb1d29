"""What a real transcript says happened, read from the raw file, and whether a built request says so too.

The importers' own output is not the reference here: each folder of shared/real-sessions gets a
minimal reader of its raw format (`FACTS_OF_FOLDER`) that extracts three facts, and the checks
compare a request built by the sidecar against them:

- **answered**: the call IDs the transcript answered with a successful result. In a request, a call
  of that ID must be answered by a result that is not an error and not the synthesized
  "interrupted" text.
- **reasoning**: one identity per reasoning item the transcript holds (a signature, encrypted
  content, or the text when there is no token). Each one that belongs to a stored message the
  request was built from is either sent (its identity is in the request) or its drop is reported
  in `warnings` under a provider rule (`PROVIDER_RULES`).
- **newest ask**: what the user last typed. It must be in the request after a rebuild (live, or in
  the boundary's "Recent user input").

A folder without a reader fails the corpus test that lists them (`FACTS_OF_FOLDER` must cover
`tests.real_sessions.FORMAT_OF_FOLDER`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mimo_sidecar.core import texts
from mimo_sidecar.core.request.assembly import BuiltRequest
from mimo_sidecar.importers.harness import CLAUDE_CODE_MARKERS, CODEX_MARKERS
from tests.real_sessions import claude_records

Json = dict[str, Any]
ASK_HEAD = 80  # characters of the newest ask looked for in a request (a long ask is truncated there)
SHORT_ASK = 20  # an ask shorter than this must be a whole line of the request
CLEARED = "[Old tool result content cleared]"

# Why a request may leave a reasoning item out: the providers' rules (docs/formats.md "Formats"). A drop
# for any other reason is reasoning lost.
# The reasons the renderers give (core/formats, behavior.md#reasoning-replay), each a provider rule.
PROVIDER_RULES = (
    "thinking not sent (target thinking off",
    "reasoning not sent (Chat Completions takes no reasoning input)",
    "no replay token (a provider takes back only the reasoning it signed or encrypted)",
    "replay token of another provider",
    "produced by another model (a replay token is bound to the model that wrote it)",
    "produced by another provider (a replay token is bound to the provider that wrote it)",
    "no encrypted content (a stateless request carries the reasoning in it)",
    "no item of its own follows it (the API requires one)",
    "no signature (the API refuses unsigned thinking)",
    "empty thought (a Gemini part needs non-empty text)",
    "empty reasoning parts not sent (no text and no replay token: nothing to replay)",
    "reasoning of an assistant message that ended in an error not sent",
)
DROP = re.compile(r"^reasoning-dropped: (?P<count>\d+) × (?P<what>.*?) \(in .*\)$")


@dataclass(frozen=True)
class Facts:
    answered: frozenset[str] = frozenset()
    reasoning: frozenset[str] = frozenset()
    newest_ask: str | None = None


# -- raw readers, one per folder -------------------------------------------------------------------
def _jsonl(path: Path) -> list[Json]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _blocks(content: Any) -> list[Json]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def claude_facts(path: Path) -> Facts:
    """Claude Code, JSONL or a JSON array: the main thread's records (sidechains are subagents')."""
    answered, reasoning, asks = set(), set(), []
    for record in claude_records(path):
        if record.get("isSidechain") is True or not isinstance(record.get("message"), dict):
            continue
        blocks = _blocks(record["message"].get("content"))
        if record.get("type") == "assistant" and record["message"].get("model") != "<synthetic>":
            reasoning |= {
                b["signature"] for b in blocks if b.get("type") == "thinking" and b.get("signature")
            }
            reasoning |= {b["data"] for b in blocks if b.get("type") == "redacted_thinking" and b.get("data")}
        elif record.get("type") == "user":
            answered |= {
                b["tool_use_id"]
                for b in blocks
                if b.get("type") == "tool_result" and b.get("is_error") is not True
            }
            if not (record.get("isMeta") or record.get("isCompactSummary")):
                typed = [
                    b["text"]
                    for b in blocks
                    if b.get("type") == "text" and _typed(b["text"], CLAUDE_CODE_MARKERS)
                ]
                asks += typed[-1:]
    return Facts(frozenset(answered), frozenset(reasoning), asks[-1] if asks else None)


def _typed(text: str, markers: tuple[str, ...]) -> bool:
    return bool(text.strip()) and not text.lstrip().startswith(markers)


def codex_facts(path: Path) -> Facts:
    """Codex rollout: outputs answer calls; `user_message` events are what the user typed."""
    answered, reasoning, asks = set(), set(), []
    for record in _jsonl(path):
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else record
        kind = payload.get("type")
        if record.get("type") == "event_msg":
            if kind == "user_message" and _typed(payload.get("message") or "", CODEX_MARKERS):
                asks.append(payload["message"])
        elif kind in ("function_call_output", "custom_tool_call_output"):
            answered.add(payload["call_id"])
        elif kind == "reasoning":
            summary = [s.get("text") for s in payload.get("summary") or [] if s.get("text")]
            token = payload.get("encrypted_content") or (summary[0] if summary else None)
            if token:
                reasoning.add(token)
    return Facts(frozenset(answered), frozenset(reasoning), asks[-1] if asks else None)


def opencode_facts(path: Path) -> Facts:
    """`opencode export`: a completed tool part is a successful result; parts carry reasoning."""
    answered, reasoning, asks = set(), set(), []
    for message in json.loads(path.read_text(encoding="utf-8"))["messages"]:
        for part in message["parts"]:
            if part["type"] == "tool" and part.get("state", {}).get("status") == "completed":
                answered.add(part["callID"])
            elif part["type"] == "reasoning" and part.get("text"):
                reasoning.add(part["text"])
        if message["info"]["role"] == "user":
            typed = [p["text"] for p in message["parts"] if p["type"] == "text" and not p.get("synthetic")]
            asks += [t for t in typed if t.strip()][-1:]
    return Facts(frozenset(answered), frozenset(reasoning), asks[-1] if asks else None)


CLINE_RESULT = re.compile(r"\[[^\]\n]+\] Result:")
CLINE_ASK = re.compile(r"<(task|feedback|user_message|answer)>\s*(?P<text>.*?)\s*</\1>", re.DOTALL)


def cline_facts(path: Path) -> Facts:
    """Cline history: a tool's output is user text `[tool …] Result:` in the message after the
    calls, one per call in call order; what the user typed is wrapped in a user tag."""
    history = json.loads(path.read_text(encoding="utf-8"))
    answered, asks = set(), []
    for index, message in enumerate(history):
        blocks = _blocks(message.get("content"))
        if message.get("role") == "assistant" and index + 1 < len(history):
            calls = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            after = _blocks(history[index + 1].get("content"))
            outputs = [b for b in after if b.get("type") == "text" and CLINE_RESULT.match(b.get("text", ""))]
            answered |= set(calls[: len(outputs)])
        elif message.get("role") == "user":
            asks += [
                m["text"] for b in blocks if b.get("type") == "text" for m in CLINE_ASK.finditer(b["text"])
            ]
    return Facts(frozenset(answered), frozenset(), asks[-1] if asks else None)


def gemini_facts(path: Path) -> Facts:
    """Gemini CLI: the saved chat (`messages` with `toolCalls` and `thoughts`) or headless
    stream-json (`tool_result` lines with a status)."""
    if path.suffix == ".jsonl":
        lines = _jsonl(path)
        answered = {
            r["tool_id"] for r in lines if r.get("type") == "tool_result" and r.get("status") == "success"
        }
        asks = [r["content"] for r in lines if r.get("type") == "message" and r.get("role") == "user"]
        return Facts(frozenset(answered), frozenset(), asks[-1] if asks else None)
    answered, reasoning, asks = set(), set(), []
    for message in json.loads(path.read_text(encoding="utf-8"))["messages"]:
        answered |= {c["id"] for c in message.get("toolCalls") or [] if c.get("status") == "success"}
        reasoning |= {_thought(t) for t in message.get("thoughts") or [] if t.get("description")}
        if message.get("type") == "user":
            content = message.get("content")
            typed = (
                content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content or [])
            )
            asks.append(typed)
    return Facts(frozenset(answered), frozenset(reasoning), asks[-1] if asks else None)


def _thought(thought: Json) -> str:
    """A recorded thought summary as the importer words it (docs/importers.md, "Gemini CLI")."""
    subject, description = thought.get("subject") or "", thought["description"]
    return f"**{subject}** {description}".strip() if subject else description


AIDER_ASK_COMMANDS = ("/ask", "/code", "/architect", "/context", "/help")
AIDER_CONFIRM = re.compile(r"\? \(Y\)es/\(N\)o.*\[[^\]]*\]: ?\S*\s*$")


def aider_exchange_asks(session: str) -> list[str]:
    """The asks of one Aider session (its `#### ` runs that are neither commands nor answers to
    Aider's prompts) that a reply of the model's (a line that is neither `#### ` nor `> `) follows."""
    asks: list[str] = []
    current: list[str] = []
    answered: list[bool] = []
    for line in session.splitlines()[1:]:
        if line.startswith("#### "):
            current.append(line[5:].removesuffix("  "))
            continue
        if current:
            typed = "\n".join(current)
            command, _, rest = typed.partition(" ")
            if command in AIDER_ASK_COMMANDS and rest.strip():
                typed = rest  # `/ask why?` sends the question
            if not typed.startswith("/") and not AIDER_CONFIRM.search(typed) and typed != "<blank>":
                asks.append(typed)
                answered.append(False)
            current = []
        if line.strip() and not line.startswith(">") and asks:
            answered[-1] = True
    return [ask for ask, done in zip(asks, answered, strict=True) if done]


def aider_facts(path: Path) -> Facts:
    """Aider chat history: no call IDs and no reasoning; the newest ask of the newest session that
    holds an exchange (an ask the model answered) is the newest ask."""
    sessions = path.read_text(encoding="utf-8").split("# aider chat started at")[1:]
    for session in reversed(sessions):
        asks = aider_exchange_asks(session)
        if asks:
            return Facts(newest_ask=asks[-1])
    return Facts(newest_ask=None)


FACTS_OF_FOLDER: dict[str, Callable[[Path], Facts]] = {
    "claude": claude_facts,
    "claude-json": claude_facts,
    "codex": codex_facts,
    "opencode": opencode_facts,
    "cline": cline_facts,
    "gemini": gemini_facts,
    "aider": aider_facts,
}


@functools.cache
def transcript_facts(path: Path) -> Facts:
    return FACTS_OF_FOLDER[path.parent.name](path)


# -- what a request holds, per format --------------------------------------------------------------
@dataclass
class Exchange:
    """The calls of a request and the result answering each (call ID → ok), in the stored IDs."""

    calls: set[str] = field(default_factory=set)
    results: dict[str, bool] = field(default_factory=dict)


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "\n".join(_strings(value))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _ok(text: str) -> bool:
    return texts.INTERRUPTED_TOOL_RESULT not in text


def exchange(built: BuiltRequest) -> Exchange:
    out = Exchange()
    back = built.call_id_map

    def add_call(call_id: str) -> None:
        out.calls.add(back.get(call_id, call_id))

    def add_result(call_id: str, ok: bool) -> None:
        out.results[back.get(call_id, call_id)] = ok

    for message in built.messages:
        if built.format == "openai-responses":
            kind = message.get("type")
            if kind in ("function_call", "custom_tool_call"):
                add_call(message["call_id"])
            elif kind in ("function_call_output", "custom_tool_call_output"):
                add_result(message["call_id"], _ok(_text_of(message.get("output"))))
            continue
        if built.format == "gemini":
            for part in message.get("parts", []):
                if "functionCall" in part:
                    add_call(part["functionCall"]["id"])
                elif "functionResponse" in part:
                    response = part["functionResponse"]
                    ok = "error" not in response["response"] and _ok(_text_of(response["response"]))
                    add_result(response["id"], ok)
            continue
        if built.format == "openai-chat":
            for call in message.get("tool_calls") or []:
                add_call(call["id"])
            if message.get("role") == "tool":
                add_result(message["tool_call_id"], _ok(_text_of(message.get("content"))))
            continue
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            kind = block.get("type")
            if kind in ("tool_use", "tool-call"):
                add_call(block["id"] if kind == "tool_use" else block["toolCallId"])
            elif kind == "tool_result":
                add_result(block["tool_use_id"], block.get("is_error") is not True and _ok(_text_of(block)))
            elif kind == "tool-result":
                output = block.get("output") or {}
                add_result(
                    block["toolCallId"],
                    not str(output.get("type", "")).startswith("error") and _ok(_text_of(output)),
                )
    return out


def wrongly_failed(facts: Facts, built: BuiltRequest) -> list[str]:
    """Calls the transcript answered successfully that the request sends unanswered or failed."""
    seen = exchange(built)
    return sorted(
        f"{call}: {'sent as failed' if call in seen.results else 'sent without its result'}"
        for call in seen.calls & facts.answered
        if not seen.results.get(call, False)
    )


def reasoning_in_scope(facts: Facts, built: BuiltRequest, stored: dict[str, frozenset[str]]) -> set[str]:
    """The transcript's reasoning held by the stored messages the request is built from;
    `stored` maps each stored message ID to its strings (`strings_of`)."""
    sources = {source for group in built.source_groups for source in group}
    scope: set[str] = set().union(*(stored.get(source, frozenset()) for source in sources))
    return {token for token in facts.reasoning if token in scope}


def lost_reasoning(facts: Facts, built: BuiltRequest, stored: dict[str, frozenset[str]]) -> list[str]:
    """Reasoning in scope (`reasoning_in_scope`) that is neither sent nor reported as dropped under a
    provider rule. Identities are compared whole: a reader whose importer reshapes them must say so."""
    sent = set(_strings(built.messages))
    unsent = [token for token in reasoning_in_scope(facts, built, stored) if token not in sent]
    reported = 0
    problems = []
    for warning in built.warnings:
        match = DROP.match(warning)
        if match is None:
            continue
        if not any(rule in match["what"] for rule in PROVIDER_RULES):
            problems.append(f"dropped without a provider rule: {warning}")
        reported += int(match["count"])
    if len(unsent) > reported:
        problems.append(f"{len(unsent) - reported} of {len(unsent)} unsent reasoning items not reported")
    return problems


def strings_of(message: Json) -> frozenset[str]:
    return frozenset(_strings(message))


def holds_ask(facts: Facts, built: BuiltRequest) -> bool:
    """The newest ask is in the request: its head (a long ask is truncated there), whitespace
    runs aside; a short ask as a whole line of its own."""
    if facts.newest_ask is None:
        return True
    ask = " ".join(facts.newest_ask.split())
    if len(ask) < SHORT_ASK:
        return any(" ".join(line.split()) == ask for s in _strings(built.messages) for line in s.splitlines())
    return any(ask[:ASK_HEAD] in " ".join(s.split()) for s in _strings(built.messages))
