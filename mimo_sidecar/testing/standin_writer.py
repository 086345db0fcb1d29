"""A stand-in checkpoint writer: fills `checkpoint.md` from a conversation without a model.

Test and demo aid only. A real host sends the writer's messages and `writer_instructions(...)` to a
model and writes back its reply; this function produces a reply of the same shape, from simple,
deterministic rules, so the demo, the examples and the tests can run a whole writer cycle offline.
It is no substitute for a model: it copies sentences, it does not understand them.

Input: the `messages` of a writer request (`checkpoint/prepare` or `request/build purpose:
"writer"`, AI SDK `ModelMessage`s, see `core.request.assembly`; the instructions `checkpoint/prepare`
puts last are recognised and skipped), optionally the stored message IDs they came from
(`sources`, same length) and the current `checkpoint.md`. Output: the whole new file, in the
template's shape (`core.checkpoint.template`). The same inputs give the same bytes.

The rules, section by section (the current file's bullets are kept and new ones added after them,
without duplicates, except where "replaced" is said):

- Topic: the current topic, else the first user ask.
- Active intent (replaced): the newest user ask, and the first one when they differ.
- Decisions: assistant sentences with a decision cue ("instead of", "rather than", "decided"...).
- Work in flight (replaced): the newest assistant text and the last tool calls with their outcome.
- Constraints and preferences: user sentences with a rule cue ("don't", "always", "never"...).
- Open questions: assistant questions asked after the newest user ask.
- Errors seen: error results, and the most telling error line of other results (a failed test,
  a compiler or linter error, then anything that reads like an error or a stack trace).
- Discovered knowledge: assistant sentences with a finding cue ("turns out", "root cause"...).
- Files touched: the paths of `edit`/`write`/`patch`-like calls, with how often each changed.
- Live resources: calls started in the background (`background: true`), with their result line.
- Since the last checkpoint (replaced): counts and the user asks after `since` (a message ID in
  `sources`), or after the start when there is none.

When the file is over `budget` tokens, the oldest bullets of the list sections go first
(Discovered knowledge, Errors seen, Files touched, Constraints, Open questions, Live resources,
Decisions, in that order); `- See ...` index lines are never dropped.

The Node example's stand-in (`examples/node/standin_writer.mjs`) is a smaller port of these rules
(topic, intent, work in flight, constraints, errors, files, since): it rewrites the template each
time instead of updating the current file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import texts
from ..core.checkpoint.template import CHECKPOINT_TITLE, SECTIONS, TOPIC_PREFIX, is_template
from ..core.checkpoint.writer_brief import INSTRUCTIONS_LEAD
from ..core.config import PushCaps
from ..core.estimate.jstext import est, js_trim
from ..core.memory.budgeted_read import INDEX_LINE
from ..core.rebuild.tail_digest import fold

TOPIC_CHARS = 120
ASK_CHARS = 400
SENTENCE_CHARS = 240
LINE_CHARS = 200
LAST_CALLS = 3
MAX_NEW_PER_SECTION = 12  # new bullets one run adds to a list section (the newest are kept)
SINCE_ASKS = 6

DECISION_CUE = re.compile(
    r"\b(instead of|rather than|decided|going with|settled on|we will|we'll keep|switch(?:ed)? to)\b",
    re.IGNORECASE,
)
RULE_CUE = re.compile(
    r"\b(don't|do not|never|always|must|prefer|please use|only use|keep using|no more|avoid)\b"
    r"|不要|别|必须|一定",
    re.IGNORECASE,
)
FINDING_CUE = re.compile(
    r"\b(turns out|root cause|the cause|that is why|which is why|found that|the reason)\b",
    re.IGNORECASE,
)
# Error-looking lines of a tool's output, most telling first: a failed test's name, a compiler
# error, a linter error, then anything that reads like an error or a stack trace.
ERROR_LINES = (
    re.compile(r"^\s*(?:\(fail\)|✗|FAIL\b)"),
    re.compile(r"\berror TS\d+|^\s*\d+:\d+\s+error\b"),
    re.compile(r"^\s*(?:error\b|\w*Error\b|Traceback|panic:|fatal:)|\b[1-9]\d* fail\b", re.IGNORECASE),
)
SUMMARY_KEYS = ("command", "filePath", "file_path", "path", "pattern", "url", "query", "id", "description")
WRITE_TOOLS = frozenset({"edit", "write", "patch", "multiedit", "apply_patch", "str_replace"})
PATH_KEYS = ("filePath", "file_path", "path", "filename")
FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
BOUNDARY_LABELS = (texts.CHECKPOINT_LABEL, texts.COMPACTION_LABEL)
# The text a request gives a delegated subtask, up to where the agent's name goes.
SUBTASK_PREFIX = texts.subtask_request_text("\0", "").split("\0", 1)[0]
TRIM_ORDER = (7, 6, 8, 4, 5, 9, 2)


# =============================================================================================
# Reading the conversation
# =============================================================================================
@dataclass(frozen=True)
class _Call:
    name: str
    input: Any
    error: str | None  # error-text result
    output: str  # text result (or the text of a content result)


@dataclass
class _Conversation:
    asks: list[tuple[int, str]] = field(default_factory=list)  # (message index, text)
    assistant_texts: list[tuple[int, str]] = field(default_factory=list)
    calls: list[tuple[int, _Call]] = field(default_factory=list)


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _texts(message: Mapping[str, Any]) -> list[str]:
    return [b["text"] for b in _blocks(message) if b.get("type") == "text" and isinstance(b.get("text"), str)]


def _user_ask(message: Mapping[str, Any]) -> str | None:
    """The user's own words: the first non-blank text block of a turn that is not a boundary."""
    pieces = _texts(message)
    if any(p.startswith(BOUNDARY_LABELS) for p in pieces):
        return None  # an earlier rebuild or compaction boundary: not something the user said
    for piece in pieces:
        if js_trim(piece) and not piece.startswith((SUBTASK_PREFIX, INSTRUCTIONS_LEAD)):
            return js_trim(piece)  # the writer's own instructions (checkpoint/prepare) are no ask
    return None


def _result_text(output: Any) -> tuple[str | None, str]:
    """(error text or None, text output) of an AI SDK tool-result `output`."""
    if not isinstance(output, Mapping):
        return None, ""
    value = output.get("value")
    if output.get("type") == "error-text":
        return (value if isinstance(value, str) else ""), ""
    if isinstance(value, str):
        return None, value
    if isinstance(value, list):
        pieces = [v["text"] for v in value if isinstance(v, Mapping) and isinstance(v.get("text"), str)]
        return None, "\n".join(pieces)
    return None, ""


def _read(messages: Sequence[Mapping[str, Any]]) -> _Conversation:
    conv = _Conversation()
    pending: dict[str, tuple[int, str, Any]] = {}
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "user":
            ask = _user_ask(message)
            if ask is not None:
                conv.asks.append((i, ask))
        elif role == "assistant":
            conv.assistant_texts += [(i, t) for t in _texts(message) if js_trim(t)]
            for b in _blocks(message):
                if b.get("type") == "tool-call" and isinstance(b.get("toolCallId"), str):
                    pending[b["toolCallId"]] = (i, str(b.get("toolName") or ""), b.get("input"))
        elif role == "tool":
            for b in _blocks(message):
                call = pending.pop(str(b.get("toolCallId")), None) if b.get("type") == "tool-result" else None
                if call is not None:
                    error, output = _result_text(b.get("output"))
                    conv.calls.append((call[0], _Call(call[1], call[2], error, output)))
    conv.calls += [(i, _Call(name, tool_input, None, "")) for i, name, tool_input in pending.values()]
    conv.calls.sort(key=lambda c: c[0])
    return conv


def _after(conv: _Conversation, start: int) -> _Conversation:
    return _Conversation(
        [a for a in conv.asks if a[0] > start],
        [t for t in conv.assistant_texts if t[0] > start],
        [c for c in conv.calls if c[0] > start],
    )


def _sentences(text: str) -> list[str]:
    prose = FENCE.sub(" ", text)
    return [fold(s, SENTENCE_CHARS) for s in SENTENCE_END.split(prose) if js_trim(s)]


def _quote(text: str, limit: int) -> str:
    return "\u201c" + fold(text, limit) + "\u201d"


# =============================================================================================
# Reading and writing checkpoint.md
# =============================================================================================
_HEADING = re.compile(r"^## §(\d+)\b")


def _parse(current: str) -> tuple[str | None, dict[int, list[str]]]:
    """The topic and each numbered section's items (a bullet with its continuation lines)."""
    topic: str | None = None
    bodies: dict[int, list[str]] = {}
    number: int | None = None
    seen_italic = False
    for line in current.replace("\r\n", "\n").split("\n"):
        match = _HEADING.match(line)
        if match:
            number, seen_italic = int(match.group(1)), False
            bodies.setdefault(number, [])
        elif number is None:
            if topic is None and line.startswith("Topic:"):
                topic = js_trim(line[len("Topic:") :]) or None
        elif not seen_italic and line.startswith("_") and line.endswith("_"):
            seen_italic = True
        elif not js_trim(line):
            continue
        elif line.startswith((" ", "\t")) and bodies[number]:
            bodies[number][-1] += "\n" + line.rstrip()
        else:
            bodies[number].append(line.rstrip())
    return topic, bodies


def _render(topic: str, bodies: Mapping[int, list[str]]) -> str:
    lines = [CHECKPOINT_TITLE, "", TOPIC_PREFIX + topic, ""]
    for section in SECTIONS:
        lines += [section.heading, section.italic, *bodies.get(section.number, []), ""]
    return "\n".join(lines)


def _merge(old: list[str], new: list[str]) -> list[str]:
    seen = {js_trim(x) for x in old}
    added = []
    for item in new:
        if js_trim(item) not in seen:
            seen.add(js_trim(item))
            added.append(item)
    return old + added[-MAX_NEW_PER_SECTION:]


def _trim(topic: str, bodies: dict[int, list[str]], budget: int) -> str:
    text = _render(topic, bodies)
    while est(text) > budget:
        for number in TRIM_ORDER:
            items = bodies.get(number, [])
            droppable = [k for k, item in enumerate(items) if not INDEX_LINE.match(js_trim(item))]
            if droppable:
                del bodies[number][droppable[0]]
                break
        else:
            return text  # only the outline and index lines are left
        text = _render(topic, bodies)
    return text


# =============================================================================================
# The sections
# =============================================================================================
def _intent(conv: _Conversation) -> list[str]:
    if not conv.asks:
        return []
    out = [f"- Latest ask: {_quote(conv.asks[-1][1], ASK_CHARS)}"]
    if len(conv.asks) > 1:
        out.append(f"- The session began with: {_quote(conv.asks[0][1], ASK_CHARS)}")
    return out


def _summary(call: _Call) -> str:
    """The tool and its one most telling argument: `bash: bun test`, `edit: src/cli.ts`."""
    if isinstance(call.input, Mapping):
        for key in SUMMARY_KEYS:
            value = call.input.get(key)
            if isinstance(value, str) and value:
                return f"{call.name} `{fold(value, 100)}`"
    return call.name


def _call_line(call: _Call) -> str:
    line = _summary(call)
    if call.error is not None:
        return f"{line} \u2192 error: {fold(call.error, LINE_CHARS)}"
    failure = _error_line(call.output)
    return f"{line} \u2192 {failure}" if failure else line


def _in_flight(conv: _Conversation) -> list[str]:
    out = []
    if conv.assistant_texts:
        out.append(f"- Last said: {_quote(conv.assistant_texts[-1][1], ASK_CHARS)}")
    ran = [_call_line(c) for _, c in conv.calls[-LAST_CALLS:]]
    for line in dict.fromkeys(ran):  # the same call several times in a row is one line
        count = ran.count(line)
        out.append(f"- Ran: {line}" + (f" ({count}\u00d7)" if count > 1 else ""))
    return out


def _cued(pieces: Sequence[tuple[int, str]], cue: re.Pattern[str]) -> list[str]:
    return [f"- {s}" for _, text in pieces for s in _sentences(text) if cue.search(s)]


def _questions(conv: _Conversation, start: int) -> list[str]:
    after = max(start, conv.asks[-1][0] if conv.asks else -1)
    asked = [s for i, text in conv.assistant_texts if i > after for s in _sentences(text)]
    return [f"- {s}" for s in asked if s.endswith("?")]


def _error_line(output: str) -> str | None:
    lines = output.split("\n")
    for pattern in ERROR_LINES:
        for line in lines:
            if pattern.search(line):
                return fold(line, LINE_CHARS)
    return None


def _errors(conv: _Conversation) -> list[str]:
    out = []
    for _, call in conv.calls:
        what = _summary(call)
        if call.error is not None:
            out.append(f"- {what}: {fold(call.error, LINE_CHARS)}")
        elif (line := _error_line(call.output)) is not None:
            out.append(f"- {what}: {line}")
    return out


def _path(tool_input: Any) -> str | None:
    if isinstance(tool_input, Mapping):
        for key in PATH_KEYS:
            if isinstance(tool_input.get(key), str) and tool_input[key]:
                return str(tool_input[key])
    return None


def _files(conv: _Conversation, listed: Sequence[str]) -> list[str]:
    changes: dict[str, list[str]] = {}
    for _, call in conv.calls:
        path = _path(call.input)
        if call.name in WRITE_TOOLS and path is not None and call.error is None:
            changes.setdefault(path, []).append("written" if call.name == "write" else "edited")
    old = "\n".join(listed)
    root = _common_dir(list(changes))
    out = []
    for path, kinds in changes.items():
        shown = path[len(root) :] if root else path
        if "/".join(path.replace("\\", "/").split("/")[-2:]) in old:
            continue  # the current file already has a line for it
        what = ", ".join(f"{k} {kinds.count(k)}\u00d7" for k in sorted(set(kinds)))
        out.append(f"- `{shown}`: {what}")
    return out


def _common_dir(paths: Sequence[str]) -> str:
    """The directory all `paths` share, with its trailing "/", when it is at least two levels deep."""
    if not paths:
        return ""
    parts = [p.replace("\\", "/").split("/")[:-1] for p in paths]
    common: list[str] = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return "/".join(common) + "/" if len([c for c in common if c]) >= 2 else ""


def _live(conv: _Conversation) -> list[str]:
    out = []
    for _, call in conv.calls:
        if isinstance(call.input, Mapping) and call.input.get("background") is True:
            label = call.input.get("description") or call.input.get("command") or call.name
            result = fold(call.output.split("\n", 1)[0], LINE_CHARS) if call.output else "no result yet"
            out.append(f"- {call.name} \u201c{fold(str(label), 100)}\u201d in the background: {result}")
    return out


def _since(new: _Conversation) -> list[str]:
    failed = sum(1 for _, c in new.calls if c.error is not None or _error_line(c.output))
    out = [
        f"- {len(new.asks)} user message(s), {len(new.calls)} tool call(s), "
        f"{failed} of them failed or reported errors."
    ]
    out += [f"- User: {_quote(a, LINE_CHARS)}" for _, a in new.asks[-SINCE_ASKS:]]
    if new.assistant_texts:
        out.append(f"- Ended with: {_quote(new.assistant_texts[-1][1], LINE_CHARS)}")
    return out


# =============================================================================================
# Entry point
# =============================================================================================
def standin_checkpoint(
    messages: Sequence[Mapping[str, Any]],
    current: str | None = None,
    *,
    sources: Sequence[str] | None = None,
    since: str | None = None,
    budget: int = PushCaps().checkpoint,
) -> str:
    """The new `checkpoint.md` for a writer request's `messages` (see the module docstring).

    `sources[i]` is the stored message ID of `messages[i]` (`BuildResult.sources`); with `since`,
    the ID of the message the previous checkpoint covered, "Since the last checkpoint" covers only
    what came after it.
    """
    conv = _read(messages)
    old_topic, old = (None, {}) if current is None or is_template(current) else _parse(current)
    start = -1
    if since is not None and sources is not None and since in sources:
        start = max(i for i, s in enumerate(sources) if s == since)
    new = _after(conv, start)  # the list sections add only what the current file cannot hold yet
    first_ask = fold(conv.asks[0][1].split("\n", 1)[0], TOPIC_CHARS) if conv.asks else None
    topic = old_topic or first_ask or "(no user request yet)"
    bodies = {
        1: _intent(conv) or old.get(1, []),
        2: _merge(old.get(2, []), _cued(new.assistant_texts, DECISION_CUE)),
        3: _in_flight(conv) or old.get(3, []),
        4: _merge(old.get(4, []), _cued(new.asks, RULE_CUE)),
        5: _merge(old.get(5, []), _questions(conv, start)),
        6: _merge(old.get(6, []), _errors(new)),
        7: _merge(old.get(7, []), _cued(new.assistant_texts, FINDING_CUE)),
        8: _merge(old.get(8, []), _files(new, old.get(8, []))),
        9: _merge(old.get(9, []), _live(new)),
        10: _since(new),
    }
    return _trim(topic, bodies, budget)
