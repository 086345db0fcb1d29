"""An agent host on the OpenAI SDK's Chat Completions, driving the sidecar (docs/hosts.md, "OpenAI
Chat").

    python examples/hosts/openai_chat_host.py [--steps N] [--json]

It runs against a local fake of the API (fake_provider.py: 400 for any request a provider rule
forbids); drop `base_url` to use the real one.

Storage: the assistant message's `content` is a `text` part and each of its `tool_calls` a
`function` part `{id, function: {name, arguments}}`; each result is a `tool`-role message of its
own, `info.tool_call_id` naming the call, its text a `text` part. Usage: `prompt_tokens` counts the
cached and cache-written tokens too, so input = prompt_tokens − cached_tokens − cache_write_tokens,
cache.read = cached_tokens, cache.write = cache_write_tokens.
"""

from __future__ import annotations

import json
from typing import Any

import openai
from host_loop import Call, Host, Json, Output, Step, main

from mimo_sidecar.wire.checkpoint import PrepareResult
from mimo_sidecar.wire.rebuild import BuildResult

MODEL = "gpt-5.1"


def usage_of(usage: Any) -> Json:
    prompt = usage.prompt_tokens_details
    cached, written = (prompt.cached_tokens or 0, prompt.cache_write_tokens or 0) if prompt else (0, 0)
    details = usage.completion_tokens_details
    return {
        "input": usage.prompt_tokens - cached - written,
        "output": usage.completion_tokens,
        "reasoning": (details.reasoning_tokens or 0) if details else 0,
        "cache": {"read": cached, "write": written},
    }


class ChatProvider:
    format = "openai-chat"
    provider_id = "openai"
    model_id = MODEL
    sidecar_tools_in_prefix = False  # request/build adds the sidecar's tools (sidecarTools)

    def __init__(self, base_url: str) -> None:
        self.client = openai.OpenAI(base_url=f"{base_url}/v1", api_key="not-needed-offline", max_retries=0)

    def send(self, built: BuildResult) -> Any:
        head = built.prefix.request or {}
        kwargs: Json = {"model": MODEL, "messages": head.get("messages", []) + built.messages}  # system first
        if head.get("tools"):
            kwargs["tools"] = head["tools"]
        kwargs.update(built.overrides)
        return self.client.chat.completions.create(**kwargs)

    def write(self, prepared: PrepareResult) -> str:
        return self.send(prepared).choices[0].message.content or ""

    def stored(self, response: Any, host: Host) -> Step:
        usage = usage_of(response.usage)
        choice = response.choices[0]
        parts: list[Json] = (
            [{"type": "text", "text": choice.message.content}] if choice.message.content else []
        )
        calls: list[Call] = []
        for tc in choice.message.tool_calls or []:
            parts.append(
                {
                    "type": "function",
                    "id": tc.id,
                    "function": {"name": tc.function.name, "arguments": tc.function.arguments},
                }
            )
            calls.append(Call(tc.id, tc.function.name, json.loads(tc.function.arguments or "{}")))
        finish = {"tool_calls": "tool-calls", "stop": "stop"}.get(choice.finish_reason, choice.finish_reason)
        info = host.assistant_info(finish, usage)
        info["providerMessageID"] = response.id
        return Step([host.message("assistant", parts, **info)], calls, usage)

    def results(self, step: Step, outputs: dict[str, Output], host: Host) -> list[Json]:
        messages = []
        for c in step.calls:
            output = outputs[c.call_id]
            flags = {"is_error": True} if output.is_error else {}  # the sidecar reads it as an error result
            parts = [{"type": "text", "text": output.text}]
            messages.append(host.message("tool", parts, tool_call_id=c.call_id, **flags))
        return messages


if __name__ == "__main__":
    raise SystemExit(main(ChatProvider, __doc__.splitlines()[0] if __doc__ else ""))
