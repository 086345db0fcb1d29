"""An agent host on the OpenAI SDK's Responses API, driving the sidecar (docs/hosts.md, "OpenAI
Responses").

    python examples/hosts/openai_responses_host.py [--steps N] [--json]

It runs against a local fake of the API (fake_provider.py: 400 for any request a provider rule
forbids); drop `base_url` to use the real one.

Storage: each output item is one part of the assistant message, except `message` items, whose
text becomes `text` parts (no format sends a raw `message` item back: it would be `part-not-sent`,
and a history of nothing else an empty request, error 1012); `function_call` and `reasoning` items
are stored as they came. The results are `function_call_output` parts of a `tool`-role message.
Usage: `input_tokens` counts the cached and the cache-written tokens too, so input = input_tokens −
cached_tokens − cache_write_tokens, cache.read = cached_tokens, cache.write = cache_write_tokens.
"""

from __future__ import annotations

from typing import Any

import openai
from host_loop import Call, Host, Json, Output, Step, main

from mimo_sidecar.wire.checkpoint import PrepareResult
from mimo_sidecar.wire.rebuild import BuildResult

MODEL = "gpt-5.1"


def usage_of(usage: Any) -> Json:
    details = usage.input_tokens_details
    cached, written = (details.cached_tokens or 0, details.cache_write_tokens or 0) if details else (0, 0)
    reasoning = usage.output_tokens_details.reasoning_tokens if usage.output_tokens_details else 0
    return {
        "input": usage.input_tokens - cached - written,
        "output": usage.output_tokens,
        "reasoning": reasoning,
        "cache": {"read": cached, "write": written},
    }


def part_of(item: Any) -> list[Json]:
    if item.type == "message":
        return [{"type": "text", "text": c.text} for c in item.content if c.type == "output_text" and c.text]
    return [item.model_dump(mode="json", exclude_none=True)]


class ResponsesProvider:
    format = "openai-responses"
    provider_id = "openai"
    model_id = MODEL
    sidecar_tools_in_prefix = True  # the host lists the sidecar's tools with its own (tools/list)

    def __init__(self, base_url: str) -> None:
        self.client = openai.OpenAI(base_url=f"{base_url}/v1", api_key="not-needed-offline", max_retries=0)

    def send(self, built: BuildResult) -> Any:
        assert built.prefix.request is not None
        # Stateless replay: store=False, and the encrypted reasoning asked back so it can be replayed.
        kwargs: Json = {
            "model": MODEL,
            **built.prefix.request,  # instructions and tools
            "input": built.messages,
            "store": False,
            "include": ["reasoning.encrypted_content"],
        }
        kwargs.update(built.overrides)
        return self.client.responses.create(**kwargs)

    def write(self, prepared: PrepareResult) -> str:
        return str(self.send(prepared).output_text)

    def stored(self, response: Any, host: Host) -> Step:
        usage = usage_of(response.usage)
        parts = [part for item in response.output for part in part_of(item)]
        calls = [
            Call(i.call_id, i.name, _arguments(i.arguments))
            for i in response.output
            if i.type == "function_call"
        ]
        info = host.assistant_info("tool-calls" if calls else "stop", usage)
        info["providerMessageID"] = response.id
        return Step([host.message("assistant", parts, **info)], calls, usage)

    def results(self, step: Step, outputs: dict[str, Output], host: Host) -> list[Json]:
        if not step.calls:
            return []
        # Responses has no error flag for a function's output: an error is told in its text.
        parts = [
            {"type": "function_call_output", "call_id": c.call_id, "output": outputs[c.call_id].text}
            for c in step.calls
        ]
        return [host.message("tool", parts)]


def _arguments(text: str) -> Json:
    import json

    value = json.loads(text or "{}")
    return value if isinstance(value, dict) else {"input": value}


if __name__ == "__main__":
    raise SystemExit(main(ResponsesProvider, __doc__.splitlines()[0] if __doc__ else ""))
