"""A local stand-in for the providers' HTTP APIs, on 127.0.0.1, for the example hosts: offline.

It answers the four endpoints the official SDKs call:

    POST /v1/messages                              Anthropic Messages
    POST /v1/responses                             OpenAI Responses
    POST /v1/chat/completions                      OpenAI Chat Completions
    POST /v1beta/models/{model}:generateContent    Gemini

and refuses with a 400, in the provider's own error shape, every request that breaks a provider
rule: `mimo_sidecar.rules.check` decides, the checker the sidecar's own tests run (protocol.md,
"Formats"). A request it accepts gets a scripted answer: a call of the `read` tool, step after step,
until `steps` calls were made, then a closing text; the checkpoint writer's request (its last user
turn is the writer's instructions) gets a checkpoint. Its usage is what the request weighs (its
JSON's length / 4), reported the way each provider reports it, cached tokens included, so a host
that maps usage wrongly counts wrongly.

Like a model after a rebuild, the fake wants back a result the rebuild took out of its view: the
first time a request shows a rebuilt context's activity list (`read(filePath="src/file9.py")`)
and declares a tool whose name ends in `history`, it searches the history for the newest path the
list names, then asks for the whole result of the call the answer names (`operation: "result"`),
before it reads on. What the host sends back for these two calls is kept in `recalled`.

    with FakeProvider(steps=30) as fake:        # fake.url: http://127.0.0.1:<port>
        ...                                     # fake.accepted, fake.rejected: what it saw
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mimo_sidecar.rules import check

Json = dict[str, Any]
WRITER_OPENING = "You are the checkpoint writer of this coding session."
RECALL_ID = "call_recall"
ACTIVITY_READ = re.compile(r'^- read\(filePath="([^"]+)"\)$', re.M)  # a call the rebuilt context digested
SEARCH_HIT = re.compile(r"\[tool call \w+ · ([^\]\s]+)\]")  # a history search's hit: the call's ID
CACHED_SHARE = 0.6  # the part of each prompt the fake reports as read from the provider's cache
GEMINI_PATH = re.compile(r"^/v1(beta)?/models/(?P<model>[^/:]+):generateContent$")


@dataclass
class Seen:
    api: str
    body: Json
    problems: list[str] = field(default_factory=list)


def weight(body: Json) -> int:
    """The prompt's size in tokens, as this fake counts it: its JSON's length / 4."""
    return len(json.dumps(body, separators=(",", ":"))) // 4


def checkpoint_reply(step: int) -> str:
    return (
        "# Session checkpoint\n\nTopic: read the project's source files one by one\n\n"
        "## §1 Active intent\n_What the user wants now, in their words where it matters, and the next step "
        "towards it._\n- Read every file of src/ and summarise it.\n\n"
        "## §3 Work in flight\n_What is half done: the change under way, the command last run and its "
        f"result, what comes next._\n- {step} files read so far; the next one is src/file{step + 1}.py.\n"
    )


class FakeProvider:
    def __init__(self, steps: int = 30, recall: bool = True) -> None:
        self.steps = steps
        self.recall = recall  # search the history once, then read a result back
        self.recall_ids: list[str] = []  # the history calls made
        self.recalled: list[str] = []  # the results the host sent back for them, in order
        self.calls = 0  # read calls answered so far (the writer's requests do not count)
        self.accepted: list[Seen] = []
        self.rejected: list[Seen] = []
        self.totals: list[int] = []  # prompt + output of each turn's answer: what a host's count must be
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- one request ---------------------------------------------------------------------------------
    def answer(self, path: str, body: Json) -> tuple[int, Json]:
        gemini = GEMINI_PATH.match(path)
        api = {"/v1/messages": "anthropic", "/v1/responses": "openai-responses"}.get(path)
        api = api or ("openai-chat" if path == "/v1/chat/completions" else "gemini" if gemini else None)
        if api is None:
            return 404, {"error": {"message": f"no such endpoint {path}"}}
        seen = Seen(api, body, self._problems(api, body))
        with self._lock:
            (self.rejected if seen.problems else self.accepted).append(seen)
            if seen.problems:
                return 400, _error(api, "; ".join(seen.problems))
            if WRITER_OPENING in _last_user_text(api, body):
                return 200, _reply(api, body, text=checkpoint_reply(self.calls))
            results = _results(api, body)
            self.recalled += _answers(results, self.recall_ids[len(self.recalled) :])
            recall = self._recall(api, body)
            if recall is None:
                self.calls += 1
            step = self.calls
        if recall is not None:
            text: str | None = "Looking up a file the rebuilt context only names."
            call: tuple[str, str, Json] | None = recall
        else:
            text = "Every file is read; the summary is in notes.md." if step > self.steps else None
            call = None if text else (f"call_{step:03d}", "read", {"filePath": f"src/file{step}.py"})
        with self._lock:
            self.totals.append(weight(body) + _output_tokens(text))
        return 200, _reply(api, body, text=text, call=call)

    def _recall(self, api: str, body: Json) -> tuple[str, str, Json] | None:
        """The next history call of the recall, if one is due (under the lock)."""
        history = [name for name in _tool_names(api, body) if name.endswith("history")]
        if not self.recall or not history or len(self.recall_ids) >= 2:
            return None
        if not self.recall_ids:
            digested = ACTIVITY_READ.findall("\n".join(_texts(_messages(api, body))))
            arguments: Json | None = {"operation": "search", "query": digested[-1]} if digested else None
        else:
            hit = SEARCH_HIT.search(self.recalled[0]) if len(self.recalled) == 1 else None
            arguments = {"operation": "result", "callID": hit.group(1)} if hit else None
        if arguments is None:
            return None
        self.recall_ids.append(f"{RECALL_ID}{len(self.recall_ids) + 1}")
        return self.recall_ids[-1], history[0], arguments

    def _problems(self, api: str, body: Json) -> list[str]:
        if api == "anthropic":
            if not isinstance(body.get("max_tokens"), int):
                return ["max_tokens: Field required"]
            prefix = {"system": body.get("system", []), "tools": body.get("tools", [])}
            thinking = (body.get("thinking") or {}).get("type") == "enabled" if "thinking" in body else None
            found = check("anthropic", body.get("messages", []), prefix=prefix, thinking=thinking)
            messages = body.get("messages", [])
        elif api == "openai-responses":
            messages = body.get("input", [])
            found = check("openai-responses", messages)
        elif api == "openai-chat":
            messages = body.get("messages", [])
            found = check("openai-chat", messages)
        else:
            messages = body.get("contents", [])
            found = check("gemini", messages)
        problems = [f"{v.rule} at {v.index}: {v.detail}" for v in found]
        if not messages:
            problems.append("the request holds no message")
        return problems

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                status, reply = fake.answer(self.path.split("?")[0], body)
                data = json.dumps(reply).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return  # quiet: the hosts print what matters

        return Handler


# -- the providers' shapes ---------------------------------------------------------------------------
def _messages(api: str, body: Json) -> list[Any]:
    key = "contents" if api == "gemini" else "input" if api == "openai-responses" else "messages"
    items = body.get(key, [])
    return items if isinstance(items, list) else []


def _texts(value: Any) -> list[str]:
    """Every string inside `value`."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def _tool_names(api: str, body: Json) -> list[str]:
    """The names of the tools a request declares."""
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    if api == "gemini":
        return [str(d.get("name")) for t in tools for d in t.get("functionDeclarations") or []]
    if api == "openai-chat":
        return [str((t.get("function") or {}).get("name")) for t in tools]
    return [str(t.get("name")) for t in tools]


def _results(api: str, body: Json) -> dict[str, str]:
    """Every tool result a request holds, by the call ID it shows, as text, in request order."""
    found: dict[str, str] = {}
    if api == "anthropic":
        for message in body.get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = _text(block.get("content"))
    elif api == "openai-responses":
        for item in body.get("input", []):
            if item.get("type") == "function_call_output":
                found[item["call_id"]] = _text(item.get("output"))
    elif api == "openai-chat":
        for message in body.get("messages", []):
            if message.get("role") == "tool":
                found[message["tool_call_id"]] = _text(message.get("content"))
    else:
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                response = part.get("functionResponse")
                if isinstance(response, dict):
                    value = response.get("response") or {}
                    found[str(response.get("id"))] = _text(value.get("output", value.get("error")))
    return found


def _answers(results: dict[str, str], call_ids: list[str]) -> list[str]:
    """The results of `call_ids` that have arrived, in order, up to the first still missing (the
    request shows an ID as the provider's reply gave it: Anthropic's are `toolu_` + the ID)."""
    out = []
    for call_id in call_ids:
        shown = next((k for k in results if k in (call_id, f"toolu_{call_id}")), None)
        if shown is None:
            break
        out.append(results[shown])
    return out


def _text(content: Any) -> str:
    """A result's content as text: a string, or the texts of its blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _last_user_text(api: str, body: Json) -> str:
    for item in reversed(_messages(api, body)):
        if item.get("role") not in ("user", None) or item.get("type") not in (None, "message"):
            continue
        content = item.get("parts") if api == "gemini" else item.get("content")
        if isinstance(content, str):
            return content
        return " ".join(str(block.get("text", "")) for block in content or [] if isinstance(block, dict))
    return ""


def _output_tokens(text: str | None) -> int:
    return 40 + len(text or "") // 4


def _error(api: str, message: str) -> Json:
    if api == "anthropic":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    if api == "gemini":
        return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


def _reply(
    api: str, body: Json, *, text: str | None = None, call: tuple[str, str, Json] | None = None
) -> Json:
    prompt = weight(body)
    cached = int(prompt * CACHED_SHARE)
    write = prompt // 10  # tokens written to the cache this time
    output = _output_tokens(text)
    model = body.get("model", "fake-model")
    if api == "anthropic":
        content: list[Json] = [{"type": "text", "text": text or "Reading the next file."}]
        if call is not None:
            content.append({"type": "tool_use", "id": f"toolu_{call[0]}", "name": call[1], "input": call[2]})
        return {
            "id": f"msg_fake{prompt}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if call else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt - cached - write,  # three disjoint parts of the prompt
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": write,
                "output_tokens": output,
            },
        }
    if api == "openai-responses":
        output_items: list[Json] = [
            {
                "type": "message",
                "id": f"msg_fake{prompt}",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": text or "Reading the next file.", "annotations": []}
                ],
            }
        ]
        if call is not None:
            output_items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{call[0]}",
                    "call_id": call[0],
                    "name": call[1],
                    "arguments": json.dumps(call[2]),
                    "status": "completed",
                }
            )
        return {
            "id": f"resp_fake{prompt}",
            "object": "response",
            "created_at": 1_760_000_000,
            "model": model,
            "status": "completed",
            "output": output_items,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": body.get("tools", []),
            "usage": {  # input_tokens counts the cached and the written ones too
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": write},
                "output_tokens": output,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + output,
            },
        }
    if api == "openai-chat":
        message: Json = {"role": "assistant", "content": text or "Reading the next file."}
        if call is not None:
            message["tool_calls"] = [
                {
                    "id": call[0],
                    "type": "function",
                    "function": {"name": call[1], "arguments": json.dumps(call[2])},
                }
            ]
        return {
            "id": f"chatcmpl-fake{prompt}",
            "object": "chat.completion",
            "created": 1_760_000_000,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}],
            "usage": {  # prompt_tokens counts the cached and the written ones too
                "prompt_tokens": prompt,
                "prompt_tokens_details": {"cached_tokens": cached, "cache_write_tokens": write},
                "completion_tokens": output,
                "completion_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + output,
            },
        }
    parts: list[Json] = [{"text": text or "Reading the next file."}]
    if call is not None:
        parts.append(
            {"functionCall": {"id": call[0], "name": call[1], "args": call[2]}, "thoughtSignature": "c2ln"}
        )
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {  # promptTokenCount counts the cached ones too
            "promptTokenCount": prompt,
            "cachedContentTokenCount": cached,
            "candidatesTokenCount": output,
            "totalTokenCount": prompt + output,
        },
        "modelVersion": model,
    }
